"""A game's wall clock and real time.

The engine works in naive wall-clock times of the game's time zone (a deadline "08:00" is 08:00
on the game's clocks); the scheduler needs real instants. Daylight-saving time makes the two
differ in two ways, and both are settled here by one rule, *the wall clock never goes back*:

- `wall_clock(instant)` is the latest reading the game's clock has shown up to `instant`. In the
  repeated hour after a fall-back it stays just before the change until the clock passes it
  again, so a game never sees time go backwards.
- `instant_of(wall)` is the first instant at which `wall_clock` reaches `wall`: for a time
  skipped by a spring-forward, the moment of the change (a 02:30 deadline fires at 03:00); for
  a repeated time, its first occurrence.

So `wall_clock(t) >= w` exactly when `t >= instant_of(w)`: a deadline is due by the one exactly
when it is due by the other, and it fires once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DEFAULT_TIME_ZONE = "Asia/Shanghai"
_US = timedelta(microseconds=1)


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`; a ValueError that says so if there is none."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (an IANA name like Asia/Shanghai)"
                         ) from None


def _first(lo: datetime, hi: datetime, ok: Callable[[datetime], bool]) -> datetime:
    """The first instant in (lo, hi] where `ok` holds (`ok` is False at lo, True from then on)."""
    while hi - lo > _US:
        mid = lo + (hi - lo) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _reading(instant: datetime, tz: ZoneInfo) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None)


def wall_clock(instant: datetime, tz: ZoneInfo) -> datetime:
    """The game's (naive) wall-clock time at the aware `instant`, never going back."""
    local = instant.astimezone(tz)
    if not local.fold:
        return local.replace(tzinfo=None)
    # The second pass of a repeated hour: the clock showed up to just before the change.
    offset = local.utcoffset()
    first_pass = local.replace(fold=0).astimezone(UTC)
    change = _first(first_pass, instant.astimezone(UTC),
                    lambda t: t.astimezone(tz).utcoffset() == offset)
    return _reading(change - _US, tz)


def instant_of(wall: datetime, tz: ZoneInfo) -> datetime:
    """The first (aware, UTC) instant at which the game's wall clock reads `wall` or later."""
    first = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    if _reading(first, tz) == wall:
        return first
    # Skipped by a spring-forward: fold=1 reads before the gap, fold=0 after it.
    before = wall.replace(tzinfo=tz, fold=1).astimezone(UTC)
    return _first(before, first, lambda t: _reading(t, tz) >= wall)


def utcnow() -> datetime:
    """The bot's own clock reading: naive UTC, as the database stores its bookkeeping times."""
    return datetime.now(UTC).replace(tzinfo=None)
