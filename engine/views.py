"""Safe views (issue 22): what the engine hands out to read cannot be written.

A command works on a lazy working copy (engine/clone.py): a seat or a field that rule code only
looks at is not copied, so it is still the caller's own object. Rule code reads through
`ctx.view(name)`, `ctx.peek(n)`, `state.peek(n)`, `state.peek_seats()`, `peek_living()`,
`peek_members()` and the queries `state.holder(...)` / `holders(...)` / `count(...)`; whatever
it wants to change, it asks for with `ctx.seat(n)` (a private copy) or `ctx.state.FIELD`.

Plain reads cost nothing: the views are the objects themselves. Under `strict()` (the tests turn
it on for the whole session, tests/conftest.py) those same calls hand out read-only proxies
instead: reading is unchanged, any write (an attribute, an item, `append`, `set_status` …)
raises `ViewWriteError` at the line that tried it, where the random driver's deep comparison
would only have noticed later that the caller's state had changed. Strict mode changes no result:
the same games, the same events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import is_dataclass
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from engine.clone import is_frozen


class ViewWriteError(TypeError):
    """Something handed out to read only was written (use `ctx.seat(n)` or the state's field
    to change it)."""


_ATOMS = (int, float, str, bool, bytes, type(None))
# Methods that change the object they are called on: refused on a view.
_WRITERS = frozenset({"set_status", "clear_status", "append", "extend", "insert", "remove",
                      "pop", "clear", "update", "setdefault", "add", "discard", "sort",
                      "reverse", "popitem"})


def read_only(value: Any) -> Any:
    """`value` as a read-only view: atoms and frozen records as they are; containers and
    records behind a proxy whose reads give read-only views in turn."""
    if isinstance(value, _ATOMS) or isinstance(value, (tuple, frozenset)) and all(
            isinstance(v, _ATOMS) for v in value):
        return value
    if isinstance(value, (ReadOnly, MappingProxyType)):
        return value
    if isinstance(value, dict):
        return MappingProxyType({k: read_only(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList(read_only(v) for v in value)
    if isinstance(value, tuple):
        return tuple(read_only(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    if not (is_dataclass(value) or isinstance(value, BaseModel)) or is_frozen(type(value)):
        return value  # a frozen record, a date, an enum …
    return ReadOnly(value)


class FrozenList(tuple[Any, ...]):
    """A list, read only: it compares equal to a list of the same items, as the list itself
    would (a plain tuple would not: `(1, 8) == [1, 8]` is false), so a ruleset reads the same
    with strict views as without them."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return list(self) == other
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__


class ReadOnly:
    """A record (a seat, the night, a schedule) to read only."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        if name in _WRITERS:
            raise ViewWriteError(f"{type(self._target).__name__}.{name}() on a read-only view")
        value = getattr(self._target, name)
        if callable(value) and not isinstance(value, type):
            return _reader(value)
        return read_only(value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise ViewWriteError(f"{type(self._target).__name__}.{name} set on a read-only view")

    def __delattr__(self, name: str) -> None:
        raise ViewWriteError(f"{type(self._target).__name__}.{name} deleted on a read-only view")

    def __eq__(self, other: object) -> bool:
        return bool(self._target == (other._target if isinstance(other, ReadOnly) else other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ReadOnly({self._target!r})"


def _reader(method: Callable[..., Any]) -> Callable[..., Any]:
    """A record's own method (`holds`, `status`, `open_at` …): its result read only."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return read_only(method(*args, **kwargs))
    return call


# strict mode -----------------------------------------------------------------------------------
_PLAIN: dict[tuple[type, str], Any] = {}


def is_strict() -> bool:
    return bool(_PLAIN)


def strict(on: bool = True) -> None:
    """Hand out read-only proxies from every reading call (on), or the objects themselves (off,
    the default: nothing is paid for it)."""
    from engine.context import Ctx
    from engine.model import GameState

    readers: list[tuple[type, str]] = [
        (GameState, "peek"), (GameState, "peek_seats"), (GameState, "peek_living"),
        (GameState, "peek_members"), (GameState, "holder"), (GameState, "holders"),
        (Ctx, "peek"), (Ctx, "view"), (Ctx, "holder"), (Ctx, "holders")]
    if on and not _PLAIN:
        for cls, name in readers:
            plain = cls.__dict__[name]
            _PLAIN[(cls, name)] = plain
            setattr(cls, name, _strict(plain))
    elif not on:
        for (cls, name), plain in _PLAIN.items():
            setattr(cls, name, plain)
        _PLAIN.clear()


def _strict(plain: Callable[..., Any]) -> Callable[..., Any]:
    def reading(*args: Any, **kwargs: Any) -> Any:
        return read_only(plain(*args, **kwargs))
    reading.__doc__ = plain.__doc__
    return reading
