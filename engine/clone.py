"""A fast deep copy of the game state, planned once per model class from its field types.

`handle` works on a copy of the state it is given, so that a refused command changes nothing
and the caller keeps its state. `copy.deepcopy` (what `model_copy(deep=True)` does) walks every
object generically, with a memo, and was nine tenths of a command's time. This copy knows the
shape of the state: for each model class it derives from the field annotations, once, which
fields hold only immutable values (numbers, strings, datetimes, Literals, frozen models…) and
are shared, and which hold containers or mutable models and are copied, recursively. Free-form
fields (`Any`: ruleset data, news) are copied as JSON-like trees.

The state's records (`Seat`, `Slot`, `Deadline` …) are slotted dataclasses, the state itself a
pydantic model; both are planned alike (a "model" below is either).

Sharing rules, which the engine keeps:
- a frozen model (`model_config = ConfigDict(frozen=True)`, or `@dataclass(frozen=True)`: e.g.
  `Deadline`, `VotePost`, a seat's `Status`) is replaced, never changed, lists and dicts inside
  it included: it is shared between the copies (so a seat's statuses cost one dict copy);
- a field annotated `Annotated[..., SHARED]` (the game's options) is never changed in place after
  the game is created: shared as well.
Everything else is copied. A field whose type the planner does not know is deep-copied with
`copy.deepcopy`, so a new field is safe before it is fast.

The copy equals the original (`==`, `model_dump()`), and has the same `model_fields_set`.
"""

from __future__ import annotations

import copy
import dataclasses
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
    if isinstance(value, BaseModel) or (_is_record(cls) and not is_frozen(cls)):
        return clone(value)
    if isinstance(value, _ATOMS | frozenset) or _is_record(cls):  # (a frozen record: shared)
        return value
    return copy.deepcopy(value)


def copy_json_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    """`copy_json` for a dict, quick when its values are all atoms (options …)."""
    for v in value.values():
        if type(v) not in _ATOM_TYPES:
            return {k: v if type(v) in _ATOM_TYPES else copy_json(v) for k, v in value.items()}
    return value.copy()


def _is_record(cls: type) -> bool:
    """A dataclass of the state (engine.model's records)."""
    return dataclasses.is_dataclass(cls)


def _namespace(cls: type) -> dict[str, Any]:
    """What the copy functions written for `cls` call."""
    return {"_json": copy_json, "_json_dict": copy_json_dict, "_clone": clone,
            "_deepcopy": copy.deepcopy, "_new": object.__new__, "_set": object.__setattr__,
            "_cls": cls}


def is_frozen(cls: type) -> bool:
    """A frozen model or dataclass (shared by every copy, never changed)."""
    if issubclass(cls, BaseModel):
        return bool(cls.model_config.get("frozen"))
    return bool(cls.__dataclass_params__.frozen)  # type: ignore[attr-defined]


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
        if issubclass(tp, BaseModel) or _is_record(tp):
            return None if is_frozen(tp) else f"_clone({var})"
        if issubclass(tp, _ATOMS):
            return None
    return f"_deepcopy({var})"


def _compile_record(cls: type) -> Callable[[Any], Any]:
    """Write and compile the copy function of record class `cls` (a slotted dataclass): one
    attribute store per field, shared or copied as its type says."""
    hints = typing.get_type_hints(cls, include_extras=True)
    ns = _namespace(cls)
    # A frozen record is shared, never copied; should one be copied all the same (clone() of
    # it), its fields are set through object.__setattr__.
    frozen = is_frozen(cls)
    lines = ["def copy_model(m):", "    n = _new(_cls)"]
    for f in dataclasses.fields(cls):
        expr = _expr(hints[f.name], "v", ns)
        if expr is None:
            value = f"m.{f.name}"
        else:
            lines += [f"    v = m.{f.name}"]
            value = expr
        lines += [f"    _set(n, {f.name!r}, {value})" if frozen
                  else f"    n.{f.name} = {value}"]
    lines += ["    return n"]
    source = "\n".join(lines)
    exec(compile(source, f"<clone {cls.__name__}>", "exec"), ns)  # noqa: S102 (our own text)
    fn: Callable[[Any], Any] = ns["copy_model"]
    fn.__doc__ = source
    return fn


