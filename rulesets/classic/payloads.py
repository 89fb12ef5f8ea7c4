"""The payloads of classic's own events (engine/payloads.py)."""

from __future__ import annotations

from engine.payloads import Payload, empty, payload
from rulesets.common import payloads as _common  # noqa: F401  (registered with the ruleset)

for _name in ("CupidPrompt", "KillForfeited", "KillPostDue"):
    empty(_name)


@payload("CupidLinked")
class CupidLinked(Payload):
    lovers: list[int]
    random: bool


@payload("LoverNotice")
class LoverNotice(Payload):
    partner: int | None


@payload("WidowKnife")
class WidowKnife(Payload):
    lovers: list[int]


@payload("YourCamp")
class YourCamp(Payload):
    camp: str


@payload("GroupFormed")
class GroupFormed(Payload):
    group: str
    members: list[int]


@payload("KillRecorded")
class KillRecorded(Payload):
    by: int
    target: int | None


@payload("KillLocked")
class KillLocked(Payload):
    by: int
    target: int | None


@payload("KillFeedback")
class KillFeedback(Payload):
    target: int
    out: bool


@payload("PoisonFeedback")
class PoisonFeedback(Payload):
    target: int
    out: bool
