"""The vote thread of a `votes.channel=forum-auto` game: bind, read, judge, apply.

    投票贴 TID ─> forum_threads          read (interval; at the close) ─> forum_ledger lines
    判 楼层 …  ─> a line's decision      verdicts (bot/forum/ledger.py) ─> Service.submit

A line enters the engine once nobody has to decide about it, as the vote command its verdict
names, at its forum post time, with the message id `tieba:PID`: the service applies a message
id once, so a restart, a second read or a crash between the commit and the ledger's `applied`
mark never counts a vote twice. The judge is told every read that found new lines (so nothing
is counted that the judge could not see) and every read that failed near the close. A failed
read changes nothing: it is "unknown", never "no votes". The forum is only ever read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.forum.ledger import DECISIONS, Day, Line, Verdict, judge_day
from bot.forum.posts import PostVote, read_vote
from bot.forum.reader import ThreadRead, ThreadSource, TiebaSource
from bot.gametime import wall_clock, zone
from bot.service import Service, UnknownGame
from bot.store.forum import ForumStore
from bot.store.models import ForumLine, ForumThread
from bot.texts import t
from engine.model import Deadline, GameState

log = logging.getLogger(__name__)
CHANNEL = "forum-auto"
DEFAULT_INTERVAL = timedelta(minutes=10)
NEAR_CLOSE = timedelta(minutes=60)
POLL_JOB = "wolfjudge:forum"  # a failed read this close to the close is told at once


def msg_id(pid: int) -> str:
    return f"tieba:{pid}"


def floor_ref(floor: int, sub: int) -> str:
    return str(floor) if sub == 0 else f"{floor}-{sub}"


def _utc(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(tzinfo=None)


def _name(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKC", text).strip().casefold()


class ForumVotes:
    """`source`: the forum (aiotieba by default); `clock`: now, time-zone aware."""

    def __init__(self, service: Service, source: ThreadSource | None = None, *,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 interval: timedelta = DEFAULT_INTERVAL) -> None:
        self.service = service
        self.rows = ForumStore(service.db)
        self.source: ThreadSource = source if source is not None else TiebaSource()
        self.clock = clock
        self.interval = interval
        service.before_tick.append(self.before_tick)

    # which games ---------------------------------------------------------------------------
    def enabled(self, gid: str) -> bool:
        return self.rows.channel(gid) == CHANNEL

    def games(self) -> list[str]:
        return self.rows.games(CHANNEL)

    def thread_for(self, gid: str, day: int) -> ForumThread | None:
        return self.rows.thread_for(gid, day)

    def _wall(self, gid: str, at: datetime | None = None) -> datetime:
        return wall_clock(at or self.clock(), zone(self.service.time_zone(gid)))

    # the judge's commands ------------------------------------------------------------------
    def bind(self, gid: str, tid: int, now: datetime) -> str:
        """`投票贴 TID`: the thread of today (or of day 1, before it opens) and later days."""
        state = self.service.state(gid)
        day = state.day or 1
        if state.phase.startswith("N"):
            day = state.day + 1  # bound at night: tomorrow's thread
        self.rows.bind(gid, day, tid, _utc(now))
        return t("forum.bound", code=gid, tid=tid, day=day)

    def decide(self, gid: str, ref: str, decision: str, now: datetime) -> str:
        """`判 楼层 改票|更正|废票|有效|忽略`: the judge's word on one line of today."""
        assert decision in DECISIONS
        state = self.service.state(gid)
        if not state.phase.startswith("D"):
            return t("forum.not_day")
        floor, _, sub = ref.partition("-")
        said = self.rows.decide(gid, state.day, int(floor), int(sub or 0), decision)
        if said == "missing":
            return t("forum.no_line", ref=ref)
        if said == "applied":
            return t("forum.already_applied", ref=ref)
        applied = self.refresh(gid)
        line = self.line(gid, state.day, ref)
        assert line is not None
        return t("forum.decided", ref=ref, what=self.describe(line)) + (
            "\n" + t("forum.applied_n", n=applied) if applied else "")

    def line(self, gid: str, day: int, ref: str) -> ForumLine | None:
        floor, _, sub = ref.partition("-")
        return self.rows.line(gid, day, int(floor), int(sub or 0))

    def lines(self, gid: str, day: int) -> list[ForumLine]:
        return self.rows.lines(gid, day)

    # reading -------------------------------------------------------------------------------
    def schedule(self, scheduler: Any) -> None:
        """Read the vote threads every `interval` on an APScheduler (the bot's own)."""
        scheduler.add_job(self.poll, "interval", seconds=self.interval.total_seconds(),
                          id=POLL_JOB, replace_existing=True, coalesce=True,
                          max_instances=1, misfire_grace_time=None)

    def poll(self) -> None:
        """What the bot's scheduler calls at an interval: every forum-auto game in a day whose
        thread was not read for `interval`."""
        for gid in self.games():
            try:
                state = self.service.state(gid)
                if not state.phase.startswith("D"):
                    continue
                row = self.thread_for(gid, state.day)
                if row is None:
                    continue
                now = self.clock()
                if row.last_read_at is not None and _utc(now) - row.last_read_at < self.interval:
                    continue
                self.read(gid)
            except UnknownGame:
                continue
            except Exception:  # one game's trouble never stops the others
                log.exception("forum: reading the thread of %s failed", gid)

    def before_tick(self, gid: str, dl: Deadline) -> bool:
        """The Service hook: just as a forum-auto day closes, the thread is read once more
        and what it holds is counted before the close. True if the game changed."""
        if dl.kind != "day_close":
            return False
        try:
            if not self.enabled(gid):
                return False
            state = self.service.state(gid)
            if not state.phase.startswith("D") or state.day != dl.day:
                return False
            row = self.thread_for(gid, dl.day)
            if row is None or row.closed_day == dl.day:
                return False
            version = state.version
            self.read(gid, closing=True)
            self.rows.closed(gid, row.day, dl.day)
            return self.service.state(gid).version != version
        except Exception:
            log.exception("forum: the closing read of %s failed", gid)
            return False

    def read(self, gid: str, *, closing: bool = False) -> ThreadRead | None:
        """Read the day's thread, store what is new, judge and apply. A failed read stores
        nothing and is told to the judge when it matters (near or at the close)."""
        state = self.service.state(gid)
        if not state.phase.startswith("D"):
            return None
        day = state.day
        row = self.thread_for(gid, day)
        if row is None:
            return None
        now = self.clock()
        wall = self._wall(gid, now)
        got = self.source.read(row.tid)
        self.rows.was_read(gid, row.day, _utc(now), got.error, wall if got.ok else None)
        close = state.schedule.close_at(day)
        if not got.ok:
            log.warning("forum: %s thread %s unreadable: %s", gid, row.tid, got.error)
            if closing or close - wall <= NEAR_CLOSE:
                last = row.last_ok_at.strftime("%H:%M") if row.last_ok_at else t(
                    "forum.never")
                key = "closing" if closing else "near"
                self.service.tell_judge(gid, f"forum/{key}/{day}/{row.tid}", t(
                    f"forum.read_failed_{key}", code=gid, tid=row.tid, error=got.error,
                    last=last, day=day))
            return got
        new = self._store(gid, day, got, now)
        applied = self.refresh(gid)
        if new or applied:
            self._tell_read(gid, day, new, wall)
        if closing:
            lapsed = [r for r in self.lines(gid, day) if r.needs_judge]
            if lapsed:  # undecided at the close: not counted, like a lapsed 更正 request
                self.service.tell_judge(gid, f"forum/lapsed/{day}/{row.tid}", "\n".join(
                    [t("forum.lapsed", code=gid, day=day, n=len(lapsed))]
                    + [self.describe(r) for r in lapsed]))
        return got

    def _store(self, gid: str, day: int, got: ThreadRead, now: datetime) -> list[int]:
        """New lines into the ledger (today's), `gone` kept up to date; the new pids."""
        tz = zone(self.service.time_zone(gid))
        names = {_name(n): seat for seat, n in self.rows.names(gid)}
        nseats = len(self.service.state(gid).seats)
        new = self.rows.store(gid, got.tid, {p.pid for p in got.posts}, (
            {"pid": p.pid, "day": day, "floor": p.floor, "sub": p.sub,
             "parent_pid": p.parent_pid, "author_id": p.author_id,
             "author": (p.nick_name or p.user_name or str(p.author_id))[:128],
             "seat": names.get(_name(p.user_name)) or names.get(_name(p.nick_name)),
             "posted_at": wall_clock(datetime.fromtimestamp(p.create_time, UTC), tz),
             "text": p.text[:4000], "parsed": asdict(read_vote(p.text, nseats)),
             "verdict": "new", "needs_judge": False, "applied": False, "seen_at": _utc(now),
             "gone": False} for p in got.posts))
        return new

    # judging and applying ------------------------------------------------------------------
    def refresh(self, gid: str) -> int:
        """Judge today's lines again and enter those that are settled; how many entered."""
        state = self.service.state(gid)
        if not state.phase.startswith("D"):
            return 0
        day = state.day
        rows = self.lines(gid, day)
        verdicts = judge_day([_line(r) for r in rows], _day(state))
        self.rows.verdicts(gid, {r.pid: (verdicts[r.pid].verdict, verdicts[r.pid].reason,
                                         verdicts[r.pid].needs_judge) for r in rows})
        return self._apply(gid, rows, verdicts)

    def _apply(self, gid: str, rows: list[ForumLine], verdicts: dict[int, Verdict]) -> int:
        judge = self.rows.game_judge(gid)
        sender = judge or next(iter(sorted(self.service.judges)), None)
        todo = sorted((r for r in rows if not r.applied and verdicts[r.pid].command is not None
                       and not verdicts[r.pid].needs_judge),
                      key=lambda r: (r.posted_at, r.floor, r.sub))
        done = 0
        for r in todo:
            cmd = verdicts[r.pid].command
            assert cmd is not None
            out = self.service.submit(gid, cmd, now=r.posted_at, msg_id=msg_id(r.pid),
                                      sender=sender)
            outcome = out.status if out.rejection is None else f"rejected:{out.rejection.code}"
            self.rows.applied(gid, r.pid, outcome)
            if out.status == "accepted" and not out.duplicate:
                done += 1
        return done

    # what the judge sees -------------------------------------------------------------------
    def describe(self, r: ForumLine) -> str:
        pv = PostVote(**r.parsed)
        what = t("words.abstain") if pv.target is None else t("words.seat", n=pv.target)
        said = t(f"forum.kind.{pv.kind}", target=what)
        who = t("words.seat", n=r.seat) if r.seat is not None else t("forum.no_seat")
        verdict = t(f"forum.verdict.{r.verdict}")
        if r.reason:
            verdict += t("forum.because", why=t(f"forum.reason.{r.reason}"))
        if r.needs_judge:
            verdict += t("forum.ask")
        if r.applied:
            verdict += t("forum.entered") if r.outcome == "accepted" else t(
                "forum.engine_said", outcome=r.outcome or "")
        gone = t("forum.gone") if r.gone else ""
        return t("forum.line", ref=floor_ref(r.floor, r.sub), at=r.posted_at.strftime("%H:%M"),
                 author=r.author, who=who, said=said, verdict=verdict, gone=gone)

    def ledger_text(self, gid: str, day: int, *, only_open: bool = False) -> str:
        rows = self.lines(gid, day)
        thread = self.thread_for(gid, day)
        if thread is None:
            return t("forum.no_thread", code=gid)
        if only_open:
            rows = [r for r in rows if r.needs_judge]
        head = t("forum.check_head" if only_open else "forum.ledger_head", code=gid, day=day,
                 tid=thread.tid, read=self._read_state(thread))
        body = [self.describe(r) for r in rows] or [
            t("forum.nothing_open" if only_open else "forum.empty")]
        return "\n".join([head, *body])

    def _read_state(self, row: ForumThread) -> str:
        last = row.last_ok_at.strftime("%m-%d %H:%M") if row.last_ok_at else t("forum.never")
        if row.last_error:
            return t("forum.read_bad", last=last, error=row.last_error)
        return t("forum.read_ok", last=last)

    def _tell_read(self, gid: str, day: int, new: list[int], wall: datetime) -> None:
        rows = [r for r in self.lines(gid, day) if r.pid in set(new)]
        open_n = sum(1 for r in self.lines(gid, day) if r.needs_judge)
        lines = [t("forum.read_head", code=gid, day=day, n=len(rows),
                   at=wall.strftime("%H:%M"))]
        lines += [self.describe(r) for r in rows]
        if open_n:
            lines.append(t("forum.open_n", n=open_n))
        key = f"forum/read/{day}/" + ",".join(map(str, sorted(new))) + f"/{wall.isoformat()}"
        self.service.tell_judge(gid, key, "\n".join(lines))


def _line(r: ForumLine) -> Line:
    return Line(pid=r.pid, floor=r.floor, sub=r.sub, parent_pid=r.parent_pid, seat=r.seat,
                posted_at=r.posted_at, vote=PostVote(**r.parsed), decision=r.decision,
                applied=r.applied, verdict=r.verdict)


def _day(state: GameState) -> Day:
    day = state.day
    close = state.schedule.close_at(day)
    freeze = close - timedelta(minutes=int(state.options.get("deadlines.change_freeze", 60)))
    return Day(open_at=state.schedule.open_at(day), close_at=close, freeze_at=freeze,
               alive=frozenset(s.seat for s in state.living()))
