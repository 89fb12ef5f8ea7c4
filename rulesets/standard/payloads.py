"""The payloads of the standard board's own events (engine/payloads.py; docs/rules-standard.md).
The night's shared events (the kill, the seer, the witch) are rulesets/common's. Every
announcement of the board (the election, 自爆, the idiot's reveal, the hunter's shot) is told
to the table (`Reach.TABLE`)."""

from __future__ import annotations

from engine.payloads import Payload, Reach, empty, payload
from rulesets.common import payloads as _common  # noqa: F401  (registered with the ruleset)

empty("IdiotHandoverDue")  # the revealed idiot, sheriff, owes a successor (S-IDIOT-4)


@payload("ElectionOpened")
class ElectionOpened(Payload):
    reach = Reach.TABLE
    signup: str  # HH:MM
    withdraw: str  # HH:MM
    then_exile: bool


@payload("SheriffCandidate")
class SheriffCandidate(Payload):
    reach = Reach.TABLE
    seat: int


@payload("SheriffWithdrew")
class SheriffWithdrew(Payload):
    reach = Reach.TABLE
    seat: int
    voided: list[int]  # the votes for him, void


@payload("SignupClosed")
class SignupClosed(Payload):
    reach = Reach.TABLE
    candidates: list[int]


@payload("WithdrawClosed")
class WithdrawClosed(Payload):
    reach = Reach.TABLE
    candidates: list[int]


@payload("BadgeLost")
class BadgeLost(Payload):
    reach = Reach.TABLE
    reason: str
    seats: list[int]


@payload("SelfDestruct")
class SelfDestruct(Payload):
    reach = Reach.TABLE
    seat: int
    swallowed: bool


@payload("IdiotRevealed")
class IdiotRevealed(Payload):
    reach = Reach.TABLE
    day: int
    seat: int


@payload("HunterShot")
class HunterShot(Payload):
    reach = Reach.TABLE
    seat: int
    target: int
