"""The payloads of the events both rulesets emit through the shared mechanisms
(engine/payloads.py)."""

from __future__ import annotations

from engine.payloads import Payload, empty, payload

for _name in ("HunterDue", "ShotForfeited"):
    empty(_name)


@payload("ActionRecorded")
class ActionRecorded(Payload):
    skill: str
    target: int | None
    final: bool | None = None  # classic: the action can no longer change


@payload("NightPrompt")
class NightPrompt(Payload):
    skill: str
    complete: bool | None = None  # anomaly: the role is at its complete stage


@payload("SeerResult")
class SeerResult(Payload):
    target: int
    label: str


@payload("CampLostNotice")
class CampLostNotice(Payload):
    camp: str


@payload("Tongling")
class Tongling(Payload):
    target: int | None
    answered: bool


@payload("ShotFired")
class ShotFired(Payload):
    seat: int
    target: int