def _compile(cls: type[BaseModel], skip: frozenset[str] = frozenset()) -> Callable[[Any], Any]:
    """Write and compile the copy function of model class `cls`; the fields in `skip` are left
    shared (the caller replaces them)."""
    if not issubclass(cls, BaseModel):
        if skip:
            raise TypeError(f"{cls.__name__}: clone_except() plans pydantic models only")
        return _compile_record(cls)
    if cls.model_config.get("extra") == "allow" or cls.__private_attributes__:
        raise TypeError(f"{cls.__name__}: clone() plans models without extras or privates")
    hints = typing.get_type_hints(cls, include_extras=True)
    ns = _namespace(cls)
    lines = ["def copy_model(m):", "    d = m.__dict__.copy()"]
    for name in cls.model_fields:
        if name in skip:
            continue
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


_PARTIAL: dict[tuple[type, frozenset[str]], Callable[[Any], Any]] = {}


def clone_except(model: Any, skip: frozenset[str]) -> Any:
    """`clone(model)`, but the fields in `skip` still hold the very objects of `model`: the
    caller replaces them (the working copy's seats, `SeatsOnDemand`)."""
    key = (type(model), skip)
    fn = _PARTIAL.get(key)
    if fn is None:
        fn = _PARTIAL[key] = _compile(type(model), skip)
    return fn(model)


class SeatsOnDemand(list[Any]):
    """The seats of a command's working copy: each seat is copied the first time it is read.

    Most commands read one or two seats (a vote, a night action) and write fewer; copying all
    twelve for every command was half of the engine's time. This list starts with the very
    seat objects of the caller's state and replaces a seat by its `clone` the first time rule
    code can get hold of it (`seats[i]`, `state.seat(n)`, iteration, slices, `pop`, `copy`):
    every reference handed out is a private copy, so whatever is done with it cannot reach the
    caller's state. Seats never read are still the caller's objects, shared with the new state;
    nothing writes to a seat outside `handle`, and `handle` only ever writes a copy.

    `GameState.peek(n)` reads a seat without copying it, for code that only reads attributes.
    `settle` turns it back into a plain list at the end of the command.
    """

    __slots__ = ("_shared",)

    def __init__(self, seats: list[Any]) -> None:
        super().__init__(seats)
        self._shared = {id(s) for s in seats}  # the caller's seats, not copied yet

    def _own(self, i: int) -> Any:
        seat = list.__getitem__(self, i)
        if id(seat) in self._shared:
            self._shared.discard(id(seat))
            seat = clone(seat)
            list.__setitem__(self, i, seat)
        return seat

    def __getitem__(self, i: Any) -> Any:
        if type(i) is int and not self._shared:
            return list.__getitem__(self, i)
        if isinstance(i, slice):
            return [self._own(j) for j in range(*i.indices(len(self)))]
        return self._own(i)

    def __iter__(self) -> Any:
        if self._shared:
            for i in range(len(self)):
                self._own(i)
        return list.__iter__(self)

    def __reversed__(self) -> Any:
        return reversed(list(self))

    def copy(self) -> list[Any]:
        return list(self)

    def pop(self, i: Any = -1) -> Any:
        self._own(i)
        return list.pop(self, i)

    def __add__(self, other: Any) -> list[Any]:
        return list(self) + list(other)

    def __mul__(self, n: Any) -> list[Any]:
        return list(self) * n

    def sort(self, *args: Any, **kwargs: Any) -> None:
        list(self)  # the key function gets copies
        list.sort(self, *args, **kwargs)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (list(self),))


class _Source:
    """`__pydantic_private__` of a working copy (a model without private attributes): the
    state it copies, whose containers it has not copied yet."""

    __slots__ = ("model", "plan")

    def __init__(self, model: Any, plan: _Plan) -> None:
        self.model = model
        self.plan = plan


