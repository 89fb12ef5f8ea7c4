"""Deadline offsets as options, reminders, per-player extensions and fast games (P-DL-*)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from bot.scenario import Game
from engine import handle, new_game
from engine.commands import Act, JudgeExtend, Tick, Vote
from engine.events import Rejection
from engine.options import OptionError

CL = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid", "villager", "villager",
      "villager", "villager", "villager"]
DAY1 = date(2026, 1, 1)


def at(day: int, h: int, m: int = 0) -> datetime:
    return datetime(2026, 1, day, h, m)


def game(**kw: object) -> Game:
    state, events = new_game(ruleset="classic", game_id="g", seed="s", start=DAY1, roles=CL, **kw)
    g = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    g.record(events)
    assert g.send(Act(seat=7, skill="link", targets=(8, 9))) is None
    return g


def to_night_1(g: Game) -> None:
    g.advance(at(1, 10))
    for seat in range(1, 13):
        assert g.send(Vote(seat=seat, mode="vote", target=None if seat == 10 else 10)) is None
    g.advance(at(1, 21))


def of_type(g: Game, type_: str) -> list:
    return [e for e in g.log if e.type == type_]


def test_p_dl_2_reminder_goes_to_the_owing_seer_only_and_the_judge_gets_a_summary() -> None:
    g = game()
    to_night_1(g)
    assert g.send(Act(seat=1, skill="kill", targets=(11,))) is None
    g.advance(at(1, 22, 0))  # reminders.before = 30 min before the 22:30 deadlines
    reminders = [e for e in of_type(g, "Reminder") if e.data["duty"] == "night"]
    told = sorted(s for e in reminders for s in e.audience.seats)
    assert told == [4, 6]  # seer and guard owe; the killers answered; the witch's is at 08:00
    assert all(not e.audience.public and len(e.audience.seats) == 1 for e in reminders)
    summary = [e for e in of_type(g, "LateSummary") if e.data["duty"] == "night"]
    assert summary and not summary[-1].audience.seats and not summary[-1].audience.public


def test_p_vote_9_vote_reminder_at_close_minus_30_to_non_voters() -> None:
    g = game()
    g.advance(at(1, 10))
    for seat in range(1, 11):
        g.send(Vote(seat=seat, mode="vote", target=None))
    g.advance(at(1, 20, 30))
    told = sorted(s for e in of_type(g, "Reminder") for s in e.audience.seats)
    assert told == [11, 12]


def test_no_reminders_when_off() -> None:
    g = game(options={"reminders.before": 0})
    to_night_1(g)
    g.advance(at(2, 9))
    assert not of_type(g, "Reminder")


def test_judge_extends_one_players_deadline() -> None:
    g = game()
    to_night_1(g)
    assert g.send(JudgeExtend(seat=4, at=at(1, 23, 30))) is None
    g.advance(at(1, 23, 0))
    assert g.state.seat(4).yellow == 0  # the seer's deadline no longer passes at 22:30
    g.advance(at(1, 23, 30))
    assert g.state.seat(4).yellow == 1
    assert g.state.seat(1).yellow == 1  # the killers' own deadline stayed at 22:30


def test_extension_must_be_later_and_owed() -> None:
    g = game()
    to_night_1(g)
    assert g.send(JudgeExtend(seat=4, at=at(1, 22, 0))) is not None
    assert g.send(JudgeExtend(seat=8, at=at(1, 23, 0))) is not None  # 8 owes nothing tonight


def test_deadline_offsets_are_options() -> None:
    g = game(options={"deadlines.night_action": "30min", "deadlines.witch": "2h"})
    to_night_1(g)
    dues = {d.id: d.due for d in g.state.deadlines if d.kind == "night"}
    assert dues["night:1:kill"] == at(1, 21, 30)
    assert dues["night:1:see"] == at(1, 21, 30)
    assert dues["night:1:witch"] == at(1, 23, 0)


def test_bad_witch_deadline() -> None:
    with pytest.raises(OptionError, match="deadlines.witch"):
        new_game(ruleset="classic", game_id="g", seed="s", start=DAY1, roles=CL,
                 options={"deadlines.witch": "soon"})


def test_fast_game_cycles_and_needs_a_relative_witch_deadline() -> None:
    with pytest.raises(ValueError, match="fast game"):
        new_game(ruleset="classic", game_id="g", seed="s", start=DAY1, roles=CL,
                 first_open=at(1, 19), day_minutes=5, night_minutes=3)
    state, _ = new_game(ruleset="classic", game_id="g", seed="s", start=DAY1, roles=CL,
                        first_open=at(1, 19), day_minutes=5, night_minutes=3,
                        options={"deadlines.witch": "2min", "deadlines.night_action": "1min",
                                 "classic.guard_deadline": "1min", "reminders.before": 0})
    assert state.schedule.open_at(3) == at(1, 19, 16)
    assert state.schedule.close_at(3) == at(1, 19, 21)
    g = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    g.advance(at(1, 21))  # two hours of nobody acting: cards and exiles end the game
    assert g.state.winner is not None


def test_p_time_2_judge_changes_daily_times_from_the_next_day() -> None:
    from datetime import time

    from engine.commands import JudgeSetSchedule

    g = game()
    g.advance(at(1, 12))
    assert g.send(JudgeSetSchedule(open=time(10, 0), close=time(22, 0))) is None
    assert g.state.schedule.close_at(1) == at(1, 21)  # today keeps its close
    assert g.state.schedule.open_at(2) == at(2, 10)
    assert g.state.schedule.close_at(2) == at(2, 22)
    assert g.state.deadline("day_open:2") is None  # created at tonight's close, from the new time
    assert g.send(JudgeSetSchedule(open=time(22, 0), close=time(10, 0))) is not None


def test_p_time_2_impossible_schedules_are_refused() -> None:
    from engine.commands import JudgeSetTime

    g = game()  # SETUP: D1 cannot open after it closes
    assert g.send(JudgeSetTime(which="open", at=at(1, 22))) is not None
    g.advance(at(1, 12))  # D1: D2 may not open after it closes; D1 may not close after D2 opens
    assert g.send(JudgeSetTime(which="open", at=at(2, 22))) is not None
    assert g.send(JudgeSetTime(which="open", at=at(2, 8))) is None
    assert g.send(JudgeSetTime(which="close", at=at(2, 8, 30))) is not None
    assert g.send(JudgeSetTime(which="close", at=at(1, 23))) is None
    fast, _ = new_game(ruleset="classic", game_id="f", seed="s", start=DAY1, roles=CL,
                       first_open=at(1, 19), day_minutes=40, night_minutes=20,
                       options={"deadlines.witch": "15min"})
    f = Game(state=fast, now=datetime(2026, 1, 1), ruleset="classic")
    f.advance(at(1, 19, 10))
    # D2 opening at 20:30 would close at 21:10, after D3 opens at 21:00: refused.
    assert f.send(JudgeSetTime(which="open", at=at(1, 20, 30))) is not None
    assert f.send(JudgeSetTime(which="open", at=at(1, 20, 10))) is None
    assert f.state.schedule.close_at(2) == at(1, 20, 50)
    assert f.send(JudgeSetTime(which="close", at=at(1, 19, 50))) is None


def test_night_duty_cards_stay_between_the_player_and_the_judge() -> None:
    g = game()
    to_night_1(g)
    g.advance(at(2, 12))  # the killers, the seer and the witch missed their deadlines
    cards = {s.seat: s.yellow for s in g.state.seats if s.yellow}
    assert cards == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
    public = [e for e in g.log if e.audience.public]
    assert not [e for e in public if e.type == "YellowCardPublic"]
    assert all(not e.data.get("cards") for e in public if e.type == "DayOpened")
    secret = {e.data["seat"] for e in g.log if e.type == "YellowCardSecret"}
    assert secret == {1, 2, 3, 4, 5}
    open_g = game(options={"public.announce_night_cards": True})
    to_night_1(open_g)
    open_g.advance(at(2, 12))
    assert {e.data["seat"] for e in open_g.log if e.type == "YellowCardPublic"} == {1, 2, 3, 4, 5}


@pytest.mark.parametrize(("fired_at", "reminded"), [(None, True), (at(1, 8, 45), True),
                                                    (at(1, 9), False), (at(1, 10), False)])
def test_p_dl_6_a_reminder_fired_at_or_after_its_deadline_says_nothing(
        fired_at: datetime | None, reminded: bool) -> None:
    """Cupid's reminder (08:30, for 09:00) fired late after downtime: no reminder once its own
    deadline is due when it really goes out (issue 13 (12)); the deadline is unchanged."""
    state, _ = new_game(ruleset="classic", game_id="g", seed="s", start=DAY1, roles=CL)
    out = handle(state, Tick(deadline_id="remind:setup:cupid", fired_at=fired_at), at(1, 8, 30))
    assert not isinstance(out, Rejection)
    after, events = out
    assert bool([e for e in events if e.type == "Reminder"]) == reminded
    assert bool([e for e in events if e.type == "LateSummary"]) == reminded
    assert after.deadline("remind:setup:cupid") is None and after.deadline("setup:cupid")


@pytest.mark.rules("P-REVIEW-2")
def test_a_sheriff_killed_in_a_reviewed_night_keeps_his_time_to_hand_over() -> None:
    """Without the review the night resolves at the witch's 08:00 deadline and the killed
    sheriff has until the 09:00 open to name a successor; published at the open, he gets
    that hour from the publication, not a handover already due (a random one and a card)."""
    g = game(options={"resolve.judge_review": True})
    to_night_1(g)
    assert g.state.sheriff == 10
    assert g.send(Act(seat=1, skill="kill", targets=(10,))) is None
    g.advance(at(2, 9))
    assert g.state.phase == "D2" and not g.state.seat(10).alive
    assert g.state.handover_due == 10 and not of_type(g, "SheriffChanged")[1:]
    dl = g.state.deadline("handover:1")
    assert dl is not None and dl.due == at(2, 10)
