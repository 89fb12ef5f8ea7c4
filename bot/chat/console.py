"""`wolfjudge console` (CHAT.md "The console transport"): the real bot with the terminal as
its transport. One input line is handled completely, every message it causes printed, before
the next is read.

    NAME: TEXT              NAME sends TEXT by DM          NAME@ROOM: TEXT   ... in room ROOM
    /clock YYYY-MM-DD HH:MM  with --clock: move the clock forward, firing what falls due
    /advance 90m|2h|1d       the same, by a duration
    /room ROOM NAME ...      (extension) a room a judge made by hand, with these members

With `--clock` the clock is virtual and moves only by /clock and /advance; without it the real
clock runs and the scheduler fires deadlines on its own.
"""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import TextIO

from bot.chat.bot import ChatBot
from bot.gametime import instant_of, zone
from bot.scheduler import Clock, DeadlineScheduler, SystemClock
from bot.service import Service
from bot.transport import Incoming
from bot.transport.console import ConsoleTransport

_MESSAGE = re.compile(r"([^\s:@]+)(?:@([^\s:@]+))?:\s?(.*)", re.S)
_DURATION = re.compile(r"(\d{1,6})(m|min|h|d)")


class VirtualClock:
    """A clock that moves only forward, and only when told."""

    def __init__(self, start: datetime) -> None:
        self._now = start

    def now(self) -> datetime:
        return self._now

    def move_to(self, when: datetime) -> None:
        self._now = max(self._now, when)


def parse_duration(text: str) -> timedelta:
    m = _DURATION.fullmatch(text.strip())
    if not m:
        raise ValueError(f"bad duration {text!r}: write 90m, 2h or 1d")
    n, unit = int(m.group(1)), m.group(2)
    return timedelta(minutes=n) if unit in ("m", "min") else (
        timedelta(hours=n) if unit == "h" else timedelta(days=n))


class Console:
    def __init__(self, service: Service, out: TextIO, *, judges: list[str],
                 clock: Clock | None = None, time_zone: str = "Asia/Shanghai",
                 export_dir: str = "exports") -> None:
        self.service = service
        self.out = out
        self.tz = zone(time_zone)
        self.transport = ConsoleTransport(out)
        self.bot = ChatBot(service, self.transport, judges=judges, time_zone=time_zone,
                           export_dir=export_dir)
        self.virtual = clock if isinstance(clock, VirtualClock) else None
        self.clock: Clock = clock or SystemClock()
        self._lock = threading.Lock()

    def note(self, text: str) -> None:
        print(f"# {text}", file=self.out, flush=True)

    # input -------------------------------------------------------------------------------------
    def line(self, raw: str) -> None:
        text = raw.rstrip("\n").rstrip("\r")
        if not text.strip() or text.lstrip().startswith("#"):
            return
        with self._lock:
            try:
                self._line(text)
            except ValueError as exc:
                self.note(f"? {exc}")
            self.bot.deliver(self.clock.now())

    def _line(self, text: str) -> None:
        if text.startswith("/"):
            head, _, rest = text.partition(" ")
            if head == "/clock":
                when = datetime.strptime(rest.strip(), "%Y-%m-%d %H:%M")
                self.move_to(instant_of(when, self.tz))
            elif head == "/advance":
                self.move_to(self.clock.now() + parse_duration(rest))
            elif head == "/room":
                name, *members = rest.split()
                self.transport.rooms[name] = members
            else:
                raise ValueError(f"unknown console command {head}")
            return
        m = _MESSAGE.fullmatch(text)
        if m is None:
            raise ValueError("write NAME: TEXT or NAME@ROOM: TEXT")
        name, room, body = m.group(1), m.group(2), m.group(3)
        self.bot.handle(Incoming(msg_id=f"console:{uuid.uuid4().hex}", sender=name,
                                 text=body, at=self.clock.now(), room=room))

    def move_to(self, target: datetime) -> None:
        """Move the virtual clock to `target`, firing each deadline due on the way, in time
        order across games, printing what each causes."""
        if self.virtual is None:
            raise ValueError("/clock and /advance need --clock")
        for _ in range(100_000):
            due = self._next_due()
            if due is None or due[0] > target:
                break
            instant, gid, wall = due
            self.virtual.move_to(instant)
            self.service.advance(gid, wall)
            self.bot.deliver(self.clock.now())
        self.virtual.move_to(target)

    def _next_due(self) -> tuple[datetime, str, datetime] | None:
        best: tuple[datetime, str, datetime] | None = None
        for gid in self.service.game_ids(active_only=True):
            tz = zone(self.service.time_zone(gid))
            state = self.service.state(gid)
            dl = state.next_deadline()
            if dl is None:
                continue
            at = instant_of(dl.due, tz)
            if best is None or at < best[0]:
                best = (at, gid, dl.due)
        return best

    # running -----------------------------------------------------------------------------------
    def catch_up(self) -> None:
        """Deadlines that passed while the bot was down fire first."""
        now = self.clock.now()
        for gid in self.service.game_ids(active_only=True):
            from bot.gametime import wall_clock

            self.service.advance(gid, wall_clock(now, zone(self.service.time_zone(gid))))
        self.bot.deliver(now)

    def run_virtual(self, inp: TextIO) -> None:
        self.catch_up()
        for raw in inp:
            self.line(raw)

    async def run_real(self, inp: TextIO) -> None:
        sched = DeadlineScheduler(self.service, self.clock)
        deliver_hook = self._deliver_hook
        self.service.on_commit.append(deliver_hook)
        sched.start()
        self.bot.deliver(self.clock.now())
        loop = asyncio.get_running_loop()
        try:
            while raw := await loop.run_in_executor(None, inp.readline):
                await loop.run_in_executor(None, self.line, raw)
        finally:
            sched.stop()
            self.service.on_commit.remove(deliver_hook)

    def _deliver_hook(self, _gid: str) -> None:
        if not self._lock.locked():  # a scheduler tick: nobody else will deliver it
            self.bot.deliver(self.clock.now())


def run(service: Service, inp: TextIO, out: TextIO, *, judges: list[str],
        clock: str | None, time_zone: str, export_dir: str = "exports") -> None:
    if clock is not None:
        start = instant_of(datetime.strptime(clock, "%Y-%m-%d %H:%M"), zone(time_zone))
        console = Console(service, out, judges=judges, clock=VirtualClock(start.astimezone(UTC)),
                          time_zone=time_zone, export_dir=export_dir)
        console.run_virtual(inp)
    else:
        console = Console(service, out, judges=judges, time_zone=time_zone,
                          export_dir=export_dir)
        asyncio.run(console.run_real(inp))
