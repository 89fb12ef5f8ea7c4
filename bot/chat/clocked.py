"""The chat bot on a clock (`ClockedBot`): real or virtual, fed by a transport's messages or by
the console's input lines. `wolfjudge console` (CHAT.md "The console transport") is the real bot
with the terminal as its transport; `wolfjudge run --clock` uses it with a chat transport and
the terminal for the clock only. On the console, one input line is handled completely, every
message it causes printed, before the next is read; at end of input it returns (exit 0).

Input lines (CHAT.md):

    NAME: TEXT               NAME sends TEXT to the bot by DM
    NAME@ROOM: TEXT          NAME says TEXT in room ROOM (the room's name as printed)
    /clock YYYY-MM-DD HH:MM  with --clock: move the clock forward to then, firing every deadline
                             due on the way, in time order across games
    /advance 90m|2h|1d       the same, by a duration
    blank lines and lines starting with #: ignored

Extensions of this console:

    /room ROOM NAME ...      a room a judge made by hand, with these members (then `绑定` in it)
    /echo TEXT               prints `# TEXT`: a sync marker for drivers (write a line, then
                             `/echo n`, and read until `# n`)

NAME and ROOM contain no whitespace, `:` or `@`. A line that is none of these prints a note
`# ? what was wrong` and the console goes on. Output lines are CHAT.md's (`→ NAME: …`,
`→ @ROOM: …`, `+ @ROOM: …`, `+ @ROOM NAME`, `- @ROOM NAME`, further lines of a text indented by
two spaces) and `# …` notes; logs go to standard error only.

With `--clock` the clock is virtual and moves only by /clock and /advance; it never goes back,
also across restarts: it starts no earlier than the clock of any active game on the database.
Without it the real clock runs and the scheduler fires deadlines on its own. Either way,
deadlines that passed while the console was stopped fire first, in time order.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TextIO

from bot.chat.bot import ChatBot
from bot.gametime import instant_of, wall_clock, zone
from bot.outbox import release_dead_turns
from bot.scheduler import Clock, DeadlineScheduler, SystemClock
from bot.service import Service
from bot.transport import Incoming, Transport
from bot.transport.console import ConsoleTransport, Output
from bot.web.links import PageLinks

log = logging.getLogger(__name__)
_MESSAGE = re.compile(r"([^\s:@]+)(?:@([^\s:@]+))?:[ \t]?(.*)", re.S)
_DURATION = re.compile(r"(\d{1,6})(m|min|h|d)")
CLOCK_FORMAT = "%Y-%m-%d %H:%M"
MAX_LINE = 8192  # characters of one input line (the bot itself refuses texts over 4096)
MAX_MOVE = timedelta(days=366)  # how far one /clock or /advance may move the clock


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
        raise ValueError(f"bad duration {text.strip()[:20]!r}: write 90m, 2h or 1d")
    n, unit = int(m.group(1)), m.group(2)
    moved = timedelta(minutes=n) if unit in ("m", "min") else (
        timedelta(hours=n) if unit == "h" else timedelta(days=n))
    if moved > MAX_MOVE:
        raise ValueError(f"the clock moves at most {MAX_MOVE.days} days at a time")
    return moved


def parse_clock(text: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), CLOCK_FORMAT)
    except ValueError:
        raise ValueError(f"bad time {text.strip()[:30]!r}: write YYYY-MM-DD HH:MM") from None


class ClockedBot:
    def __init__(self, service: Service, out: Output, *, judges: list[str],
                 clock: Clock | None = None, time_zone: str = "Asia/Shanghai",
                 export_dir: str = "exports", transport: Transport | None = None,
                 web: PageLinks | None = None) -> None:
        """`transport`: another transport than the terminal's (`wolfjudge run --clock`: WeChat,
        with the terminal only for the clock and notes)."""
        self.service = service
        self.out = out
        self.tz = zone(time_zone)
        self.transport = transport or ConsoleTransport(out)
        self.bot = ChatBot(service, self.transport, judges=judges, time_zone=time_zone,
                           export_dir=export_dir, web=web)
        # A process that died inside a turn left its messages held: they go now, before any
        # line is read or message handled, not TURN_HOLD later (bot/outbox.py).
        release_dead_turns(service.db)
        if isinstance(self.transport, ConsoleTransport):
            # The terminal keeps no rooms across a restart: it is told back the ones the bot
            # made, with their members, so a restart never reads as members gone missing.
            self.transport.rooms.update(self.bot.chats.all_rooms())
        self.virtual = clock if isinstance(clock, VirtualClock) else None
        self.clock: Clock = clock or SystemClock()
        self.bot.forum.clock = self.clock.now  # the vote thread's reads see the same clock
        self._lock = threading.Lock()

    def note(self, text: str) -> None:
        if isinstance(self.transport, ConsoleTransport):
            self.transport.note(text)  # in line with the transcript (its lock)
        else:
            print(f"# {text}", file=self.out, flush=True)

    # input -------------------------------------------------------------------------------------
    def line(self, raw: str) -> None:
        """Handle one input line completely (a malformed one gets a `# ?` note)."""
        text = raw.rstrip("\n").rstrip("\r")
        if not text.strip() or text.lstrip().startswith("#"):
            return
        with self._lock:
            try:
                if len(text) > MAX_LINE:
                    raise ValueError(f"line too long ({len(text)} characters, at most "
                                     f"{MAX_LINE})")
                self._line(text)
            except ValueError as exc:
                self.note(f"? {exc}")
            except OSError:  # the output is gone (a closed pipe): nothing more to say
                raise
            except Exception:  # a bug: logged, and the console goes on
                log.exception("console line failed")
                self.note("? internal error (see the log)")
            self.bot.deliver(self.clock.now())

    def _line(self, text: str) -> None:
        if text.startswith("/"):
            head, _, rest = text.partition(" ")
            if head == "/clock":
                self.move_to(instant_of(parse_clock(rest), self.tz))
            elif head == "/advance":
                self.move_to(self.clock.now() + parse_duration(rest))
            elif head == "/echo":
                self.note(rest)
            elif head == "/room":
                name, *members = rest.split() or [""]
                if not _MESSAGE.fullmatch(f"{name}:") or not members:
                    raise ValueError("write /room ROOM NAME ...")
                if not isinstance(self.transport, ConsoleTransport):
                    raise ValueError("/room is for the console transport")
                self.transport.rooms[name] = members
            else:
                raise ValueError(f"unknown console command {head[:20]}: /clock, /advance, "
                                 f"/echo, /room")
            return
        m = _MESSAGE.fullmatch(text)
        if m is None:
            raise ValueError("write NAME: TEXT or NAME@ROOM: TEXT (NAME and ROOM without "
                             "spaces, ':' or '@')")
        name, room, body = m.group(1), m.group(2), m.group(3)
        self.bot.handle(Incoming(msg_id=f"console:{uuid.uuid4().hex}", sender=name,
                                 text=body, at=self.clock.now(), room=room))

    def incoming(self, msg: Incoming) -> None:
        """A message from another transport (`wolfjudge run --clock`): with a virtual clock it
        happens at the clock's time, not the transport's, and between input lines, never in
        the middle of a clock move."""
        if self.virtual is None:
            self.bot.handle(msg)
            return
        with self._lock:
            self.bot.handle(replace(msg, at=self.clock.now()))

    def move_to(self, target: datetime) -> None:
        """Move the virtual clock to `target`, firing each deadline due on the way, in time
        order across games, printing what each causes. It never goes back."""
        if self.virtual is None:
            raise ValueError("/clock and /advance need --clock (a virtual clock)")
        if target - self.clock.now() > MAX_MOVE:
            raise ValueError(f"the clock moves at most {MAX_MOVE.days} days at a time")
        if target < self.clock.now():
            self.note(f"the clock stays at {self._shown(self.clock.now())} (it never goes "
                      f"back)")
            return
        stuck: set[str] = set()  # games whose next deadline would not fire (never spin)
        for _ in range(100_000):
            due = self._next_due(stuck)
            if due is None or due[0] > target:
                break
            instant, gid, wall = due
            self.virtual.move_to(instant)
            before = self.service.state(gid).version
            self.service.advance(gid, wall)
            if self.service.state(gid).version == before:
                stuck.add(gid)
            self.bot.deliver(self.clock.now())
        self.virtual.move_to(target)

    def _shown(self, instant: datetime) -> str:
        return wall_clock(instant, self.tz).strftime(CLOCK_FORMAT)

    def _next_due(self, skip: set[str] | None = None) -> tuple[datetime, str, datetime] | None:
        best: tuple[datetime, str, datetime] | None = None
        for gid in self.service.game_ids(active_only=True, host=self.service.host):
            if skip and gid in skip:
                continue
            state = self.service.state(gid)
            dl = state.next_deadline()
            if dl is None:
                continue
            at = instant_of(dl.due, zone(self.service.time_zone(gid)))
            if best is None or (at, gid) < best[:2]:
                best = (at, gid, dl.due)
        return best

    # running -----------------------------------------------------------------------------------
    def latest_game_clock(self) -> datetime | None:
        """The latest clock of the active games (an instant): a restarted virtual clock
        starts no earlier."""
        latest = None
        for gid in self.service.game_ids(active_only=True, host=self.service.host):
            at = instant_of(self.service.clock(gid), zone(self.service.time_zone(gid)))
            latest = at if latest is None else max(latest, at)
        return latest

    def align_clock(self) -> None:
        """A virtual clock starts where the latest game's clock already is (it never goes
        back): before any message comes in, so that none is stamped earlier."""
        assert self.virtual is not None
        latest = self.latest_game_clock()
        if latest is not None and latest > self.virtual.now():
            self.virtual.move_to(latest)
            self.note(f"the clock starts at {self._shown(latest)}, where a game's clock is "
                      f"already (it never goes back)")

    def catch_up(self) -> None:
        """Deadlines that passed while the console was stopped fire first, in time order."""
        self.align_clock()
        with self._lock:
            self.move_to(self.clock.now())
            self.bot.deliver(self.clock.now())

    def run_virtual(self, inp: TextIO) -> None:
        self.catch_up()
        for raw in inp:
            self.line(raw)

    async def run_real(self, inp: TextIO) -> None:
        sched = DeadlineScheduler(self.service, self.clock)
        deliver_hook = self._deliver_hook
        self.service.on_commit.append(deliver_hook)
        sched.start()  # fires, in time order, what passed while the console was stopped
        self.bot.forum.schedule(sched.scheduler)
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
    """`clock`: "YYYY-MM-DD HH:MM" in `time_zone` for a virtual clock, None for the real one."""
    if clock is not None:
        start = instant_of(parse_clock(clock), zone(time_zone))
        console = ClockedBot(service, out, judges=judges, clock=VirtualClock(start.astimezone(UTC)),
                          time_zone=time_zone, export_dir=export_dir)
        console.run_virtual(inp)
    else:
        console = ClockedBot(service, out, judges=judges, time_zone=time_zone,
                          export_dir=export_dir)
        asyncio.run(console.run_real(inp))