def _field_copier(cls: type[BaseModel], name: str) -> Callable[[Any], Any] | None:
    """The copy function of one field of `cls` (None: an immutable value, shared)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    ns = _namespace(cls)
    expr = _expr(hints[name], "v", ns)
    if expr is None:
        return None
    exec(compile(f"def copy_field(v):\n    return {expr}\n",  # noqa: S102 (our own text)
                 f"<clone {cls.__name__}.{name}>", "exec"), ns)
    fn: Callable[[Any], Any] = ns["copy_field"]
    return fn


class _Plan:
    """How the working copy of a model class is made: which fields are shared at once (atoms,
    frozen models, SHARED), and how each other field is copied when first read."""

    def __init__(self, cls: type[BaseModel], special: dict[str, Callable[[Any], Any]]) -> None:
        self.fields = tuple(cls.model_fields)
        self.lazy: dict[str, Callable[[Any], Any]] = {}
        for name in self.fields:
            fn = special.get(name) or _field_copier(cls, name)
            if fn is not None:
                self.lazy[name] = fn
        self.eager = tuple(n for n in self.fields if n not in self.lazy)
        # The eager fields as one dict display (`{"game_id": d["game_id"], …}`): faster than
        # dict(zip(…)) of the itemgetter, and this runs for every command.
        body = ", ".join(f"{n!r}: d[{n!r}]" for n in self.eager)
        ns: dict[str, Any] = {}
        exec(compile(f"def eager_dict(d):\n    return {{{body}}}\n",  # noqa: S102 (our text)
                     f"<working copy {cls.__name__}>", "exec"), ns)
        self.eager_dict: Callable[[dict[str, Any]], dict[str, Any]] = ns["eager_dict"]


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type[BaseModel]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls, {"seats": SeatsOnDemand} if "seats" in cls.model_fields
                                   and cls.__name__ == "GameState" else {})
    return plan


def working_copy(state: Any) -> Any:
    """The copy of `state` a command works on. It equals `clone(state)` in every way that
    matters, but is made lazily: at first it holds only the immutable values (atoms, frozen
    models, the options); each container or model field (seats, deadlines, the night, votes,
    news, data …) is copied the first time it is read (`GameState.__getattr__` calls
    `lazy_field`), and the seats inside one by one (`SeatsOnDemand`). Most commands read a few
    fields, and a refused one often only one or two. `settle` it before handing it out: the
    fields never read are then the very objects of `state` (nothing read, nothing written)."""
    plan = _plan(type(state))
    src = state.__dict__
    n = _new(type(state))
    _set(n, "__dict__", plan.eager_dict(src))
    _set(n, "__pydantic_fields_set__", state.__pydantic_fields_set__.copy())
    _set(n, "__pydantic_extra__", None)
    _set(n, "__pydantic_private__", _Source(state, plan))
    return n


def view(model: Any, name: str) -> Any:
    """Field `name` of `model` to read only, then and there: a working copy's field not copied
    yet is read from the source state, without copying it. Never change what it returns, nor
    keep it past the read (the working copy may copy the field later)."""
    d = model.__dict__
    if name in d:
        return d[name]
    src = object.__getattribute__(model, "__pydantic_private__")
    return src.model.__dict__[name]


def lazy_field(model: Any, name: str) -> Any:
    """`model.name` for a working copy that has not copied field `name` yet: copy it now."""
    src = object.__getattribute__(model, "__pydantic_private__")
    if type(src) is _Source:
        fn = src.plan.lazy.get(name)
        if fn is not None:
            value = fn(src.model.__dict__[name])
            model.__dict__[name] = value
            return value
    return _PYDANTIC_GETATTR(model, name)  # pydantic's own lookup (private attributes …)


def settle(work: Any) -> None:
    """End of the command: the fields never read are taken from the source state as they are
    (in field order, as pydantic made them), the seats become a plain list again, and the
    copy is an ordinary state."""
    src = object.__getattribute__(work, "__pydantic_private__")
    if type(src) is not _Source:
        return  # another mechanism (bench/engine.py --copy)
    # The source's fields in field order (pydantic dumps in __dict__ order), overwritten by
    # the copy's: dict.update keeps each key where it was.
    new = src.model.__dict__.copy()
    new.update(work.__dict__)
    seats = new.get("seats")
    if seats is not None and type(seats) is not list:
        new["seats"] = list.copy(seats)
    _set(work, "__dict__", new)
    _set(work, "__pydantic_private__", None)


_PYDANTIC_GETATTR: Callable[[Any, str], Any] = vars(BaseModel)["__getattr__"]
_new = object.__new__
_set = object.__setattr__
_SEATS = frozenset({"seats"})


def source(cls: type[BaseModel]) -> str:
    """The copy function written for `cls` (for tests and curious readers)."""
    clone_fn = _COPIERS.get(cls) or _COPIERS.setdefault(cls, _compile(cls))
    return clone_fn.__doc__ or ""
