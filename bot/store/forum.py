"""The forum vote thread's rows (bot/forum/thread.py): the threads bound per day and the ledger
of what was read from them. Every statement the forum reader needs is here."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select

from bot.store.db import Database, of_host
from bot.store.models import ForumLine, ForumThread, Game, Lobby, Player


class ForumStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def channel(self, game_id: str) -> str | None:
        """The game's votes.channel (a chat option of its lobby)."""
        with self.db.read() as s:
            lobby = s.get(Lobby, game_id)
            return None if lobby is None else (lobby.chat_options or {}).get("votes.channel")

    def games(self, channel: str) -> list[str]:
        """The active games of this account whose votes come by `channel`."""
        with self.db.read() as s:
            rows = s.execute(select(Lobby.code, Lobby.chat_options).join(
                Game, Game.id == Lobby.code).where(
                Game.status == "active", of_host(Game.host, self.db.host))).all()
        return sorted(code for code, opts in rows if (opts or {}).get("votes.channel") == channel)

    def thread_for(self, game_id: str, day: int) -> ForumThread | None:
        """The thread of day `day`: the one bound for it or for the latest day before."""
        with self.db.read() as s:
            row = s.scalars(select(ForumThread).where(
                ForumThread.game_id == game_id, ForumThread.day <= day)
                .order_by(ForumThread.day.desc())).first()
            if row is not None:
                s.expunge(row)
            return row

    def bind(self, game_id: str, day: int, tid: int, at: datetime) -> None:
        with self.db.write() as s:
            row = s.get(ForumThread, (game_id, day))
            if row is None:
                s.add(ForumThread(game_id=game_id, day=day, tid=tid, bound_at=at))
            else:
                row.tid, row.bound_at = tid, at
                row.last_read_at = row.last_ok_at = row.last_error = None
                row.closed_day = None

    def closed(self, game_id: str, day: int, closed_day: int) -> None:
        with self.db.write() as s:
            row = s.get(ForumThread, (game_id, day))
            if row is not None:
                row.closed_day = closed_day

    def was_read(self, game_id: str, day: int, at: datetime, error: str | None,
                 ok_at: datetime | None) -> None:
        """A read of the thread: when, what failed, and (if it worked) its wall-clock time."""
        with self.db.write() as s:
            row = s.get(ForumThread, (game_id, day))
            assert row is not None
            row.last_read_at = at
            row.last_error = error
            if ok_at is not None:
                row.last_ok_at = ok_at

    def decide(self, game_id: str, day: int, floor: int, sub: int, decision: str) -> str:
        """The judge's word on a line: "missing", "applied" (too late) or "decided"."""
        with self.db.write() as s:
            row = s.scalars(select(ForumLine).where(
                ForumLine.game_id == game_id, ForumLine.day == day, ForumLine.floor == floor,
                ForumLine.sub == sub)).first()
            if row is None:
                return "missing"
            if row.applied:
                return "applied"
            row.decision = decision
            return "decided"

    def line(self, game_id: str, day: int, floor: int, sub: int) -> ForumLine | None:
        with self.db.read() as s:
            row = s.scalars(select(ForumLine).where(
                ForumLine.game_id == game_id, ForumLine.day == day, ForumLine.floor == floor,
                ForumLine.sub == sub)).first()
            if row is not None:
                s.expunge(row)
            return row

    def lines(self, game_id: str, day: int) -> list[ForumLine]:
        with self.db.read() as s:
            rows = list(s.scalars(select(ForumLine).where(
                ForumLine.game_id == game_id, ForumLine.day == day)
                .order_by(ForumLine.floor, ForumLine.sub)))
            for r in rows:
                s.expunge(r)
            return rows

    def names(self, game_id: str) -> list[tuple[int, str]]:
        """Each seat's 马甲 (seat, name)."""
        with self.db.read() as s:
            return [(seat, n) for seat, n in s.execute(select(
                Player.seat, Player.forum_name).where(Player.game_id == game_id)) if n]

    def store(self, game_id: str, tid: int, seen: set[int], new: Iterable[dict[str, Any]]
              ) -> list[int]:
        """Lines read from thread `tid`: `gone` set on those no longer there, the `new` ones
        added unless their pid is known; the pids added."""
        added: list[int] = []
        with self.db.write() as s:
            known = {r.pid: r for r in s.scalars(select(ForumLine).where(
                ForumLine.game_id == game_id, ForumLine.tid == tid))}
            for pid, r in known.items():
                r.gone = pid not in seen
            for values in new:
                if values["pid"] in known:
                    continue
                s.add(ForumLine(game_id=game_id, tid=tid, **values))
                added.append(values["pid"])
        return added

    def verdicts(self, game_id: str, verdicts: dict[int, tuple[str, str | None, bool]]) -> None:
        """Each line's latest verdict (verdict, reason, whether the judge must decide), for
        lines not entered yet."""
        with self.db.write() as s:
            for pid, (verdict, reason, needs_judge) in verdicts.items():
                row = s.get(ForumLine, (game_id, pid))
                assert row is not None
                if not row.applied:
                    row.verdict, row.reason, row.needs_judge = verdict, reason, needs_judge

    def applied(self, game_id: str, pid: int, outcome: str) -> None:
        with self.db.write() as s:
            row = s.get(ForumLine, (game_id, pid))
            assert row is not None
            row.applied = True
            row.outcome = outcome[:64]

    def game_judge(self, game_id: str) -> str | None:
        with self.db.read() as s:
            return s.scalar(select(Game.judge_contact).where(Game.id == game_id))
