"""The driver itself: a real AsyncIOScheduler runs the jobs, the watchdog, the service hooks,
the chat console on a real scheduler and `wolfjudge run`."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from datetime import UTC, date, datetime, time

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from schedhelp import CLASSIC, Bot, FakeClock, assert_ticks_once

from bot.chat.clocked import ClockedBot
from bot.cli import main
from bot.gametime import instant_of, zone
from bot.scheduler import DeadlineScheduler
from bot.service import Service
from bot.store.models import Game

SHANGHAI = zone("Asia/Shanghai")


@pytest.mark.asyncio
async def test_a_real_asyncio_scheduler_runs_the_jobs(db_url: str) -> None:
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
        await play()
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


# the chat console on the real scheduler, and `wolfjudge run` -----------------------------------
@pytest.mark.asyncio
async def test_console_plays_from_lines_on_a_real_scheduler(db_url: str) -> None:
    """`ClockedBot.run_real`: a real AsyncIOScheduler, lines read on an executor thread; a judge
    makes and starts a game by chat, gives prior notice for two seats, a malformed line gets a
    note and the console goes on."""
    clock = FakeClock(datetime(2099, 3, 2, 10, 0, tzinfo=UTC))  # APScheduler: not yet due
    service = Service(db_url)
    out = io.StringIO()
    made = io.StringIO("J: 新游戏 经典\n")
    try:
        await ClockedBot(service, out, judges=["J"], clock=clock).run_real(made)
        code = re.search(r"游戏码 ([A-Z0-9]{4,8})", out.getvalue())
        assert code, out.getvalue()
        lines = "".join(f"p{n}: 报名 {code[1]} 马甲{n}\n" for n in range(1, 13))
        lines += "J: 开始\nJ: 报备 3\nnonsense\nJ: 报备 4号\n/echo done\n"
        await ClockedBot(service, out, judges=["J"], clock=clock).run_real(io.StringIO(lines))
    finally:
        service.close()
    text = out.getvalue()
    assert "你的座位：" in text and f"游戏 {code[1]} 已开始" in text
    assert "# ? write NAME: TEXT" in text and text.rstrip().endswith("# done")
    assert text.count(f"→ J: 【{code[1]}】开局") == 1  # the deal
    assert text.count(f"→ J: 【{code[1]}】法官登记") == 2  # the two notices
    service = Service(db_url)
    try:
        state = service.state(code[1])
        assert state.seat(3).notice and state.seat(4).notice
    finally:
        service.close()


def test_wolfjudge_console_without_clock_runs_on_the_real_clock(
        db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("J: 新游戏 异常\n/clock 2026-12-01 09:00\n"
                                                  "/echo done\n"))
    assert main(["console", "--db", db_url, "--judge", "J"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^→ J: .*游戏码 [A-Z0-9]{4,8}", out, re.M)
    assert "# ? /clock and /advance need --clock" in out and out.rstrip().endswith("# done")


def test_run_refuses_a_database_without_the_schema(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in (("WECHATY_PUPPET_SERVICE_ENDPOINT", "127.0.0.1:9"),
                        ("WECHATY_PUPPET_SERVICE_TOKEN", "t"), ("WOLFJUDGE_JUDGES", "J"),
                        ("WOLFJUDGE_DATABASE_URL", "sqlite://")):
        monkeypatch.setenv(name, value)
    assert main(["run"]) == 2  # before it connects to anything
    assert "wolfjudge migrate" in capsys.readouterr().err


def test_run_names_each_missing_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WECHATY_PUPPET_SERVICE_ENDPOINT", "WECHATY_PUPPET_SERVICE_TOKEN",
                 "WOLFJUDGE_JUDGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WECHATY_PUPPET_SERVICE_TOKEN", "t")
    with pytest.raises(SystemExit) as exc:
        main(["run"])
    message = str(exc.value)
    assert "WECHATY_PUPPET_SERVICE_ENDPOINT is not set" in message
    assert "WOLFJUDGE_JUDGES is not set" in message and "TOKEN" not in message


def test_a_fast_game_in_another_zone_exports_and_verifies(db_url: str) -> None:
    import json

    from schedhelp import start_bot

    from bot.audit import export_game, timeline, verify_export

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
