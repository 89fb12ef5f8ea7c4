"""Issue 13, point 3: one message stopped the bot for good. `judge_extend` to 9999-12-31 in a
New York game was accepted, and every later start died in `catch_up → instant_of:
OverflowError`. Now the engine bounds a judge's times, and start-up skips (and reports) a game
whose deadlines cannot be scheduled while the others run."""

from __future__ import annotations

from datetime import datetime

from schedhelp import linked, start_bot
from sqlalchemy import insert

from bot.store.models import DeadlineRow
from engine.commands import JudgeExtend

FAR = datetime(9999, 12, 31, 23, 59, 59)


def test_a_time_beyond_the_horizon_is_refused(db_url: str) -> None:
    bot = start_bot(db_url, tz="America/New_York")
    try:
        linked(bot, "ny")
        out = bot.sched.receive("ny", JudgeExtend(seat=11, at=FAR), msg_id="x",
                                sender="wx-judge")
        assert out.rejection is not None and out.rejection.code == "time_too_far"
    finally:
        bot.close()


def test_start_up_skips_and_reports_a_game_it_cannot_schedule(db_url: str) -> None:
    bot = start_bot(db_url, tz="America/New_York")
    linked(bot, "ny")
    linked(bot, "g2")
    # A deadline no clock reaches, as an older bot could store it.
    with bot.service.db.write() as s:
        s.execute(insert(DeadlineRow).values(game_id="ny", deadline_id="extend:bad",
                                             kind="night", due=FAR))
    bot.restart(bot.at(2, 10))  # down over night 1: g2's deadlines passed meanwhile
    try:
        assert "ny" in bot.sched.broken and "OverflowError" in bot.sched.broken["ny"]
        assert bot.ticks("g2") and bot.state("g2").phase != "D1"  # the other game caught up
        alerts = [r for r in bot.outbox("ny") if r[1] == "judge" and "无法处理本局" in r[3]]
        assert len(alerts) == 1 and alerts[0][2] == "judge"
        bot.restart(bot.at(2, 11))  # and again: still running, the judge told only once
        assert "ny" in bot.sched.broken
        alerts = [r for r in bot.outbox("ny") if r[1] == "judge" and "无法处理本局" in r[3]]
        assert len(alerts) == 1
    finally:
        bot.close()


def test_sync_of_one_bad_deadline_keeps_the_games_other_jobs(db_url: str) -> None:
    bot = start_bot(db_url, tz="America/New_York")
    try:
        linked(bot, "g1")
        with bot.service.db.write() as s:
            s.execute(insert(DeadlineRow).values(game_id="g1", deadline_id="extend:bad",
                                                 kind="night", due=FAR))
        bot.sched.sync("g1")
        assert "g1" in bot.sched.broken
        assert bot.jobs("g1") and not any("extend:bad" in j for j in bot.jobs("g1"))
    finally:
        bot.close()
