"""Events: the only output of the engine. Every event names its audience."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engine.payloads import PAYLOADS, Payload, read_payload


class Audience(BaseModel):
    """Who may read an event. The judge reads everything, always.

    `public`: the forum thread / game room. `seats`: private messages to these seats.
    `group`: the name of the WeChat group the message goes to (its members are in `seats`).
    """

    model_config = ConfigDict(frozen=True)

    public: bool = False
    seats: tuple[int, ...] = ()
    group: str | None = None

    @classmethod
    def everyone(cls) -> Audience:
        return _EVERYONE if cls is Audience else cls(public=True)

    @classmethod
    def to(cls, *seats: int) -> Audience:
        if cls is not Audience:
            return cls(seats=tuple(sorted(set(seats))))
        return _trusted(cls, {"public": False, "seats": tuple(sorted(set(seats))), "group": None},
                        {"seats"})

    @classmethod
    def judge(cls) -> Audience:
        return _JUDGE if cls is Audience else cls()

    def reaches(self, seat: int) -> bool:
        return self.public or seat in self.seats


class Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str
    class_version: int = 1
    at: datetime
    phase: str
    audience: Audience
    data: dict[str, Any] = Field(default_factory=dict)

    def payload(self) -> Payload:
        """`data` as this event type's model (engine/payloads.py), validated."""
        return read_payload(self.type, self.data)

    @classmethod
    def trusted(cls, type_: str, class_version: int, at: datetime, phase: str,
                audience: Audience, data: dict[str, Any]) -> Event:
        """The event the engine emits (`Ctx.emit`), built without validation: every value is
        already of its field's type (the engine's own str, int, datetime and Audience, a
        fresh dict of data), and validating them was about a tenth of a command's time. The
        result equals `Event(type=…, class_version=…, at=…, phase=…, audience=…, data=…)`,
        `model_fields_set` included (tests/test_engine_misc.py checks it)."""
        return _trusted(cls, {"type": type_, "class_version": class_version, "at": at,
                              "phase": phase, "audience": audience, "data": data}, _EVENT_SET)


class Rejection(BaseModel):
    """A refused command: only the sender is told, and nothing changed."""

    model_config = ConfigDict(frozen=True)

    code: str
    data: dict[str, Any] = Field(default_factory=dict)


def _trusted(cls: Any, values: dict[str, Any], fields_set: set[str]) -> Any:
    """A model from values already of their fields' types (all fields, in field order),
    without validation: what pydantic's validation would store, with `fields_set` as the
    fields given."""
    model = object.__new__(cls)
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


_EVENT_SET = {"type", "class_version", "at", "phase", "audience", "data"}
# Frozen, so every event may share them.
_EVERYONE = Audience(public=True)
_JUDGE = Audience()


# Versions and upcasters -----------------------------------------------------------------------
# Every event carries its `class_version` (1 for every event before issue 10). When an event's
# data changes shape, bump its type's entry in EVENT_VERSIONS (the engine then emits the new
# version) and register an upcaster from the old version, which turns an old record (a plain
# dict, `Event.model_dump()`) into the next version's: parse_event reads records of any version
# that was ever stored.

EventRecord = dict[str, Any]
Upcaster = Callable[[EventRecord], EventRecord]

EVENT_VERSIONS: dict[str, int] = {}  # type -> current version, when above 1
_EVENT_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def event_version(type_: str) -> int:
    return EVENT_VERSIONS.get(type_, 1)


def event_upcaster(type_: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register `fn(record) -> record`, turning version `from_version` of `type_` into the next
    (the record's class_version is set by upcast_event)."""
    def register(fn: Upcaster) -> Upcaster:
        _EVENT_UPCASTERS[(type_, from_version)] = fn
        return fn
    return register


def upcast_event(record: Mapping[str, Any]) -> EventRecord:
    """A stored event record of any version, as a record of its type's current version."""
    out = dict(record)
    version = out.get("class_version", 1)
    type_ = out.get("type")
    if not isinstance(type_, str) or not isinstance(version, int):
        return out  # validation will say what is wrong
    current = event_version(type_)
    if version > current:
        raise ValueError(f"event {type_!r} version {version} is newer than this engine's "
                         f"({current})")
    while version < current:
        out = _EVENT_UPCASTERS[(type_, version)](out)
        version += 1
        out["class_version"] = version
    return out


def parse_event(record: Mapping[str, Any]) -> Event:
    """An event from a stored record: upcast, then validated, its data read through its type's
    payload model (engine/payloads.py): a record in plain JSON (a seat-keyed map with string
    keys) gives back the very event the engine emitted."""
    event = Event.model_validate(upcast_event(record))
    model = PAYLOADS.get(event.type)
    if model is None:
        return event
    try:
        data = model.model_validate(event.data).model_dump(exclude_unset=True)
    except ValueError:
        return event  # not this version's shape: kept as stored (tests/test_payloads.py)
    return event if data == event.data else event.model_copy(update={"data": data})
