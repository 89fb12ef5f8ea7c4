"""Engine properties not tied to one scenario: JSON round trips, surrender at night (C-WOLF-3),
the judge's pause, resume and early end."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

import engine.core
from bot.feed import describe_command
from bot.render import render_event, render_rejection
from bot.scenario import Game, Scenario
from engine import handle, new_game
from engine.commands import (
    Act,
    JudgeEnd,
    JudgePause,
    JudgeResume,
    JudgeSetTime,
    Surrender,
    Tick,
    Vote,
)
from engine.core import Ctx
from engine.events import Rejection
from engine.model import GameState
from engine.ruleset import get_ruleset

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


# the judge's pause, resume and early end --------------------------------------------------

CL = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid", "villager", "villager",
      "villager", "villager", "villager"]


def at(day: int, h: int, m: int = 0) -> datetime:
    return datetime(2026, 1, day, h, m)


def classic_game(**kw: object) -> Game:
    state, events = new_game(ruleset="classic", game_id="g", seed="s", start=date(2026, 1, 1),
                             roles=CL, **kw)
    g = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    g.record(events)
    assert g.send(Act(seat=7, skill="link", targets=(8, 9))) is None
    return g


def vote_sheriff_10(g: Game, when: datetime) -> None:
    g.advance(when)
    for seat in range(1, 13):
        assert g.send(Vote(seat=seat, mode="vote", target=None if seat == 10 else 10)) is None


def dues(g: Game) -> dict[str, datetime]:
    return {d.id: d.due for d in g.state.deadlines}


def at_time(g: Game, when: datetime, command: object) -> Rejection | None:
    g.now = max(g.now, when)
    return g.send(command)


def rederived(state: GameState, now: datetime) -> dict[str, datetime]:
    """The dues as a later time change derives them again from their anchors."""
    ctx = Ctx(state.model_copy(deep=True), now, get_ruleset(state.ruleset))
    ctx.retime_deadlines()
    return {d.id: d.due for d in ctx.state.deadlines}


def test_judge_pause_ticks_are_no_ops_and_nothing_is_scheduled() -> None:
    g = classic_game()
    vote_sheriff_10(g, at(1, 10))
    g.advance(at(1, 21, 30))
    assert at_time(g, at(1, 21, 30), JudgePause()) is None
    paused = g.state
    assert paused.paused_at == at(1, 21, 30) and paused.next_deadline() is None
    assert handle(paused, Tick(deadline_id="night:1:see"), at(1, 23)) == (paused, [])
    again = at_time(g, at(1, 22), JudgePause())
    assert isinstance(again, Rejection) and again.code == "already_paused"
    assert render_rejection(again, "classic") == "本局已经暂停。"
    # a night action still records; a judge's time change waits for the resume
    assert g.send(Act(seat=4, skill="see", targets=(1,))) is None
    moved = g.send(JudgeSetTime(which="open", at=at(2, 10)))
    assert isinstance(moved, Rejection) and moved.code == "paused"
    g.advance(at(2, 12))  # nothing fires, not even the next open
    assert g.state.phase == "N1" and g.state.paused_at is not None


def test_judge_resume_when_not_paused_is_refused() -> None:
    g = classic_game()
    out = at_time(g, at(1, 10), JudgeResume())
    assert isinstance(out, Rejection) and out.code == "not_paused"
    schedule, before = g.state.schedule, dues(g)
    assert at_time(g, at(1, 10), JudgePause()) is None
    assert at_time(g, at(1, 10), JudgeResume()) is None  # a pause of no time moves nothing
    assert g.state.schedule == schedule and dues(g) == before


def test_judge_resume_shifts_every_pending_deadline_and_the_next_open() -> None:
    g = classic_game()
    vote_sheriff_10(g, at(1, 10))
    g.advance(at(1, 21, 30))
    before = dues(g)
    at_time(g, at(1, 21, 30), JudgePause())
    g.now = at(1, 23, 29) + timedelta(seconds=30)  # 1 h 59 min 30 s: rounded up to 2 h
    assert g.send(JudgeResume()) is None
    assert g.state.paused_at is None
    assert dues(g) == {k: v + timedelta(hours=2) for k, v in before.items()}
    assert dues(g)["night:1:see"] == at(2, 0, 30)
    assert g.state.schedule.open_at(2) == at(2, 11)
    assert g.state.schedule.close_at(1) == at(1, 21)  # what happened stays
    assert g.state.schedule.close_at(2) == at(2, 21)  # later days keep their daily times
    assert rederived(g.state, g.now) == dues(g)  # the shift survives a re-derivation
    resumed = next(e for e in g.log if e.type == "GameResumed")
    assert resumed.audience.public
    assert render_event(resumed, "classic") == (
        "法官恢复了本局，所有时限顺延 120 分钟。第2天开门时间：01-02 11:00。")
    # a later judge's move of the next open still moves what is anchored to it
    assert g.send(JudgeSetTime(which="open", at=at(2, 12))) is None
    assert dues(g)["day_open:2"] == at(2, 12)
    assert dues(g)["night:1:see"] == at(2, 0, 30)
    g.advance(at(2, 0, 30))
    assert g.state.seat(4).yellow == 1  # the seer missed the moved deadline


def test_judge_resume_by_day_moves_the_close_and_a_later_time_change_still_applies() -> None:
    g = classic_game()
    g.advance(at(1, 15))
    at_time(g, at(1, 15), JudgePause())
    assert g.send(Vote(seat=1, mode="vote", target=10)) is None  # votes during the pause
    at_time(g, at(1, 17), JudgeResume())
    assert dues(g)["day_close:1"] == at(1, 23)
    assert g.state.schedule.close_at(1) == at(1, 23)
    assert g.state.schedule.open_at(2) == at(2, 9)
    assert g.send(JudgeSetTime(which="close", at=at(1, 23, 30))) is None
    assert dues(g)["day_close:1"] == at(1, 23, 30)
    assert dues(g)["remind:day_close:1"] == at(1, 23)


def test_a_long_pause_moves_later_days_by_whole_days() -> None:
    g = classic_game()
    vote_sheriff_10(g, at(1, 10))
    g.advance(at(1, 21, 30))
    at_time(g, at(1, 21, 30), JudgePause())
    at_time(g, at(2, 11, 30), JudgeResume())  # 14 h: day 2 opens at 23:00
    sch = g.state.schedule
    assert sch.open_at(1) == at(1, 9) and sch.close_at(1) == at(1, 21)
    assert sch.open_at(2) == at(2, 23)
    assert sch.close_at(2) == at(3, 21) and sch.open_at(3) == at(4, 9)
    assert dues(g)["night:1:witch"] == at(2, 22)
    assert rederived(g.state, g.now) == dues(g)
    for day in range(1, 6):
        assert sch.open_at(day) < sch.close_at(day) < sch.open_at(day + 1)


def test_a_fast_game_shifts_its_whole_cycle() -> None:
    g = classic_game(first_open=at(1, 19), day_minutes=5, night_minutes=3,
                     options={"deadlines.witch": "2min", "deadlines.night_action": "1min",
                              "classic.guard_deadline": "1min", "reminders.before": 0})
    g.advance(at(1, 19, 2))
    at_time(g, at(1, 19, 2), JudgePause())
    at_time(g, at(1, 19, 12), JudgeResume())
    sch = g.state.schedule
    assert sch.open_at(1) == at(1, 19)  # it had opened
    assert sch.close_at(1) == at(1, 19, 15) and dues(g)["day_close:1"] == at(1, 19, 15)
    assert sch.open_at(2) == at(1, 19, 18) and sch.open_at(3) == at(1, 19, 26)
    g.advance(at(1, 19, 15))
    assert g.state.phase == "N1"
    assert dues(g)["day_open:2"] == at(1, 19, 18)


def test_judge_end_early_refuses_everything_after_and_reveals_roles_and_seed() -> None:
    g = classic_game()
    g.advance(at(1, 12))
    at_time(g, at(1, 12), JudgePause())
    assert g.send(JudgeEnd(reason="人数不足")) is None  # ending a paused game is fine
    state = g.state
    assert state.ended and state.over and state.phase == "END" and not state.winner
    assert state.deadlines == [] and state.next_deadline() is None and state.paused_at is None
    ended = next(e for e in g.log if e.type == "GameEnded")
    assert ended.audience.public and ended.data["seed"] == "s"
    text = render_event(ended, "classic")
    assert text.startswith("游戏结束：法官提前结束了本局，无胜负。原因：人数不足。")
    assert "1号狼人" in text and text.endswith("随机种子：s")
    for cmd in (Vote(seat=1, mode="vote", target=2), JudgeResume(), JudgePause(), JudgeEnd()):
        out = handle(state, cmd, at(1, 13))
        assert isinstance(out, Rejection) and out.code == "game_over"
    assert handle(state, Tick(deadline_id="day_close:1"), at(1, 22)) == (state, [])
    plain = classic_game()
    plain.now = at(1, 10)
    assert plain.send(JudgeEnd()) is None
    text = render_event(next(e for e in plain.log if e.type == "GameEnded"), "classic")
    assert text.startswith("游戏结束：法官提前结束了本局，无胜负。身份公示：")


def test_old_snapshots_load_unpaused_and_not_ended() -> None:
    g = classic_game()
    raw = g.state.model_dump(mode="json")
    del raw["paused_at"], raw["ended"]
    old = GameState.model_validate(raw)
    assert old.paused_at is None and not old.ended and old.next_deadline() is not None


def test_judge_commands_are_described_in_chinese() -> None:
    assert describe_command(JudgePause()) == "法官暂停本局"
    assert describe_command(JudgeResume()) == "法官恢复本局"
    assert describe_command(JudgeEnd(reason="人数不足")) == "法官提前结束本局"
