"""A bot on a fake clock: the real Service, store and DeadlineScheduler with a paused
AsyncIOScheduler whose jobs the test runs itself, in time order, moving the clock to each one.

Nothing sleeps and nothing reads the real clock: APScheduler only holds the jobs (its job ids,
triggers and run times are what is checked); `run_until` plays what its own loop would do
(drop a one-shot job, then call its function) at the job's run time.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy import select

from bot.gametime import instant_of, wall_clock, zone
from bot.render import messages_for, render_event
from bot.scheduler import DeadlineScheduler
from bot.service import Outcome, Service, event_of
from bot.store.models import LogEntry, OutboxRow

START = date(2026, 3, 2)  # calendar day 1 (a Monday; no DST change near it in most zones)
CLASSIC = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid", "villager", "villager",
           "villager", "villager", "villager"]
ANOMALY = ["wolf-head", "seer", "witch", "elder", "guard", "hunter", "villager", "villager",
           "villager", "villager", "villager", "villager"]


class FakeClock:
    def __init__(self, instant: datetime) -> None:
        self.instant = instant

    def now(self) -> datetime:
        return self.instant

    def set(self, instant: datetime) -> None:
        assert instant >= self.instant, "the fake clock only goes forward"
        self.instant = instant


class Bot:
    """One bot process: a Service and a DeadlineScheduler on the fake clock."""

    def __init__(self, db_url: str, clock: FakeClock, tz: str = "Asia/Shanghai",
                 start: date = START) -> None:
        self.db_url = db_url
        self.clock = clock
        self.tz_name = tz
        self.tz = zone(tz)
        self.start_date = start
        self.msg_ids = itertools.count(1)
        self.ran: list[str] = []  # job ids run, in order
        self._boot()

    def _boot(self) -> None:
        self.service = Service(self.db_url)
        self.loop = asyncio.new_event_loop()
        self.aps = AsyncIOScheduler(event_loop=self.loop, timezone=UTC)
        self.sched = DeadlineScheduler(self.service, self.clock, self.aps,
                                       watchdog_minutes=None)
        self.caught_up = self.sched.start(paused=True)

    def close(self) -> None:
        self.sched.stop()
        self.loop.close()
        self.service.close()

    def restart(self, down_until: datetime) -> None:
        """The process stops (no goodbye), and a new one starts at `down_until`."""
        self.close()
        self.clock.set(down_until)
        self._boot()

    # time ---------------------------------------------------------------------------------------
    def wall(self, day: int, hh: int, mm: int = 0) -> datetime:
        return datetime.combine(self.start_date + timedelta(days=day - 1), time(hh, mm))

    def at(self, day: int, hh: int, mm: int = 0) -> datetime:
        """The real instant of day `day` hh:mm on the game's wall clock."""
        return instant_of(self.wall(day, hh, mm), self.tz)

    def run_until(self, instant: datetime) -> None:
        """Run every job due by `instant`, in time order, each at its own run time."""
        while True:
            due = [j for j in self.aps.get_jobs() if j.next_run_time <= instant]
            if not due:
                break
            job = min(due, key=lambda j: (j.next_run_time, j.id))
            self.clock.set(max(self.clock.now(), job.next_run_time))
            self.aps.remove_job(job.id)  # APScheduler drops a one-shot job, then runs it
            self.ran.append(job.id)
            job.func(*job.args, **job.kwargs)
        self.clock.set(max(self.clock.now(), instant))

    def to(self, day: int, hh: int, mm: int = 0) -> None:
        self.run_until(self.at(day, hh, mm))

    # games and messages -----------------------------------------------------------------------
    def new_game(self, game_id: str = "g1", roles: list[str] | None = None,
                 ruleset: str = "classic", **kw: Any) -> Outcome:
        args: dict[str, Any] = {
            "game_id": game_id, "ruleset": ruleset, "seed": f"seed-{game_id}",
            "start": self.start_date, "roles": roles or CLASSIC,
            "bindings": {n: (f"wx-{game_id}-{n}", f"马甲{n}") for n in range(1, 13)},
            "rooms": {"public": f"room-{game_id}", "wolves": f"wolfroom-{game_id}"},
            "judge_contact": "wx-judge", "time_zone": self.tz_name,
            # A fixed key, like the fixed seed: runs compared row for row must sign alike.
            "signing_key": hashlib.sha256(game_id.encode()).hexdigest(),
            "now": wall_clock(self.clock.now(), self.tz)}
        args.update(kw)
        return self.service.create_game(**args)

    def say(self, command: Any, game_id: str = "g1") -> Outcome:
        return self.sched.receive(game_id, command, msg_id=f"m{next(self.msg_ids)}")

    def state(self, game_id: str = "g1") -> Any:
        return self.service.state(game_id)

    def log(self, game_id: str = "g1") -> list[LogEntry]:
        return self.service.log(game_id)

    def events(self, type_: str, game_id: str = "g1") -> list[LogEntry]:
        return [r for r in self.log(game_id) if r.kind == "event" and r.type == type_]

    def ticks(self, game_id: str = "g1") -> list[str]:
        return [r.body["deadline_id"] for r in self.log(game_id) if r.type == "tick"]

    def outbox(self, game_id: str = "g1") -> list[tuple[str, str, str, str]]:
        """(event type or '', channel, target, text) of what every outbox row says, event by
        event, in order. A row holds one recipient's texts of one step, one per line in
        event order: each is read back as (its event's type, its text)."""
        events = [r for r in self.log(game_id) if r.kind == "event"]
        ruleset = self.service.state(game_id).ruleset
        out: list[tuple[str, str, str, str]] = []
        with self.service.db.read() as s:
            rows = list(s.scalars(select(OutboxRow).where(OutboxRow.game_id == game_id)
                                  .order_by(OutboxRow.id)))
        for r in rows:
            if r.channel == "judge" or r.seq is None:
                out.append(("", r.channel, r.target, r.text))
                continue
            pos = 0
            for row in (e for e in events if e.seq >= r.seq):
                ev = event_of(row.body)
                said = (messages_for(ev, int(r.target[5:]), ruleset) if r.channel == "dm"
                        else render_event(ev, ruleset)) or ""
                if said and r.text.startswith(said, pos):
                    out.append((row.type, r.channel, r.target, said))
                    pos += len(said) + 1
                    if pos >= len(r.text):
                        break
            assert pos >= len(r.text), (r.text, pos)  # every line read back
        return out

    def jobs(self, game_id: str = "g1") -> dict[str, datetime]:
        return {j.id: j.next_run_time for j in self.sched.jobs(game_id)}


