"""Engine properties not tied to one scenario: JSON round trips, surrender at night (C-WOLF-3)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

import engine.core
from bot.scenario import Game, Scenario
from engine import new_game
from engine.commands import Act, Surrender, Vote
from engine.model import GameState

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "tests" / "scenarios").rglob("*.yaml"))[::7]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_state_survives_a_json_round_trip_after_every_command(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = engine.core.handle

    def checked(state: GameState, command: object, now: datetime) -> object:
        again = GameState.model_validate_json(state.model_dump_json())
        assert again == state
        out = real(state, command, now)
        assert out == real(again, command, now)  # the reloaded state decides the same
        return out

    monkeypatch.setattr("bot.scenario.handle", checked)
    result = Scenario(path).run()
    assert result.ok, str(result)


def test_c_wolf_3_wolves_surrendering_at_night_lose_tonights_kill() -> None:
    roles = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid", "villager", "villager",
             "villager", "villager", "villager"]
    state, _ = new_game(ruleset="classic", game_id="g", seed="s", start=date(2026, 1, 1),
                        roles=roles)
    g = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    assert g.send(Act(seat=7, skill="link", targets=(3, 8))) is None  # black lovers 3 + 8
    g.advance(datetime(2026, 1, 1, 10))
    for seat in range(1, 13):
        assert g.send(Vote(seat=seat, mode="vote", target=None)) is None
    g.advance(datetime(2026, 1, 1, 21, 10))
    assert g.send(Act(seat=1, skill="kill", targets=(10,))) is None
    assert g.send(Surrender(seat=1)) is None
    assert g.send(Surrender(seat=2)) is None
    assert "wolves" in g.state.camps_lost and not g.state.winner
    assert g.send(Act(seat=2, skill="kill", targets=(11,))) is not None  # no 杀人 any more
    g.advance(datetime(2026, 1, 2, 9))
    assert g.state.seat(10).alive and g.state.seat(11).alive
    assert g.state.seat(1).yellow == 0 and g.state.seat(2).yellow == 0  # no kill duty left
    assert g.state.seat(3).holds("kill") and g.state.seat(8).holds("kill")  # C-LOVER-5
