"""Restarts in the middle of every kind of night, a week-long game and a fast game, all on the
fake clock. A restart stops the bot (no goodbye) and starts a new process on the same database
an hour "later": what passed while it was down fires once, in time order, before any new
message, and the result equals a run without a restart, row for row, except that a reminder
whose deadline passed while the bot was down is not sent (issue 13 (12))."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from schedhelp import (
    Bot,
    assert_card_announced,
    assert_ticks_once,
    judge_text,
    linked,
    quiet_night,
    rows,
    start_bot,
    vote_all,
)
from sqlalchemy import select

from bot.store.models import OutboxRow
from engine.commands import Act

Step = tuple[tuple[int, int, int], Callable[[Bot], Any]]


def act(seat: int, skill: str, *targets: int | None) -> Callable[[Bot], Any]:
    def run(bot: Bot) -> None:
        assert bot.say(Act(seat=seat, skill=skill, targets=targets)).accepted

    return run


DAY_1: list[Step] = [((1, 0, 10), lambda b: linked_in(b)), ((1, 10, 0), lambda b: vote_all(b, 12))]


def linked_in(bot: Bot) -> None:
    assert bot.say(Act(seat=7, skill="link", targets=(8, 9))).accepted


# Night 1, two ways. A: the witch answers after 通灵, so the night resolves at 23:10.
# B: the witch stays silent, so the night resolves at her 08:00 deadline (with her card).
NIGHT_A = DAY_1 + [((1, 21, 30), act(1, "kill", 10)), ((1, 21, 40), act(4, "see", 1)),
                   ((1, 21, 50), act(6, "guard", 11)), ((1, 23, 10), act(5, "pass"))]
NIGHT_B = DAY_1 + [((1, 21, 30), act(1, "kill", 10)), ((1, 21, 40), act(4, "see", 1))]
SCRIPTS = {"A": NIGHT_A, "B": NIGHT_B}
END = (2, 10, 0)

# (script, down at, up at, what kind of night)
RESTARTS = [
    ("A", (1, 22, 0), (1, 23, 0), "deadlines passed while down (22:30: kill final, 通灵, cards)"),
    ("A", (1, 23, 20), (2, 0, 20), "nothing due while down (resolved at 23:10)"),
    ("A", (1, 21, 55), (1, 22, 5), "reminders passed while down"),
    ("B", (1, 22, 0), (1, 23, 0), "deadlines passed while down"),
    ("B", (1, 7 + 24, 30), (2, 8, 30), "resolution due while down (witch at 08:00)"),
    ("B", (1, 23, 30), (2, 0, 30), "nothing due while down (waiting for the witch)"),
    ("B", (2, 8, 30), (2, 9, 30), "the day's opening due while down"),
    ("B", (1, 21, 55), (2, 9, 55), "the whole night while down (no reminder for what passed)"),
]


def _norm(when: tuple[int, int, int]) -> tuple[int, int, int]:
    day, hh, mm = when
    return (day + hh // 24, hh % 24, mm)


def play(bot: Bot, steps: list[Step], end: tuple[int, int, int],
         down: tuple[int, int, int] | None = None, up: tuple[int, int, int] | None = None
         ) -> None:
    restarted = down is None
    for when, step in steps:
        if not restarted and _norm(when) >= _norm(down):  # type: ignore[arg-type]
            bot.to(*_norm(down))  # type: ignore[arg-type]
            bot.restart(bot.at(*_norm(up)))  # type: ignore[arg-type]
            restarted = True
        bot.to(*when)
        step(bot)
    if not restarted:
        bot.to(*_norm(down))  # type: ignore[arg-type]
        bot.restart(bot.at(*_norm(up)))  # type: ignore[arg-type]
    bot.to(*end)


# When a late reminder really went out (Tick.fired_at) is what a restart changes by nature.
FIRED_AT = re.compile(r" fired_at=\S+")


def _unfired(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "fired_at"} if body.get("kind") == "tick" \
        else body


def record(bot: Bot) -> dict[str, Any]:
    with bot.service.db.read() as s:
        outbox = [(r.dedupe_key, r.channel, r.target, FIRED_AT.sub("", r.text))
                  for r in s.scalars(select(OutboxRow).order_by(OutboxRow.id))]
    return {"state": bot.state().model_dump(),
            "log": [(r.seq, r.kind, r.type, r.at, _unfired(r.body), r.msg_id)
                    for r in bot.log()],
            "outbox": sorted(outbox), "jobs": bot.jobs()}


def without_passed_reminders(rec: dict[str, Any], lo: datetime, hi: datetime
                             ) -> dict[str, Any]:
    """The record `rec` of a run without a restart, as a restart down over (lo, hi] must leave
    it: a reminder due then whose own deadline is due by `hi` fires but says nothing, so its
    events and messages are gone and the later log rows move up."""
    log = rec["log"]
    fired = {r[4]["deadline_id"]: r[3] for r in log if r[2] == "tick"}
    silent = {r[5] for r in log if r[2] == "tick" and lo < r[3] <= hi
              and r[4]["deadline_id"].startswith("remind:")
              and fired.get(r[4]["deadline_id"].removeprefix("remind:"), hi) <= hi}
    gone = {r[0] for r in log if r[1] == "event" and r[5] in silent}
    heads = {r[0] for r in log if r[1] == "command" and r[5] in silent}
    kept = [r for r in log if r[0] not in gone]
    seq = {r[0]: n for n, r in enumerate(kept, 1)} | {0: 0}
    outbox = []
    for key, channel, target, text in rec["outbox"]:
        gid, old, tail = key.split("/", 2)
        if int(old) in gone:
            continue
        if channel == "judge" and int(old) in heads:
            text = text.split("\n")[0]  # the judge's digest of the tick: its title only
        outbox.append((f"{gid}/{seq[int(old)]}/{tail}", channel, target, text))
    return {**rec, "log": [(seq[r[0]], *r[1:]) for r in kept], "outbox": sorted(outbox)}


def by_line(rec: dict[str, Any]) -> dict[str, Any]:
    """The record with its messages as what each recipient read, line by line: a restart
    that fires what passed while it was down does so in one step, so each recipient gets it
    as one message (bot/outbox.py turns) where the clean run sent one a deadline; nothing may
    be lost or said twice all the same."""
    lines = Counter((channel, target, line) for _, channel, target, text in rec["outbox"]
                    for line in text.split("\n"))
    return {**rec, "outbox": sorted(lines.items())}


@pytest.fixture(scope="module")
def clean_runs(tmp_path_factory: pytest.TempPathFactory, migrated_sqlite: Path
               ) -> dict[str, dict[str, Any]]:
    import shutil

    out = {}
    for name, steps in SCRIPTS.items():
        path = tmp_path_factory.mktemp(f"clean-{name}") / "wolfjudge.db"
        shutil.copy(migrated_sqlite, path)
        bot = start_bot(f"sqlite:///{path}")
        bot.new_game()
        play(bot, steps, END)
        out[name] = record(bot)
        bot.close()
    return out


@pytest.mark.parametrize(("script", "down", "up", "kind"), RESTARTS,
                         ids=[f"{r[0]}-{r[3].split(' (')[0]}" for r in RESTARTS])
def test_restart_mid_night_loses_and_duplicates_nothing(
        db_url: str, clean_runs: dict[str, dict[str, Any]], script: str,
        down: tuple[int, int, int], up: tuple[int, int, int], kind: str) -> None:
    bot = start_bot(db_url)
    try:
        bot.new_game()
        seen: list[int] = []  # log length when the bot went down
        original = bot.restart

        def restart(at: datetime) -> None:
            seen.append(len(bot.log()))
            original(at)

        bot.restart = restart  # type: ignore[method-assign]
        play(bot, SCRIPTS[script], END, down, up)
        assert_ticks_once(bot)
        lo, hi = bot.wall(*_norm(down)), bot.wall(*_norm(up))
        passed = [r[4]["deadline_id"] for r in clean_runs[script]["log"]
                  if r[2] == "tick" and lo < r[3] <= hi]
        # What passed while down fired at start-up, in time order, before any message:
        assert len([o for o in bot.caught_up if o.accepted]) == len(passed), kind
        after = [r for r in bot.log()[seen[0]:] if r.kind == "command"][:len(passed)]
        assert [r.body.get("deadline_id") for r in after] == passed
        expected = without_passed_reminders(clean_runs[script], lo, hi)
        assert (expected != clean_runs[script]) == ("no reminder" in kind)
        assert by_line(record(bot)) == by_line(expected), kind
    finally:
        bot.close()


def test_a_restart_before_a_message_fires_the_passed_deadline_first(db_url: str) -> None:
    bot = start_bot(db_url)
    try:
        bot.new_game()
        play(bot, DAY_1, (1, 20, 0))
        bot.restart(bot.at(1, 21, 10))  # down over the 21:00 close
        assert bot.state().phase == "N1"  # caught up before any message
        assert bot.say(Act(seat=4, skill="see", targets=(1,))).accepted
        assert_ticks_once(bot)
    finally:
        bot.close()


# a week ---------------------------------------------------------------------------------------
def test_a_week_long_classic_game_on_the_fake_clock(bot: Bot) -> None:
    """Seven days and six nights: sheriff election, kills, exiles, a silent night with its
    cards, reminders, last words and handovers left to their deadlines, until the village wins
    on day 7. Only the fake clock and the players' messages drive it."""
    linked(bot)
    bot.to(1, 10)
    vote_all(bot, 12)  # 12 is sheriff
    exiles = {2: 1, 3: None, 4: 2, 5: None, 6: None, 7: 3}
    kills: dict[int, int | None] = {1: None, 2: 12, 4: 11, 5: None, 6: None}
    for day in range(1, 8):
        if day >= 2:
            bot.to(day, 10)
            vote_all(bot, exiles[day])
        if day == 7:
            break
        bot.to(day, 21, 5)
        if day in kills:
            quiet_night(bot, kill=kills[day])
        # night 3: nobody acts; the deadlines pass (killers, seer, witch: one yellow each)
    bot.to(7, 21)
    state = bot.state()
    assert state.winner == "village" and state.day == 7
    fired = {d.split(":")[0] for d in bot.ticks()}
    assert fired >= {"day_open", "day_close", "night", "handover", "lastwords", "remind"}
    assert {s.seat: s.yellow for s in state.seats if s.yellow} == {3: 1, 4: 1, 5: 1, 2: 1,
                                                                    12: 1}
    assert bot.jobs() == {}  # the game is over: no job is left
    assert_ticks_once(bot)


