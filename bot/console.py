"""A console transport: the terminal stands in for WeChat until the Wechaty transport exists.

`wolfjudge run` reads one message per line from standard input and prints what the bot sends:

    new g1 [fast] [tz=Europe/Berlin]   deal a 12-seat classic game (seats bound to console-g1-N)
    g1 4 see 1                         a seat's command (scenario step words: vote 3, abstain,
    g1 judge proxy 3 5                 change 3, request_correct 3, kill 3|none, lock, pass,
    g1 {"kind": "act", "seat": 4, …}   handover 3, lastwords …, judge proxy/yellow/red/notice/
                                       contact/confirm_correction/reject_correction), or JSON

Every message goes through the scheduler (`DeadlineScheduler.receive`), so deadlines that are due
fire first, at the game's own wall-clock time.
"""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from datetime import UTC, timedelta
from typing import Any, TextIO

from pydantic import ValidationError

from bot.gametime import DEFAULT_TIME_ZONE, wall_clock, zone
from bot.outbox import OutgoingMessage, deliver
from bot.scheduler import Clock, DeadlineScheduler
from bot.service import COMMAND, GameExists, Service, UnknownGame
from engine.commands import (
    Act,
    Handover,
    JudgeCard,
    JudgeCorrection,
    JudgeProxy,
    JudgeWaiver,
    LastWords,
    Surrender,
    Vote,
)
from engine.commands import Command as Cmd

FAST = {"deadlines.night_action": "1min", "classic.guard_deadline": "1min",
        "deadlines.witch": "2min", "deadlines.after_exile": "1min",
        "deadlines.proxy_cutoff": "1min", "deadlines.change_freeze": "1min",
        "reminders.before": "1min"}


CONSOLE_JUDGE = "console-judge"


def seat_contact(game_id: str, seat: int) -> str:
    """The contact a console game binds to a seat."""
    return f"console-{game_id}-{seat}"


class ConsoleSender:
    """Prints each outgoing message. `instant`: the outbox marks a row sent in the same
    transaction as its print (bot/outbox.py), so no memory of printed keys is needed: a row
    printed and committed is never printed again, by this run, a later one or another
    process on the same database."""

    instant = True

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def send(self, message: OutgoingMessage) -> None:
        print(f"→ [{message.game_id} {message.target}] {message.text}", file=self.out,
              flush=True)


MAX_LINE = 4096  # characters of one input line: a command, or last words, is far shorter
MAX_JSON = 8192  # bytes of a raw JSON command (the operator's tool)
_SEAT = re.compile(r"[1-9][0-9]?")


def seat_no(word: str) -> int:
    """A seat number exactly as written: 1-99, ASCII digits, no sign, no `_`, no padding."""
    if not _SEAT.fullmatch(word):
        raise ValueError(f"{word[:20]!r} is not a seat number")
    return int(word)


def parse(words: list[str]) -> Cmd:
    """A command from scenario-step words (see the module doc)."""
    def seat(w: str) -> int | None:
        return None if w in ("none", "abstain") else seat_no(w)

    head, verb, args = words[0], words[1], words[2:]
    if head == "judge":
        if verb == "proxy":
            return JudgeProxy(seat=seat_no(args[0]), target=seat(args[1]))
        if verb in ("yellow", "red"):
            return JudgeCard(seat=seat_no(args[0]), color=verb)
        if verb in ("notice", "contact"):
            return JudgeWaiver(seat=seat_no(args[0]), waiver=verb)
        if verb in ("confirm_correction", "reject_correction"):
            return JudgeCorrection(seat=seat_no(args[0]), accept=verb == "confirm_correction")
        raise ValueError(f"unknown judge command {verb!r}")
    n = seat_no(head)
    if verb in ("vote", "change", "correct", "request_correct"):
        return Vote(seat=n, mode=verb, target=seat(args[0]))
    if verb == "abstain":
        return Vote(seat=n, target=None)
    if verb == "void":
        return Vote(seat=n, mode="void")
    if verb == "handover":
        return Handover(seat=n, target=seat_no(args[0]))
    if verb == "lastwords":
        return LastWords(seat=n, text=" ".join(args))
    if verb == "surrender":
        return Surrender(seat=n)
    return Act(seat=n, skill=verb, targets=tuple(seat(a) for a in args))


