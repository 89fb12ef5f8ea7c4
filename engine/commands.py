"""Commands record intent. Resolution happens when the phase resolves."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, time
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    TypeAdapter,
)

# Commands come from outside (chat, files, other processes): every field is bounded and strict,
# so `true` is no seat, "+3" no number, and no input can grow the state without limit.
SeatNo = Annotated[StrictInt, Field(ge=0, le=99)]
ShortText = Annotated[str, StringConstraints(max_length=32)]
OptionValue = StrictInt | StrictBool | ShortText | None
MAX_TEXT = 2000  # last words: a long forum post, not a novel


class _Cmd(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Act(_Cmd):
    """A player's skill use: one of the ruleset's skills (its data.yaml), `pass` or `lock`."""

    kind: Literal["act"] = "act"
    seat: SeatNo
    skill: ShortText
    targets: Annotated[tuple[SeatNo | None, ...], Field(max_length=4)] = ()
    options: Annotated[dict[ShortText, OptionValue], Field(max_length=4)] = Field(
        default_factory=dict)


# A vote post's mode (see `Vote`; RULES.md §4.3).
VoteMode = Literal["vote", "change", "correct", "void", "request_correct"]


class Vote(_Cmd):
    """`mode`: vote (first post), change (the one 改票), correct (the judge's correction: keeps
    the post time), void, request_correct (a player's 更正: pending until the judge rules on it
    with `JudgeCorrection`, RULES.md AMB-P-09)."""

    kind: Literal["vote"] = "vote"
    seat: SeatNo
    mode: VoteMode = "vote"
    target: SeatNo | None = None  # None = abstain (ignored for void)


class Handover(_Cmd):
    kind: Literal["handover"] = "handover"
    seat: SeatNo
    target: SeatNo


class LastWords(_Cmd):
    kind: Literal["lastwords"] = "lastwords"
    seat: SeatNo
    text: Annotated[str, StringConstraints(max_length=MAX_TEXT)]


class Surrender(_Cmd):
    kind: Literal["surrender"] = "surrender"
    seat: SeatNo


class Tick(_Cmd):
    """A deadline fired. A tick for a deadline that is gone or not yet due changes nothing.

    `fired_at`: when a reminder's tick really goes out, if later than its due time (the bot
    catching up after downtime). The deadline takes effect at its due time all the same; a
    reminder whose own deadline is due by then is not sent."""

    kind: Literal["tick"] = "tick"
    deadline_id: Annotated[str, StringConstraints(max_length=64)]
    fired_at: datetime | None = None


class JudgeProxy(_Cmd):
    kind: Literal["judge_proxy"] = "judge_proxy"
    seat: SeatNo
    target: SeatNo | None = None  # None = abstain


class JudgeCorrection(_Cmd):
    """The judge rules on seat `seat`'s pending correction request (AMB-P-09): `accept` applies
    it as a correction (keeping the original post time); otherwise the earlier vote stands."""

    kind: Literal["judge_correction"] = "judge_correction"
    seat: SeatNo
    accept: StrictBool


class JudgeCard(_Cmd):
    kind: Literal["judge_card"] = "judge_card"
    seat: SeatNo
    color: Literal["yellow", "red"]


class JudgeWaiver(_Cmd):
    """`notice`: told the judge in advance; `contact`: contacted the judge before a deadline."""

    kind: Literal["judge_waiver"] = "judge_waiver"
    seat: SeatNo
    waiver: Literal["notice", "contact"]


class JudgeSetTime(_Cmd):
    """Move today's close or the next open (P-TIME-2)."""

    kind: Literal["judge_set_time"] = "judge_set_time"
    which: Literal["open", "close"]
    at: datetime


class JudgeSetSchedule(_Cmd):
    """Change the daily open and close times from the next day that has not opened yet on."""

    kind: Literal["judge_set_schedule"] = "judge_set_schedule"
    open: time
    close: time


class JudgeExtend(_Cmd):
    """Give one player until `at` for every deadline that player owes (issue 5)."""

    kind: Literal["judge_extend"] = "judge_extend"
    seat: SeatNo
    at: datetime


class JudgePause(_Cmd):
    """Stop the game's clock: no deadline fires until `JudgeResume`; commands still record."""

    kind: Literal["judge_pause"] = "judge_pause"


class JudgeResume(_Cmd):
    """Start the clock again: every pending deadline moves on by the time the game was paused."""

    kind: Literal["judge_resume"] = "judge_resume"


class JudgeDawn(_Cmd):
    """`天亮`: publish the night's resolution the judge reviewed (resolve.judge_review)."""

    kind: Literal["judge_dawn"] = "judge_dawn"


class JudgeEnd(_Cmd):
    """End the game early, without a winner: the roles and the seed are revealed."""

    kind: Literal["judge_end"] = "judge_end"
    reason: ShortText = ""


Command = Annotated[
    Act
    | Vote
    | Handover
    | LastWords
    | Surrender
    | Tick
    | JudgeProxy
    | JudgeCorrection
    | JudgeCard
    | JudgeWaiver
    | JudgeSetTime
    | JudgeExtend
    | JudgeSetSchedule
    | JudgePause
    | JudgeResume
    | JudgeDawn
    | JudgeEnd,
    Field(discriminator="kind"),
]


# Versions and upcasters -----------------------------------------------------------------------
# A stored command is a `model_dump()` of its class, optionally with a "class_version" (absent:
# version 1, the shape of every command before issue 10). When a command's shape changes, bump
# its kind's entry in COMMAND_VERSIONS and register an upcaster from the old version, which
# turns an old record (a plain dict) into the next version's: parse_command then reads records
# of any version that was ever stored.

CommandRecord = dict[str, Any]
Upcaster = Callable[[CommandRecord], CommandRecord]

COMMAND_VERSIONS: dict[str, int] = {}  # kind -> current version, when above 1
_COMMAND_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def command_upcaster(kind: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register `fn(record) -> record`, turning version `from_version` of `kind` into the next."""
    def register(fn: Upcaster) -> Upcaster:
        _COMMAND_UPCASTERS[(kind, from_version)] = fn
        return fn
    return register


def upcast_command(record: Mapping[str, Any]) -> CommandRecord:
    """A stored command record of any version, as a record of its kind's current version
    (without the "class_version" key, which the command classes do not take)."""
    out = dict(record)
    version = out.pop("class_version", 1)
    kind = out.get("kind")
    if not isinstance(kind, str) or not isinstance(version, int):
        return out  # validation will say what is wrong
    current = COMMAND_VERSIONS.get(kind, 1)
    if version > current:
        raise ValueError(f"command {kind!r} version {version} is newer than this engine's "
                         f"({current})")
    while version < current:
        out = _COMMAND_UPCASTERS[(kind, version)](out)
        version += 1
    return out


_COMMAND: TypeAdapter[Command] = TypeAdapter(Command)


def parse_command(record: Mapping[str, Any]) -> Command:
    """A command from a plain record (the store, a file, the chat layer): upcast, then
    validated."""
    return _COMMAND.validate_python(upcast_command(record))
