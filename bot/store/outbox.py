"""The outbox's statements (issue 33): bot/outbox.py merges a turn's rows, orders the queue and
delivers; every SQL statement it needs is here. A game's targets (a seat, a room, the judge)
are addressed as they are when the row goes: `addresses`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, delete, or_, select, update
from sqlalchemy.orm import Session

from bot.store.db import Database, of_host
from bot.store.models import Game, OutboxRow, Player, Room

# (game, target) -> where it goes now: a seat's contact, a room's id, the game's judge
Addresses = dict[tuple[str | None, str], str]


def addresses(s: Session, game_ids: Iterable[str | None]) -> Addresses:
    """Where each target of these games is now: a seat's contact, a room's id, the judge."""
    out: Addresses = {}
    ids = [g for g in set(game_ids) if g is not None]
    if not ids:
        return out
    for gid, seat, contact in s.execute(select(Player.game_id, Player.seat, Player.contact_id)
                                        .where(Player.game_id.in_(ids))):
        if contact:
            out[(gid, f"seat:{seat}")] = contact
    for gid, name, room in s.execute(select(Room.game_id, Room.name, Room.room_id)
                                     .where(Room.game_id.in_(ids))):
        out[(gid, "public" if name == "public" else f"group:{name}")] = room
    for gid, judge in s.execute(select(Game.id, Game.judge_contact).where(Game.id.in_(ids))):
        if judge:
            out[(gid, "judge")] = judge
    return out


Merge = Callable[[list[OutboxRow], Addresses], tuple[list[int], int]]


def of_this_host(host: str | None) -> ColumnElement[bool]:
    """The rows account `host` sends: a game's go from the game's host, the rest from their
    own (a query joined to Game)."""
    return or_(and_(OutboxRow.game_id.is_not(None), of_host(Game.host, host)),
               and_(OutboxRow.game_id.is_(None), of_host(OutboxRow.host, host)))


class OutboxStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def seal(self, key: str, now: datetime, merge: Merge) -> int:
        """End turn `key` in one transaction: its rows still held at `now` (`_held`: one whose
        hold ran out may be on its way already), in the order written, with their addresses,
        are handed to `merge`, which changes them in place and names the rows merged into
        others (deleted here) and how many remain (returned)."""
        with self.db.write() as s:
            return _seal(s, key, now, merge)

    def seal_held(self, now: datetime, ended: Callable[[str], bool], merge: Merge) -> int:
        """In one transaction: every turn of this account still holding rows at `now` that
        `ended` says is over (its process died in it) sealed as `seal` does. How many."""
        with self.db.write() as s:
            held = s.scalars(select(OutboxRow.turn).distinct()
                             .outerjoin(Game, Game.id == OutboxRow.game_id)
                             .where(OutboxRow.turn.is_not(None), _held(now),
                                    of_this_host(self.db.host)))
            dead = [t for t in held if t is not None and ended(t)]
            for key in dead:
                _seal(s, key, now, merge)
        return len(dead)

    def pending(self, game_ids: list[str] | None, limit: int
                ) -> tuple[list[OutboxRow], Addresses]:
        """This account's unsent rows (of `game_ids` only, if given), in the order written,
        detached, and their addresses."""
        with self.db.read() as s:
            q = (select(OutboxRow).outerjoin(Game, Game.id == OutboxRow.game_id)
                 .where(OutboxRow.sent_at.is_(None), of_this_host(self.db.host))
                 .order_by(OutboxRow.id))
            if game_ids is not None:
                q = q.where(OutboxRow.game_id.in_(game_ids))
            rows = list(s.scalars(q.limit(limit)))
            for row in rows:
                s.expunge(row)
            known = addresses(s, {r.game_id for r in rows}) if rows else {}
        return rows, known

    def update(self, row_id: int, values: Mapping[str, Any],
               add: OutboxRow | None = None) -> None:
        """Row `row_id` changed (marked sent, or failed and due again later); `add`: a row
        written with it (the judge told that it keeps failing)."""
        with self.db.write() as s:
            s.execute(update(OutboxRow).where(OutboxRow.id == row_id).values(**values))
            if add is not None:
                s.add(add)

    def take(self, row_id: int, values: Mapping[str, Any], send: Callable[[], None]) -> bool:
        """Row `row_id` marked sent if it is still unsent, and `send` called inside the same
        write transaction (an instant transport): False if another deliverer took it; if
        `send` raises, the transaction rolls back and the row stays unsent."""
        with self.db.write() as s:
            taken = cast(CursorResult[Any], s.execute(update(OutboxRow).where(
                OutboxRow.id == row_id, OutboxRow.sent_at.is_(None)).values(**values)))
            if taken.rowcount != 1:
                return False
            send()
        return True


def _held(now: datetime) -> ColumnElement[bool]:
    """A turn's row still held at `now`: unsent, never tried, its hold not run out. A row the
    deliverer has tried (its hold ran out in a long turn) may have reached its reader under
    its key: it keeps its text, whatever its turn writes after it."""
    return and_(OutboxRow.sent_at.is_(None), OutboxRow.attempts == 0,
                OutboxRow.next_attempt_at > now)


def _seal(s: Session, key: str, now: datetime, merge: Merge) -> int:
    rows = list(s.scalars(select(OutboxRow).where(OutboxRow.turn == key, _held(now))
                          .order_by(OutboxRow.id)))
    if not rows:
        return 0
    gone, remaining = merge(rows, addresses(s, {r.game_id for r in rows}))
    if gone:
        s.execute(delete(OutboxRow).where(OutboxRow.id.in_(gone)))
    return remaining
