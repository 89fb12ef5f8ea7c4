"""Commands record intent. Resolution happens when the phase resolves."""

from __future__ import annotations

from datetime import datetime, time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Cmd(BaseModel):
    model_config = ConfigDict(frozen=True)


class Act(_Cmd):
    """A player's skill use: `kill`, `see`, `guard`, `save`, `poison`, `link`, `pass`, `lock` …"""

    kind: Literal["act"] = "act"
    seat: int
    skill: str
    targets: tuple[int | None, ...] = ()
    options: dict[str, Any] = Field(default_factory=dict)


class Vote(_Cmd):
    """`mode`: vote (first post), change (the one 改票), correct (keeps the post time), void."""

    kind: Literal["vote"] = "vote"
    seat: int
    mode: Literal["vote", "change", "correct", "void"] = "vote"
    target: int | None = None  # None = abstain (ignored for void)


class Handover(_Cmd):
    kind: Literal["handover"] = "handover"
    seat: int
    target: int


class LastWords(_Cmd):
    kind: Literal["lastwords"] = "lastwords"
    seat: int
    text: str


class Surrender(_Cmd):
    kind: Literal["surrender"] = "surrender"
    seat: int


class Tick(_Cmd):
    """A deadline fired. A tick for a deadline that is gone or not yet due changes nothing.

    `fired_at`: when a reminder's tick really goes out, if later than its due time (the bot
    catching up after downtime). The deadline takes effect at its due time all the same; a
    reminder whose own deadline is due by then is not sent."""

    kind: Literal["tick"] = "tick"
    deadline_id: str
    fired_at: datetime | None = None


class JudgeProxy(_Cmd):
    kind: Literal["judge_proxy"] = "judge_proxy"
    seat: int
    target: int | None = None  # None = abstain


class JudgeCard(_Cmd):
    kind: Literal["judge_card"] = "judge_card"
    seat: int
    color: Literal["yellow", "red"]


class JudgeWaiver(_Cmd):
    """`notice`: told the judge in advance; `contact`: contacted the judge before a deadline."""

    kind: Literal["judge_waiver"] = "judge_waiver"
    seat: int
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
    seat: int
    at: datetime


Command = Annotated[
    Act
    | Vote
    | Handover
    | LastWords
    | Surrender
    | Tick
    | JudgeProxy
    | JudgeCard
    | JudgeWaiver
    | JudgeSetTime
    | JudgeExtend
    | JudgeSetSchedule,
    Field(discriminator="kind"),
]