def start_bot(db_url: str, tz: str = "Asia/Shanghai", start: date = START) -> Bot:
    """A bot whose fake clock reads 00:00 of calendar day 1 on the game's wall clock."""
    clock = FakeClock(instant_of(datetime.combine(start, time(0, 0)), zone(tz)))
    return Bot(db_url, clock, tz=tz, start=start)


# scripts -----------------------------------------------------------------------------------------
def linked(bot: Bot, game_id: str = "g1", **kw: Any) -> None:
    """A classic game whose Cupid (7) links 8 and 9 at once."""
    from engine.commands import Act

    bot.new_game(game_id, **kw)
    assert bot.say(Act(seat=7, skill="link", targets=(8, 9)), game_id).accepted


def vote_all(bot: Bot, target: int | None, seats: Any = range(1, 13), game_id: str = "g1"
             ) -> None:
    """Each living seat of `seats` votes `target` (the target itself abstains)."""
    from engine.commands import Vote

    state = bot.state(game_id)
    for n in seats:
        if state.seat(n).alive:
            out = bot.say(Vote(seat=n, target=None if n == target else target), game_id)
            assert out.accepted, (n, out.rejection)


def quiet_night(bot: Bot, kill: int | None = None, game_id: str = "g1") -> None:
    """Classic: the killers kill `kill` (or nobody) and lock, seer checks the lowest other
    living seat, guard and witch pass: the night resolves at once."""
    from engine.commands import Act

    state = bot.state(game_id)
    night = state.night
    assert night is not None and not night.resolved
    for key, slot in night.slots.items():
        who = slot.seats[0]
        if key == "kill":
            assert bot.say(Act(seat=who, skill="kill", targets=(kill,)), game_id).accepted
            assert bot.say(Act(seat=who, skill="lock"), game_id).accepted
        elif key == "see":
            target = next(s.seat for s in state.living() if s.seat != who)
            assert bot.say(Act(seat=who, skill="see", targets=(target,)), game_id).accepted
    for key in ("guard", "witch"):
        slot = bot.state(game_id).night.slots.get(key)
        if slot is not None and not bot.state(game_id).night.resolved:
            assert bot.say(Act(seat=slot.seats[0], skill="pass"), game_id).accepted
    assert bot.state(game_id).night.resolved


def rows(bot: Bot, type_: str, game_id: str = "g1") -> list[tuple[str, str, str, str]]:
    return [r for r in bot.outbox(game_id) if r[0] == type_]


def judge_text(bot: Bot, game_id: str = "g1") -> str:
    return "\n".join(r[3] for r in bot.outbox(game_id) if r[1] == "judge")


def assert_card_announced(bot: Bot, seat: int, color: str, game_id: str = "g1", *,
                          dm: bool = True, secret: bool = False) -> None:
    """The card reached the player (a DM, and the public post that everyone reads), the judge
    and the next day's public post. `dm=False`: the player was already out and the card
    concerns none of his remaining duties, so the engine tells him only in the log (G-RES-4)
    and the public post is how he learns it.
    `secret`: a card for a missed night or setup duty, which would reveal that the player had
    one: the player and the judge learn of it, the public does not (a red card it causes shows
    only in the next day post, not at the revealing moment)."""
    out = bot.outbox(game_id)
    public_rows = [r[3] for r in out if r[1] == "public"]
    if color == "yellow":
        assert dm == any(r[:3] == ("YellowCard", "dm", f"seat:{seat}") for r in out)
        public = [r[3] for r in out if r[:2] == ("YellowCardPublic", "public")]
        announced = any(t.startswith(f"{seat} 号获得一张黄牌") for t in public)
        assert announced != secret
        assert (f"{seat} 号未按时完成" if secret else f"{seat} 号获得一张黄牌") in judge_text(
            bot, game_id)
    else:
        assert any(r[:2] == ("RedCard", "public") and r[3] == f"{seat} 号被红牌罚下。"
                   for r in out) != secret
        assert f"{seat} 号被红牌罚下" in judge_text(bot, game_id)
    word = "黄牌" if color == "yellow" else "红牌"
    posts = [r[3] for r in out if r[:2] == ("DayOpened", "public")]
    listed = any(f"{seat}号{word}" in p for p in posts)
    assert listed if color == "red" or not secret else not listed, posts
    if secret and color == "yellow":
        assert not any(f"{seat} 号未按时完成" in t for t in public_rows)


def assert_ticks_once(bot: Bot, game_id: str = "g1") -> None:
    """Every tick in the log moved the game, and no deadline (id and due) fired twice."""
    log = bot.log(game_id)
    ticks = [(r.body["deadline_id"], r.msg_id.split("@")[1].split("#")[0])
             for r in log if r.type == "tick"]
    assert len(ticks) == len(set(ticks)), ticks
    assert bot.service.rebuild(game_id).ok
