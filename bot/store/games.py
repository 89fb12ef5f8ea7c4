"""The game store: every statement on a game's rows, the snapshot cache, and one command's
read and write (docs/spec/ARCHITECTURE.md: load → engine.handle → one transaction).

One accepted command is one transaction: its log rows (a `command` row, then the events it
produced) appended under the primary key (game_id, seq), the snapshot written with a version
check (`UPDATE … WHERE version = :old`: of two writers on one game only one wins, the loser
reloads and retries on the new state), the inbox row of its transport message id, the outbox
rows of its messages (bot/router.py, asked inside the transaction), and the deadlines and
cards mirrors. A rejection or a stale tick changes no state: it writes only its inbox row and
the reply to the sender, under the same version check so that it was decided on the latest
state. A message id seen before is not applied again: the original outcome is returned.

Nothing above the store runs SQL on these tables (bot/service.py asks it).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from pydantic import TypeAdapter
from sqlalchemy import Connection, Table, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from bot.feed import DEFAULT_FEED
from bot.gametime import utcnow
from bot.ids import GAME_ID, MAX_ID, inbox_id
from bot.outbox import NORMAL, REPLY, hold
from bot.render import render_rejection
from bot.router import PAGE, Message, RoomsView
from bot.store.codec import decode, encode, encode_state, state_of
from bot.store.db import Database, Host, of_host
from bot.store.hot import hot
from bot.store.models import (
    UNDO,
    Card,
    DeadlineRow,
    Game,
    InboxMessage,
    LogEntry,
    OutboxRow,
    Player,
    Room,
    RoomMember,
    Snapshot,
)
from engine.commands import Command, Tick, parse_command
from engine.events import Event, Rejection, parse_event
from engine.model import Deadline, GameState

COMMAND = TypeAdapter(Command)
log = logging.getLogger(__name__)
MAX_TRIES = 100  # optimistic retries of one command before giving up
MAX_RECONNECTS = 3  # new connections for one command whose connection was found dead

Status = Literal["accepted", "rejected", "noop"]
# A command's messages, asked inside its transaction: (the new state, its events, the seq of
# the command's log row, what the store read of the game's rooms) -> one Message a recipient.
Route = Callable[[GameState, Sequence[Event], int, RoomsView], list[Message]]


class UnknownGame(LookupError):
    pass


class MessageIdReused(ValueError):
    """A transport sent another command under a message id already applied: nothing is
    applied (the id must be unique per message; the inbox would take it for a repeat)."""


class GameExists(ValueError):
    pass


class ConcurrencyError(RuntimeError):
    """A command lost the optimistic race MAX_TRIES times in a row."""


class _Conflict(Exception):
    """The snapshot moved on since it was loaded: reload and try again."""


@dataclass(frozen=True)
class Outcome:
    """What came of one command. `duplicate`: the message id had been applied before, and this
    is the original outcome (then `state` is None: read it with `Service.state`)."""

    game_id: str
    msg_id: str | None
    status: Status
    version: int
    events: tuple[Event, ...] = ()
    rejection: Rejection | None = None
    duplicate: bool = False
    state: GameState | None = None

    @property
    def accepted(self) -> bool:
        return self.status == "accepted"


@dataclass
class Loaded:
    game_id: str
    ruleset: str
    state: GameState
    version: int
    last_seq: int
    clock: datetime
    # The snapshot row's `updated_at`: with version and last_seq, what a cached state is
    # checked against (a rebuild may write another state under the same version).
    stamp: datetime | None = None
    judge_contact: str | None = None
    judge_feed: str = DEFAULT_FEED
    dm_out: bool = False



# The pipeline's hot path runs core statements on the tables, built once here: no ORM unit of
# work, no statement (and cache key) built per call.
SNAPSHOTS = cast(Table, Snapshot.__table__)
GAMES = cast(Table, Game.__table__)
EVENTS = cast(Table, LogEntry.__table__)
INBOX = cast(Table, InboxMessage.__table__)
OUTBOX = cast(Table, OutboxRow.__table__)
DEADLINES = cast(Table, DeadlineRow.__table__)
CARDS = cast(Table, Card.__table__)
_HEAD = (select(SNAPSHOTS.c.version, SNAPSHOTS.c.last_seq, SNAPSHOTS.c.clock,
                SNAPSHOTS.c.updated_at, GAMES.c.ruleset, GAMES.c.judge_contact,
                GAMES.c.judge_feed, GAMES.c.dm_out)
         .join(GAMES, GAMES.c.id == SNAPSHOTS.c.game_id)
         .where(SNAPSHOTS.c.game_id == bindparam("gid")))
_FULL = _HEAD.add_columns(SNAPSHOTS.c.state)
_INBOX = select(INBOX).where(INBOX.c.game_id == bindparam("gid"),
                             INBOX.c.msg_id == bindparam("mid"))
PLAYERS = cast(Table, Player.__table__)
# A command's one read (issue 12): the snapshot head with the game's ruleset and judge, the
# inbox row of its message id (NULLs when none, or no id) and the sender's seat (NULL when
# none). On PostgreSQL every statement is a round trip: this was three of them.
_PROBE = (select(SNAPSHOTS.c.version, SNAPSHOTS.c.last_seq, SNAPSHOTS.c.clock,
                 SNAPSHOTS.c.updated_at, GAMES.c.ruleset, GAMES.c.judge_contact,
                 GAMES.c.judge_feed, GAMES.c.dm_out,
                 select(PLAYERS.c.seat).where(PLAYERS.c.game_id == bindparam("gid"),
                                              PLAYERS.c.contact_id == bindparam("contact"))
                 .scalar_subquery().label("seat"),
                 INBOX.c.sender.label("i_sender"), INBOX.c.command.label("i_command"),
                 INBOX.c.outcome.label("i_outcome"), INBOX.c.version.label("i_version"),
                 INBOX.c.first_seq.label("i_first_seq"), INBOX.c.last_seq.label("i_last_seq"),
                 INBOX.c.rejection.label("i_rejection"))
          .join(GAMES, GAMES.c.id == SNAPSHOTS.c.game_id)
          .outerjoin(INBOX, (INBOX.c.game_id == SNAPSHOTS.c.game_id)
                     & (INBOX.c.msg_id == bindparam("mid")))
          .where(SNAPSHOTS.c.game_id == bindparam("gid")))
_ZONE = select(GAMES.c.time_zone).where(GAMES.c.id == bindparam("gid"))
_DEADLINE_ROWS = (select(DEADLINES.c.deadline_id, DEADLINES.c.kind, DEADLINES.c.due)
                  .where(DEADLINES.c.game_id == bindparam("gid"))
                  .order_by(DEADLINES.c.due, DEADLINES.c.deadline_id))
# What the scheduler needs of every active game at start-up, in one statement: the zone and
# the mirrored deadlines (a game without any comes once, with NULLs).
_SCHEDULE = (select(GAMES.c.id, GAMES.c.time_zone, DEADLINES.c.deadline_id, DEADLINES.c.kind,
                    DEADLINES.c.due)
             .outerjoin(DEADLINES, DEADLINES.c.game_id == GAMES.c.id)
             .where(GAMES.c.status == "active")
             .order_by(GAMES.c.id, DEADLINES.c.due, DEADLINES.c.deadline_id))
_INSERT_INBOX = insert(INBOX)
_INSERT_EVENTS = insert(EVENTS)
_INSERT_OUTBOX = insert(OUTBOX)
_INSERT_DEADLINES = insert(DEADLINES)
_DELETE_DEADLINES = delete(DEADLINES).where(DEADLINES.c.game_id == bindparam("gid"))
_ROOMS = select(Room.name, Room.room_id).where(Room.game_id == bindparam("gid"))
_ROOM_MEMBERS = (select(RoomMember.room, RoomMember.contact_id, Player.seat)
                 .outerjoin(Player, (Player.game_id == RoomMember.game_id)
                            & (Player.contact_id == RoomMember.contact_id))
                 .where(RoomMember.game_id == bindparam("gid")))
_TOUCH = (update(SNAPSHOTS).where(SNAPSHOTS.c.game_id == bindparam("gid"),
                                  SNAPSHOTS.c.version == bindparam("old"))
          .values(version=SNAPSHOTS.c.version))
_WRITE = (update(SNAPSHOTS).where(SNAPSHOTS.c.game_id == bindparam("gid"),
                                  SNAPSHOTS.c.version == bindparam("old"))
          .values(version=bindparam("b_version", type_=SNAPSHOTS.c.version.type),
                  last_seq=bindparam("b_last_seq", type_=SNAPSHOTS.c.last_seq.type),
                  clock=bindparam("b_clock", type_=SNAPSHOTS.c.clock.type),
                  state=bindparam("b_state", type_=SNAPSHOTS.c.state.type),
                  updated_at=bindparam("b_updated_at", type_=SNAPSHOTS.c.updated_at.type)))
_CARD = (update(CARDS).where(CARDS.c.game_id == bindparam("gid"),
                             CARDS.c.seat == bindparam("b_seat"))
         .values(yellow=bindparam("b_yellow", type_=CARDS.c.yellow.type),
                 red=bindparam("b_red", type_=CARDS.c.red.type)))
_FINISH = (update(GAMES).where(GAMES.c.id == bindparam("gid"))
           .values(status=bindparam("b_status", type_=GAMES.c.status.type),
                   winner=bindparam("b_winner", type_=GAMES.c.winner.type)))


def _refusal(inbox: bool, reply: bool) -> Any:
    """PostgreSQL: a refused (or no-op) command's whole write as one statement: the `_TOUCH`
    of the snapshot row (`UPDATE … WHERE version = :old`), and, from its one row, the inbox
    row (`i_` parameters) and the reply's outbox row (`o_` ones), by data-modifying CTEs; it
    returns how many snapshot rows the UPDATE matched. A statement is atomic by itself: when
    the version moved on nothing is inserted (0: the caller's _Conflict), when a key is
    taken nothing is written (an IntegrityError, as from the separate statements). The same
    rows as `_TOUCH`, `_INSERT_INBOX` and `_INSERT_OUTBOX`; one round trip instead of three,
    and no transaction of its own to begin and commit (bot/store/hot.py)."""
    touched = (update(SNAPSHOTS).where(SNAPSHOTS.c.game_id == bindparam("gid"),
                                       SNAPSHOTS.c.version == bindparam("old"))
               .values(version=SNAPSHOTS.c.version).returning(SNAPSHOTS.c.game_id)
               .cte("touched"))
    stmt = select(func.count()).select_from(touched)
    for table, prefix, wanted in ((INBOX, "i_", inbox), (OUTBOX, "o_", reply)):
        if wanted:
            cols = [c for c in table.columns if c.key != "id"]
            rows = select(*[bindparam(prefix + c.key, type_=c.type) for c in cols]
                          ).select_from(touched)
            stmt = stmt.add_cte(insert(table).from_select([c.key for c in cols], rows)
                                .cte(f"{prefix}row"))
    return stmt


_REFUSALS = {(i, r): _refusal(i, r) for i in (False, True) for r in (False, True)}
# These run on the driver itself (bot/store/hot.py: compiled once, by SQLAlchemy); the
# refusals on PostgreSQL only (SQLite has no data-modifying CTEs: separate statements there).
for _stmt in (_HEAD, _FULL, _INBOX, _PROBE, _INSERT_INBOX, _INSERT_EVENTS, _INSERT_OUTBOX,
              _INSERT_DEADLINES, _DELETE_DEADLINES, _ROOMS, _ROOM_MEMBERS, _TOUCH, _WRITE,
              _CARD, _FINISH):
    hot(_stmt)
for _stmt in _REFUSALS.values():
    hot(_stmt, atomic_write=True)


@contextmanager
def _guarded(s: Any, stmt: Any, params: Mapping[str, Any]) -> Iterator[None]:
    """The snapshot's `UPDATE … WHERE version = :old`, then the block's statements; _Conflict
    when the UPDATE matched no row (another writer committed since the load), and then
    nothing of the block stays (the transaction is rolled back).

    Elsewhere the row count is checked before the block runs. On PostgreSQL the UPDATE and the
    block's statements go in one pipeline (one round trip) and the row count is read after it:
    when a statement of the block failed on a key (the other writer's log rows, or its inbox
    row of the same message) and the UPDATE matched no row, that is the same _Conflict."""
    if not getattr(s, "pipelined", False):
        if s.execute(stmt, params).rowcount != 1:
            raise _Conflict
        yield
        return
    written: Any = None
    try:
        with s.batch():
            written = s.execute(stmt, params)
            yield
    except IntegrityError:
        if written is not None and written.rowcount == 0:
            raise _Conflict from None
        raise
    if written.rowcount != 1:
        raise _Conflict


@dataclass(frozen=True)
class _InboxRow:
    """The inbox row of a message id, as `_previous` reads it."""

    sender: str | None
    command: Any
    outcome: Status
    version: int
    first_seq: int | None
    last_seq: int | None
    rejection: Any


class _Unread:
    """A value not read yet (where None is a value: a game without its own judge)."""


UNREAD = _Unread()
CACHE_SIZE = 4096  # hot snapshots kept decoded (some 40 KiB of memory each: bench/recovery.py)

def event_of(data: Any) -> Event:
    """A log row's event. Written as plain JSON (its payload model gives back the types:
    engine/payloads.py); rows written before in the tagged form read the same."""
    return parse_event(decode(data))


def _same_message(a: Command, b: Command) -> bool:
    """Whether a command under a known message id is that message again. Ticks are the same
    tick whenever they name the same deadline (two schedulers catching up at different minutes
    say different `fired_at`)."""
    if isinstance(a, Tick) and isinstance(b, Tick):
        return a.deadline_id == b.deadline_id
    return a == b


# What a command's decision is: the engine's answer (or a refusal), the time it is applied at,
# and its messages.
Decision = tuple["tuple[GameState, list[Event]] | Rejection", datetime, Route]


class GameStore:
    """The games' rows. `judges`: the bot's judges (a room member who is one counts as no
    stranger). `cache_size`: how many games' decoded snapshots are kept (0: none)."""

    def __init__(self, db: Database, *, judges: Callable[[], frozenset[str]],
                 cache_size: int = CACHE_SIZE) -> None:
        self.db = db
        self.judges = judges
        # Hot snapshots, decoded: a load reads the snapshot row's version, last_seq and
        # updated_at only, and decodes the state only when they differ from the cached ones
        # (another process or Service committed meanwhile). The cached states are those the
        # engine returned: like every state handed out here, never to be changed in place.
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Loaded] = OrderedDict()
        self._cache_lock = threading.Lock()  # the transport's and the scheduler's threads
        # Test seam: runs after the engine decided and before the write transaction opens.
        self.before_write: Callable[[], None] | None = None

    # the cache ---------------------------------------------------------------------------------
    def remember(self, loaded: Loaded) -> None:
        if self.cache_size <= 0:
            return
        with self._cache_lock:
            self._cache[loaded.game_id] = loaded
            self._cache.move_to_end(loaded.game_id)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def forget(self, game_id: str | None = None) -> None:
        """Drop a game's cached snapshot (all of them with None)."""
        with self._cache_lock:
            if game_id is None:
                self._cache.clear()
            else:
                self._cache.pop(game_id, None)

    # creating ----------------------------------------------------------------------------------
    def create(self, game: Game, state: GameState, params_now: datetime, events: list[Event],
               bindings: Mapping[int, tuple[str | None, str | None]],
               rooms: Mapping[str, str], route: Route) -> None:
        """A new game's rows in one transaction: GameExists when the id is taken (also when
        another writer took it meanwhile)."""
        try:
            self._create(game, state, params_now, events, bindings, rooms, route)
        except IntegrityError as exc:
            raise GameExists(game.id) from exc

    def _create(self, game: Game, state: GameState, params_now: datetime, events: list[Event],
                bindings: Mapping[int, tuple[str | None, str | None]],
                rooms: Mapping[str, str], route: Route) -> None:
        game_id = game.id
        with self.db.write() as s:
            if s.get(Game, game_id) is not None:
                raise GameExists(game_id)
            s.add(game)
            s.flush()
            s.add(Snapshot(game_id=game_id, version=state.version, last_seq=len(events),
                           clock=params_now, state=encode_state(state), updated_at=utcnow()))
            for st in state.seats:
                contact, forum = bindings.get(st.seat, (None, None))
                s.add(Player(game_id=game_id, seat=st.seat, contact_id=contact,
                             forum_name=forum))
                s.add(Card(game_id=game_id, seat=st.seat, yellow=st.yellow, red=st.red))
            for name, room_id in rooms.items():
                s.add(Room(game_id=game_id, name=name, room_id=room_id))
            s.flush()
            self._append(s, game_id, state, 0, events, None, params_now, None, route=route)
            self._sync_deadlines(s, game_id, None, state)

    def game(self, game_id: str) -> Game | None:
        with self.db.read() as s:
            row = s.get(Game, game_id)
            if row is not None:
                s.expunge(row)
            return row

    # small writes ------------------------------------------------------------------------------
    def bind(self, game_id: str, seat: int, contact_id: str | None,
             forum_name: str | None = None) -> None:
        with self.db.write() as s:
            row = s.get(Player, (game_id, seat))
            if row is None:
                raise UnknownGame(f"{game_id} has no seat {seat}")
            row.contact_id = contact_id
            if forum_name is not None:
                row.forum_name = forum_name

    def note_once(self, key: str, game_id: str, text: str) -> None:
        """A DM to the game's judge under dedupe key `key`, unless one was written already."""
        with self.db.write() as s:
            if s.scalar(select(OutboxRow.id).where(OutboxRow.dedupe_key == key)) is None:
                s.add(OutboxRow(**_direct_row(key, game_id, "judge", text)))

    def set_room(self, game_id: str, name: str, room_id: str) -> None:
        with self.db.write() as s:
            row = s.get(Room, (game_id, name))
            if row is None:
                s.add(Room(game_id=game_id, name=name, room_id=room_id))
            else:
                row.room_id = room_id

    def unset_room(self, game_id: str, name: str) -> None:
        """The game no longer has a room for `name` (an undone `绑定`): its posts go by DM."""
        with self.db.write() as s:
            s.execute(delete(Room).where(Room.game_id == game_id, Room.name == name))
            s.execute(delete(RoomMember).where(RoomMember.game_id == game_id,
                                               RoomMember.room == name))

    # reading -----------------------------------------------------------------------------------
    def seat_of(self, game_id: str, contact_id: str) -> int | None:
        with self.db.read() as s:
            return s.scalar(select(Player.seat).where(Player.game_id == game_id,
                                                      Player.contact_id == contact_id))

    def game_judge(self, game_id: str) -> str | None:
        with self.db.read() as s:
            return s.scalar(select(Game.judge_contact).where(Game.id == game_id))

    def game_ids(self, *, active_only: bool = False, host: Host = ...) -> list[str]:
        """The games (of `host`; `...`: of every host), in id order."""
        with self.db.read() as s:
            q = select(Game.id).order_by(Game.id).where(of_host(Game.host, host))
            if active_only:
                q = q.where(Game.status == "active")
            return list(s.scalars(q))

    def time_zone(self, game_id: str) -> str:
        # Core statements (the scheduler asks this, and the next, of every game at start-up).
        with self.db.read_core() as conn:
            name = conn.scalar(_ZONE, {"gid": game_id})
        if name is None:
            raise UnknownGame(game_id)
        return str(name)

    def deadline_rows(self, game_id: str) -> list[tuple[str, str, datetime]]:
        """The game's deadlines as mirrored at the last commit: (id, kind, wall-clock due)."""
        with self.db.read_core() as conn:
            return [(r[0], r[1], r[2]) for r in conn.execute(_DEADLINE_ROWS, {"gid": game_id})]

    def schedule_rows(self, host: Host = ...
                      ) -> dict[str, tuple[str, list[tuple[str, str, datetime]]]]:
        """Every active game (of `host`; `...`: of every host), in id order: its time zone and
        its deadline rows as `deadline_rows` gives them. One query for all games."""
        q = _SCHEDULE if host is ... else _SCHEDULE.where(of_host(GAMES.c.host, host))
        out: dict[str, tuple[str, list[tuple[str, str, datetime]]]] = {}
        with self.db.read_core() as conn:
            for gid, tz, did, kind, due in conn.execute(q):
                entry = out.setdefault(gid, (tz, []))
                if did is not None:
                    entry[1].append((did, kind, due))
        return out

    def log(self, game_id: str) -> list[LogEntry]:
        with self.db.read() as s:
            return list(s.scalars(select(LogEntry).where(LogEntry.game_id == game_id)
                                  .order_by(LogEntry.seq)))

    def due_games(self, now: datetime, game_ids: Iterable[str] | None = None) -> list[str]:
        with self.db.read() as s:
            q = select(DeadlineRow.game_id).where(DeadlineRow.due <= now).distinct()
            if game_ids is not None:
                q = q.where(DeadlineRow.game_id.in_(list(game_ids)))
            return sorted(s.scalars(q))

    def load(self, game_id: str, s: Session | Connection | None = None,
             head: Sequence[Any] | None = None) -> Loaded:
        """The game's snapshot (from the cache when it is still the stored one). `head`: the
        `_HEAD` columns, read already (by `_PROBE`)."""
        if not GAME_ID.fullmatch(game_id):
            raise UnknownGame(game_id[:70])
        if s is None:
            with self.db.read_core() as conn:
                return self.load(game_id, conn)
        if head is None:
            head = s.execute(_HEAD, {"gid": game_id}).first()
        if head is None:
            self.forget(game_id)
            raise UnknownGame(game_id)
        version, last_seq, clock, stamp, ruleset, judge, feed, dm_out = head
        hit = self._cache.get(game_id)
        if hit is not None and (hit.version, hit.last_seq, hit.stamp) == (
                version, last_seq, stamp):
            if (hit.judge_contact, hit.judge_feed, hit.dm_out, hit.clock) != (
                    judge, feed, dm_out, clock):
                hit = Loaded(game_id, ruleset, hit.state, version, last_seq, clock, stamp,
                             judge, feed, dm_out)
            self.remember(hit)  # and the most recently used
            return hit
        # One statement for the state and its version: under READ COMMITTED a second read
        # could see a later commit than the head did.
        full = s.execute(_FULL, {"gid": game_id}).first()
        if full is None:
            raise UnknownGame(game_id)
        version, last_seq, clock, stamp, ruleset, judge, feed, dm_out, data = full
        loaded = Loaded(game_id, ruleset, state_of(data), version, last_seq, clock, stamp,
                        judge, feed, dm_out)
        self.remember(loaded)
        return loaded

    def _previous(self, s: Session | Connection, game_id: str, msg_id: str, cmd: Command,
                  sender: str | None, row: Any = None) -> Outcome | None:
        """The original outcome of a message id applied before. `row`: its inbox row, read
        already (the `_INBOX` columns, or `_PROBE`'s `i_` ones: None when there is none)."""
        if row is None:
            found = s.execute(_INBOX, {"gid": game_id, "mid": msg_id}).first()
            if found is None:
                return None
            row = _InboxRow(found.sender, found.command, found.outcome, found.version,
                            found.first_seq, found.last_seq, found.rejection)
        if not _same_message(parse_command(decode(row.command)), cmd) or (
                row.sender != sender):
            raise MessageIdReused(f"{game_id}: message id {msg_id!r} was applied before to "
                                  "another command or sender; this one is not applied")
        events: tuple[Event, ...] = ()
        if row.first_seq is not None:
            bodies = s.scalars(select(LogEntry.body).where(
                LogEntry.game_id == game_id, LogEntry.kind == "event",
                LogEntry.seq.between(row.first_seq, row.last_seq)).order_by(LogEntry.seq))
            events = tuple(event_of(b) for b in bodies)
        rejection = Rejection.model_validate(decode(row.rejection)) if row.rejection else None
        status: Status = row.outcome
        return Outcome(game_id, msg_id, status, row.version, events, rejection, duplicate=True)

    def _probe(self, s: Connection, game_id: str, cmd: Command, msg_id: str | None,
               sender: str | None) -> Outcome | tuple[Loaded, int | None]:
        """A command's read, one statement (and a second for the state when the cache does
        not have it): the original outcome when the message id was applied before, else the
        loaded snapshot and the sender's seat."""
        if not GAME_ID.fullmatch(game_id):
            raise UnknownGame(game_id[:70])
        row = s.execute(_PROBE, {"gid": game_id, "mid": msg_id, "contact": sender}).first()
        if row is None:
            self.forget(game_id)
            raise UnknownGame(game_id)
        if msg_id is not None and row.i_outcome is not None:
            seen = self._previous(s, game_id, msg_id, cmd, sender, _InboxRow(
                row.i_sender, row.i_command, row.i_outcome, row.i_version, row.i_first_seq,
                row.i_last_seq, row.i_rejection))
            if seen is not None:
                return seen
        return self.load(game_id, s, tuple(row[:8])), row.seat

    # one command -------------------------------------------------------------------------------
    def run(self, game_id: str, cmd: Command, msg_id: str | None, sender: str | None,
            decide: Callable[[Loaded, int | None], Decision]) -> Outcome:
        """One command, start to end: read (`_probe`), `decide` (the caller: permission and
        the engine, on the state read and the sender's seat), write (`_commit`); again on the
        new state when another writer committed first (the version check), at most MAX_TRIES
        times. A message id applied before returns its original outcome."""
        if msg_id is not None:
            msg_id = inbox_id(msg_id)
        if sender is not None and not 0 < len(sender) <= MAX_ID:
            raise ValueError("a sender is a contact id of 1-128 characters")
        clash: IntegrityError | None = None
        # The read and the write on one hot connection (`Database.write_hot`: one checkout;
        # on PostgreSQL fewer round trips): the read in autocommit, locking nothing and
        # holding no transaction while the engine decides, the write in the transaction its
        # first statement opens (SQLite: BEGIN IMMEDIATE, the write lock). The version check
        # of the write is what catches another writer, as it is with two transactions; and
        # a writer that waits on this one inside `before_write` gets in (no lock is held).
        # An in-memory SQLite (no hot pool): a read transaction, then the write (holding the
        # write lock across the engine would make any other writer wait).
        one = self.db.hot
        reconnects = 0
        for _ in range(MAX_TRIES):
            sent = False  # whether the COMMIT may have gone out (then it is never tried again)
            hot_conn: Any = None
            try:
                with self.db.write_hot() if one else self.db.read_core() as conn:
                    hot_conn = conn
                    got = self._probe(conn, game_id, cmd, msg_id, sender)
                    if isinstance(got, Outcome):
                        return got
                    if clash is not None:
                        raise clash  # not a duplicate message after all
                    loaded, seat = got
                    result, at, route = decide(loaded, seat)
                    if one:
                        if self.before_write is not None:
                            self.before_write()
                        out, after = self._commit(conn, loaded, cmd, result, at, msg_id,
                                                  sender, route)
                        sent = True  # the block ends: the COMMIT
                if not one:
                    if self.before_write is not None:
                        self.before_write()
                    with self.db.write_core() as conn:
                        out, after = self._commit(conn, loaded, cmd, result, at, msg_id,
                                                  sender, route)
                if after is not None:  # committed: the state written is the one to cache
                    self.remember(after)
                return out
            except _Conflict:
                continue
            except IntegrityError as exc:
                if msg_id is None or exc is clash:
                    raise
                clash = exc  # the same message committed meanwhile? the reload tells
            except DBAPIError as exc:
                # PostgreSQL's hot path pings no connection it checks out: one found dead
                # (the server restarted, an idle connection was cut) fails a statement, and
                # SQLAlchemy invalidates it. Nothing was committed unless the COMMIT went out:
                # before that, the command is tried again from its read, on a new connection.
                # A refusal's one statement commits by itself (`_refusal`): once it was sent,
                # the same as a COMMIT sent.
                sent = sent or getattr(hot_conn, "may_have_committed", False)
                if not (one and not self.db.sqlite and exc.connection_invalidated
                        and not sent and reconnects < MAX_RECONNECTS):
                    raise
                reconnects += 1
                log.warning("%s: connection lost before the commit, trying again: %s",
                            game_id, exc.orig)
        raise ConcurrencyError(f"{game_id}: gave up after {MAX_TRIES} conflicting writes")

    def _commit(self, s: Connection, old: Loaded, cmd: Command,
                result: tuple[GameState, list[Event]] | Rejection, now: datetime,
                msg_id: str | None, sender: str | None, route: Route
                ) -> tuple[Outcome, Loaded | None]:
        """The write transaction of one command; also what the snapshot now holds, for the
        cache (None: the snapshot row did not change, the cached entry stays right)."""
        gid = old.game_id
        guard = {"gid": gid, "old": old.version}
        if isinstance(result, Rejection) or result[0].version == old.version:
            # Nothing changes, but take the row (and check the version) all the same: the
            # verdict must have been reached on the latest state.
            rejection = result if isinstance(result, Rejection) else None
            status: Status = "rejected" if rejection else "noop"
            inbox = None if msg_id is None else {
                "game_id": gid, "msg_id": msg_id, "sender": sender, "received_at": now,
                "command": encode(cmd.model_dump()), "outcome": status,
                "version": old.version, "first_seq": None, "last_seq": None,
                "rejection": encode(rejection.model_dump()) if rejection else None}
            reply = None if rejection is None else self._reply(old, cmd, rejection, msg_id,
                                                               sender)
            if getattr(s, "pipelined", False):  # PostgreSQL: one statement (_refusal)
                params = dict(guard)
                for prefix, row in (("i_", inbox), ("o_", reply)):
                    for k, v in (row or {}).items():
                        params[prefix + k] = v
                if s.execute(_REFUSALS[inbox is not None, reply is not None], params
                             ).scalar() != 1:
                    raise _Conflict
            else:
                with _guarded(s, _TOUCH, guard):
                    if inbox is not None:
                        s.execute(_INSERT_INBOX, [inbox])
                    if reply is not None:
                        s.execute(_INSERT_OUTBOX, [reply])
            return Outcome(gid, msg_id, status, old.version, (), rejection,
                           state=old.state), None
        new, events = result
        first = old.last_seq + 1
        last = old.last_seq + 1 + len(events)
        stamp = utcnow()
        clock = max(old.clock, now)
        body = encode(cmd.model_dump())  # once: the inbox row and the command's log row
        # PostgreSQL: the snapshot's UPDATE and the rows below in one round trip (a psycopg
        # pipeline; the first error, a duplicate message id on the inbox row, fails it and
        # the transaction as before)
        with _guarded(s, _WRITE, {**guard, "b_version": new.version, "b_last_seq": last,
                                  "b_clock": clock, "b_state": encode_state(new),
                                  "b_updated_at": stamp}):
            if msg_id is not None:  # a duplicate message id fails here, before the bulk rows
                s.execute(_INSERT_INBOX, [{
                    "game_id": gid, "msg_id": msg_id, "sender": sender, "received_at": now,
                    "command": body, "outcome": "accepted", "version": new.version,
                    "first_seq": first, "last_seq": last, "rejection": None}])
            self._append(s, gid, new, new.version, events, cmd, now, msg_id,
                         seq0=old.last_seq, phase=old.state.phase, body=body,
                         judge_contact=old.judge_contact, route=route)
            self._sync_deadlines(s, gid, old.state, new)
            self._sync_cards(s, gid, old.state, new)
            if new.over:  # won, or ended by the judge (the seed is out either way), or halted
                s.execute(_FINISH, {"gid": gid, "b_status": "halted" if new.halted else "over",
                                    "b_winner": new.winner})
        after = Loaded(gid, old.ruleset, new, new.version, last, clock, stamp,
                        old.judge_contact, old.judge_feed, old.dm_out)
        return Outcome(gid, msg_id, "accepted", new.version, tuple(events), state=new), after

    # writing helpers ---------------------------------------------------------------------------
    def _append(self, s: Session | Connection, gid: str, state: GameState, version: int,
                events: list[Event], cmd: Command | None, now: datetime, msg_id: str | None, *,
                seq0: int = 0, phase: str = "SETUP", body: Any = None,
                judge_contact: str | None | _Unread = UNREAD, route: Route,
                undo: int | None = None) -> None:
        """Log rows (the command, then its events) and their outbox rows. `undo`: the head
        row is an undo naming that command's seq (bot/undo.py), not a command."""
        rows: list[dict[str, Any]] = []
        seq = seq0
        if cmd is not None or undo is not None:
            seq += 1
            rows.append({"game_id": gid, "seq": seq, "version": version,
                         "kind": "command" if cmd is not None else UNDO,
                         "type": cmd.kind if cmd is not None else UNDO, "at": now,
                         "phase": phase, "audience": {},
                         "body": {"seq": undo} if cmd is None else
                         body if body is not None else encode(cmd.model_dump()),
                         "msg_id": msg_id})
        head = seq
        for ev in events:
            seq += 1
            rows.append({"game_id": gid, "seq": seq, "version": version, "kind": "event",
                         "type": ev.type, "at": ev.at, "phase": ev.phase,
                         "audience": ev.audience.model_dump(mode="json"),
                         "body": ev.model_dump(mode="json"), "msg_id": msg_id})
        if rows:
            s.execute(_INSERT_EVENTS, rows)
        rooms = RoomsView()
        if any(ev.audience.group or ev.audience.public for ev in events):
            rooms = self._rooms(s, gid, judge_contact)
        messages = route(state, events, head, rooms)
        if not messages:
            return
        created = utcnow()
        turn, due = hold(created)
        # (a row for the public page is delivered as it is written: no transport sends it)
        s.execute(_INSERT_OUTBOX, [
            {"dedupe_key": m.key, "game_id": gid, "seq": m.seq, "channel": m.channel,
             "target": m.target, "address": None, "text": m.text, "created_at": created,
             "attempts": 0, "next_attempt_at": created if m.channel == PAGE else due,
             "sent_at": created if m.channel == PAGE else None, "last_error": None,
             "priority": REPLY if m.reply else NORMAL,
             "turn": None if m.channel == PAGE else turn, "host": None, "asks": m.asks}
            for m in messages])

    def _rooms(self, s: Session | Connection, gid: str, judge_contact: str | None | _Unread
               ) -> RoomsView:
        """The game's rooms and the seats in each, for the router (-1: a member who is
        neither a seat's contact nor a judge)."""
        # both sent before either is read (in a PostgreSQL pipeline: one round trip)
        found = s.execute(_ROOMS, {"gid": gid})
        members = None if isinstance(judge_contact, _Unread) else s.execute(
            _ROOM_MEMBERS, {"gid": gid})
        names = frozenset(name for name, _ in found)
        if isinstance(judge_contact, _Unread):  # not read with the snapshot: read it now
            judge_contact = s.scalar(select(Game.judge_contact).where(Game.id == gid))
        if members is None:
            members = s.execute(_ROOM_MEMBERS, {"gid": gid})
        judges = self.judges()
        seats: dict[str, set[int]] = {}
        for room, contact, seat in members:
            inside = seats.setdefault(room, set())
            if seat is not None:
                inside.add(seat)
            elif contact not in judges and contact != judge_contact:
                inside.add(-1)
        return RoomsView(names, {k: frozenset(v) for k, v in seats.items()})

    def _reply(self, old: Loaded, cmd: Command, rejection: Rejection, msg_id: str | None,
               sender: str | None) -> dict[str, Any]:
        """The outbox row of the reply to a refused command."""
        seat = getattr(cmd, "seat", None)
        if sender is not None:
            target = f"contact:{sender}"
        elif cmd.kind.startswith("judge_"):
            target = "judge"  # a judge's refused command is the judge's business, not the seat's
        elif seat is not None and 1 <= seat <= len(old.state.seats):
            target = f"seat:{seat}"
        else:
            target = "judge"
        key = f"{old.game_id}/reply/{msg_id if msg_id is not None else uuid.uuid4().hex}"
        return _direct_row(key, old.game_id, target, render_rejection(rejection, old.ruleset),
                           address=sender, priority=REPLY)

    def _sync_deadlines(self, s: Session | Connection, gid: str, old: GameState | None,
                        new: GameState) -> None:
        """Mirror the deadlines the scheduler must wait for: none while the game is paused."""
        rows = _scheduled(new)
        if old is not None and _scheduled(old) == rows:
            return
        if old is not None:
            s.execute(_DELETE_DEADLINES, {"gid": gid})
        if rows:
            s.execute(_INSERT_DEADLINES, [{"game_id": gid, "deadline_id": d.id,
                                             "kind": d.kind, "due": d.due}
                                            for d in rows])

    def _sync_cards(self, s: Session | Connection, gid: str, old: GameState, new: GameState
                    ) -> None:
        changed = [{"gid": gid, "b_seat": b.seat, "b_yellow": b.yellow, "b_red": b.red}
                   for a, b in zip(old.seats, new.seats, strict=True)
                   if (a.yellow, a.red) != (b.yellow, b.red)]
        if changed:
            s.execute(_CARD, changed)

    def export_rows(self, game_id: str
                    ) -> tuple[Game, list[LogEntry], list[Player], list[InboxMessage]]:
        """What an export holds (bot/audit.py): the game, its log, its seats, and the
        commands it refused or that changed nothing."""
        with self.db.read() as s:
            game = s.get(Game, game_id)
            if game is None:
                raise UnknownGame(game_id)
            rows = list(s.scalars(select(LogEntry).where(LogEntry.game_id == game_id)
                                  .order_by(LogEntry.seq)))
            players = list(s.scalars(select(Player).where(Player.game_id == game_id)
                                     .order_by(Player.seat)))
            refused = list(s.scalars(select(InboxMessage).where(
                InboxMessage.game_id == game_id, InboxMessage.outcome != "accepted")
                .order_by(InboxMessage.received_at, InboxMessage.msg_id)))
            s.expunge_all()
        return game, rows, players, refused

    # undoing a command (bot/undo.py) -------------------------------------------------------------
    def senders(self, game_id: str) -> dict[str, str | None]:
        """Who sent each accepted command with a message id (whose a log row's command is)."""
        with self.db.read() as s:
            rows = s.execute(select(InboxMessage.msg_id, InboxMessage.sender).where(
                InboxMessage.game_id == game_id, InboxMessage.outcome == "accepted"))
            return {msg_id: sender for msg_id, sender in rows}

    def commit_undo(self, old: Loaded, target: int, new: GameState, events: list[Event],
                    now: datetime, msg_id: str | None, route: Route) -> bool:
        """An undo in one transaction: its log row (kind `undo`, naming the undone command's
        seq), its notices with their outbox rows, and the replayed state as the snapshot,
        under the version check. False: the game moved on since `old` was read (nothing is
        written; the caller decides again)."""
        gid = old.game_id
        last = old.last_seq + 1 + len(events)
        try:
            with self.db.write_core() as s, _guarded(s, _WRITE, {
                    "gid": gid, "old": old.version, "b_version": new.version,
                    "b_last_seq": last, "b_clock": max(old.clock, now),
                    "b_state": encode_state(new), "b_updated_at": utcnow()}):
                self._append(s, gid, new, new.version, events, None, now, msg_id,
                             seq0=old.last_seq, phase=old.state.phase,
                             judge_contact=old.judge_contact, route=route, undo=target)
                self._sync_deadlines(s, gid, old.state, new)
                self._sync_cards(s, gid, old.state, new)
        except _Conflict:
            return False
        self.forget(gid)
        return True

    # rebuilding --------------------------------------------------------------------------------
    def stored(self, game_id: str) -> tuple[dict[str, Any], GameState, int, list[LogEntry]]:
        """What a rebuild starts from: the game's creation parameters, its snapshot, the
        snapshot's last_seq and every log row in order."""
        with self.db.read() as s:
            game = s.get(Game, game_id)
            if game is None:
                raise UnknownGame(game_id)
            params = decode(game.params)
            snap = s.get(Snapshot, game_id)
            assert snap is not None
            rows = list(s.scalars(select(LogEntry).where(LogEntry.game_id == game_id)
                                  .order_by(LogEntry.seq)))
            return params, state_of(snap.state), snap.last_seq, rows

    def overwrite(self, game_id: str, old: GameState, state: GameState, last_seq: int) -> None:
        """Store a rebuilt state as the snapshot (and its deadlines and cards)."""
        with self.db.write() as s:
            s.execute(update(Snapshot).where(Snapshot.game_id == game_id).values(
                version=state.version, last_seq=last_seq, state=encode_state(state),
                updated_at=utcnow()))
            self._sync_deadlines(s, game_id, old, state)
            self._sync_cards(s, game_id, old, state)
        self.forget(game_id)  # the state under this version may have changed


def _scheduled(state: GameState) -> list[Deadline]:
    """The deadlines that can fire: none while the judge has paused the game."""
    return [] if state.paused_at is not None else state.deadlines


def _direct_row(key: str, game_id: str, target: str, text: str,
                address: str | None = None, priority: int = NORMAL) -> dict[str, Any]:
    """An outbox row that renders no log row (a reply to a message, or a note to the judge):
    its columns but the id, held until the current turn ends (bot/outbox.py)."""
    created = utcnow()
    turn, due = hold(created)
    return {"dedupe_key": key, "game_id": game_id, "seq": None,
            "channel": "judge" if target == "judge" else "dm", "target": target,
            "address": address, "text": text, "created_at": created, "attempts": 0,
            "next_attempt_at": due, "sent_at": None, "last_error": None,
            "priority": priority, "turn": turn, "host": None, "asks": False}
