"""Exact JSON for engine data (engine/exact.py): what the store decodes equals what it
encoded. Commands and a game's parameters are stored as `encode(value.model_dump())`; a state
as `encode_state(state)` (only its untyped fields tagged), read back by `state_of` (either form
of snapshot). Events need no tags any more: a log row is the event's own JSON and its payload
model gives back the types (engine/payloads.py; rows stored tagged before read the same)."""

from __future__ import annotations

from typing import Any

from bot.store.db import RawJSON
from engine.exact import EXACT, decode, encode
from engine.model import GameState

__all__ = ["RawJSON", "decode", "encode", "encode_state", "state_of"]

# The key of a snapshot stored in the pydantic form (`encode_state`); a snapshot without it
# is one stored before, `encode(state.model_dump())`.
_FORM = "$exact"


def encode_state(state: GameState) -> RawJSON:
    """The snapshot of `state`: pydantic's own JSON of the state (its typed fields carry their
    types), the values of its untyped fields tagged as `encode` tags them (engine/exact.py
    `EXACT`): one serializer pass in pydantic's core instead of a dump, a walk of the whole
    state in Python and a JSON encoding."""
    return RawJSON('{"' + _FORM + '":' + state.model_dump_json(context=EXACT) + "}")


def state_of(data: Any) -> GameState:
    """The state a snapshot holds, in either form."""
    if isinstance(data, dict) and len(data) == 1 and _FORM in data:
        return GameState.model_validate(data[_FORM], context=EXACT)
    return GameState.model_validate(decode(data))
