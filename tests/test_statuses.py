"""Typed seat statuses (issue 10): `engine.model.Status`, the Seat helpers, and snapshots stored
before statuses were typed (plain values) still loading, into the new shape, and playing on."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from bot.store.codec import decode, encode
from engine import handle
from engine.clone import clone
from engine.commands import parse_command
from engine.events import Rejection
from engine.model import GameState, Schedule, Seat, Status, StatusKey
from rulesets.anomaly.statuses import (
    CLASS,
    DERIVATIVE,
    KONGSHOU,
    OVERLOAD_NIGHT,
    SAVED_CAMP,
    SAVED_SKILLS,
    SHOT_DUE,
    STAGE,
    WINDOW,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "stored_games"
ANOMALY_GAMES = sorted(FIXTURES.glob("anomaly*.json"))
SEAT = TypeAdapter(Seat)  # a seat is a plain dataclass: validated and dumped by an adapter


def _game(path: Path) -> dict[str, Any]:
    game: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return game


def test_seat_helpers() -> None:
    st = Seat(seat=1, role="r", camp="c")
    assert st.status(STAGE) is None and st.clear_status(STAGE) is None
    st.set_status(STAGE, "growth", source="setup", since="SETUP")
    assert st.status(STAGE) == "growth"
    assert st.status_info(STAGE) == Status(value="growth", source="setup", since="SETUP")
    st.set_status(KONGSHOU, (2, 3))
    assert st.status(KONGSHOU) == (2, 3)
    assert st.clear_status(STAGE) == "growth" and st.status(STAGE) is None
    assert set(st.statuses) == {"kongshou"}
    with pytest.raises(FrozenInstanceError):
        st.statuses["kongshou"].value = (4,)  # type: ignore[misc]  # what is tested
    # a name is a ruleset's constant; a value outside StatusValue is refused
    with pytest.raises(ValidationError):
        st.set_status(StatusKey[Any]("odd"), 1.5)


def test_a_copy_shares_statuses_and_never_changes_the_original() -> None:
    state = GameState(game_id="g", ruleset="anomaly", options={}, seed="s",
                      seats=[Seat(seat=1, role="hunter", camp="normal")],
                      schedule=Schedule(start=date(2026, 1, 1)))
    state.seat(1).set_status(SHOT_DUE, True)
    copy = clone(state)
    assert copy == state
    assert copy.seat(1).statuses is not state.seat(1).statuses
    assert copy.seat(1).statuses["shot_due"] is state.seat(1).statuses["shot_due"]  # frozen
    copy.seat(1).clear_status(SHOT_DUE)
    copy.seat(1).set_status(WINDOW, 2)
    assert state.seat(1).statuses == {"shot_due": Status(value=True)}


def test_an_old_seat_reads_into_the_new_shape() -> None:
    """Every status the anomaly ruleset ever stored, as the old plain dict."""
    old = {"seat": 5, "role": "seer", "camp": "anomaly", "statuses": {
        "class": "IDENTITY", "stage": "mature", "window": 3, "window_part": "day",
        "shot_due": True, "kongshou": [1, 3], "derivative": True,
        "saved_skills": {"see": "held", "evolve": "lost"}, "saved_camp": "normal",
        "overload_night": 2}}
    st = SEAT.validate_python(decode(encode(old)))
    assert all(isinstance(s, Status) and (s.source, s.since, s.until) == (None, None, None)
               for s in st.statuses.values())
    assert (st.status(CLASS), st.status(STAGE), st.status(SHOT_DUE), st.status(KONGSHOU),
            st.status(DERIVATIVE), st.status(SAVED_SKILLS), st.status(SAVED_CAMP),
            st.status(OVERLOAD_NIGHT)) == (
        "IDENTITY", "mature", True, (1, 3), True, {"see": "held", "evolve": "lost"}, "normal",
        2)
    assert type(st.status(WINDOW)) is int and type(st.status(SHOT_DUE)) is bool
    # the class of a head under anomaly.head_class=none was stored as None
    assert SEAT.validate_python({**old, "statuses": {"class": None}}).statuses == {
        "class": Status(value=None)}
    # the new shape reads back unchanged, through the store's codec too
    again = SEAT.validate_python(decode(encode(SEAT.dump_python(st))))
    assert again == st
    assert SEAT.validate_python(SEAT.dump_python(st, mode="json")) == st


@pytest.mark.parametrize("path", ANOMALY_GAMES, ids=lambda p: p.stem)
def test_an_old_snapshot_decodes_and_plays_on(path: Path) -> None:
    """The fixtures' snapshots were stored before statuses were typed (plain values). Decoded,
    they hold Status values; replayed from the stored initial snapshot (not from new_game, as
    tests/test_stored_games.py does), the game ends in the stored final snapshot."""
    game = _game(path)
    seats = game["initial_state"]["seats"]
    assert any(s["statuses"] for s in seats)
    assert all(not isinstance(v, dict) for s in seats for v in s["statuses"].values())
    state = GameState.model_validate(decode(game["initial_state"]))
    for raw, st in zip(seats, state.seats, strict=True):
        assert {k: s.value for k, s in st.statuses.items()} == raw["statuses"]
    for step in game["steps"]:
        now = decode(step["now"])
        assert isinstance(now, datetime)
        out = handle(state, parse_command(decode(step["command"])), now)
        if not isinstance(out, Rejection):
            state = out[0]
    final = GameState.model_validate(decode(game["final_state"]))
    assert state.model_dump() == final.model_dump()
    kongshou = [st.status(KONGSHOU) for st in final.seats if st.status(KONGSHOU)]
    assert kongshou and all(isinstance(m, tuple) for m in kongshou)  # stored as lists
