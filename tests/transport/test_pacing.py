"""Pacing (issue 9): sends spaced account-wide and per room, a daily cap, room creations per
hour refused past the limit. On looptime's virtual loop clock (each test's event loop, made
by tests/transport/conftest.py for pytest-asyncio): nothing here waits for real."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from bot.transport import Refused
from bot.transport.pacing import Pacer, PacingSettings


def elapsed_since(start: float) -> float:
    return asyncio.get_running_loop().time() - start


@pytest.mark.asyncio
async def test_sends_are_spaced_account_wide() -> None:
    pacer = Pacer(PacingSettings(interval=2, jitter=0))
    start = asyncio.get_running_loop().time()
    for _ in range(5):
        await pacer.before_send()
    assert elapsed_since(start) == pytest.approx(8)  # the first at once, then one every 2 s


@pytest.mark.asyncio
async def test_jitter_adds_a_random_wait() -> None:
    pacer = Pacer(PacingSettings(interval=0, jitter=3), rng=lambda: 0.5)
    start = asyncio.get_running_loop().time()
    await pacer.before_send()
    assert elapsed_since(start) == pytest.approx(1.5)


@pytest.mark.asyncio
async def test_a_room_has_its_own_slower_rate() -> None:
    pacer = Pacer(PacingSettings(interval=1, jitter=0, room_interval=5))
    start = asyncio.get_running_loop().time()
    for _ in range(3):
        await pacer.before_send("room-1")
    assert elapsed_since(start) == pytest.approx(10)


@pytest.mark.asyncio
async def test_daily_cap_refuses_then_resets_next_day() -> None:
    days = iter([date(2026, 12, 1)] * 3 + [date(2026, 12, 2)])
    pacer = Pacer(PacingSettings(interval=0, jitter=0, daily_cap=2), today=lambda: next(days))
    await pacer.before_send()
    await pacer.before_send()
    with pytest.raises(Refused):
        await pacer.before_send()
    await pacer.before_send()  # a new day


@pytest.mark.asyncio
async def test_room_creations_past_the_hourly_limit_are_refused_at_once() -> None:
    pacer = Pacer(PacingSettings(rooms_per_hour=2))
    start = asyncio.get_running_loop().time()
    await pacer.before_create_room()
    await pacer.before_create_room()
    with pytest.raises(Refused):
        await pacer.before_create_room()
    assert elapsed_since(start) == pytest.approx(0)
