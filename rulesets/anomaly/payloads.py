"""The payloads of anomaly's own events (engine/payloads.py)."""

from __future__ import annotations

from engine.payloads import Payload, empty, payload
from rulesets.common import payloads as _common  # noqa: F401  (registered with the ruleset)

for _name in ("BecameDerivative", "HeadLocked", "KeyShield", "OverloadGranted"):
    empty(_name)


@payload("StageNotice")
class StageNotice(Payload):
    stage: str


@payload("HeadRecorded")
class HeadRecorded(Payload):
    kind: str
    target: int
    mode: int | None


@payload("Converted")
class Converted(Payload):
    seat: int


@payload("Cured")
class Cured(Payload):
    seat: int | None = None  # the judge's note names the seat; the seat's own does not


@payload("KeyShieldFired")
class KeyShieldFired(Payload):
    seats: list[int]


@payload("ShotNoEffect")
class ShotNoEffect(Payload):
    target: int


@payload("Zeroing")
class Zeroing(Payload):
    counted: list[int]
    victims: list[int]
