"""Delivery of the outbox: after commit, send each unsent row, mark it sent, back off on failure.

Delivery is at least once. A row is marked sent only after the transport accepted it, so a
crash between the send and the mark sends that row again on the next run, with the same
`dedupe_key` (fixed when the row was written: game, log seq and recipient, or the reply to a
message id). The transport must therefore be idempotent on the dedupe key (drop a key it has
already delivered) for a player never to see a message twice; no two different rows ever
exist for the same event and recipient (the key is unique in the table).

One message per recipient per step: the rows that the handling of one incoming message (or of
one deadline) writes are held (`turn`) until it ends, then merged into one row per recipient,
its texts in the order they were written (`seal`). A merged row keeps its first row's key, in
one transaction: a restart never sends a merged text twice, or half of it. A turn that never
ends (the process died inside it) is ended by the next process that starts for the account
(`release_dead_turns`: a turn names the process that holds it, and one process serves an
account at a time; two at once, as README "One bot per account at a time" says, would end each
other's live turns early: a recipient could get one step in two messages), so what it holds
goes at once; failing that, its rows go after TURN_HOLD, as they were. A row once tried keeps
its text and key (bot/store/outbox.py `_held`): it is never merged afterwards.

The queue's order: each recipient's messages go in the order they were written; among
recipients, whoever is owed an answer to their own command (`priority` 0: a receipt, a
refusal, `帮助`, `状态`) goes before any queued broadcast, room post or reminder; then DMs and
the judge's before room posts, room posts before public ones, oldest first. With a transport
that takes time to send (WeChat: one send per pacing interval), the order is worked out again
before every send, so an answer written during a burst leaves next. A summary (`priority` 2:
the judge's `报名 7/12`) waits for its time without holding back its recipient's later
messages. Once a row for a recipient fails or waits for its retry, the later rows for that
recipient wait too. A row whose recipient is not bound yet (no contact for the seat, no room,
no judge) waits until it is. One deliverer per hosting account at a time: with several WeChat
accounts on one database each sends only its own rows (a game's go from the game's host, the
rest from the account that wrote them; `Database.host`).

This module decides (what merges, in which order, when to retry); every statement it needs is
the store's (bot/store/outbox.py).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol

from bot.gametime import utcnow
from bot.store.db import Database
from bot.store.models import OutboxRow
from bot.store.outbox import Addresses, OutboxStore
from bot.texts import t

log = logging.getLogger(__name__)
REPLY, NORMAL, DIGEST = 0, 1, 2  # OutboxRow.priority
TURN_HOLD = timedelta(minutes=2)  # a turn's rows go out as they are after this, if never sealed
_TURN: ContextVar[str | None] = ContextVar("outbox_turn", default=None)
# This process's name on the turns it holds (`turn` is "PROCESS KEY"): a turn of another one,
# found when a process starts, is a dead process's.
PROCESS = uuid.uuid4().hex[:12]
BACKOFF_BASE = timedelta(seconds=5)
BACKOFF_MAX = timedelta(hours=1)
GIVE_UP_AFTER = 6  # failed tries (about 2.5 minutes) before the judge is told


# turns ---------------------------------------------------------------------------------------
def current_turn() -> str | None:
    return _TURN.get()


def hold(now: datetime) -> tuple[str | None, datetime]:
    """A new row's `turn` and `next_attempt_at`: held until the current turn ends, if any."""
    key = _TURN.get()
    return (key, now + TURN_HOLD) if key is not None else (None, now)


@contextmanager
def turn(db: Database, key: str, after: Callable[[], None] | None = None) -> Iterator[None]:
    """Everything written to the outbox inside goes out, merged per recipient, when the block
    ends (then `after` runs: a delivery). Inside another turn it is part of that one."""
    if _TURN.get() is not None:
        yield
        return
    key = f"{PROCESS} {key}"[:160]
    token = _TURN.set(key)
    try:
        yield
    finally:
        _TURN.reset(token)
        seal(db, key)
        if after is not None:
            after()


def seal(db: Database, key: str) -> int:
    """End turn `key`: its held rows, one per recipient (the first row's key, texts in
    order, the highest priority), released, in one transaction. Returns how many rows
    remain."""
    now = utcnow()
    return OutboxStore(db).seal(key, now, lambda rows, known: merge(rows, known, now))


