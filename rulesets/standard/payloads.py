"""The payloads of the standard board's own events (engine/payloads.py; docs/rules-standard.md).
The night's shared events (the kill, the seer, the witch) are rulesets/common's."""

from __future__ import annotations

from engine.payloads import Payload, empty, payload
from rulesets.common import payloads as _common  # noqa: F401  (registered with the ruleset)

empty("IdiotHandoverDue")  # the revealed idiot, sheriff, owes a successor (S-IDIOT-4)


@payload("ElectionOpened")
class ElectionOpened(Payload):
    signup: str  # HH:MM
    withdraw: str  # HH:MM
    then_exile: bool


@payload("SheriffCandidate")
class SheriffCandidate(Payload):
    seat: int


@payload("SheriffWithdrew")
class SheriffWithdrew(Payload):
    seat: int
    voided: list[int]  # the votes for him, void


@payload("SignupClosed")
class SignupClosed(Payload):
    candidates: list[int]


@payload("WithdrawClosed")
class WithdrawClosed(Payload):
    candidates: list[int]


@payload("BadgeLost")
class BadgeLost(Payload):
    reason: str
    seats: list[int]


@payload("SelfDestruct")
class SelfDestruct(Payload):
    seat: int
    swallowed: bool


@payload("IdiotRevealed")
class IdiotRevealed(Payload):
    day: int
    seat: int


@payload("HunterShot")
class HunterShot(Payload):
    seat: int
    target: int
