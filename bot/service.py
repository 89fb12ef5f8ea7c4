"""The service: a command in, its consequences out.

    load (bot/store/games.py) → permit (bot/access.py) → engine.handle → store → route
                                                                   (bot/router.py, in the write)

The service decides nothing itself and runs no SQL: the store reads and writes a game's rows
(one transaction a command, retried on a newer state), the access module says who may send
what, the engine decides, the router says who is told what. What the service adds is the
order of those steps, the deadlines' firing (`advance`), and the hooks the rest of the bot
listens on (a commit, a deadline about to fire, a step's end).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time
from typing import Any

from bot import access
from bot.access import PLAYER_VOTE_MODES, env_judges
from bot.feed import DEFAULT_FEED
from bot.gametime import DEFAULT_TIME_ZONE, utcnow, zone
from bot.ids import GAME_ID, MAX_ID, new_seed, tick_message_id
from bot.outbox import turn
from bot.records.settings import MIN_GAMES
from bot.router import Message, RoomsView, announced, route
from bot.store.codec import decode, encode, state_of
from bot.store.db import Database, Host
from bot.store.games import (
    CACHE_SIZE,
    COMMAND,
    MAX_TRIES,
    ConcurrencyError,
    Decision,
    GameExists,
    GameStore,
    Loaded,
    MessageIdReused,
    Outcome,
    Route,
    UnknownGame,
    event_of,
)
from bot.store.models import Game, LogEntry
from bot.undo import Candidate, Refusal, candidates, effective, notices, plan, what
from engine import handle, new_game
from engine.commands import Command, Tick
from engine.events import Event, Rejection
from engine.model import Deadline, GameState

log = logging.getLogger(__name__)

__all__ = ["COMMAND", "GAME_ID", "MAX_ID", "PLAYER_VOTE_MODES", "ConcurrencyError",
           "GameExists", "MessageIdReused", "Outcome", "Service", "UnknownGame", "env_judges",
           "event_of", "new_seed", "state_of", "tick_message_id"]


class Service:
    """The service. `judges`: contacts with judge rights in every game (default:
    WOLFJUDGE_JUDGES), besides each game's own `judge_contact`.

    Every command from a chat carries its `sender` (the contact id), and the service itself
    checks it (bot/access.py). `sender=None` is the operator: this process's own scheduler,
    the CLI, a scenario replay; a transport must never pass None for a message it received."""

    def __init__(self, db: Database | str | None = None, *,
                 judges: Iterable[str] | None = None, cache_size: int = CACHE_SIZE,
                 host: str | None = None, rank_min_games: int = MIN_GAMES) -> None:
        """`cache_size`: how many games' decoded snapshots are kept (0: none). `host`: the
        WeChat account this bot is, when there are several (bot/store/db.py, `of_host`).
        `rank_min_games`: the records' win-rate leaderboard's minimum (bot/records)."""
        self.db = db if isinstance(db, Database) else Database(db)
        if host is not None:
            self.db.host = host
        self.judges = frozenset(judges) if judges is not None else env_judges()
        self.rank_min_games = rank_min_games
        self.store = GameStore(self.db, judges=lambda: self.judges, cache_size=cache_size)
        # Told the game id after each commit that changed a game (the scheduler syncs its jobs).
        self.on_commit: list[Callable[[str], None]] = []
        # The same, told the state and the events just committed (so a hook need not read
        # them back): (game id, state, events).
        self.on_commit_state: list[Callable[[str, GameState, tuple[Event, ...]], None]] = []
        # Called before each deadline's tick is applied (game id, deadline); a hook returns
        # True when it changed the game first (the forum vote thread's reading at the close,
        # bot/forum), and the deadline is then looked at again.
        self.before_tick: list[Callable[[str, Deadline], bool]] = []
        # Told when a turn ends (its messages are merged and released): a delivery.
        self.turn_ended: list[Callable[[], None]] = []

    @property
    def before_write(self) -> Callable[[], None] | None:
        """Test seam: runs after the engine decided and before the write transaction opens."""
        return self.store.before_write

    @before_write.setter
    def before_write(self, hook: Callable[[], None] | None) -> None:
        self.store.before_write = hook

    @contextmanager
    def turn(self, key: str) -> Iterator[None]:
        """The handling of one incoming message or one deadline (bot/outbox.py): everything
        it sends goes out when it ends, one message per recipient."""
        with turn(self.db, key, after=self._turn_ended):
            yield

    def _turn_ended(self) -> None:
        for hook in list(self.turn_ended):
            try:
                hook()
            except Exception:  # the rows are sealed; a failed delivery is retried later
                log.exception("turn_ended hook failed")

    def _committed(self, game_id: str, state: GameState | None = None,
                   events: tuple[Event, ...] = ()) -> None:
        """The commit hooks, once the commit is durable: inside a message's one transaction
        (`Database.unit`, bot/chat/bot.py), when that commits (never if it rolls back)."""
        self.db.after_unit(lambda: self._tell_committed(game_id, state, events))

    def _tell_committed(self, game_id: str, state: GameState | None,
                        events: tuple[Event, ...]) -> None:
        for hook in list(self.on_commit):
            try:
                hook(game_id)
            except Exception:  # the command is committed; a hook must not make it look failed
                log.exception("on_commit hook failed for game %s", game_id)
        if state is None:
            state = self.store.load(game_id).state if self.on_commit_state else None
        for full in list(self.on_commit_state):
            try:
                full(game_id, state, events)  # type: ignore[arg-type]
            except Exception:
                log.exception("on_commit hook failed for game %s", game_id)

    def forget(self, game_id: str | None = None) -> None:
        """Drop a game's cached snapshot (all of them with None)."""
        self.store.forget(game_id)

    @property
    def host(self) -> str | None:
        """The hosting account this bot is (None: the single account)."""
        return self.db.host

    def close(self) -> None:
        self.db.dispose()

    # creation ----------------------------------------------------------------------------------
    def create_game(self, *, game_id: str, ruleset: str, start: date, seed: str | None = None,
                    roles: list[str] | None = None, players: int | None = None,
                    options: Mapping[str, Any] | None = None, open_time: time = time(9, 0),
                    close_time: time = time(21, 0), now: datetime | None = None,
                    bindings: Mapping[int, tuple[str | None, str | None]] | None = None,
                    rooms: Mapping[str, str] | None = None, judge_contact: str | None = None,
                    host: Host = ..., first_open: datetime | None = None,
                    day_minutes: int | None = None, night_minutes: int | None = None,
                    time_zone: str = DEFAULT_TIME_ZONE,
                    signing_key: str | None = None, judge_feed: str = DEFAULT_FEED,
                    dm_out: bool = False) -> Outcome:
        """Deal and start a game. `bindings`: seat -> (WeChat contact id, forum account);
        `rooms`: "public" or a group name -> room id. `first_open`, `day_minutes`,
        `night_minutes`: a fast game (engine.model.Schedule). `time_zone`: the IANA zone of the
        game's wall clock (all the game's times are wall-clock times in it). `judge_feed`: how
        much the judge hears by DM (bot/feed.py); `dm_out`: whether seats that are out still get
        the public announcements by DM (bot/router.py). Creating the same
        game (same parameters) again returns the first outcome, marked duplicate.

        `seed`: leave it out. The bot draws 256 bits from the operating system's CSPRNG
        (`new_seed`); a given seed is for tests and replays only, since anyone who can guess
        the seed knows every role. Each game also gets its own Ed25519 key pair: the private
        key signs the game's exports, the public key is in the commitment."""
        if not GAME_ID.fullmatch(game_id):
            raise ValueError(f"bad game id {game_id[:70]!r}: 1-64 letters, digits, . _ -")
        zone(time_zone)  # a ValueError for an unknown zone, before anything is written
        drawn = seed is None
        if seed is None:
            seed = new_seed()
        # Imported here: cryptography is not needed to start the bot and answer messages.
        from bot.store.signing import new_key_pair, public_key

        if signing_key is None:  # like the seed: a given key is for tests and replays only
            signing_key, signing_pubkey = new_key_pair()
        else:
            signing_pubkey = public_key(signing_key)
        params: dict[str, Any] = {
            "ruleset": ruleset, "game_id": game_id, "seed": seed, "start": start,
            "roles": list(roles) if roles is not None else None, "players": players,
            "options": dict(options or {}), "open_time": open_time, "close_time": close_time,
            "now": now or datetime.combine(start, time(0, 0)), "signing_pubkey": signing_pubkey}
        if first_open is not None:  # only then: the params of a daily game stay as they were
            params.update(first_open=first_open, day_minutes=day_minutes,
                          night_minutes=night_minutes)
        state, events = new_game(**params)
        created = next(e for e in events if e.type == "GameCreated")
        game = Game(id=game_id, ruleset=ruleset, params=encode(params),
                    commitment=created.data["commitment"], status="active",
                    host=self.host if host is ... else host,
                    judge_contact=judge_contact, created_at=utcnow(), time_zone=time_zone,
                    signing_key=signing_key, judge_feed=judge_feed, dm_out=dm_out)

        def messages(new: GameState, evs: Sequence[Event], head: int,
                     rooms: RoomsView) -> list[Message]:
            return route(game_id, new, evs, head=head, cmd=None, rooms=rooms, feed=judge_feed,
                         dm_out=dm_out)

        try:
            self.store.create(game, state, params["now"], events, bindings or {}, rooms or {},
                              messages)
        except GameExists:
            existing = self.store.game(game_id)
            if existing is None:
                raise
            stored = decode(existing.params)
            if drawn:  # a retried creation draws another seed: compare the rest
                stored["seed"] = params["seed"]
            stored["signing_pubkey"] = signing_pubkey  # a retry always makes another key
            if stored != params or existing.time_zone != time_zone:
                raise GameExists(f"game {game_id!r} exists already, with other parameters"
                                 ) from None
            return Outcome(game_id, None, "accepted", 0, duplicate=True)
        self._committed(game_id, state, tuple(events))
        return Outcome(game_id, None, "accepted", state.version, tuple(events), state=state)

    # bindings ----------------------------------------------------------------------------------

    # small writes ------------------------------------------------------------------------------
    def bind(self, game_id: str, seat: int, contact_id: str | None,
             forum_name: str | None = None) -> None:
        self.store.bind(game_id, seat, contact_id, forum_name)

    def alert_judge(self, game_id: str, topic: str, detail: str) -> None:
        """A DM to the game's judge about the bot itself (not a game event): once per topic
        and detail, however often it comes up."""
        import hashlib

        text = (f"【{game_id}】机器人无法处理本局（{topic}）：{detail[:500]}。"
                "其他对局照常进行；请联系运维。")
        key = f"{game_id}/alert/{hashlib.sha256(f'{topic}|{detail}'.encode()).hexdigest()[:24]}"
        self.store.note_once(key, game_id, text)

    def tell_judge(self, game_id: str, key: str, text: str) -> None:
        """A DM to the game's judge, once per `key` (a retry or a restart sends it once)."""
        import hashlib

        self.store.note_once(f"{game_id}/note/{hashlib.sha256(key.encode()).hexdigest()[:32]}",
                             game_id, text)

    def set_room(self, game_id: str, name: str, room_id: str) -> None:
        self.store.set_room(game_id, name, room_id)

    def unset_room(self, game_id: str, name: str) -> None:
        self.store.unset_room(game_id, name)

    # reading -----------------------------------------------------------------------------------
    def seat_of(self, game_id: str, contact_id: str) -> int | None:
        return self.store.seat_of(game_id, contact_id)

    def state(self, game_id: str) -> GameState:
        return self.store.load(game_id).state

    def game_ids(self, *, active_only: bool = False, host: Host = ...) -> list[str]:
        """The games of `host` (`...`: of every host; `self.host`: this account's own)."""
        return self.store.game_ids(active_only=active_only, host=host)

    def clock(self, game_id: str) -> datetime:
        """The game's clock: the wall-clock time of its last accepted command (it never goes
        back)."""
        return self.store.load(game_id).clock

    def created(self, game_id: str) -> datetime:
        """When the game was dealt, on its wall clock (its creation's `now`)."""
        game = self.store.game(game_id)
        if game is None:
            raise UnknownGame(game_id)
        created: datetime = decode(game.params)["now"]
        return created

    def time_zone(self, game_id: str) -> str:
        return self.store.time_zone(game_id)

    def deadline_rows(self, game_id: str) -> list[tuple[str, str, datetime]]:
        """The game's deadlines as mirrored at the last commit: (id, kind, wall-clock due)."""
        return self.store.deadline_rows(game_id)

    def schedule_rows(self, host: Host = ...
                      ) -> dict[str, tuple[str, list[tuple[str, str, datetime]]]]:
        """Every active game (of `host`; `...`: of every host): its time zone and its
        deadline rows."""
        return self.store.schedule_rows(host)

    def log(self, game_id: str) -> list[LogEntry]:
        return self.store.log(game_id)

    def game_log(self, game_id: str) -> list[LogEntry]:
        """The log as the game stands: without undone commands and the undos (bot/undo.py);
        what the posts (公示, 复盘) read."""
        return effective(self.store.log(game_id))

    def is_judge(self, game_id: str, contact: str) -> bool:
        return contact in self.judges or access.is_judge(contact, (),
                                                         self.store.game_judge(game_id))

    # the path of a command -----------------------------------------------------------------------
    def submit(self, game_id: str, command: Command | dict[str, Any], *, now: datetime,
               msg_id: str | None = None, sender: str | None = None,
               monotonic: bool = False) -> Outcome:
        """Apply one command. `msg_id`: the transport's message id (unique per game), so that
        a message delivered twice is applied once. `sender`: the contact that gets the reply
        to a rejection (by default the seat's own contact). `monotonic`: apply it at the
        game's clock (the `now` of its last accepted command) if `now` is earlier, so the
        game's time never goes back (a live message on a real clock)."""
        cmd: Command = COMMAND.validate_python(command) if isinstance(command, dict) else command

        def decide(loaded: Loaded, seat: int | None) -> Decision:
            at = max(now, loaded.clock) if monotonic else now
            if sender is not None and not access.permitted(cmd, sender, self.judges,
                                                           loaded.judge_contact, seat):
                # refused and logged (the inbox row), the engine is not asked
                log.warning("%s: %s may not send %s", game_id, sender, cmd.kind)
                return Rejection(code="not_permitted"), at, _no_messages
            asker = access.asker(cmd, sender, seat, self.judges, loaded.judge_contact)
            dl = parent = None
            if isinstance(cmd, Tick):
                dl = loaded.state.deadline(cmd.deadline_id)
                parent = loaded.state.deadline(dl.parent) if dl is not None and dl.parent \
                    else None

            def messages(new: GameState, evs: Sequence[Event], head: int,
                         rooms: RoomsView) -> list[Message]:
                return route(game_id, new, evs, head=head, cmd=cmd, rooms=rooms,
                             feed=loaded.judge_feed, asker=asker, deadline=dl, parent=parent,
                             dm_out=loaded.dm_out)

            return handle(loaded.state, cmd, at), at, messages

        out = self.store.run(game_id, cmd, msg_id, sender, decide)
        if out.accepted and not out.duplicate:
            self._committed(game_id, out.state, out.events)
        return out

    # deadlines ---------------------------------------------------------------------------------
    def advance(self, game_id: str, until: datetime) -> list[Outcome]:
        """Fire, in order, every deadline of the game due at or before `until`: one turn
        (what fires at once tells each recipient once)."""
        with self.turn(f"{game_id}/due/{until.isoformat()}"):
            return self._advance(game_id, until)

    def _advance(self, game_id: str, until: datetime) -> list[Outcome]:
        out: list[Outcome] = []
        for _ in range(100_000):  # a bound, should a deadline ever come back forever
            loaded = self.store.load(game_id)
            dl = loaded.state.next_deadline()
            if dl is None or dl.due > until:
                return out
            if any([hook(game_id, dl) for hook in list(self.before_tick)]):
                continue  # the game changed: look at its next deadline again
            # A reminder says when it really goes out, if not within its minute (the bot was
            # down): one that would go out after its deadline is dropped.
            sent = until.replace(second=0, microsecond=0)
            late = sent if dl.kind == "remind" and sent > dl.due else None
            res = self.submit(game_id, Tick(deadline_id=dl.id, fired_at=late),
                              now=max(loaded.clock, dl.due),
                              msg_id=tick_message_id(loaded.version, dl))
            out.append(res)
            if res.status != "accepted" and res.version == loaded.version:
                return out  # nothing moved: do not spin
        raise RuntimeError(f"{game_id}: deadlines keep coming due at {until}")

    def due_games(self, now: datetime, game_ids: Iterable[str] | None = None) -> list[str]:
        return self.store.due_games(now, game_ids)

    def fire_due(self, now: datetime, game_ids: Iterable[str] | None = None) -> list[Outcome]:
        """What the scheduler calls (and start-up, for deadlines passed while down)."""
        out: list[Outcome] = []
        for gid in self.store.due_games(now, game_ids):
            out.extend(self.advance(gid, now))
        return out

    def receive(self, game_id: str, command: Command | dict[str, Any], *, now: datetime,
                msg_id: str | None = None, sender: str | None = None,
                monotonic: bool = False) -> Outcome:
        """An incoming chat message: first fire what is due (a late scheduler must not let a
        vote in after the close), then apply it."""
        self.advance(game_id, now)
        return self.submit(game_id, command, now=now, msg_id=msg_id, sender=sender,
                           monotonic=monotonic)

    # undoing a judge's command (bot/undo.py) ----------------------------------------------------
    def undoable(self, game_id: str) -> list[Candidate]:
        """The judge's commands that can still be undone, the latest first (P-UNDO-1)."""
        return self._undoable(game_id, self.store.log(game_id))

    def _undoable(self, game_id: str, rows: Sequence[LogEntry]) -> list[Candidate]:
        senders = self.store.senders(game_id)
        own = self.store.game_judge(game_id)

        def by_judge(row: LogEntry) -> bool:
            sender = senders.get(row.msg_id or "")
            return sender is not None and access.is_judge(sender, self.judges, own)

        return candidates(rows, by_judge)

    def undo(self, game_id: str, seq: int, *, now: datetime, msg_id: str | None = None,
             dry_run: bool = False) -> Candidate | Refusal:
        """Undo the judge's command logged at `seq` (P-UNDO): the state becomes the replay
        without it, the log gains an undo row, and whoever was told of it is told of the
        undo. The undone command, or why it is refused. `dry_run`: only whether it could be
        undone now (nothing is written). What is due fires first: an undo never comes before
        a deadline that has passed (P-UNDO-3)."""
        self.advance(game_id, now)
        for _ in range(MAX_TRIES):
            loaded = self.store.load(game_id)
            params, _, _, rows = self.store.stored(game_id)
            if len(rows) != loaded.last_seq:
                continue  # a command committed between the two reads
            if loaded.state.over:
                return Refusal("undo.over")
            target = next((c for c in self._undoable(game_id, rows) if c.seq == seq), None)
            if target is None:
                return Refusal("undo.not_undoable")
            now = max(now, loaded.clock)
            got = plan(params, rows, target, loaded.version + 1, now=now, current=loaded.state)
            if isinstance(got, Refusal) or dry_run:
                return got if isinstance(got, Refusal) else target
            state = got.state
            events = notices(got.undone_events, what(target), now,
                             loaded.state.phase, announced)

            if self.store.commit_undo(loaded, seq, state, events, now, msg_id,
                                      _undo_messages(game_id, loaded.dm_out)):
                self._committed(game_id, state, tuple(events))
                return target
        raise ConcurrencyError(f"{game_id}: gave up undoing after {MAX_TRIES} tries")

    # rebuilding --------------------------------------------------------------------------------
    def rebuild(self, game_id: str, *, write: bool = False) -> Any:
        """new_game + every logged command through the engine, compared with the snapshot
        (bot/rebuild.py)."""
        from bot.rebuild import rebuild

        report = rebuild(self.store, game_id, write=write)
        if write and report.state is not None:
            self._committed(game_id, report.state)
        return report


def _undo_messages(game_id: str, dm_out: bool) -> Route:
    """An undo's notices as the router sends them; the judge's answer is the desk's reply."""
    def messages(new: GameState, evs: Sequence[Event], head: int,
                 rooms: RoomsView) -> list[Message]:
        return [m for m in route(game_id, new, evs, head=head, cmd=None, rooms=rooms,
                                 feed="off", dm_out=dm_out) if m.channel != "judge"]
    return messages


def _no_messages(state: GameState, events: Sequence[Event], head: int,
                 rooms: RoomsView) -> list[Message]:
    return []