# a fast game --------------------------------------------------------------------------------------
FAST = {"deadlines.night_action": "1min", "classic.guard_deadline": "1min",
        "deadlines.witch": "2min", "deadlines.after_exile": "1min",
        "deadlines.proxy_cutoff": "1min", "deadlines.change_freeze": "1min",
        "reminders.before": "1min"}


def test_a_fast_game_two_minute_nights_end_to_end(bot: Bot) -> None:
    bot.clock.set(bot.at(1, 18, 50))
    first_open = bot.wall(1, 19)
    bot.new_game(first_open=first_open, day_minutes=5, night_minutes=2, options=FAST)
    assert bot.say(Act(seat=7, skill="link", targets=(8, 9))).accepted
    assert bot.jobs()["g1:day_open:1"] == bot.at(1, 19)
    minute = timedelta(minutes=1)
    while bot.state().winner is None:
        state = bot.state()
        if state.phase.startswith("D"):
            wolves = [s.seat for s in state.living() if s.role == "wolf"]
            vote_all(bot, wolves[0] if state.day >= 2 else 12)
            bot.run_until(bot.clock.now() + 5 * minute)
        elif state.phase.startswith("N") and not state.night.resolved:
            villager = next(s.seat for s in state.living() if s.role == "villager")
            quiet_night(bot, kill=villager)
            bot.run_until(bot.clock.now() + 2 * minute)
        else:
            bot.run_until(bot.clock.now() + minute)
        assert bot.clock.now() < bot.at(1, 21), "a fast game takes an evening, not longer"
    state = bot.state()
    assert state.winner == "village" and not any(s.yellow for s in state.seats)
    opens = [r.at for r in bot.events("DayOpened")]
    assert opens[:3] == [first_open + timedelta(minutes=7 * k) for k in range(3)]
    assert_ticks_once(bot)


