"""A fast deep copy of the game state, planned once per model class from its field types.

`handle` works on a copy of the state it is given, so that a refused command changes nothing
and the caller keeps its state. `copy.deepcopy` (what `model_copy(deep=True)` does) walks every
object generically, with a memo, and was nine tenths of a command's time. This copy knows the
shape of the state: for each model class it derives from the field annotations, once, which
fields hold only immutable values (numbers, strings, datetimes, Literals, frozen models…) and
are shared, and which hold containers or mutable models and are copied, recursively. Free-form
fields (`Any`: ruleset data, news) are copied as JSON-like trees.

Sharing rules, which the engine keeps:
- a frozen model (`model_config = ConfigDict(frozen=True)`, e.g. `Deadline`, `VotePost`, a
  seat's `Status`) is replaced, never changed, lists and dicts inside it included: it is shared
  between the copies (so a seat's statuses cost one dict copy);
- a field annotated `Annotated[..., SHARED]` (the game's options) is never changed in place after
  the game is created: shared as well.
Everything else is copied. A field whose type the planner does not know is deep-copied with
`copy.deepcopy`, so a new field is safe before it is fast.

The copy equals the original (`==`, `model_dump()`), and has the same `model_fields_set`.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import Any

from pydantic import BaseModel


class _Shared:
    """Annotation marker: the value is never changed in place, so copies may share it."""

    def __repr__(self) -> str:
        return "SHARED"


SHARED = _Shared()

_ATOMS: tuple[type, ...] = (int, float, str, bool, bytes, type(None), datetime, date, time,
                            timedelta, Enum)
_ATOM_TYPES = frozenset({int, float, str, bool, bytes, type(None), datetime, date, time,
                         timedelta})


def copy_json(value: Any) -> Any:
    """Copy a JSON-like tree (dicts, lists, tuples, models); atoms are shared, anything else
    is deep-copied."""
    cls = type(value)
    if cls in _ATOM_TYPES:
        return value
    if cls is dict:
        return {k: v if type(v) in _ATOM_TYPES else copy_json(v) for k, v in value.items()}
    if cls is list:
        return [v if type(v) in _ATOM_TYPES else copy_json(v) for v in value]
    if cls is tuple:
        return value if all(type(v) in _ATOM_TYPES for v in value) else tuple(
            copy_json(v) for v in value)
    if isinstance(value, BaseModel):
        return clone(value)
    if isinstance(value, _ATOMS | frozenset):
        return value
    return copy.deepcopy(value)


def copy_json_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    """`copy_json` for a dict, quick when its values are all atoms (options …)."""
    for v in value.values():
        if type(v) not in _ATOM_TYPES:
            return {k: v if type(v) in _ATOM_TYPES else copy_json(v) for k, v in value.items()}
    return value.copy()


def _expr(tp: Any, var: str, ns: dict[str, Any], depth: int = 0) -> str | None:
    """Python source that copies `var`, a value of type `tp`; None: it is immutable, share it."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return f"_json({var})"
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        if any(m is SHARED for m in meta):
            return None
        return _expr(base, var, ns, depth)
    if origin is typing.Literal:
        values = typing.get_args(tp)
        return None if all(isinstance(v, _ATOMS) for v in values) else f"_json({var})"
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        parts = [_expr(a, var, ns, depth) for a in args if a is not type(None)]
        if all(p is None for p in parts):
            return None
        if len(parts) == 1 and len(args) == 2:  # X | None
            return f"(None if {var} is None else {parts[0]})"
        return f"_json({var})"  # a mixed union: dispatch on the value at run time
    item = f"x{depth}"
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        inner = _expr(arg, item, ns, depth + 1)
        return f"{var}.copy()" if inner is None else f"[{inner} for {item} in {var}]"
    if origin is dict:
        _, arg = typing.get_args(tp) or (Any, Any)
        if arg is Any:
            return f"_json_dict({var})"
        inner = _expr(arg, item, ns, depth + 1)
        return (f"{var}.copy()" if inner is None
                else f"{{k{depth}: {inner} for k{depth}, {item} in {var}.items()}}")
    if origin is tuple:
        items = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return None if all(_expr(a, item, ns, depth + 1) is None for a in items) else \
            f"_json({var})"
    if origin is frozenset:
        return None
    if isinstance(tp, type):
        if issubclass(tp, BaseModel):
            return None if tp.model_config.get("frozen") else f"_clone({var})"
        if issubclass(tp, _ATOMS):
            return None
    return f"_deepcopy({var})"


def _compile(cls: type[BaseModel]) -> Callable[[Any], Any]:
    """Write and compile the copy function of model class `cls`."""
    if cls.model_config.get("extra") == "allow" or cls.__private_attributes__:
        raise TypeError(f"{cls.__name__}: clone() plans models without extras or privates")
    hints = typing.get_type_hints(cls, include_extras=True)
    ns: dict[str, Any] = {"_json": copy_json, "_json_dict": copy_json_dict, "_clone": clone,
                          "_deepcopy": copy.deepcopy, "_new": object.__new__,
                          "_set": object.__setattr__, "_cls": cls}
    lines = ["def copy_model(m):", "    d = m.__dict__.copy()"]
    for name in cls.model_fields:
        expr = _expr(hints[name], "v", ns)
        if expr is not None:
            lines += [f"    v = d[{name!r}]", f"    d[{name!r}] = {expr}"]
    lines += ["    n = _new(_cls)",
              "    _set(n, '__dict__', d)",
              "    _set(n, '__pydantic_fields_set__', m.__pydantic_fields_set__.copy())",
              "    _set(n, '__pydantic_extra__', None)",
              "    _set(n, '__pydantic_private__', None)",
              "    return n"]
    source = "\n".join(lines)
    exec(compile(source, f"<clone {cls.__name__}>", "exec"), ns)  # noqa: S102 (our own text)
    fn: Callable[[Any], Any] = ns["copy_model"]
    fn.__doc__ = source
    return fn


_COPIERS: dict[type, Callable[[Any], Any]] = {}


def clone(model: Any) -> Any:
    """A deep copy of `model` (a pydantic model of the state), sharing what is immutable."""
    fn = _COPIERS.get(type(model))
    if fn is None:
        fn = _COPIERS[type(model)] = _compile(type(model))
    return fn(model)


def source(cls: type[BaseModel]) -> str:
    """The copy function written for `cls` (for tests and curious readers)."""
    clone_fn = _COPIERS.get(cls) or _COPIERS.setdefault(cls, _compile(cls))
    return clone_fn.__doc__ or ""
