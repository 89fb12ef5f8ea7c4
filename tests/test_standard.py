"""The standard board (docs/rules-standard.md) where a scenario cannot say it: options refused at
creation (S-OPT-1), the boards' deals (S-SETUP-1), what the wolves are never told (S-WOLF-2)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest

from bot.chat.lobby import LobbyError, check_game, split_options
from bot.render import render_for_judge
from engine import handle, new_game
from engine.commands import Act, Tick, Vote
from engine.events import Rejection
from engine.options import OptionError

START = date(2026, 1, 1)
IDIOT_BOARD = ["wolf"] * 4 + ["seer", "witch", "hunter", "idiot"] + ["villager"] * 4


def _game(options: dict[str, Any] | None = None, **kw: Any) -> Any:
    args: dict[str, Any] = {"ruleset": "standard", "game_id": "t", "seed": "s", "start": START,
                            "options": options or {}}
    args.update(kw)
    if "roles" not in args:
        args.setdefault("players", 12)
    return new_game(**args)


@pytest.mark.parametrize(("key", "value"), [
    ("standard.board", "预女猎狼"),
    ("standard.seer_words", "village_partition"),
    ("standard.witch_self_save", True),
    ("standard.guard_save_collision", "maybe"),
    ("standard.hunter_poisoned_shoots", "yes"),
    ("standard.hunter_killed_and_poisoned", "shoots"),
    ("standard.hunter_killed_and_poisoned", True),
    ("standard.day1", "exile_only"),
    ("standard.sheriff_signup", "25:00"),
    ("standard.sheriff_withdraw", "soon"),
    ("standard.sheriff_tie", "first_to_reach"),
    ("standard.sheriff_weight", 3),
    ("standard.sheriff_weight", "1.7"),
    ("standard.sheriff_weight", True),
    ("standard.self_destruct", "never"),
    ("standard.last_words", "first_night_and_exiles"),
    ("standard.win", "city"),
    ("standard.no_such_key", 1),
])
def test_S_OPT_1_a_bad_value_is_refused_at_creation_naming_the_key(key: str, value: Any) -> None:
    with pytest.raises(OptionError, match=key.replace(".", r"\.")):
        _game({key: value})


def test_S_OPT_1_the_withdrawal_may_not_come_before_the_sign_up() -> None:
    with pytest.raises(OptionError, match="standard.sheriff_withdraw"):
        _game({"standard.sheriff_signup": "15:00", "standard.sheriff_withdraw": "14:00"})
    with pytest.raises(OptionError, match="standard.sheriff_withdraw"):
        _game({"standard.sheriff_signup": "3h", "standard.sheriff_withdraw": "2h"})
    _game({"standard.sheriff_signup": "3h", "standard.sheriff_withdraw": "11:00"})  # mixed: ok


@pytest.mark.rules("S-SHERIFF-2", "S-SHERIFF-3")
def test_S_SHERIFF_2_a_time_after_the_close_is_taken_as_the_close() -> None:
    """`standard.sheriff_signup=22:00`: the sign-up runs until day 1's 21:00 close; the
    default withdrawal (18:00) then follows it, at the close too."""
    check_game("standard", 12, {"standard.sheriff_signup": "22:00"})
    state, _ = _game({"standard.sheriff_signup": "22:00"}, now=datetime(2026, 1, 1, 7, 0))
    got = handle(state, Tick(deadline_id="day_open:1"), datetime(2026, 1, 1, 9, 0))
    assert not isinstance(got, Rejection)
    state, _ = got
    assert state.deadline("signup:1").due == datetime(2026, 1, 1, 21, 0)
    assert state.deadline("withdraw:1").due == datetime(2026, 1, 1, 21, 0)


@pytest.mark.rules("S-SHERIFF-2", "S-SHERIFF-3")
def test_S_SHERIFF_2_a_time_before_the_open_is_refused_with_the_reason() -> None:
    for key in ("standard.sheriff_signup", "standard.sheriff_withdraw"):
        with pytest.raises(ValueError, match=key.replace(".", r"\.")):
            _game({key: "08:00"})
        with pytest.raises(LobbyError) as refused:
            check_game("standard", 12, {key: "08:00"})
        assert "开门" in refused.value.fields["detail"], refused.value.fields
    _game({"standard.sheriff_signup": "08:00"}, open_time=datetime(2026, 1, 1, 7, 0).time())


def test_S_OPT_1_a_fast_game_takes_durations_only() -> None:
    fast = {"first_open": datetime(2026, 1, 1, 19, 0), "day_minutes": 40, "night_minutes": 20}
    durations = {"deadlines.witch": "10min", "standard.sheriff_signup": "10min",
                 "standard.sheriff_withdraw": "20min"}
    _game(durations, **fast)
    with pytest.raises(ValueError, match="standard.sheriff_signup"):
        _game({**durations, "standard.sheriff_signup": "19:10"}, **fast)


def test_S_OPT_1_the_chat_values_are_read_and_checked() -> None:
    """`新游戏 标准 standard.sheriff_weight=1.5` gives the text "1.5": it is read as the number."""
    engine, _ = split_options(["standard.sheriff_weight=1.5", "standard.board=预女猎守"])
    check_game("standard", 12, engine)
    state, _ = _game(engine)
    assert state.options["standard.sheriff_weight"] == 1.5
    with pytest.raises(LobbyError):
        check_game("standard", 12, split_options(["standard.sheriff_weight=5"])[0])
    with pytest.raises(LobbyError):
        check_game("standard", 13, {})


def test_S_SETUP_1_the_two_boards_deal_their_roles() -> None:
    state, _ = _game()
    assert sorted(s.role for s in state.seats) == sorted(IDIOT_BOARD)
    state, _ = _game({"standard.board": "预女猎守"})
    assert sorted(s.role for s in state.seats) == sorted(
        ["guard" if r == "idiot" else r for r in IDIOT_BOARD])
    assert {s.camp for s in state.seats if s.role == "wolf"} == {"wolves"}
    assert {s.camp for s in state.seats if s.role != "wolf"} == {"village"}
    with pytest.raises(ValueError, match="idiot"):
        _game({"standard.board": "预女猎守"}, roles=IDIOT_BOARD)
    with pytest.raises(ValueError, match="guard"):
        _game(roles=["guard" if r == "idiot" else r for r in IDIOT_BOARD])


START = datetime(2026, 1, 1, 0, 0)  # before the game's first deadline


def _send(state: Any, cmd: Any, now: datetime) -> tuple[Any, list[Any]]:
    """`cmd` handled at `now`: the new state and its events (a refusal fails)."""
    out = handle(state, cmd, now)
    assert not isinstance(out, Rejection), (cmd, out)
    return out[0], list(out[1])


def _fire_next(state: Any) -> tuple[Any, datetime, list[Any], Any]:
    """The next deadline fired at its time: the state, that time, its events, the deadline."""
    dl = state.next_deadline()
    assert dl is not None
    state, evs = _send(state, Tick(deadline_id=dl.id), dl.due)
    return state, dl.due, evs, dl


def _night_1(state: Any, seen: list[Any], cmds: Any) -> tuple[Any, list[Any]]:
    """The deadlines fired up to night 1, then `cmds` sent: the state and every event
    (`seen` first)."""
    now = START
    while state.phase != "N1":
        state, now, evs, _ = _fire_next(state)
        seen += evs
    for cmd in cmds:
        state, evs = _send(state, cmd, now)
        seen += evs
    return state, seen

def test_S_WOLF_2_the_wolves_get_no_kill_feedback() -> None:
    """Whatever the night, no event tells the killers how the kill went."""
    state, events = _game(roles=IDIOT_BOARD)
    state, seen = _night_1(state, list(events), (
        Act(seat=1, skill="kill", targets=(9,)), Act(seat=1, skill="lock"),
        Act(seat=6, skill="save", targets=(9,)), Act(seat=5, skill="see", targets=(1,))))
    assert state.night is not None and state.night.resolved
    wolves = {1, 2, 3, 4}
    told = [e for e in seen if e.phase == "N1" and not e.audience.public
            and wolves & set(e.audience.seats)]
    assert {e.type for e in told} <= {"NightPrompt", "KillRecorded", "KillLocked"}, told


@pytest.mark.rules("S-HUNTER-4")
@pytest.mark.parametrize(("value", "cause", "word", "shot"), [
    (None, "poison", "被毒杀", False), ("poison", "poison", "被毒杀", False),
    ("kill", "kill", "被指杀", True)])
def test_S_HUNTER_4_the_cause_the_judge_reads_and_the_shot(
        value: str | None, cause: str, word: str, shot: bool) -> None:
    """Killed and poisoned the same night: one going out, by the cause the option names, as
    the judge's feed and the 复盘 word it, with the shot that cause allows; the option is
    stored only when set away from its default (older games keep their options)."""
    options = {} if value is None else {"standard.hunter_killed_and_poisoned": value}
    state, events = _game(options, roles=IDIOT_BOARD)
    assert ("standard.hunter_killed_and_poisoned" in state.options) == (value == "kill")
    state, seen = _night_1(state, list(events), (
        Act(seat=1, skill="kill", targets=(7,)), Act(seat=1, skill="lock"),
        Act(seat=6, skill="poison", targets=(7,)), Act(seat=5, skill="see", targets=(1,))))
    outs = [e for e in seen if e.type == "SeatOut"]
    assert [(e.data["seat"], e.data["cause"]) for e in outs] == [(7, cause)]
    assert render_for_judge(outs[0], "standard") == f"7 号出局（{word}）。"
    assert any(e.type == "HunterDue" for e in seen) == shot


def _vote_reminders(state: Any, day: int, cmds: dict[str, list[Any]]) -> set[int]:
    """Tick the deadlines up to day `day`'s vote reminder, sending `cmds[phase]` as each
    phase begins; the seats that reminder DMs."""
    now, done = START, set()
    while True:
        if state.phase in cmds and state.phase not in done:
            done.add(state.phase)
            for cmd in cmds[state.phase]:
                state, _ = _send(state, cmd, now)
        state, now, evs, dl = _fire_next(state)
        if dl.id == f"remind:day_close:{day}":
            return {n for e in evs if e.type == "Reminder" for n in e.audience.seats}


@pytest.mark.rules("S-SHERIFF-4")
def test_S_SHERIFF_4_candidates_get_no_vote_reminder_on_day_1() -> None:
    """Only the election's voters are reminded to vote: not a candidate, nor one who
    withdrew (退水: he no longer votes)."""
    state, _ = _game(roles=IDIOT_BOARD)
    reminded = _vote_reminders(state, 1, {"D1": [
        Act(seat=5, skill="run"), Act(seat=9, skill="run"), Act(seat=1, skill="run"),
        Act(seat=1, skill="withdraw")]})
    assert reminded == set(range(1, 13)) - {1, 5, 9}


@pytest.mark.rules("S-IDIOT-1")
def test_S_IDIOT_1_a_revealed_idiot_gets_no_vote_reminder() -> None:
    """The revealed idiot has no vote: he is not reminded on the days after his reveal; the
    others who have not voted are."""
    state, _ = _game(roles=IDIOT_BOARD)
    night = [Act(seat=1, skill="kill", targets=(9,)), Act(seat=1, skill="lock"),
             Act(seat=5, skill="see", targets=(1,)), Act(seat=6, skill="pass")]
    exile_8 = [Vote(seat=n, target=8) for n in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)]
    reminded = _vote_reminders(state, 3, {"N1": night, "D2": exile_8,
                                          "D3": [Vote(seat=2, target=1)]})
    assert reminded == {1, 3, 4, 5, 6, 7, 10, 11, 12}
