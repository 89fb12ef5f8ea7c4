"""Pacing (issue 9): sends spaced account-wide and per room, a daily cap, room creations per
hour refused past the limit. On looptime's virtual loop clock: nothing here waits for real."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

import looptime
import pytest

from bot.transport import Refused
from bot.transport.pacing import Pacer, PacingSettings


def run(make: Callable[[], Awaitable[Any]]) -> Any:
    loop = looptime.new_event_loop(start=0)
    try:
        return loop.run_until_complete(make())
    finally:
        loop.close()


def test_sends_are_spaced_account_wide() -> None:
    async def main() -> float:
        pacer = Pacer(PacingSettings(interval=2, jitter=0))
        loop = asyncio.get_running_loop()
        start = loop.time()
        for _ in range(5):
            await pacer.before_send()
        return loop.time() - start

    assert run(main) == pytest.approx(8)  # the first at once, then one every 2 s


def test_jitter_adds_a_random_wait() -> None:
    async def main() -> float:
        pacer = Pacer(PacingSettings(interval=0, jitter=3), rng=lambda: 0.5)
        loop = asyncio.get_running_loop()
        start = loop.time()
        await pacer.before_send()
        return loop.time() - start

    assert run(main) == pytest.approx(1.5)


def test_a_room_has_its_own_slower_rate() -> None:
    async def main() -> float:
        pacer = Pacer(PacingSettings(interval=1, jitter=0, room_interval=5))
        loop = asyncio.get_running_loop()
        start = loop.time()
        for _ in range(3):
            await pacer.before_send("room-1")
        return loop.time() - start

    assert run(main) == pytest.approx(10)


def test_daily_cap_refuses_then_resets_next_day() -> None:
    days = iter([date(2026, 12, 1)] * 3 + [date(2026, 12, 2)])

    async def main() -> None:
        pacer = Pacer(PacingSettings(interval=0, jitter=0, daily_cap=2),
                      today=lambda: next(days))
        await pacer.before_send()
        await pacer.before_send()
        with pytest.raises(Refused):
            await pacer.before_send()
        await pacer.before_send()  # a new day

    run(main)


def test_room_creations_past_the_hourly_limit_are_refused_at_once() -> None:
    async def main() -> float:
        pacer = Pacer(PacingSettings(rooms_per_hour=2))
        loop = asyncio.get_running_loop()
        start = loop.time()
        await pacer.before_create_room()
        await pacer.before_create_room()
        with pytest.raises(Refused):
            await pacer.before_create_room()
        return loop.time() - start

    assert run(main) == pytest.approx(0)