# reminders after downtime -------------------------------------------------------------------
@pytest.mark.parametrize(("up", "reminded"), [((1, 10, 0), False), ((1, 8, 45), True)],
                         ids=["up-after-the-deadline", "up-before-the-deadline"])
def test_p_dl_6_no_reminder_for_a_deadline_that_passed_while_down(
        bot: Bot, up: tuple[int, int, int], reminded: bool) -> None:
    """Cupid's reminder is due at 08:30 for his 09:00 deadline (C-SETUP-3). The bot is down from
    08:00: back at 10:00, the catch-up sends no reminder for the passed deadline (issue 13 (12)),
    and the card comes as usual; back at 08:45, the late reminder is still worth sending."""
    bot.new_game(judge_feed="all")  # the judge hears of reminders (法官通知 全部)
    bot.to(1, 8, 0)
    bot.restart(bot.at(*up))
    bot.to(1, 10, 0)
    reminders = rows(bot, "Reminder")
    assert bool(reminders) == reminded, reminders
    assert ("尚未完成开局行动（截止 03-02 09:00）：7号" in judge_text(bot)) == reminded
    assert "remind:setup:cupid" in bot.ticks()  # it fired, and chose to say nothing
    state = bot.state()
    assert state.seat(7).yellow == 1 and state.phase == "D1"
    assert rows(bot, "DeadlineMissed")[0][1:3] == ("dm", "seat:7")
    assert_card_announced(bot, 7, "yellow", secret=True)
    assert_ticks_once(bot)
