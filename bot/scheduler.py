"""APScheduler as a thin driver of the games' deadlines (docs/spec/ARCHITECTURE.md, issue 5).

Deadlines live in the game state (mirrored in the `deadlines` table at each commit). After each
commit the scheduler's jobs for that game are synced to that table: one job per deadline, id
`GAME:DEADLINE`, a DateTrigger at the real instant of the deadline's wall-clock due in the
game's time zone (bot/gametime.py). A job does not decide anything: it asks the service to fire
what is due (`Service.advance`, ticks in time order, each with a stable message id, so a tick
is applied once however often it is sent); the engine ignores a stale tick. On start-up every
active game catches up first (deadlines passed while the bot was down fire once, in time
order), then its jobs are made.

The clock is injected (`Clock`): the scheduler's own idea of "now" is used only by APScheduler
to wake up; what the game sees as now comes from the clock, turned into the game's wall clock,
and never goes back.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger

from bot.gametime import instant_of, wall_clock, zone
from bot.service import Outcome, Service, UnknownGame
from bot.store.db import Host
from engine.commands import Command

log = logging.getLogger(__name__)

WATCHDOG_ID = "wolfjudge:watchdog"
# Service.schedule_rows: game id -> (time zone, [(deadline id, kind, wall-clock due)])
PlanRows = dict[str, tuple[str, list[tuple[str, str, datetime]]]]


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, time-zone aware."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def job_id(game_id: str, deadline_id: str) -> str:
    return f"{game_id}:{deadline_id}"


class DeadlineScheduler:
    """Keeps one APScheduler job per deadline of every active game of the service's hosting
    account (`host`: another one; `...`: every account's)."""

    def __init__(self, service: Service, clock: Clock, scheduler: AsyncIOScheduler | None = None,
                 *, host: Host | None = None, watchdog_minutes: float | None = 10) -> None:
        self.service = service
        self.clock = clock
        self.scheduler = scheduler or AsyncIOScheduler(timezone=UTC)
        self.host: Host = service.host if host is None else host
        self.watchdog_minutes = watchdog_minutes
        self._zones: dict[str, ZoneInfo] = {}
        self._lock = threading.RLock()  # one sync at a time: read the table and apply it
        self._running: set[str] = set()  # jobs running now (APScheduler dropped them already)
        # The job ids made per game (those of a given scheduler's store found once, on the
        # first sync): a sync looks at its own game's jobs, not at every job of every game.
        self._made: dict[str, set[str]] | None = None
        self._hook = self.sync
        # Games this process could not schedule or fire, and why: one bad game never stops the
        # bot (it is reported to its judge and skipped), the others run.
        self.broken: dict[str, str] = {}

    # life cycle --------------------------------------------------------------------------------
    def start(self, *, paused: bool = False) -> list[Outcome]:
        """Catch up every active game (before any new message is handled), make the jobs,
        and start APScheduler (on the running event loop unless it was given one).
        `paused`: make the jobs but let the caller run them (tests)."""
        # APScheduler runs (paused) while the jobs are made: a stopped one keeps added jobs in
        # a list that every `get_job` scans, which made the start-up quadratic in the jobs.
        self.scheduler.start(paused=True)
        try:
            fired = self._start_jobs()
        except BaseException:
            self.scheduler.shutdown(wait=False)
            raise
        if not paused:
            self.scheduler.resume()
        return fired

    def _start_jobs(self) -> list[Outcome]:
        # One query for every active game's zone and deadlines (not three queries a game):
        # the catch-up and the jobs of every game it did not touch are made from it.
        plan = self.service.schedule_rows(host=self.host)
        touched: set[str] = set()
        fired = self.catch_up(list(plan), plan=plan, touched=touched)
        self.service.on_commit.append(self._hook)
        for gid, (_, rows) in plan.items():
            # A game the catch-up fired (or tried to) is read again: its deadlines moved.
            # A game that cannot be scheduled is reported and skipped.
            self.sync(gid, None if gid in touched else rows)
        if self.watchdog_minutes:
            self.scheduler.add_job(self.watchdog, "interval", minutes=self.watchdog_minutes,
                                   id=WATCHDOG_ID, replace_existing=True, coalesce=True,
                                   misfire_grace_time=None)
        return fired

    def stop(self) -> None:
        if self._hook in self.service.on_commit:
            self.service.on_commit.remove(self._hook)
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def game_ids(self) -> list[str]:
        return self.service.game_ids(active_only=True, host=self.host)

    # time --------------------------------------------------------------------------------------
    def zone(self, game_id: str) -> ZoneInfo:
        tz = self._zones.get(game_id)
        if tz is None:
            tz = self._zones[game_id] = zone(self.service.time_zone(game_id))
        return tz

    def wall_now(self, game_id: str) -> datetime:
        """Now on the game's wall clock (naive, never going back across a DST change)."""
        return wall_clock(self.clock.now(), self.zone(game_id))

    # firing ------------------------------------------------------------------------------------
    def fire(self, game_id: str, due: datetime | None = None, job: str | None = None
             ) -> list[Outcome]:
        """Fire every deadline of the game that is due now (what a job runs). `due`: the
        wall-clock due of the job's deadline; a job that woke up a hair early still fires it.
        `job`: the id of the job running this (not to be made again while it runs)."""
        until = self.wall_now(game_id)
        if due is not None:
            until = max(until, due)
        if job is not None:
            with self._lock:
                self._running.add(job)
        try:
            out = self.service.advance(game_id, until)
        except UnknownGame:
            out = []
        except Exception as exc:
            self._failed(game_id, exc)
            out = []
        finally:
            with self._lock:
                self._running.discard(job or "")
        # Also when nothing changed: a job that ran is gone. Not after an error (the database
        # is away?): the watchdog and the next message retry, rather than a job every instant.
        self.sync(game_id)
        return out

    def catch_up(self, game_ids: Iterable[str] | None = None, *,
                 plan: PlanRows | None = None, touched: set[str] | None = None
                 ) -> list[Outcome]:
        """Fire what passed while the bot was down, each game in time order (games by their
        earliest passed deadline). `plan`: the games' zones and deadline rows read already
        (`Service.schedule_rows`); `touched` is told the games it fired (or tried to)."""
        now = self.clock.now()
        firsts: list[tuple[datetime, str]] = []
        for gid in self.game_ids() if game_ids is None else game_ids:
            try:
                known = plan.get(gid) if plan is not None else None
                if known is not None and gid not in self._zones:
                    self._zones[gid] = zone(known[0])
                tz = self.zone(gid)
                rows = known[1] if known is not None else self.service.deadline_rows(gid)
                dues = [instant_of(due, tz) for _, _, due in rows]
            except Exception as exc:
                self._failed(gid, exc)
                continue
            if dues and min(dues) <= now:
                firsts.append((min(dues), gid))
        out: list[Outcome] = []
        for _, gid in sorted(firsts):
            if touched is not None:
                touched.add(gid)
            try:
                out.extend(self.service.advance(gid, self.wall_now(gid)))
            except Exception as exc:
                self._failed(gid, exc)
        return out

    def _failed(self, game_id: str, exc: Exception) -> None:
        """Skip a game that cannot be scheduled or fired, and tell its judge once per cause."""
        why = f"{type(exc).__name__}: {exc}"
        log.error("game %s skipped by the scheduler: %s", game_id, why)
        if self.broken.get(game_id) == why:
            return
        self.broken[game_id] = why
        try:
            self.service.alert_judge(game_id, "scheduler", why)
        except Exception:  # the database itself is away: the log has it
            log.exception("could not tell the judge of game %s", game_id)

    def watchdog(self) -> None:
        """A safety net: commits this process was not told about (another process, the CLI)
        and anything due that lost its job."""
        for gid in self.game_ids():
            self.fire(gid)

    # messages ----------------------------------------------------------------------------------
    def receive(self, game_id: str, command: Command | dict[str, Any], *,
                msg_id: str | None = None, sender: str | None = None) -> Outcome:
        """An incoming message, now: what is due fires first, then it is applied, at a game
        time that never goes back."""
        return self.service.receive(game_id, command, now=self.wall_now(game_id),
                                    msg_id=msg_id, sender=sender, monotonic=True)

    # jobs --------------------------------------------------------------------------------------
    def sync(self, game_id: str, rows: list[tuple[str, str, datetime]] | None = None) -> None:
        """Make the game's jobs those of its deadlines table: one per deadline, at its instant.
        `rows`: that table's rows for the game, read already (start-up)."""
        with self._lock:
            try:
                tz = self.zone(game_id)
                if rows is None:
                    rows = self.service.deadline_rows(game_id)
            except UnknownGame:
                rows = []
            except Exception as exc:
                self._failed(game_id, exc)
                return
            want = {job_id(game_id, did): due for did, _, due in rows}
            if self._made is None:
                self._made = {}
                for job in self.scheduler.get_jobs():
                    if job.args and job.id != WATCHDOG_ID:
                        self._made.setdefault(job.args[0], set()).add(job.id)
            made = self._made.setdefault(game_id, set())
            for jid in sorted(made - want.keys()):
                self._remove(jid)
                made.discard(jid)
            for jid, due in want.items():
                if jid in self._running:
                    continue  # its own run syncs again when it is done
                try:
                    at = instant_of(due, tz)
                except (OverflowError, ValueError) as exc:  # a time no clock reaches
                    self._failed(game_id, exc)
                    continue
                job = self.scheduler.get_job(jid)
                if job is not None and job.trigger.run_date == at:
                    continue
                self.scheduler.add_job(self.fire, DateTrigger(run_date=at, timezone=UTC),
                                       args=[game_id, due, jid], id=jid, name=jid,
                                       replace_existing=True, coalesce=True,
                                       misfire_grace_time=None)
                made.add(jid)

    def jobs(self, game_id: str) -> list[Any]:
        return [j for j in self.scheduler.get_jobs() if j.args and j.args[0] == game_id]

    def _remove(self, jid: str) -> None:
        with contextlib.suppress(JobLookupError):  # it has just run
            self.scheduler.remove_job(jid)