def merge(rows: list[OutboxRow], known: Addresses, now: datetime) -> tuple[list[int], int]:
    """A turn's rows merged in place, one per recipient (a person by DM, a room), released at
    `now`: the ids of the rows merged into another, and how many rows remain."""
    merged: dict[tuple[str, object], list[OutboxRow]] = {}
    for r in rows:
        address = r.address or known.get((r.game_id, r.target))
        where = "room" if r.channel in ("group", "public") else "dm"
        merged.setdefault((where, address or (r.game_id, r.target)), []).append(r)
    gone: list[int] = []
    for group in merged.values():
        first, rest = group[0], group[1:]
        if rest:
            first.text = "\n".join(r.text for r in group)
            first.priority = min(r.priority for r in group)
            first.asks = any(r.asks for r in group)
            if any(r.target != first.target or r.game_id != first.game_id for r in rest):
                first.address = first.address or known.get((first.game_id, first.target))
            gone.extend(r.id for r in rest)
        first.next_attempt_at = now
    return gone, len(merged)


def release_dead_turns(db: Database) -> int:
    """At a start: end every turn of this account that another process left open (it died
    inside it; one process serves an account at a time), as that process would have ended it:
    its unsent rows merged per recipient and due now, not TURN_HOLD later. A row is sent
    only while unsent (`sent_at`), so nothing that went out goes again. How many turns."""
    now = utcnow()
    return OutboxStore(db).seal_held(now, lambda key: not key.startswith(f"{PROCESS} "),
                                     lambda rows, known: merge(rows, known, now))


@dataclass(frozen=True)
class OutgoingMessage:
    dedupe_key: str
    game_id: str | None  # None: a chat-layer DM of no game (a lobby's)
    channel: str  # dm | group | public | judge
    target: str  # seat:3 | group:wolves | public | judge | contact:ID
    address: str  # the WeChat contact or room id
    text: str
    asks: bool = False  # it asks its reader to act (OutboxRow.asks)


class SendInterrupted(Exception):  # noqa: N818 (a stop, not an error)
    """Raised by a `send` that did not start because the bot is stopping: not a failure (no
    attempt counted, no back-off); the row stays unsent and goes after the restart."""


class Courier(Protocol):
    """A transport. `send` raises on failure; it must drop a dedupe key it has delivered.

    A transport whose send is instant and local (the console: a line on standard output) may
    set `instant = True`: each row is then sent inside the transaction that marks it sent, so
    the mark is committed the moment the transport took it, and a deliverer in another
    thread or process that reaches the same row finds it taken and skips it.

    A courier may also have `delivered(message)`: it is told of each row once it is marked
    sent (the pages wake on it, bot/web/live.py)."""

    def send(self, message: OutgoingMessage) -> None: ...


def _told(courier: Courier, message: OutgoingMessage) -> None:
    """A courier that wants to know (the pages' live updates and push reminders, bot/web/
    live.py) is told of each row once it is marked sent; what it does never fails a send."""
    delivered = getattr(courier, "delivered", None)
    if delivered is None:
        return
    try:
        delivered(message)
    except Exception:
        log.exception("told of a delivery: failed")


@dataclass
class DeliveryReport:
    sent: int = 0
    failed: int = 0
    waiting: int = 0  # not due yet, behind a failed row, or no address yet


def backoff(attempts: int) -> timedelta:
    """Wait before try number attempts+1: 5 s, 10 s, 20 s … at most an hour."""
    return min(BACKOFF_MAX, BACKOFF_BASE * (2 ** max(0, attempts - 1)))


_CHANNEL_ORDER = {"dm": 0, "judge": 0, "group": 1}  # then public: secrets first (issue 9)


