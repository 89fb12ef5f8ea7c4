"""`wolfjudge simulate` (bot/simulate/): the CLI end to end, determinism whatever --jobs, the
per-seat views, the heuristic wolves, the Wilson interval. A handful of games each; no timing."""

from __future__ import annotations

import ast
import contextlib
import json
import math
from datetime import datetime
from pathlib import Path

import pytest

from bot.cli import main
from bot.simulate import agents, view
from bot.simulate.agents import Duty, HeuristicAgent
from bot.simulate.driver import GameDriver, game_seed
from bot.simulate.run import Spec, simulate
from bot.simulate.stats import count_rules, wilson
from bot.simulate.view import Claim, SeatView
from engine.events import Audience, Event

AT = datetime(2026, 3, 1, 9, 0)


def ev(type_: str, audience: Audience, phase: str = "D1", **data: object) -> Event:
    return Event(type=type_, at=AT, phase=phase, audience=audience, data=data)


# Wilson ----------------------------------------------------------------------------------------
def test_wilson_known_values() -> None:
    lo, hi = wilson(5, 10)
    assert math.isclose(lo, 0.236593, abs_tol=1e-6) and math.isclose(hi, 0.763407, abs_tol=1e-6)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and math.isclose(hi, 0.277533, abs_tol=1e-6)
    lo, hi = wilson(10, 10)
    assert math.isclose(hi, 1.0) and math.isclose(lo, 0.722467, abs_tol=1e-6)
    assert wilson(0, 0) == (0.0, 1.0)


def test_wilson_contains_the_rate_and_narrows() -> None:
    for k, n in [(1, 3), (30, 100), (3000, 10000)]:
        lo, hi = wilson(k, n)
        assert lo < k / n < hi
    assert wilson(300, 1000)[1] - wilson(300, 1000)[0] < wilson(30, 100)[1] - wilson(30, 100)[0]


# the per-seat view -----------------------------------------------------------------------------
def test_view_of_a_villager_holds_no_wolf_identity() -> None:
    """Fed the events of a deal, a villager's view knows its own role and nothing of the
    wolves' room; it refuses an event that did not reach its seat."""
    wolves_room = Audience(seats=(1, 2, 3), group="wolves")
    feed = [ev("GameCreated", Audience.everyone(), ruleset="classic", players=12),
            ev("RoleDealt", Audience.to(5), seat=5, role="villager"),
            ev("RoleDealt", Audience.to(1), seat=1, role="wolf"),
            ev("GroupFormed", wolves_room, group="wolves", members=[1, 2, 3]),
            ev("SeerResult", Audience.to(7), target=2, label="<非村>")]
    villager = SeatView(5, 12)
    wolf = SeatView(1, 12)
    for e in feed:
        for v in (villager, wolf):
            if e.audience.reaches(v.seat):
                v.observe(e)
    assert villager.role == "villager" and villager.camp == "village"
    assert villager.groups == {} and villager.mates == set() and villager.checks == {}
    assert wolf.role == "wolf" and wolf.camp == "wolves" and wolf.mates == {2, 3}
    with pytest.raises(ValueError):
        villager.observe(feed[3])  # the wolves' room is not the villager's
    # A public claim reaches everybody: that is how a villager learns of a bad seat.
    villager.hear(Claim(seat=7, target=2, bad=True, day=2))
    assert villager.claimed_bad() == [2] and villager.claimed_seers() == [7]


def test_views_in_a_game_hold_only_what_reached_their_seat() -> None:
    driver = GameDriver("classic", 12, {}, "heuristic", 5, 0)
    driver.play()
    state = driver.state
    wolves = {s.seat for s in state.seats if s.role == "wolf"}
    for s in state.seats:
        v = driver.views[s.seat]
        assert v.role == s.role
        if s.role != "wolf":
            assert "wolves" not in v.groups  # no wolf identity but by public events
        if s.role != "seer":
            assert v.checks == {}
        else:
            assert set(v.checks) <= {n for n in range(1, 13)}
    assert any(driver.views[w].mates for w in wolves)


def test_agents_never_read_the_state() -> None:
    """The policies and the view import nothing of the engine's state model."""
    for module in (agents, view):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for a in node.names}
        assert not {m for m in imported if m and (m.startswith("engine.model") or m in (
            "engine", "engine.dispatch", "engine.game", "bot.simulate.driver"))}, imported


# the heuristic ---------------------------------------------------------------------------------
def test_heuristic_wolves_never_target_a_teammate() -> None:
    for index in range(8):
        driver = GameDriver("classic", 12, {}, "heuristic", 11, index)
        driver.play()
        rooms: dict[str, set[int]] = {}
        for e in driver.log:
            if e.type == "GroupFormed":
                rooms[e.data["group"]] = set(e.data["members"])
            if e.type == "KillRecorded" and e.data["target"] is not None:
                room = rooms.get(e.audience.group or "", set())
                assert e.data["target"] not in room, (index, e)


def test_heuristic_wolf_choice_from_a_view() -> None:
    v = SeatView(1, 12)
    v.observe(ev("GameCreated", Audience.everyone(), ruleset="classic"))
    v.observe(ev("RoleDealt", Audience.to(1), seat=1, role="wolf"))
    v.observe(ev("GroupFormed", Audience(seats=(1, 2, 3), group="wolves"), group="wolves",
                 members=[1, 2, 3]))
    import random

    rng = random.Random(0)
    for _ in range(50):
        kill = HeuristicAgent().choose(v, Duty("night", "kill"), rng)[0]
        assert kill.targets[0] not in (1, 2, 3)
        vote = HeuristicAgent().choose(v, Duty("vote"), rng)[0]
        assert vote.target not in (1, 2, 3)


