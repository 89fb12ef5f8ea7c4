"""Time zones with daylight-saving time: a deadline in the spring-forward gap or in the repeated
hour of a fall-back fires exactly once, at a sensible moment, and the game's clock never goes
back."""

from __future__ import annotations

from bisect import bisect_left
from datetime import UTC, date, datetime, timedelta

import pytest
from schedhelp import Bot, assert_ticks_once, linked, start_bot, vote_all

from bot.gametime import instant_of, wall_clock, zone
from engine.commands import Act

SECOND = timedelta(seconds=1)

# (zone, a calendar day whose night crosses the change, the change's instant in UTC)
SPRING = [("America/New_York", date(2026, 3, 7), datetime(2026, 3, 8, 7, 0, tzinfo=UTC)),
          ("Europe/Berlin", date(2026, 3, 28), datetime(2026, 3, 29, 1, 0, tzinfo=UTC))]
FALL = [("America/New_York", date(2026, 10, 31), datetime(2026, 11, 1, 6, 0, tzinfo=UTC)),
        ("Europe/Berlin", date(2026, 10, 24), datetime(2026, 10, 25, 1, 0, tzinfo=UTC))]


@pytest.mark.parametrize("name", ["Asia/Shanghai", "America/New_York", "Europe/Berlin",
                                  "Australia/Lord_Howe"])
def test_wall_clock_and_instants_agree_minute_by_minute(name: str) -> None:
    """wall_clock(t) >= w exactly when t >= instant_of(w); the wall clock never goes back."""
    tz = zone(name)
    for day in (date(2026, 3, 8), date(2026, 3, 29), date(2026, 4, 5), date(2026, 10, 4),
                date(2026, 10, 25), date(2026, 11, 1)):
        w0 = datetime.combine(day, datetime.min.time()) - timedelta(hours=1)
        t0 = instant_of(w0, tz)
        instants = [t0 + timedelta(minutes=m) for m in range(6 * 60)]
        walls = [wall_clock(t, tz) for t in instants]
        assert walls == sorted(walls)
        for m in range(6 * 60):
            w = w0 + timedelta(minutes=m)
            first = instant_of(w, tz)
            assert bisect_left(walls, w) == bisect_left(instants, first), (name, w)


def test_an_unknown_zone_is_refused(bot: Bot) -> None:
    with pytest.raises(ValueError, match="time zone"):
        bot.new_game(time_zone="Mars/Olympus_Mons")
    assert bot.service.game_ids() == []


def _night_1(bot: Bot, options: dict[str, object]) -> None:
    linked(bot, options=options)
    bot.to(1, 10)
    vote_all(bot, 12)
    bot.to(1, 21)
    assert bot.state().phase == "N1"


@pytest.mark.parametrize(("name", "start", "change"), SPRING, ids=[s[0] for s in SPRING])
def test_a_deadline_in_the_spring_forward_gap_fires_once_when_the_clocks_jump(
        db_url: str, name: str, start: date, change: datetime) -> None:
    bot = start_bot(db_url, tz=name, start=start)
    try:
        gap = "02:30"  # does not exist that night
        _night_1(bot, {"deadlines.witch": gap, "deadlines.night_action": "5h30min"})
        jobs = bot.jobs()
        for key in ("kill", "see", "witch"):  # 02:30, in the gap
            assert jobs[f"g1:night:1:{key}"] == change
        assert jobs["g1:remind:night:1:kill"] == change  # 02:00: the gap too
        bot.run_until(change - SECOND)
        assert not any(s.yellow for s in bot.state().seats)
        bot.run_until(change)
        state = bot.state()
        assert state.night.resolved
        assert {s.seat for s in state.seats if s.yellow} == {1, 2, 3, 4, 5}
        ticks = bot.ticks()
        for key in ("kill", "see", "witch"):
            assert ticks.count(f"night:1:{key}") == 1
        assert bot.events("NightResolving")[0].at == bot.wall(2, 2, 30)
        bot.to(2, 9)  # 09:00 on the new offset
        assert bot.state().phase == "D2"
        assert bot.jobs()["g1:day_close:2"] == bot.at(2, 21)
        assert [r.at for r in bot.log()] == sorted(r.at for r in bot.log())
        assert_ticks_once(bot)
    finally:
        bot.close()


@pytest.mark.parametrize(("name", "start", "change"), FALL, ids=[s[0] for s in FALL])
def test_a_deadline_in_the_repeated_hour_fires_once_and_time_never_goes_back(
        db_url: str, name: str, start: date, change: datetime) -> None:
    bot = start_bot(db_url, tz=name, start=start)
    try:
        tz = zone(name)
        repeated = change.astimezone(tz).replace(tzinfo=None) + timedelta(minutes=30)
        hhmm = repeated.strftime("%H:%M")  # 01:30 in New York, 02:30 in Berlin: twice
        _night_1(bot, {"deadlines.witch": hhmm, "deadlines.night_action": "7h"})
        first = change - timedelta(minutes=30)  # its first occurrence
        assert bot.jobs()["g1:night:1:witch"] == first
        bot.run_until(first - SECOND)
        assert not bot.state().seat(5).yellow
        bot.run_until(first)
        assert bot.state().seat(5).yellow == 1
        # The same wall-clock time comes again an hour later: nothing fires twice, and a
        # message sent then is not dated before what the game has already seen.
        bot.run_until(first + timedelta(hours=1))
        assert wall_clock(bot.clock.now(), tz) < repeated + timedelta(minutes=30)
        assert bot.say(Act(seat=1, skill="kill", targets=(10,))).accepted
        bot.to(2, 9)
        assert bot.ticks().count("night:1:witch") == 1 and bot.state().seat(5).yellow == 1
        ats = [r.at for r in bot.log()]
        assert ats == sorted(ats)
        kill = [r for r in bot.log() if r.kind == "command" and r.type == "act"][-1]
        assert kill.at > repeated and not bot.state().seat(10).alive
        assert_ticks_once(bot)
    finally:
        bot.close()
