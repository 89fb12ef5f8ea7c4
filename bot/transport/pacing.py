"""Pacing that WeChat tolerates (issue 9): a person's rhythm, not a script's.

Personal-WeChat puppets are unofficial; an account that sends like a machine gets limited or
banned. Every send waits for the account-wide rate (one send per `interval` seconds, plus a
random `jitter`) and for its room's own rate; at most `daily_cap` sends a day; at most
`rooms_per_hour` room creations an hour — past that a creation is refused at once (`Refused`),
so the bot falls back to a judge-made room rather than waiting an hour. The rates are
aiolimiter leaky buckets on the transport's event loop (tests run them on a virtual loop
clock, looptime).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from aiolimiter import AsyncLimiter

from bot.transport import Refused


@dataclass
class PacingSettings:
    interval: float = 1.5  # seconds between any two sends of the account
    jitter: float = 1.0  # up to this much more, at random
    room_interval: float = 4.0  # seconds between two posts in one room
    daily_cap: int = 3000  # sends a day (UTC) before sends are refused
    rooms_per_hour: int = 2


@dataclass
class Pacer:
    settings: PacingSettings = field(default_factory=PacingSettings)
    rng: Callable[[], float] = random.random
    today: Callable[[], date] = lambda: datetime.now(UTC).date()

    def __post_init__(self) -> None:
        s = self.settings
        self._account = AsyncLimiter(1, s.interval) if s.interval > 0 else None
        self._rooms: dict[str, AsyncLimiter] = {}
        self._creations = AsyncLimiter(s.rooms_per_hour, 3600)
        self._day: date | None = None
        self._sent = 0

    async def before_send(self, room: str | None = None) -> None:
        """Wait until this send may go; `Refused` once the day's cap is reached."""
        day = self.today()
        if day != self._day:
            self._day, self._sent = day, 0
        if self._sent >= self.settings.daily_cap:
            raise Refused(f"daily send cap of {self.settings.daily_cap} reached")
        if room is not None and self.settings.room_interval > 0:
            limiter = self._rooms.setdefault(room, AsyncLimiter(1, self.settings.room_interval))
            await limiter.acquire()
        if self._account is not None:
            await self._account.acquire()
        if self.settings.jitter > 0:
            await asyncio.sleep(self.rng() * self.settings.jitter)
        self._sent += 1

    async def before_create_room(self) -> None:
        """A room creation now, or `Refused` if the hour's creations are used up."""
        if not self._creations.has_capacity():
            raise Refused(f"at most {self.settings.rooms_per_hour} room creations an hour")
        await self._creations.acquire()
