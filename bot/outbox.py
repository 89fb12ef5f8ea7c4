"""Delivery of the outbox: after commit, send each unsent row, mark it sent, back off on failure.

Delivery is at least once. A row is marked sent only after the transport accepted it, so a
crash between the send and the mark sends that row again on the next run, with the same
`dedupe_key` (fixed when the row was written: game, log seq and recipient, or the reply to a
message id). The transport must therefore be idempotent on the dedupe key (drop a key it has
already delivered) for a player never to see a message twice; no two different rows ever
exist for the same event and recipient (the key is unique in the table).

Messages to one recipient go out in the order they were written: once a row for a recipient
fails or waits for its retry, the later rows for that recipient wait too. A row whose
recipient is not bound yet (no contact for the seat, no room, no judge) waits until it is.
One deliverer per database (or per hosting account's games, with `game_ids`) at a time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

from sqlalchemy import CursorResult, case, select, update

from bot.service import utcnow
from bot.store.db import Database
from bot.store.models import Game, OutboxRow, Player, Room

BACKOFF_BASE = timedelta(seconds=5)
BACKOFF_MAX = timedelta(hours=1)
GIVE_UP_AFTER = 6  # failed tries (about 2.5 minutes) before the judge is told


@dataclass(frozen=True)
class OutgoingMessage:
    dedupe_key: str
    game_id: str | None  # None: a chat-layer DM of no game (a lobby's)
    channel: str  # dm | group | public | judge
    target: str  # seat:3 | group:wolves | public | judge | contact:ID
    address: str  # the WeChat contact or room id
    text: str


class Sender(Protocol):
    """A transport. `send` raises on failure; it must drop a dedupe key it has delivered.

    A transport whose send is instant and local (the console: a line on standard output) may
    set `instant = True`: each row is then sent inside the transaction that marks it sent, so
    the mark is committed the moment the transport took it, and a deliverer in another
    thread or process that reaches the same row finds it taken and skips it."""

    def send(self, message: OutgoingMessage) -> None: ...


@dataclass
class DeliveryReport:
    sent: int = 0
    failed: int = 0
    waiting: int = 0  # not due yet, behind a failed row, or no address yet


def backoff(attempts: int) -> timedelta:
    """Wait before try number attempts+1: 5 s, 10 s, 20 s … at most an hour."""
    return min(BACKOFF_MAX, BACKOFF_BASE * (2 ** max(0, attempts - 1)))


def _addresses(db: Database, game_ids: set[str | None]
               ) -> dict[tuple[str | None, str], str]:
    out: dict[tuple[str | None, str], str] = {}
    with db.read() as s:
        for gid, seat, contact in s.execute(select(Player.game_id, Player.seat,
                                                   Player.contact_id)
                                            .where(Player.game_id.in_(game_ids))):
            if contact:
                out[(gid, f"seat:{seat}")] = contact
        for gid, name, room in s.execute(select(Room.game_id, Room.name, Room.room_id)
                                         .where(Room.game_id.in_(game_ids))):
            out[(gid, "public" if name == "public" else f"group:{name}")] = room
        for gid, judge in s.execute(select(Game.id, Game.judge_contact)
                                    .where(Game.id.in_(game_ids))):
            if judge:
                out[(gid, "judge")] = judge
    return out


def deliver(db: Database, sender: Sender, *, now: datetime | None = None,
            game_ids: Iterable[str] | None = None, limit: int = 1000) -> DeliveryReport:
    now = now or utcnow()
    report = DeliveryReport()
    with db.read() as s:
        # Secrets first (issue 9): DMs (role cards, night feedback, replies) and the judge's
        # before room posts, room posts before public ones; each recipient's in order.
        first = case((OutboxRow.channel.in_(("dm", "judge")), 0),
                     (OutboxRow.channel == "group", 1), else_=2)
        q = select(OutboxRow).where(OutboxRow.sent_at.is_(None)).order_by(first, OutboxRow.id)
        if game_ids is not None:
            q = q.where(OutboxRow.game_id.in_(list(game_ids)))
        rows = list(s.scalars(q.limit(limit)))
    if not rows:
        return report
    known = _addresses(db, {r.game_id for r in rows})
    blocked: set[tuple[str | None, str]] = set()
    for row in rows:
        who = (row.game_id, row.target)
        address = row.address or known.get(who)
        if who in blocked or row.next_attempt_at > now or address is None:
            blocked.add(who)  # keep this recipient's messages in order
            report.waiting += 1
            continue
        msg = OutgoingMessage(row.dedupe_key, row.game_id, row.channel, row.target, address,
                              row.text)
        try:
            if getattr(sender, "instant", False):
                if not _send_and_mark(db, sender, msg, row, now):
                    continue  # another deliverer took it meanwhile
                report.sent += 1
                continue
            sender.send(msg)
        except Exception as exc:  # a transport failure: retry later (a crash is not caught)
            blocked.add(who)
            report.failed += 1
            with db.write() as s:
                s.execute(update(OutboxRow).where(OutboxRow.id == row.id).values(
                    attempts=row.attempts + 1, next_attempt_at=now + backoff(row.attempts + 1),
                    last_error=f"{type(exc).__name__}: {exc}"[:2000], address=address))
                if (row.attempts + 1 == GIVE_UP_AFTER and row.target != "judge"
                        and row.game_id is not None):  # a game's judge to tell
                    s.add(_judge_alert(row, address, now))
            continue
        with db.write() as s:
            s.execute(update(OutboxRow).where(OutboxRow.id == row.id).values(
                **_sent(row, address, now)))
        report.sent += 1
    return report


def _judge_alert(row: OutboxRow, address: str, now: datetime) -> OutboxRow:
    """The judge is told once that a message keeps failing, and what to do (it is still
    retried, every hour at most)."""
    from bot.chat.texts import t

    where = t("words.room") if row.channel in ("group", "public") else t("words.contact")
    return OutboxRow(dedupe_key=f"{row.dedupe_key}/failing", game_id=row.game_id, seq=None,
                     channel="judge", target="judge", address=None,
                     text=t("send_failing", where=where, address=address,
                            text=row.text[:60], attempts=GIVE_UP_AFTER),
                     created_at=now, attempts=0, next_attempt_at=now)


def _sent(row: OutboxRow, address: str, now: datetime) -> dict[str, object]:
    """The columns of a row marked sent."""
    return {"sent_at": now, "attempts": row.attempts + 1, "address": address,
            "last_error": None}


def _send_and_mark(db: Database, sender: Sender, msg: OutgoingMessage, row: OutboxRow,
                   now: datetime) -> bool:
    """Send one row inside the write transaction that marks it sent (an instant transport):
    the row is checked unsent under the write lock first, so it goes out once however many
    deliverers race for it, and the mark commits right after the send."""
    with db.write() as s:
        taken = cast(CursorResult[Any], s.execute(update(OutboxRow).where(
            OutboxRow.id == row.id, OutboxRow.sent_at.is_(None)).values(
            **_sent(row, msg.address, now))))
        if taken.rowcount != 1:
            return False
        sender.send(msg)  # raises: the transaction rolls back, the row stays unsent
    return True