# rules counted from events -----------------------------------------------------------------------
def test_same_guard_same_save_from_events() -> None:
    roles = {str(n): "villager" for n in range(1, 13)} | {"4": "guard", "6": "witch"}
    log = [ev("KillLocked", Audience(seats=(1, 2), group="wolves"), "N1", by=1, target=9),
           ev("ActionRecorded", Audience.to(4), "N1", skill="guard", target=9),
           ev("ActionRecorded", Audience.to(6), "N1", skill="save", target=9),
           ev("KillLocked", Audience(seats=(1, 2), group="wolves"), "N2", by=1, target=8),
           ev("ActionRecorded", Audience.to(4), "N2", skill="guard", target=8),
           ev("ActionRecorded", Audience.to(6), "N2", skill="pass", target=None),
           ev("WidowKnife", Audience.to(3, 5), "D3", lovers=[3, 5]),
           ev("SeatOut", Audience.judge(), "D3", seat=5, cause="lovers"),
           ev("GameOver", Audience.everyone(), "END", winner="wolves", roles=roles)]
    assert count_rules(log) == {"same_guard_same_save": 1, "widow_knife": 1, "lovers": 1}


# determinism and the CLI -------------------------------------------------------------------------
def test_game_seed_depends_on_seed_and_index_only() -> None:
    assert game_seed(1, 2) == game_seed(1, 2) != game_seed(1, 3) != game_seed(2, 2)


@pytest.mark.parametrize("ruleset,players,agent", [("classic", 12, "random"),
                                                    ("anomaly", 13, "heuristic"),
                                                    ("standard", 12, "heuristic")])
def test_jobs_one_and_two_give_the_same_numbers(ruleset: str, players: int, agent: str) -> None:
    spec = Spec(ruleset=ruleset, players=players, games=6, seed=7, agent=agent)
    one = simulate(spec, jobs=1)
    two = simulate(spec, jobs=2)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert one["games"] == 6 and sum(w["wins"] for w in one["wins"].values()) == 6


def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, png = tmp_path / "sim.json", tmp_path / "sim.png"
    rc = main(["simulate", "--ruleset", "anomaly", "--players", "14", "--games", "3",
               "--seed", "2", "--agents", "random", "--jobs", "2", "--json", str(out),
               "--chart", str(png), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "各阵营胜率" in text and "归零" in text and "Key盾" in text and "弑父" in text
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["ruleset"] == "anomaly" and doc["players"] == 14 and doc["games"] == 3
    assert set(doc["counted_rules"]) >= {"zeroing", "key_shield", "patricide"}
    for camp in doc["wins"].values():
        assert 0 <= camp["ci95"][0] <= camp["rate"] <= camp["ci95"][1] <= 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_options_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.json"
    assert main(["simulate", "--ruleset", "classic", "--games", "2", "--seed", "1",
                 "--option", "classic.same_guard_same_save_kills=true", "--json", str(out),
                 "--no-progress"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["options"] == {"classic.same_guard_same_save_kills": True}
    assert "same_guard_same_save" in doc["rules"] and "widow_knife" in doc["rules"]
    capsys.readouterr()
    assert main(["simulate", "--ruleset", "classic", "--games", "2", "--seed", "1",
                 "--option", "classic.no_such_key=1", "--no-progress"]) == 2
    assert "no_such_key" in capsys.readouterr().err
    assert main(["simulate", "--ruleset", "classic", "--players", "13", "--games", "2",
                 "--seed", "1", "--no-progress"]) == 2


def test_chart_without_a_cjk_font_falls_back_to_ascii(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from bot.simulate import chart

    doc = simulate(Spec(ruleset="classic", players=12, games=2, seed=1, agent="random"))
    monkeypatch.setattr(chart, "cjk_font", lambda: None)
    png = tmp_path / "ascii.png"
    assert chart.draw(doc, png) is None
    assert "no CJK font" in capsys.readouterr().err
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_chart_finds_a_cjk_font_when_one_is_installed() -> None:
    from matplotlib import font_manager

    from bot.simulate import chart

    installed = {f.name for f in font_manager.fontManager.ttflist}
    if not installed & set(chart.CANDIDATES):
        pytest.skip("no CJK font on this machine (.ci/run installs fonts-wqy-microhei)")
    assert chart.cjk_font() in chart.CANDIDATES


def test_chart_finds_a_cjk_font_installed_after_matplotlib_made_its_font_list(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib import font_manager

    from bot.simulate import chart

    on_disk = set()
    for path in font_manager.findSystemFonts():
        with contextlib.suppress(Exception):
            on_disk.add(font_manager.get_font(path).family_name)
    if not on_disk & set(chart.CANDIDATES):
        pytest.skip("no CJK font on this machine (.ci/run installs fonts-wqy-microhei)")
    # matplotlib's cached list, made before the font was installed
    stale = [f for f in font_manager.fontManager.ttflist if f.name not in chart.CANDIDATES]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", stale)
    assert chart.cjk_font() in chart.CANDIDATES


@pytest.mark.parametrize("board", ["预女猎白", "预女猎守"])
@pytest.mark.parametrize("agent", ["random", "heuristic"])
def test_standard_both_boards_and_both_agents_end_with_winners(board: str, agent: str) -> None:
    """The standard board (docs/rules-standard.md) simulates on both boards with both agents:
    every game ends with a winner, elections and the board's own rules happen."""
    spec = Spec(ruleset="standard", players=12, games=8, seed=3, agent=agent,
                options={"standard.board": board})
    doc = simulate(spec)
    assert "none" not in doc["wins"] or doc["wins"]["none"]["wins"] == 0, doc["wins"]
    assert sum(w["wins"] for w in doc["wins"].values()) == 8
    assert doc["rules"]["sheriff_elected"]["share"] > 0, doc["rules"]
