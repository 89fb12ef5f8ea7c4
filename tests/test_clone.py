"""engine.clone: the copy handle() works on equals the state and shares nothing that changes.

(The property tests check the contract end to end: randomplay.Driver.send compares every input
state with a deep copy taken before the call.)
"""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError
from datetime import datetime
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field
from randomplay import Step, random_player

from engine.clone import SHARED, clone, copy_json, source
from engine.model import GameState, Night, Schedule, Seat, Slot, Submission
from engine.ruleset import ruleset_names


def _states(ruleset: str, games: int = 2) -> list[GameState]:
    states: list[GameState] = []
    for i in range(games):
        driver = random_player(ruleset)[0](random.Random(i), seed=f"clone-{i}", ruleset=ruleset)
        driver.verify_input = False

        def keep(step: Step) -> None:
            states.append(step.before)

        driver.on_step = keep
        driver.play()
    return states[::7]


def _mutable_nodes(obj: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every container and non-frozen model in the tree, by path."""
    out: list[tuple[str, Any]] = []
    if isinstance(obj, BaseModel):
        if obj.model_config.get("frozen"):
            return out  # replaced, never changed: shared on purpose, lists inside included
        out.append((path, obj))
        for name in type(obj).model_fields:
            if path == "" and name == "options":
                continue  # SHARED: never changed after new_game
            out += _mutable_nodes(getattr(obj, name), f"{path}.{name}")
    elif isinstance(obj, dict):
        out.append((path, obj))
        for k, v in obj.items():
            out += _mutable_nodes(v, f"{path}[{k!r}]")
    elif isinstance(obj, list):
        out.append((path, obj))
        for i, v in enumerate(obj):
            out += _mutable_nodes(v, f"{path}[{i}]")
    return out


@pytest.mark.parametrize("ruleset", ruleset_names())
def test_clone_equals_and_shares_nothing_mutable(ruleset: str) -> None:
    for state in _states(ruleset):
        copy = clone(state)
        assert copy == state
        assert copy.model_dump() == state.model_dump()
        assert copy.model_dump_json() == state.model_dump_json()
        assert copy.model_fields_set == state.model_fields_set
        assert copy.options is state.options  # SHARED
        originals = dict(_mutable_nodes(state))
        for path, node in _mutable_nodes(copy):
            assert node is not originals[path], f"{path} is shared"


def test_frozen_models_are_shared_and_cannot_change() -> None:
    state = _states("classic", games=1)[3]
    assert state.deadlines
    copy = clone(state)
    assert copy.deadlines is not state.deadlines
    assert all(a is b for a, b in zip(copy.deadlines, state.deadlines, strict=True))
    with pytest.raises(FrozenInstanceError):
        copy.deadlines[0].due = datetime(2030, 1, 1)  # type: ignore[misc]  # what is tested


def test_every_state_model_is_planned_from_its_types() -> None:
    """No field of the state falls back to copy.deepcopy."""
    for cls in (GameState, Seat, Schedule, Night, Slot, Submission):
        assert "_deepcopy(" not in source(cls), source(cls)


class _Odd(BaseModel):
    """A field type the planner does not know is deep-copied, not shared."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bag: set[int] = Field(default_factory=set)
    shared: Any = None
    plain: list[dict[str, list[int]]] = Field(default_factory=list)


def test_unknown_types_are_deep_copied() -> None:
    odd = _Odd(bag={1, 2}, shared={"a": [1, {"b": [2]}]}, plain=[{"x": [1]}])
    copy = clone(odd)
    assert copy == odd
    copy.bag.add(3)
    copy.shared["a"][1]["b"].append(3)
    copy.plain[0]["x"].append(2)
    assert odd == _Odd(bag={1, 2}, shared={"a": [1, {"b": [2]}]}, plain=[{"x": [1]}])


def test_copy_json_copies_trees() -> None:
    tree = {"a": [1, (2, [3])], "b": {"c": None}}
    copy = copy_json(tree)
    assert copy == tree
    copy["a"][1][1].append(4)
    copy["b"]["c"] = 1
    assert tree == {"a": [1, (2, [3])], "b": {"c": None}}


def test_shared_marker_only_on_fields_never_changed() -> None:
    """SHARED is for the options alone (set once by new_game)."""
    import typing

    hints = typing.get_type_hints(GameState, include_extras=True)
    marked = [name for name, tp in hints.items()
              if any(m is SHARED for m in getattr(tp, "__metadata__", ()))]
    assert marked == ["options"]