def plan(rows: Iterable[OutboxRow], known: Addresses, now: datetime,
         blocked: set[tuple[str | None, str]] | None = None
         ) -> tuple[list[tuple[OutboxRow, str]], int]:
    """The rows that may go now, in the order they should, with their addresses; and how many
    wait. `rows`: unsent, in the order they were written; `blocked`: recipients whose
    messages wait (a send to them failed just now)."""
    queues: dict[tuple[str | None, str], list[OutboxRow]] = {}
    for row in rows:
        queues.setdefault((row.game_id, row.target), []).append(row)
    ready: list[tuple[tuple[int, int, int], OutboxRow, str]] = []
    waiting = 0
    for who, queue in queues.items():
        out: list[tuple[OutboxRow, str]] = []
        stop = blocked is not None and who in blocked
        for row in queue:
            address = row.address or known.get(who)
            if not stop and row.priority == DIGEST and row.next_attempt_at > now:
                waiting += 1  # a summary waiting for its time holds nobody back
                continue
            if stop or row.next_attempt_at > now or address is None:
                stop = True  # keep this recipient's messages in order
                waiting += 1
                continue
            out.append((row, address))
        if out:
            # The recipient's rank: owed an answer first, then secrets first (issue 9). All
            # its rows share it, so sorting by (rank, id) keeps each recipient's order.
            rank = min(r.priority for r, _ in out)
            channel = _CHANNEL_ORDER.get(out[0][0].channel, 2)
            ready.extend(((rank, channel, row.id), row, address) for row, address in out)
    ready.sort(key=lambda item: item[0])
    return [(row, address) for _, row, address in ready], waiting


def deliver(db: Database, courier: Courier, *, now: datetime | None = None,
            game_ids: Iterable[str] | None = None, limit: int = 1000,
            stop: Callable[[], bool] | None = None) -> DeliveryReport:
    """Send what is due, in the queue's order (the module's docstring). A transport that is
    not `instant` sends one row at a time and the order is worked out again before each send;
    `stop`: asked before each send, True ends the delivery (the rest stays unsent)."""
    report = DeliveryReport()
    store = OutboxStore(db)
    ids = list(game_ids) if game_ids is not None else None
    instant = getattr(courier, "instant", False)
    blocked: set[tuple[str | None, str]] = set()
    while True:
        when = now or utcnow()
        rows, known = store.pending(ids, limit)  # this account's rows only
        order, report.waiting = plan(rows, known, when, blocked)
        if not order:
            return report
        for row, address in (order if instant else order[:1]):
            if stop is not None and stop():
                return report
            who = (row.game_id, row.target)
            if who in blocked:
                continue
            msg = OutgoingMessage(row.dedupe_key, row.game_id, row.channel, row.target,
                                  address, row.text, row.asks)
            try:
                if instant:
                    # sent inside the transaction that marks it sent: once, however many
                    # deliverers race for it; the mark commits right after the send
                    if store.take(row.id, _sent(row, address, when), partial(courier.send, msg)):
                        report.sent += 1
                        _told(courier, msg)
                    continue  # (False: another deliverer took it meanwhile)
                courier.send(msg)
            except SendInterrupted:  # the bot is stopping: the row stays as it was
                return report
            except Exception as exc:  # a transport failure: retry later (a crash is not caught)
                blocked.add(who)
                report.failed += 1
                _failed(store, row, address, exc, when)
                continue
            store.update(row.id, _sent(row, address, when))
            report.sent += 1
            _told(courier, msg)
        if instant:
            return report


def _failed(store: OutboxStore, row: OutboxRow, address: str, exc: Exception,
            now: datetime) -> None:
    alert = (_judge_alert(row, address, now) if row.attempts + 1 == GIVE_UP_AFTER
             and row.target != "judge" and row.game_id is not None  # a game's judge to tell
             else None)
    store.update(row.id, {"attempts": row.attempts + 1,
                          "next_attempt_at": now + backoff(row.attempts + 1),
                          "last_error": f"{type(exc).__name__}: {exc}"[:2000],
                          "address": address}, add=alert)


def _judge_alert(row: OutboxRow, address: str, now: datetime) -> OutboxRow:
    """The judge is told once that a message keeps failing, and what to do (it is still
    retried, every hour at most)."""
    where = t("words.room") if row.channel in ("group", "public") else t("words.contact")
    return OutboxRow(dedupe_key=f"{row.dedupe_key}/failing", game_id=row.game_id, seq=None,
                     channel="judge", target="judge", address=None,
                     text=t("send_failing", where=where, address=address,
                            text=row.text[:60], attempts=GIVE_UP_AFTER),
                     created_at=now, attempts=0, next_attempt_at=now, host=row.host)


def _sent(row: OutboxRow, address: str, now: datetime) -> dict[str, object]:
    """The columns of a row marked sent."""
    return {"sent_at": now, "attempts": row.attempts + 1, "address": address,
            "last_error": None}
