"""Exact JSON for engine data: what is decoded equals what was encoded.

Plain `model_dump(mode="json")` is not enough: the engine keeps int-keyed dicts, tuples and
datetimes in `Any`-typed fields (a ruleset's `night.data`: stages by seat, say), and after a
JSON round trip those come back as str keys and lists, so the engine would behave differently
on a state loaded from the database than on the one it produced. Such values are tagged here
instead: ``{"$map": [[k, v], ...]}``, ``{"$tuple": [...]}``, ``{"$dt": iso}``,
``{"$date": iso}``, ``{"$time": iso}``. Everything else is plain JSON, so the stored rows stay
readable.

A state's own JSON (`GameState.model_dump_json(context=EXACT)`) needs this for its untyped
fields only: pydantic writes and reads each typed field as its type says. Those fields carry
`EXACT_OUT` and `EXACT_IN` (engine/model.py): under the `EXACT` context their values are tagged
when the state is dumped to JSON and untagged when it is validated, and without it they are
what they always were (the digests of bench/engine.py hash the plain JSON).
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any

from pydantic import BeforeValidator, PlainSerializer, SerializationInfo, ValidationInfo

_TAGS = ("$map", "$tuple", "$dt", "$date", "$time")


_PLAIN = frozenset({type(None), bool, int, float, str})
# Key tuples seen to be all str and none tagged: such a dict is a plain JSON object (only a str
# equals a str, so a tuple equal to one of these is all str keys too).
_PLAIN_KEYS: set[tuple[str, ...]] = set()


def encode(value: Any) -> Any:
    # The hot path of every commit (the whole state): the exact built-in types first, by a
    # type lookup; anything else (a subclass: a str enum, a datetime) takes the full chain.
    # A plain leaf is taken as it is without a call for it (most of a state is leaves), and
    # a dict's keys are checked once per set of keys (a model's dump has the same ones).
    t = type(value)
    if t in _PLAIN:
        return value
    if t is dict:
        keys = tuple(value)
        if keys not in _PLAIN_KEYS:
            for k in keys:
                if not isinstance(k, str) or k.startswith("$"):
                    return {"$map": [[encode(k), encode(v)] for k, v in value.items()]}
            if len(_PLAIN_KEYS) < 4096:
                _PLAIN_KEYS.add(keys)
        return {k: v if type(v) in _PLAIN else encode(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _PLAIN else encode(v) for v in value]
    return _encode_other(value)


def _encode_other(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):  # before date: a datetime is a date
        return {"$dt": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, time):
        return {"$time": value.isoformat()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"$map": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__} exactly: {value!r}")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (tag, inner), = value.items()
        if tag == "$map":
            return {_key(decode(k)): decode(v) for k, v in inner}
        if tag == "$tuple":
            return tuple(decode(v) for v in inner)
        if tag == "$dt":
            return datetime.fromisoformat(inner)
        if tag == "$date":
            return date.fromisoformat(inner)
        if tag == "$time":
            return time.fromisoformat(inner)
    return {k: decode(v) for k, v in value.items()}


def _key(k: Any) -> Any:
    return tuple(k) if isinstance(k, list) else k  # dict keys must stay hashable


# The context (pydantic's serialization and validation `context`) under which an untyped
# field's value is tagged in a state's JSON and untagged when the state is validated.
EXACT: dict[str, Any] = {"exact": True}


def _exact(context: Any) -> bool:
    return context is not None and context.get("exact") is True


def _tagged(value: Any, info: SerializationInfo) -> Any:
    return encode(value) if _exact(info.context) else value


def _untagged(value: Any, info: ValidationInfo) -> Any:
    return decode(value) if _exact(info.context) else value


EXACT_OUT = PlainSerializer(_tagged, when_used="json")
EXACT_IN = BeforeValidator(_untagged)
