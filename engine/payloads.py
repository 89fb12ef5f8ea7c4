"""Typed event payloads (issue 22, part 3): each event type's `data` as one frozen model,
registered by the type's name.

An event keeps its `data` as the plain dict it always was (the log, the snapshot, the export
and every digest are byte for byte what they were); `payload_of(event)` reads it as its type's
model, validated (`extra="forbid"`: a key the model does not declare is an error, so is a
missing one or a value of the wrong type). The engine's own event types are declared here;
a ruleset declares its own in its `payloads.py` (imported with the ruleset). A stored event of
an older class version is upcast first (`engine.events.upcast_event`), then read as the
current model. Tests check that every event the engine and the rulesets emit, over random
games and every scenario, reads as its model, and that every template names only fields its
event's payload has (bot/render.py `check_templates`).

Seat numbers are `int`; a map keyed by seat (`roles`, `counts`, `effective`) is read with
int keys, whether the record says 3 or "3" (JSON).

An event type that may be told to everyone (`Ctx.announce`, a public audience) declares its
reach on its model (`reach = Reach.TABLE`): whom the chat tells it (bot/router.py reads the
declaration, and refuses a public event whose model declares none, so a new announcement is
never silently told to nobody; tests/test_router.py checks every public type of every ruleset).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict


class Reach(StrEnum):
    """Whom the chat tells a public event (bot/router.py; the judge reads everything anyway)."""

    # The forum thread only: each vote post (the table learns the result at the close).
    FORUM = "forum"
    # An announcement: the game's public room once, or without one a DM to each seat still in
    # the game and to those who went out in the same commit (public.dm_out: every seat).
    TABLE = "table"
    # The public room, and a DM to every seat, in the game or out, always (the end).
    EVERY_SEAT = "every_seat"


class Payload(BaseModel):
    """The data of one event type. `reach`: whom the chat tells the event when it is public
    (None: never public)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    reach: ClassVar[Reach | None] = None


P = TypeVar("P", bound=type[Payload])
PAYLOADS: dict[str, type[Payload]] = {}


def payload(type_: str) -> Callable[[P], P]:
    """Register a model as the payload of event type `type_` (one model per type)."""
    def register(cls: P) -> P:
        if PAYLOADS.get(type_, cls) is not cls:
            raise ValueError(f"two payload models for the event type {type_!r}")
        PAYLOADS[type_] = cls
        return cls
    return register


class UnknownEventType(KeyError):
    pass


def payload_model(type_: str) -> type[Payload]:
    try:
        return PAYLOADS[type_]
    except KeyError:
        raise UnknownEventType(type_) from None


def read_payload(type_: str, data: Mapping[str, Any]) -> Payload:
    """`data` of an event of type `type_`, as its model (ValidationError if it does not fit)."""
    return payload_model(type_).model_validate(dict(data))


def public_reach(type_: str) -> Reach | None:
    """Whom the chat tells a public event of type `type_` (None: the type declares no reach)."""
    return payload_model(type_).reach


def empty(type_: str, reach: Reach | None = None) -> None:
    """Register an event type that carries no data (told as `reach` when public)."""
    if type_ not in PAYLOADS:
        PAYLOADS[type_] = type(type_, (Payload,), {"__module__": __name__, "reach": reach})


# the engine's events -------------------------------------------------------------------------
# (who is told what is the event's audience, not its payload: these are only the facts)

for _name in ("HandoverDue", "LastWordsDue", "LastWordsWaived", "SurrenderRecorded"):
    empty(_name)
empty("GamePaused", Reach.TABLE)


@payload("GameCreated")
class GameCreated(Payload):
    reach = Reach.TABLE
    ruleset: str
    players: int
    commitment: str
    signing_pubkey: str | None = None  # only in games the bot signs


@payload("RoleDealt")
class RoleDealt(Payload):
    seat: int
    role: str


@payload("GameOver")
class GameOver(Payload):
    reach = Reach.EVERY_SEAT
    winner: str
    members: list[int]
    roles: dict[int, str]
    seed: str


@payload("GameEnded")
class GameEnded(Payload):
    reach = Reach.EVERY_SEAT
    reason: str | None
    roles: dict[int, str]
    seed: str


@payload("JudgeRulingNeeded")
class JudgeRulingNeeded(Payload):
    """Either a duty the judge must rule on (a handover), or camps that all lost at once."""

    duty: str | None = None
    seat: int | None = None
    camps: list[str] | None = None


@payload("LossReverted")
class LossReverted(Payload):
    camps: list[str]


@payload("CampLost")
class CampLost(Payload):
    camp: str


@payload("CampSurrendered")
class CampSurrendered(Payload):
    reach = Reach.TABLE
    camp: str


@payload("RandomChoice")
class RandomChoice(Payload):
    purpose: str
    counter: int
    options: list[int]
    picked: int


# days, nights and deadlines
@payload("DayOpened")
class DayOpened(Payload):
    reach = Reach.TABLE
    day: int
    outs: list[int]
    cards: list[dict[str, int | str]]  # {"seat": n, "color": "yellow" | "red"}
    alive: list[int]
    roles: dict[int, str]  # the roles shown of seats out (public.reveal_roles_on_out)


@payload("NightStarted")
class NightStarted(Payload):
    reach = Reach.TABLE
    day: int


@payload("NightResolving")
class NightResolving(Payload):
    day: int