class Console:
    def __init__(self, service: Service, clock: Clock, out: TextIO) -> None:
        self.service = service
        self.clock = clock
        self.out = out
        self.sched = DeadlineScheduler(service, clock)
        self.sender = ConsoleSender(out)
        self._delivering = threading.Lock()  # commits come from several threads

    def deliver(self, _game_id: str | None = None) -> None:
        with self._delivering:
            deliver(self.service.db, self.sender,
                    now=self.clock.now().astimezone(UTC).replace(tzinfo=None))

    def new_game(self, game_id: str, flags: list[str]) -> str:
        tz = next((f[3:] for f in flags if f.startswith("tz=")), DEFAULT_TIME_ZONE)
        now = wall_clock(self.clock.now(), zone(tz)).replace(microsecond=0)
        kw: dict[str, Any] = {}
        start = now.date() if now.hour < 8 else now.date() + timedelta(days=1)  # 09:00 ahead
        if "fast" in flags:  # day 1 opens in two minutes: 5-minute days, 3-minute nights
            start = now.date()
            kw = {"first_open": (now + timedelta(minutes=2)).replace(second=0),
                  "day_minutes": 5, "night_minutes": 3, "options": FAST}
        self.service.create_game(
            game_id=game_id, ruleset="classic",
            start=start, players=12, now=now, time_zone=tz, judge_contact=CONSOLE_JUDGE,
            bindings={n: (seat_contact(game_id, n), None) for n in range(1, 13)},
            rooms={"public": f"console-{game_id}", "wolves": f"console-{game_id}-wolves",
                   "lovers": f"console-{game_id}-lovers"}, **kw)
        return f"game {game_id} created ({tz})"

    def line(self, text: str) -> str:
        if len(text) > MAX_LINE:
            return f"? line too long ({len(text)} characters, at most {MAX_LINE})"
        words = text.split()
        if not words:
            return ""
        try:
            if words[0] == "new" and len(words) >= 2:
                return self.new_game(words[1], words[2:])
            game_id, rest = words[0], text.split(None, 1)[1].strip()
            if rest.startswith("{"):  # the operator's raw command: no sender to check
                if len(rest.encode()) > MAX_JSON:
                    return f"? JSON command too long (at most {MAX_JSON} bytes)"
                cmd, sender = COMMAND.validate_json(rest, strict=True), None
            else:
                step = rest.split()
                cmd, sender = parse(step), self.sender_of(game_id, step[0])
            # A fresh id per line: ids must never repeat across runs or processes.
            msg_id = f"console:{uuid.uuid4().hex}"
            out = self.sched.receive(game_id, cmd, msg_id=msg_id, sender=sender)
            self.deliver()  # a rejection's reply (no commit to trigger the hook)
        except IndexError:
            return "? not understood (see `wolfjudge run --help`)"
        except (ValueError, ValidationError, GameExists, UnknownGame) as exc:
            return f"? {type(exc).__name__}: {str(exc)[:300]}"
        if out.duplicate:
            return f"duplicate of an earlier message: {out.status} then (version {out.version})"
        return f"{out.status} (version {out.version})"

    def sender_of(self, game_id: str, head: str) -> str:
        """The contact a console line speaks as: the seat's own, or the game's judge."""
        if head == "judge":
            return CONSOLE_JUDGE
        return seat_contact(game_id, seat_no(head))

    async def serve(self, inp: TextIO) -> None:
        """Catch up, then handle lines until end of input."""
        loop = asyncio.get_running_loop()
        self.service.on_commit.append(self.deliver)
        fired = self.sched.start()
        self.deliver()
        print(f"wolfjudge: {len(self.sched.game_ids())} active game(s), {len(fired)} passed "
              f"deadline(s) fired; one message per line, end of input stops", file=self.out,
              flush=True)
        try:
            while line := await loop.run_in_executor(None, inp.readline):
                reply = await loop.run_in_executor(None, self.line, line)
                if reply:
                    print(reply, file=self.out, flush=True)
        finally:
            self.sched.stop()
            self.service.on_commit.remove(self.deliver)


def run(service: Service, clock: Clock, inp: TextIO, out: TextIO) -> None:
    asyncio.run(Console(service, clock, out).serve(inp))
