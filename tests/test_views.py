"""Safe views (issue 22, part 4; engine/views.py): what the engine hands out to read cannot be
written. The tests run with strict mode on (tests/conftest.py): every reading call gives a
read-only proxy, and a write raises at the line that tried it. Outside strict mode the views are
the objects themselves (nothing is paid in production), and the games are the same."""

from __future__ import annotations

import ast
import hashlib
import random
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from randomplay import play, start_game

from engine.context import Ctx
from engine.model import GameState
from engine.ruleset import get_ruleset
from engine.views import ViewWriteError, is_strict, strict

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 3, 1, 10, 0)


@pytest.fixture
def state() -> GameState:
    return start_game("views")[1]


def writes(view: Any) -> Iterator[Callable[[], object]]:
    """Every kind of write a rule might try on a seat it only peeked."""
    yield lambda: setattr(view, "alive", False)
    yield lambda: setattr(view, "yellow", 3)
    yield lambda: view.skills.__setitem__("kill", "lost")
    yield lambda: view.statuses.pop("x", None)
    yield lambda: view.set_status(None, 1)
    yield lambda: view.clear_status(None)


def test_the_tests_run_is_strict() -> None:
    assert is_strict()


@pytest.mark.parametrize("read", [
    lambda st: st.peek(2), lambda st: st.peek_seats()[1], lambda st: st.peek_living()[1],
    lambda st: st.holder("seer"), lambda st: st.holders(camp="wolves")[0],
    lambda st: st.peek_members("wolves")[0],
], ids=["peek", "peek_seats", "peek_living", "holder", "holders", "peek_members"])
def test_a_seat_handed_out_to_read_cannot_be_written(
        state: GameState, read: Callable[[GameState], Any]) -> None:
    before = state.model_dump_json()
    view = read(state)
    assert view.seat >= 1 and view.alive and view.role  # reading is unchanged
    for write in writes(view):
        with pytest.raises((ViewWriteError, TypeError, AttributeError)):
            write()
    assert state.model_dump_json() == before  # the caller's state is untouched


def test_the_context_hands_out_views_too(state: GameState) -> None:
    ctx = Ctx(state, NOW, get_ruleset(state.ruleset))
    for write in writes(ctx.peek(3)):
        with pytest.raises((ViewWriteError, TypeError, AttributeError)):
            write()
    schedule = ctx.view("schedule")
    assert schedule.open_at(1) == state.schedule.open_at(1)
    with pytest.raises(ViewWriteError):
        schedule.close = None
    groups = ctx.view("groups")
    with pytest.raises(TypeError):
        groups["wolves"] = [1]
    members = next(iter(groups.values()), ())
    with pytest.raises(AttributeError):
        members.append(5)  # a list handed out to read is a tuple
    # What a rule may change, it asks for: a seat of its own (a copy in a command).
    ctx.seat(3).yellow += 1
    assert ctx.state.seats[2].yellow == 1


def test_a_rule_that_writes_what_it_peeked_fails_at_that_line(state: GameState) -> None:
    ctx = Ctx(state, NOW, get_ruleset(state.ruleset))

    def careless_rule() -> None:
        seer = ctx.holder("seer")
        assert seer is not None
        seer.skills["see"] = "used"  # should have been ctx.seat(seer.seat)

    with pytest.raises(TypeError):
        careless_rule()


def _digest(seed: int) -> str:
    trace = play(random.Random(seed))
    assert trace.final is not None
    events = "".join(e.model_dump_json() for e in trace.events)
    return hashlib.sha256((trace.final.model_dump_json() + events).encode()).hexdigest()


def test_without_the_strict_views_are_the_objects_and_the_games_the_same(
        state: GameState) -> None:
    strict_games = [_digest(seed) for seed in (1, 2)]
    strict(False)
    try:
        assert state.peek(2) is state.seats[1]  # no proxy, no copy: nothing paid
        assert state.holder("seer") in state.seats
        assert [_digest(seed) for seed in (1, 2)] == strict_games
    finally:
        strict(True)
    assert is_strict()


def test_rulesets_ask_for_holders_instead_of_peeking() -> None:
    """A rule author does not choose between copying and peeking: rulesets read seats through
    `holder` / `holders` / `count` / `peek` and change them through `seat(n)`."""
    raw = {"peek_living", "peek_seats", "peek_members"}
    found = []
    for path in sorted((ROOT / "rulesets").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in raw:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.attr}")
    assert found == []


def test_a_read_only_list_compares_as_the_list_would() -> None:
    """Strict views hand a list out as a read-only sequence that still equals the list (the
    standard guard's `last == [night - 1, target]` once passed a repeat shield in tests only)."""
    from engine.views import read_only

    view = read_only({"last": [1, 8], "pair": (1, 8)})
    assert view["last"] == [1, 8]
    assert [x for x in view["last"]] == [1, 8]
    assert view["last"] == (1, 8)  # and as the tuple it is
    assert view["pair"] != [1, 8]  # a tuple stays a tuple, as without strict views