@payload("NoSheriff")
class NoSheriff(Payload):
    reach = Reach.TABLE
    day: int


@payload("Reminder")
class Reminder(Payload):
    duty: str
    due: str
    # the seat's answer given before its prompt stands at the deadline unless changed
    # (only when true: earlier reminders read as they were)
    standing: bool = False


@payload("LateSummary")
class LateSummary(Payload):
    duty: str
    due: str
    seats: list[int]


@payload("DeadlineMissed")
class DeadlineMissed(Payload):
    duty: str


@payload("DeadlineExtended")
class DeadlineExtended(Payload):
    seat: int
    due: str


@payload("DeadlineExtendedJudge")
class DeadlineExtendedJudge(Payload):
    seat: int
    due: str
    deadlines: list[str]


@payload("DeadlineShifted")
class DeadlineShifted(Payload):
    duty: str
    due: str


@payload("DeadlinesShifted")
class DeadlinesShifted(Payload):
    minutes: int
    dues: dict[str, str]


@payload("TimeChanged")
class TimeChanged(Payload):
    reach = Reach.TABLE
    day: int
    which: str
    at: str


@payload("ScheduleChanged")
class ScheduleChanged(Payload):
    reach = Reach.TABLE
    open: str
    close: str
    day: int


@payload("GameResumed")
class GameResumed(Payload):
    reach = Reach.TABLE
    minutes: int
    day: int
    which: str
    at: str


# votes
@payload("VotePosted")
class VotePosted(Payload):
    reach = Reach.FORUM  # each post stays the forum's: the table is told the result
    voter: int
    target: int | None
    mode: str
    by_judge: bool


@payload("VoteResult")
class VoteResult(Payload):
    reach = Reach.TABLE
    day: int
    kind: str
    # target (0: abstain) -> votes; a half where a ruleset weighs the sheriff's vote 1.5, a
    # whole number always an int
    counts: dict[int, int | float]
    effective: dict[int, int | None]  # voter -> target


@payload("Exiled")
class Exiled(Payload):
    reach = Reach.TABLE
    day: int
    seat: int | None


@payload("RevoteOpened")
class RevoteOpened(Payload):
    reach = Reach.TABLE
    day: int
    candidates: list[int]
    until: str


class _Correction(Payload):
    voter: int
    target: int | None


for _name in ("CorrectionConfirmed", "CorrectionDropped", "CorrectionDroppedJudge",
              "CorrectionLapsed", "CorrectionLapsedJudge"):
    payload(_name)(type(_name, (_Correction,), {"__module__": __name__}))


@payload("CorrectionRejected")
class CorrectionRejected(_Correction):
    can_change: bool


@payload("CorrectionRequested")
class CorrectionRequested(_Correction):
    replaced: bool


@payload("CorrectionRequestedJudge")
class CorrectionRequestedJudge(_Correction):
    replaced: bool
    post_at: str
    post_target: int | None
    post_void: bool


# seats, the sheriff, last words, cards
@payload("SeatOut")
class SeatOut(Payload):
    seat: int
    cause: str


@payload("YouAreOut")
class YouAreOut(Payload):
    seat: int


@payload("SheriffChanged")
class SheriffChanged(Payload):
    reach = Reach.TABLE
    seat: int
    how: str


@payload("YouAreSheriff")
class YouAreSheriff(Payload):
    seat: int


@payload("HandoverHeld")
class HandoverHeld(Payload):
    target: int


@payload("LastWords")
class LastWords(Payload):
    reach = Reach.TABLE
    seat: int
    text: str


@payload("YellowCard")
class YellowCard(Payload):
    seat: int
    count: int
    reason: str


@payload("YellowCardPublic")
class YellowCardPublic(Payload):
    reach = Reach.TABLE
    seat: int
    count: int


@payload("YellowCardSecret")
class YellowCardSecret(Payload):
    seat: int
    count: int
    reason: str


@payload("RedCard")
class RedCard(Payload):
    reach = Reach.TABLE
    seat: int
    reason: str


@payload("CardPolicyNote")
class CardPolicyNote(Payload):
    counted: bool
    limit: int


@payload("WaiverRecorded")
class WaiverRecorded(Payload):
    seat: int
    waiver: str


@payload("CardWaived")
class CardWaived(Payload):
    seat: int
    duty: str
    waiver: str


# Written by the bot's undo (bot/undo.py, `撤销`), never by the engine: a notice that a judge's
# command was undone, told where that command's events were told (P-UNDO-4): public and
# announced (CommandUndonePublic) if the table was told, else to each seat told, and public but
# the forum's only if the command's public events were (a vote post).
@payload("CommandUndone")
class CommandUndone(Payload):
    reach = Reach.FORUM
    what: str


@payload("CommandUndonePublic")
class CommandUndonePublic(Payload):
    reach = Reach.TABLE
    what: str


# The judge's review of the dawn (resolve.judge_review; docs/rules-judge.md P-REVIEW).
@payload("DawnReview")
class DawnReview(Payload):
    day: int
    until: str


@payload("DawnPublished")
class DawnPublished(Payload):
    day: int
    by_judge: bool


# The sheriff who owes a successor destroys the badge (撕警徽: Ctx.tear_badge).
@payload("BadgeTorn")
class BadgeTorn(Payload):
    reach = Reach.TABLE
    seat: int
