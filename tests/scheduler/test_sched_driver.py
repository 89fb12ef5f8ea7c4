"""The driver itself: a real AsyncIOScheduler runs the jobs, the watchdog, the service hooks,
the console transport and `wolfjudge run`."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, date, datetime, time

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from schedhelp import CLASSIC, Bot, FakeClock, assert_ticks_once

from bot.cli import main
from bot.console import Console
from bot.gametime import instant_of, zone
from bot.scheduler import DeadlineScheduler
from bot.service import Service
from bot.store.models import Game

SHANGHAI = zone("Asia/Shanghai")


def test_a_real_asyncio_scheduler_runs_the_jobs(db_url: str) -> None:
    """Every deadline of a game in 2020 is in the past for APScheduler's own clock, so its jobs
    run at once, concurrently, on a real event loop: nobody acts, and the jobs alone play the
    game to its end, each deadline once, in order."""
    start = date(2020, 1, 6)
    clock = FakeClock(instant_of(datetime.combine(start, time(8, 0)), SHANGHAI))
    service = Service(db_url)

    async def play() -> None:
        over = asyncio.Event()
        loop = asyncio.get_running_loop()

        def watch(game_id: str) -> None:
            if service.state(game_id).winner:
                loop.call_soon_threadsafe(over.set)

        service.on_commit.append(watch)
        service.create_game(game_id="g1", ruleset="classic", seed="s", start=start,
                            roles=CLASSIC, now=datetime.combine(start, time(0, 0)))
        sched = DeadlineScheduler(service, clock, AsyncIOScheduler(timezone=UTC))
        assert sched.start() == []  # 08:00 on the fake clock: nothing was due yet
        assert {j.id for j in sched.jobs("g1")} == {"g1:setup:cupid", "g1:day_open:1",
                                                   "g1:remind:setup:cupid"}
        try:
            await asyncio.wait_for(over.wait(), timeout=60)
        finally:
            sched.stop()

    try:
        asyncio.run(play())
        state = service.state("g1")
        assert state.winner is not None and state.day >= 1
        ticks = [r.msg_id for r in service.log("g1") if r.type == "tick"]
        assert len(ticks) == len(set(ticks)) > 3
        dues = [r.at for r in service.log("g1") if r.type == "tick"]
        assert dues == sorted(dues)
        assert service.rebuild("g1").ok
    finally:
        service.close()


def test_the_watchdog_catches_a_commit_made_elsewhere(bot: Bot) -> None:
    bot.new_game()
    other = Service(bot.db_url)  # another process (the CLI, a second bot) commits a change
    try:
        other.advance("g1", bot.wall(1, 9))
    finally:
        other.close()
    assert "g1:day_open:1" in bot.jobs() and "g1:day_close:1" not in bot.jobs()
    bot.clock.set(bot.at(1, 9, 5))
    bot.sched.watchdog()
    assert "g1:day_close:1" in bot.jobs() and "g1:day_open:1" not in bot.jobs()
    assert_ticks_once(bot)


def test_jobs_go_when_the_game_ends(bot: Bot) -> None:
    bot.new_game(roles=["wolf", "villager", "villager"], rooms={}, bindings={})
    assert bot.jobs()
    bot.to(6, 9)  # nobody acts: cards and kills end it within days
    assert bot.state().winner is not None and bot.jobs() == {}
    assert bot.aps.get_jobs() == []


def test_create_game_keeps_the_zone_and_the_fast_schedule(bot: Bot) -> None:
    first = bot.wall(1, 19)
    bot.new_game(first_open=first, day_minutes=5, night_minutes=2,
                 options={"deadlines.witch": "2min"}, time_zone="Europe/Berlin")
    with bot.service.db.read() as s:
        game = s.get(Game, "g1")
        assert game is not None and game.time_zone == "Europe/Berlin"
    assert bot.service.time_zone("g1") == "Europe/Berlin"
    assert bot.state().schedule.first_open == first
    assert bot.service.rebuild("g1").ok
    berlin = zone("Europe/Berlin")
    assert {j.id: j.trigger.run_date for j in bot.sched.jobs("g1")} == {
        f"g1:{d.id}": instant_of(d.due, berlin) for d in bot.state().deadlines}


def test_monotonic_submit_never_dates_a_message_before_the_game_clock(bot: Bot) -> None:
    bot.new_game()
    bot.service.advance("g1", bot.wall(1, 9, 0))
    out = bot.service.submit("g1", {"kind": "vote", "seat": 1, "target": 2},
                             now=bot.wall(1, 8), monotonic=True)
    assert out.accepted
    assert bot.log()[-2].at == bot.wall(1, 9)


# the console transport and `wolfjudge run` -----------------------------------------------------
def test_console_plays_a_fast_game_from_lines(db_url: str) -> None:
    clock = FakeClock(datetime(2099, 3, 2, 10, 0, tzinfo=UTC))  # APScheduler: not yet due
    service = Service(db_url)
    out = io.StringIO()
    lines = io.StringIO("new f1 fast\n"
                        "f1 {\"kind\": \"judge_waiver\", \"seat\": 3, \"waiver\": \"notice\"}\n"
                        "f1 3 vote\n"
                        "nonsense\n"
                        "f1 judge notice 4\n")
    try:
        asyncio.run(Console(service, clock, out).serve(lines))
    finally:
        service.close()
    text = out.getvalue()
    assert "active game(s)" in text and "game f1 created (Asia/Shanghai)" in text
    assert "→ [f1 public] 游戏创建" in text and "→ [f1 judge]" in text
    assert text.count("accepted") == 2 and "? not understood" in text
    service = Service(db_url)
    try:
        state = service.state("f1")
        assert state.schedule.cyclic and state.seat(3).notice and state.seat(4).notice
    finally:
        service.close()


def test_run_refuses_a_database_without_the_schema(tmp_path: object,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--db", "sqlite://"]) == 2
    assert "wolfjudge migrate" in capsys.readouterr().err


def test_a_fast_game_in_another_zone_exports_and_verifies(db_url: str) -> None:
    import json

    from schedhelp import start_bot

    from bot.store.audit import export_game, timeline, verify_export

    bot = start_bot(db_url, tz="Europe/Berlin")
    try:
        bot.clock.set(bot.at(1, 18, 50))
        bot.new_game(first_open=bot.wall(1, 19), day_minutes=5, night_minutes=2,
                     options={"deadlines.witch": "2min", "deadlines.night_action": "1min",
                              "classic.guard_deadline": "1min"})
        bot.to(1, 21)  # nobody acts: cards end it
        assert bot.state().winner is not None
        data = json.loads(json.dumps(export_game(bot.service, "g1"), ensure_ascii=False))
        published = bot.events("GameCreated")[0].body["data"]["commitment"]
    finally:
        bot.close()
    assert data["game"]["time_zone"] == "Europe/Berlin"
    assert all(c.ok for c in verify_export(data, commitment=published))
    assert "Europe/Berlin 当地时间" in timeline(data)
