"""The chat layer's rows (bot/chat): lobbies and who joined, message ids handled, the chat
layer's own outbox rows, seat tokens, rooms and their members, the judges' settings, and what
the chat layer reads of a game's seats and log. Every statement the chat layer needs is here:
the chat layer itself runs no SQL."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    and_,
    bindparam,
    cast,
    delete,
    func,
    literal,
    null,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.gametime import utcnow
from bot.outbox import DIGEST, NORMAL, hold
from bot.router import PAGE
from bot.store.db import Database, of_host
from bot.store.games import event_of
from bot.store.models import (
    ChannelMark,
    ChatMessage,
    Game,
    InboxMessage,
    JudgeSetting,
    Lobby,
    LobbyPlayer,
    LogEntry,
    OutboxRow,
    Player,
    PushSubscription,
    Room,
    RoomMember,
    RoomStay,
    SeatToken,
    Secret,
    WebContact,
    WebLink,
)
from engine.events import Event

ENDS = ("open", "started")  # lobby statuses of a game that is not over
SUMMARY_EVERY = timedelta(minutes=1)  # the judge's summary of joins, at most this often
SUMMARY_MARGIN = timedelta(seconds=5)  # a summary due sooner may be on its way: not changed
ROOM_CHANNELS = ("group", "public")  # outbox rows posted in a room (target group:NAME, public)
# Read after every commit (bot/chat/rooms.py), so core statements built once.
_CONTACTS = (select(Player.seat, Player.contact_id)
             .where(Player.game_id == bindparam("gid"), Player.contact_id.is_not(None))
             .order_by(Player.seat))
_ROOMS = (select(Room.name, Room.room_id, RoomMember.contact_id)
          .outerjoin(RoomMember, and_(RoomMember.game_id == Room.game_id,
                                      RoomMember.room == Room.name))
          .where(Room.game_id == bindparam("gid"))
          .order_by(Room.name, RoomMember.contact_id))


def chat_row(key: str, to: str, text: str, game_id: str | None, *,
             group: str | None = None, priority: int = NORMAL,
             host: str | None = None, asks: bool = False) -> OutboxRow:
    """An outbox row of the chat layer: a DM to contact `to`, or (with `group`) a post in
    room `to`; held until the current turn ends (bot/outbox.py), if there is one. `host`: the
    account that sends it, if it belongs to no game; `asks`: it asks its reader to act."""
    now = utcnow()
    turn, due = hold(now)
    return OutboxRow(dedupe_key=key[:255], game_id=game_id, seq=None,
                     channel="group" if group else "dm",
                     target=f"group:{group}" if group else f"contact:{to}"[:160], address=to,
                     text=text, created_at=now, attempts=0, next_attempt_at=due,
                     priority=priority, turn=turn, host=host, asks=asks)


def _stays(s: Session, game_id: str, group: str, gone: Iterable[str], new: Iterable[str]
           ) -> None:
    """The rooms' history follows a change of members: who left, left now; who came, came
    now."""
    now = utcnow()
    gone = list(gone)
    if gone:
        s.execute(update(RoomStay).where(
            RoomStay.game_id == game_id, RoomStay.room == group,
            RoomStay.contact_id.in_(gone), RoomStay.until.is_(None)).values(until=now))
    for c in new:
        s.add(RoomStay(game_id=game_id, room=group, contact_id=c, since=now))


def _hand_overs(s: Session, game_id: str, seat: int) -> int:
    return s.scalar(select(func.count()).select_from(SeatToken).where(
        SeatToken.game_id == game_id, SeatToken.seat == seat,
        SeatToken.used_by.is_not(None))) or 0


@dataclass(frozen=True)
class LinkFacts:
    """What the database says of a page link's claim (ChatStore.link_facts)."""

    holder: str | None  # the seat's contact now
    judge: str | None  # the game's own judge; None: no such game on this account
    hand_overs: int  # how often the seat changed hands
    epochs: dict[str, int]  # link generations (a contact missing: 0)

    def epoch(self, contact: str | None) -> int:
        return self.epochs.get(contact or "", 0)


@dataclass(frozen=True)
class Taken:
    """A seat taken with a token (`接替`): the game, the seat, its 马甲, who had it, and the
    seat's private history (what it was sent)."""

    game_id: str
    seat: int
    name: str | None
    old: str | None
    history: list[str]


@dataclass(frozen=True)
class Sender:
    """Who sent a message and where (issue 33): looked up once per message, by
    `ChatStore.sender`, and handed down (the request, the desks, the access checks).

    `seats`: the seat the contact holds in each game of this account (over or not); `playing`:
    those games not over; `joined`: the open lobbies the contact joined; `judged`: the lobbies
    and games, not cancelled, whose own judge the contact is (in code order), `judged_over`:
    those of them that are over; `room`: the room the message was said in (None: a DM), with
    the game and group it is the room of (None: a room of no game of this account);
    `handled`: the message id was handled before (it is not handled again); `granted`: the
    contact may create games without being a judge of the bot (`wolfjudge judge-link`)."""

    contact: str
    seats: Mapping[str, int] = field(default_factory=dict)
    playing: frozenset[str] = frozenset()
    joined: frozenset[str] = frozenset()
    judged: tuple[str, ...] = ()
    judged_over: frozenset[str] = frozenset()
    room: str | None = None
    room_game: str | None = None
    room_group: str | None = None
    handled: bool = False
    granted: bool = False  # may create games (`wolfjudge judge-link`, bot/web/home.py)

    def seat(self, game_id: str) -> int | None:
        return self.seats.get(game_id)

    def games(self) -> list[str]:
        """The games not over and the open lobbies the contact plays in."""
        return sorted(self.playing | self.joined)

    def active_judged(self) -> list[str]:
        """`judged`, without the games that are over."""
        return [c for c in self.judged if c not in self.judged_over]

    def seats_playing(self) -> list[tuple[str, int]]:
        """(game, seat) of each game not over the contact holds a seat in, in game order."""
        return [(g, self.seats[g]) for g in sorted(self.playing)]


class ChatStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # who sent a message --------------------------------------------------------------------------
    def sender(self, contact: str | None, room: str | None = None,
               msg_key: str | None = None) -> Sender:
        """Everything the chat layer asks of who sent a message and where, in one statement:
        the contact's seats, joined lobbies and judged games; the game and group of `room`;
        whether `msg_key` was handled. Every channel builds its `Sender` here, from its own
        identities (a contact id, a room id); None: a room's, with no contact."""
        host = self.db.host
        # one UNION ALL: (what, game, seat, word); the first part types the columns
        parts = [] if contact is None else [
            select(cast(literal("seat"), String), Player.game_id, Player.seat, Game.status)
            .join(Game, Game.id == Player.game_id)
            .where(Player.contact_id == contact, of_host(Game.host, host)),
            select(cast(literal("joined"), String), LobbyPlayer.code, cast(null(), Integer),
                   Lobby.status).join(Lobby, Lobby.code == LobbyPlayer.code)
            .where(LobbyPlayer.contact_id == contact, Lobby.status == "open",
                   of_host(Lobby.host, host)),
            select(cast(literal("judge"), String), Lobby.code, cast(null(), Integer),
                   Game.status).outerjoin(Game, Game.id == Lobby.code)
            .where(Lobby.judge == contact, Lobby.status.in_(ENDS), of_host(Lobby.host, host)),
            select(cast(literal("granted"), String), WebContact.contact_id,
                   cast(null(), Integer), cast(null(), String))
            .where(WebContact.contact_id == contact, WebContact.creates_games.is_(True)),
        ]
        if room is not None:
            parts.append(select(cast(literal("room"), String), Room.game_id,
                                cast(null(), Integer), Room.name)
                         .join(Game, Game.id == Room.game_id)
                         .where(Room.room_id == room, of_host(Game.host, host)))
        if msg_key is not None:
            parts.append(select(cast(literal("handled"), String), ChatMessage.msg_id,
                                cast(null(), Integer), cast(null(), String))
                         .where(ChatMessage.msg_id == msg_key))
        seats: dict[str, int] = {}
        playing: set[str] = set()
        joined: set[str] = set()
        judged: set[str] = set()
        over: set[str] = set()
        found_room: tuple[str, str] | None = None
        handled = granted = False
        if not parts:
            return Sender(contact="")
        with self.db.read() as s:
            rows = s.execute(union_all(*parts)).all()
        for what, game, seat, word in rows:
            if what == "seat":
                seats[game] = seat
                if word == "active":
                    playing.add(game)
            elif what == "joined":
                joined.add(game)
            elif what == "judge":
                judged.add(game)
                if word is not None and word != "active":
                    over.add(game)
            elif what == "room":
                found_room = found_room or (game, word)
            elif what == "granted":
                granted = True
            else:
                handled = True
        return Sender(contact=contact or "", seats=seats, playing=frozenset(playing),
                      joined=frozenset(joined), judged=tuple(sorted(judged)),
                      judged_over=frozenset(over), room=room,
                      room_game=found_room[0] if found_room else None,
                      room_group=found_room[1] if found_room else None, handled=handled,
                      granted=granted)

    # messages handled ----------------------------------------------------------------------------
    def handled(self, msg_key: str, sender: str, at: datetime,
                replies: Sequence[tuple[str, str, int, str | None, bool]]) -> bool:
        """The message marked handled together with its replies (to, text, priority, the
        game it concerns, whether it asks its reader to act): False if it was handled
        meanwhile (then its replies are dropped).
        A reply about a game that has started is that game's row (its seat's page shows it);
        one about a lobby or no game belongs to none."""
        try:
            with self.db.write() as s:
                s.add(ChatMessage(msg_id=msg_key, sender=sender, received_at=at))
                s.flush()
                named = {r[3] for r in replies if r[3] is not None}
                games = set(s.scalars(select(Game.id).where(
                    Game.id.in_(named), of_host(Game.host, self.db.host)))) if named else set()
                for i, (to, text, priority, game, asks) in enumerate(replies):
                    s.add(chat_row(f"chat/{msg_key}/{i}", to, text,
                                   game if game in games else None, priority=priority,
                                   host=self.db.host, asks=asks))
        except IntegrityError:
            return False
        return True

    # a channel's place in what it handed over (QQ's catch-up) -----------------------------------
    def mark(self, name: str) -> int | None:
        """The mark `name` (a channel of an account) was last set to, if ever."""
        with self.db.read() as s:
            return s.scalar(select(ChannelMark.value).where(ChannelMark.name == name))

    def set_mark(self, name: str, value: int) -> None:
        with self.db.write() as s:
            s.merge(ChannelMark(name=name, value=value, updated_at=utcnow()))

    def dm(self, key: str, to: str, text: str, game_id: str | None) -> None:
        with self.db.write() as s:
            s.add(chat_row(key, to, text, game_id, host=self.db.host))

    def dm_once(self, key: str, to: str, text: str) -> bool:
        """A DM that goes once for `key`, ever; False if it was written before."""
        with self.db.write() as s:
            if s.scalar(select(OutboxRow.id).where(OutboxRow.dedupe_key == key)) is not None:
                return False
            s.add(chat_row(key, to, text, None, host=self.db.host))
        return True

    def last_told(self, prefix: str) -> tuple[datetime, str] | None:
        """This account's latest DM outside any game whose key starts with `prefix`: when it
        was written, and its text."""
        with self.db.read() as s:
            row = s.execute(select(OutboxRow.created_at, OutboxRow.text).where(
                OutboxRow.dedupe_key.like(prefix + "%"), OutboxRow.game_id.is_(None),
                of_host(OutboxRow.host, self.db.host)).order_by(OutboxRow.id.desc())
                .limit(1)).first()
        return (row.created_at, row.text) if row else None

    def public_post(self, key: str, game_id: str, text: str) -> None:
        """A post in the game's public room, as the router writes one (target `public`): in
        the current turn it merges with the router's post of the same step (one message)."""
        now = utcnow()
        turn, due = hold(now)
        with self.db.write() as s:
            if s.scalar(select(OutboxRow.id).where(OutboxRow.dedupe_key == key)) is not None:
                return  # written before (a retried step)
            s.add(OutboxRow(dedupe_key=key[:255], game_id=game_id, seq=None, channel="public",
                            target="public", address=None, text=text, created_at=now,
                            attempts=0, next_attempt_at=due, priority=NORMAL, turn=turn))

    def post(self, key: str, game_id: str, group: str, room: str, text: str) -> None:
        with self.db.write() as s:
            s.add(chat_row(key, room, text, game_id, group=group))

    def summary(self, prefix: str, to: str, text: str, *, now: datetime, at_once: bool) -> None:
        """A summary for `to` that goes at most once a minute (keys `prefix`1, 2, …): one
        waiting for its minute takes the latest text; a new one waits a minute from now or
        from the last one; `at_once`: it goes now. Its row is a DIGEST: while it waits, the
        recipient's other messages go on."""
        with self.db.write() as s:
            last = s.scalars(select(OutboxRow).where(OutboxRow.dedupe_key.like(prefix + "%"))
                             .order_by(OutboxRow.id.desc()).limit(1)).first()
            if last is not None and last.sent_at is None and last.attempts == 0 and (
                    last.next_attempt_at > now + SUMMARY_MARGIN):
                # still waiting for its minute, never tried (a tried one may have been shown
                # under its key): it says the latest
                last.text = text
                if at_once:
                    last.next_attempt_at = now
                return
            due = now if at_once else now + SUMMARY_EVERY
            if last is not None and not at_once:
                # a minute after the last one went (or will go, if it is on its way)
                due = max(due, (last.sent_at or last.next_attempt_at) + SUMMARY_EVERY)
            count = s.scalar(select(func.count()).select_from(OutboxRow).where(
                OutboxRow.dedupe_key.like(prefix + "%"))) or 0
            s.add(OutboxRow(dedupe_key=f"{prefix}{count + 1}", game_id=None, seq=None,
                            channel="dm", target=f"contact:{to}"[:160], address=to, text=text,
                            created_at=now, attempts=0, next_attempt_at=due, priority=DIGEST,
                            turn=None, host=self.db.host))

    # lobbies -------------------------------------------------------------------------------------
    def lobby(self, code: str) -> Lobby | None:
        with self.db.read() as s:
            row = s.get(Lobby, code)
            if row is None or row.host != self.db.host:  # another account's game is unknown
                return None
            s.expunge(row)
            return row

    def open_lobby(self, codes: Callable[[], str], **values: Any) -> str | None:
        """A new lobby under the first free code `codes` gives (20 tries); None if none was."""
        for _ in range(20):
            code = codes()
            try:
                with self.db.write() as s:
                    if s.get(Game, code) is not None or s.get(Lobby, code) is not None:
                        continue
                    s.add(Lobby(code=code, host=self.db.host, **values))
                return code
            except IntegrityError:
                continue
        return None

    def set_status(self, code: str, status: str) -> None:
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is not None:
                row.status = status

    def mark_restarted(self, code: str, new: str, *, replacing: str | None) -> bool:
        """Record that game `code` was restarted as lobby `new` (`重开`), if it still stands
        as it was read (restarted as `replacing`, None: never): False when another `重开` got
        there first."""
        with self.db.write() as s:
            done: Any = s.execute(update(Lobby).where(
                Lobby.code == code, Lobby.restarted_as.is_(None) if replacing is None
                else Lobby.restarted_as == replacing).values(restarted_as=new))
            return bool(done.rowcount)

    def set_undo(self, code: str, action: dict[str, Any] | None) -> None:
        """The judge's last undoable chat-layer action (`撤销 踢出`, `撤销 绑定`); None: done."""
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is not None:
                row.undo = action

    def set_lobby_rules(self, code: str, *, options: dict[str, Any] | None = None,
                        chat_options: dict[str, Any] | None = None,
                        roles: list[str] | None = None, players: int | None = None) -> None:
        """The judge's changes before the start (`设置`, `角色`): what is given replaces."""
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is None:
                return
            if options is not None:
                row.options = dict(options)
            if chat_options is not None:
                row.chat_options = dict(chat_options)
            if roles is not None:
                row.roles = list(roles)
                row.players = players if players is not None else len(roles)

    def ask_once(self, code: str, group: str) -> bool:
        """Whether the judge is to be asked to make `group`'s room by hand now (not before)."""
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is None:
                return False
            asked = list(row.chat_options.get("rooms_asked", []))
            if group in asked:
                return False
            row.chat_options = {**row.chat_options, "rooms_asked": [*asked, group]}
            return True

    def request_end(self, code: str, at: datetime) -> bool:
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is None:
                return False
            row.end_requested_at = at
            return True

    def take_end_request(self, code: str) -> datetime | None:
        """When `结束` was asked (None: not asked), and the request cleared."""
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is None:
                return None
            asked, row.end_requested_at = row.end_requested_at, None
            return asked

    def members(self, code: str) -> list[LobbyPlayer]:
        with self.db.read() as s:
            rows = list(s.scalars(select(LobbyPlayer).where(LobbyPlayer.code == code)
                                  .order_by(LobbyPlayer.joined)))
            for r in rows:
                s.expunge(r)
            return rows

    def join(self, code: str, contact: str, name: str) -> bool:
        """False when the 马甲 was taken meanwhile."""
        try:
            with self.db.write() as s:
                order = (s.scalar(select(func.max(LobbyPlayer.joined)).where(
                    LobbyPlayer.code == code)) or 0) + 1
                s.add(LobbyPlayer(code=code, contact_id=contact, forum_name=name, joined=order))
        except IntegrityError:
            return False
        return True

    def leave(self, code: str, contact: str) -> None:
        with self.db.write() as s:
            row = s.get(LobbyPlayer, (code, contact))
            if row is not None:
                s.delete(row)

    # who plays and judges what -----------------------------------------------------------------
    def finished_judged(self, contact: str) -> list[str]:
        """The games over that `contact` judged, latest first (for `重开`)."""
        with self.db.read() as s:
            return list(s.scalars(select(Lobby.code).join(Game, Game.id == Lobby.code).where(
                Lobby.judge == contact, Game.status != "active",
                of_host(Lobby.host, self.db.host)).order_by(Lobby.created_at.desc(),
                                                            Lobby.code.desc())))

    def players(self, game_id: str) -> dict[int, tuple[str | None, str | None]]:
        """Each seat's contact and 马甲."""
        with self.db.read() as s:
            return {r.seat: (r.contact_id, r.forum_name) for r in s.scalars(
                select(Player).where(Player.game_id == game_id))}

    def contacts(self, game_id: str) -> dict[int, str]:
        """Each bound seat's contact, in seat order (a core statement: read after every
        commit, by the rooms)."""
        with self.db.read_core() as conn:
            return {n: c for n, c in conn.execute(_CONTACTS, {"gid": game_id}) if c}

    def game_judge(self, game_id: str) -> str | None:
        with self.db.read() as s:
            return s.scalar(select(Game.judge_contact).where(Game.id == game_id))

    # rooms ---------------------------------------------------------------------------------------
    def room_names(self, game_id: str) -> set[str]:
        with self.db.read() as s:
            return set(s.scalars(select(Room.name).where(Room.game_id == game_id)))

    def room_id(self, game_id: str, group: str) -> str | None:
        with self.db.read() as s:
            row = s.get(Room, (game_id, group))
            return row.room_id if row else None

    def rooms(self, game_id: str) -> dict[str, tuple[str, list[str]]]:
        """Each bound room of the game (its name: the group, or `public`) with its id and the
        members the bot knows of it, in one statement (`room_id` and `room_members` of every
        room: what the rooms read after every commit)."""
        out: dict[str, tuple[str, list[str]]] = {}
        with self.db.read_core() as conn:
            for name, rid, contact in conn.execute(_ROOMS, {"gid": game_id}):
                members = out.setdefault(name, (rid, []))[1]
                if contact is not None:
                    members.append(contact)
        return out

    def room_members(self, game_id: str, group: str) -> list[str]:
        with self.db.read() as s:
            return list(s.scalars(select(RoomMember.contact_id).where(
                RoomMember.game_id == game_id, RoomMember.room == group)))

    def set_room_members(self, game_id: str, group: str, contacts: Iterable[str]) -> None:
        """The members the bot knows of the room: exactly these."""
        wanted = list(dict.fromkeys(contacts))
        with self.db.write() as s:
            before = set(s.scalars(select(RoomMember.contact_id).where(
                RoomMember.game_id == game_id, RoomMember.room == group)))
            s.execute(delete(RoomMember).where(RoomMember.game_id == game_id,
                                               RoomMember.room == group))
            for c in wanted:
                s.add(RoomMember(game_id=game_id, room=group, contact_id=c))
            _stays(s, game_id, group, before - set(wanted),
                   [c for c in wanted if c not in before])

    def all_rooms(self) -> dict[str, list[str]]:
        """Every room of every game with the members the bot knows of it (room id ->
        contacts): what a transport that keeps nothing across a restart is told back."""
        out: dict[str, list[str]] = {}
        with self.db.read() as s:
            rooms = {(g, n): rid for g, n, rid in s.execute(
                select(Room.game_id, Room.name, Room.room_id).join(Game, Game.id == Room.game_id)
                .where(of_host(Game.host, self.db.host)))}
            for gid, group, contact in s.execute(select(
                    RoomMember.game_id, RoomMember.room, RoomMember.contact_id)
                    .order_by(RoomMember.game_id, RoomMember.room)):
                rid = rooms.get((gid, group))
                if rid is not None:
                    out.setdefault(rid, []).append(contact)
        for rid in rooms.values():
            out.setdefault(rid, [])
        return out

    def bound_rooms(self) -> list[tuple[str, str, str]]:
        """The rooms of this account's games under way: (game, room name, room id)."""
        with self.db.read() as s:
            return [(g, n, r) for g, n, r in s.execute(
                select(Room.game_id, Room.name, Room.room_id).join(Game, Game.id == Room.game_id)
                .where(of_host(Game.host, self.db.host), Game.status == "active")
                .order_by(Room.game_id, Room.name))]

    def change_room_members(self, game_id: str, group: str, gone: Iterable[str],
                            new: Iterable[str]) -> None:
        gone, new = list(gone), list(new)
        with self.db.write() as s:
            for c in gone:
                s.execute(delete(RoomMember).where(RoomMember.game_id == game_id,
                                                   RoomMember.room == group,
                                                   RoomMember.contact_id == c))
            for c in new:
                s.add(RoomMember(game_id=game_id, room=group, contact_id=c))
            _stays(s, game_id, group, gone, new)

    # what a contact was sent (a seat's page: bot/web) ----------------------------------------
    def delivered(self, game_id: str, contact: str) -> list[tuple[datetime, str]]:
        """What the game sent `contact`, in the order it went (naive UTC, text): every DM to
        it (as a seat, as itself: receipts, refusals, relayed lines, a page's answers) and
        every post of a room of the game while it was in that room. Only what went: a row
        not sent yet, or never sent, is nobody's."""
        with self.db.read() as s:
            rows = s.execute(select(OutboxRow.sent_at, OutboxRow.text, OutboxRow.channel,
                                    OutboxRow.target).where(
                OutboxRow.game_id == game_id, OutboxRow.sent_at.is_not(None),
                or_(OutboxRow.address == contact,
                    OutboxRow.channel.in_(ROOM_CHANNELS))).order_by(OutboxRow.sent_at,
                                                                      OutboxRow.id)).all()
            stays: dict[str, list[tuple[datetime, datetime | None]]] = {}
            if any(r.channel in ROOM_CHANNELS for r in rows):
                for room, since, until in s.execute(select(
                        RoomStay.room, RoomStay.since, RoomStay.until).where(
                        RoomStay.game_id == game_id, RoomStay.contact_id == contact)):
                    stays.setdefault(room, []).append((since, until))
        out = []
        for sent_at, text, channel, target in rows:
            if channel in ROOM_CHANNELS:
                room = target.removeprefix("group:")
                if not any(since <= sent_at and (until is None or sent_at < until)
                           for since, until in stays.get(room, [])):
                    continue
            out.append((sent_at, text))
        return out

    def public_posts(self, game_id: str) -> list[tuple[datetime, str]]:
        """What the game told the table in public, in the order it went (naive UTC, text):
        its public room's posts, or, without one, the public page's copy of each
        announcement (bot/router.py's PAGE rows)."""
        with self.db.read() as s:
            return [(at, text) for at, text in s.execute(
                select(OutboxRow.sent_at, OutboxRow.text).where(
                    OutboxRow.game_id == game_id, OutboxRow.sent_at.is_not(None),
                    or_(OutboxRow.channel == PAGE,
                        OutboxRow.target.in_(("public", "group:public"))))
                .order_by(OutboxRow.sent_at, OutboxRow.id)) if at is not None]

    # substitution --------------------------------------------------------------------------------
    def add_token(self, token_hash: str, game_id: str, seat: int, at: datetime) -> None:
        with self.db.write() as s:
            s.add(SeatToken(token_hash=token_hash, game_id=game_id, seat=seat, created_at=at))

    def take_seat(self, token_hash: str, contact: str, at: datetime,
                  judges: frozenset[str]) -> Taken | str:
        """Use a token: the seat passes to `contact`. Otherwise why not, the token unused:
        "bad" (unknown, used, or its game is over), "seated" (the contact has a seat of that
        game already, in or out), "judge" (a judge of that game never plays in it)."""
        with self.db.write() as s:
            row = s.get(SeatToken, token_hash)
            if row is None or row.used_by is not None:
                return "bad"
            game = s.get(Game, row.game_id)
            if game is None or game.status != "active" or game.host != self.db.host:
                return "bad"
            if contact in judges or contact == game.judge_contact:
                return "judge"
            if s.scalar(select(Player.seat).where(Player.game_id == row.game_id,
                                                  Player.contact_id == contact)) is not None:
                return "seated"
            player = s.get(Player, (row.game_id, row.seat))
            assert player is not None
            old = player.contact_id
            row.used_by, row.used_at = contact, at
            player.contact_id = contact
            history = list(s.scalars(select(OutboxRow.text).where(
                OutboxRow.game_id == row.game_id, OutboxRow.target == f"seat:{row.seat}")
                .order_by(OutboxRow.id)))
            return Taken(row.game_id, row.seat, player.forum_name, old, history)

    # the judges' settings ------------------------------------------------------------------------
    def own_feed(self, contact: str) -> str | None:
        """The judge's own default for their next games, if they set one."""
        with self.db.read() as s:
            row = s.get(JudgeSetting, contact)
            return row.judge_feed if row is not None else None

    def game_feed(self, code: str) -> str | None:
        """The feed of a game (or of its lobby, before the start), if set."""
        with self.db.read() as s:
            game = s.get(Game, code)
            if game is not None:
                return game.judge_feed
            lobby = s.get(Lobby, code)
            return lobby.chat_options.get("judge.feed") if lobby is not None else None

    def set_feed(self, contact: str, feed: str, code: str | None) -> None:
        """The judge's default for their next games, and (with `code`) that game's."""
        with self.db.write() as s:
            own = s.get(JudgeSetting, contact)
            if own is None:
                s.add(JudgeSetting(contact_id=contact, judge_feed=feed))
            else:
                own.judge_feed = feed
            if code is None:
                return
            game = s.get(Game, code)
            if game is not None:
                game.judge_feed = feed
            lobby = s.get(Lobby, code)
            if lobby is not None:
                lobby.chat_options = {**lobby.chat_options, "judge.feed": feed}

    def take_answers(self, turn: str, contact: str, targets: set[str]) -> list[str]:
        """The rows turn `turn` holds for `contact` (its address, or one of its `targets`),
        marked sent (the page shows them: bot/web), their texts in the order written."""
        now = utcnow()
        with self.db.write() as s:
            rows = [r for r in s.scalars(select(OutboxRow).where(
                OutboxRow.turn == turn, OutboxRow.sent_at.is_(None)).order_by(OutboxRow.id))
                if r.address == contact or r.target in targets]
            for r in rows:
                r.sent_at, r.address = now, r.address or contact
            return [r.text for r in rows]

    # the page links (bot/web) ------------------------------------------------------------------
    def link_epoch(self, contact: str) -> int:
        """The generation of `contact`'s page links (0 until `网页 重置`)."""
        with self.db.read() as s:
            return s.scalar(select(WebLink.epoch).where(WebLink.contact_id == contact)) or 0

    def hand_overs(self, game_id: str, seat: int) -> int:
        """How often the seat changed hands (`接替`): the generation of its page links."""
        with self.db.read() as s:
            return _hand_overs(s, game_id, seat)

    def link_facts(self, game_id: str, seat: int, others: Sequence[str] = ()) -> LinkFacts:
        """What a page link is checked against: the seat's holder, the game's own judge, the
        seat's hand-overs, and the link generations of those two and of `others`. The same
        four reads whatever is asked, a game or seat that does not exist included: a refused
        link costs what a good one costs (bot/web/app.py)."""
        with self.db.read() as s:
            holder = s.scalar(select(Player.contact_id).where(Player.game_id == game_id,
                                                              Player.seat == seat))
            judge = s.scalar(select(Lobby.judge).where(Lobby.code == game_id,
                                                       of_host(Lobby.host, self.db.host)))
            hand_overs = _hand_overs(s, game_id, seat)
            asked = [c for c in (holder, judge, *others) if c] or [""]
            epochs = {c: e for c, e in s.execute(select(WebLink.contact_id, WebLink.epoch)
                                                 .where(WebLink.contact_id.in_(asked)))}
        return LinkFacts(holder, judge, hand_overs, epochs)

    def creates_games(self, contact: str) -> bool:
        """Whether `contact` was granted the right to create games (`wolfjudge judge-link`)."""
        with self.db.read() as s:
            return bool(s.scalar(select(WebContact.creates_games).where(
                WebContact.contact_id == contact)))

    def reset_join(self, code: str) -> int:
        """`报名链接 重置`: the lobby's join link of a new generation (the old one is refused);
        the new generation."""
        with self.db.write() as s:
            row = s.get(Lobby, code)
            if row is None:
                return 0
            row.join_epoch = (row.join_epoch or 0) + 1
            return row.join_epoch

    def revoke_links(self, contact: str) -> int:
        """`网页 重置`: a new generation; every link given before is refused, and the push
        reminders subscribed through them end (each push carries a fresh link to the seat's
        page: a browser that subscribed with an old link would keep getting working ones).
        The new generation."""
        with self.db.write() as s:
            row = s.get(WebLink, contact)
            if row is None:
                row = WebLink(contact_id=contact, epoch=0)
                s.add(row)
            row.epoch += 1
            s.execute(delete(PushSubscription).where(PushSubscription.contact_id == contact))
            return row.epoch

    # push reminders (bot/web/push.py) -----------------------------------------------------------
    def push_subscriptions(self, contact: str) -> list[tuple[str, str, str]]:
        """The browsers that asked for `contact`'s reminders: (endpoint, p256dh, auth)."""
        with self.db.read() as s:
            return [(r.endpoint, r.p256dh, r.auth) for r in s.scalars(
                select(PushSubscription).where(PushSubscription.contact_id == contact)
                .order_by(PushSubscription.id))]

    def add_push(self, contact: str, endpoint: str, p256dh: str, auth: str,
                 at: datetime) -> None:
        """A browser's subscription for `contact` (the same browser again: its new keys)."""
        digest = hashlib.sha256(endpoint.encode()).hexdigest()
        with self.db.write() as s:
            row = s.scalar(select(PushSubscription).where(
                PushSubscription.contact_id == contact,
                PushSubscription.endpoint_hash == digest))
            if row is None:
                s.add(PushSubscription(contact_id=contact, endpoint_hash=digest,
                                       endpoint=endpoint, p256dh=p256dh, auth=auth,
                                       created_at=at))
            else:
                row.p256dh, row.auth = p256dh, auth

    def drop_push(self, contact: str, endpoint: str) -> bool:
        """A browser's subscription gone (`不再提醒`, or the push service said so)."""
        digest = hashlib.sha256(endpoint.encode()).hexdigest()
        with self.db.write() as s:
            found = s.execute(delete(PushSubscription).where(
                PushSubscription.contact_id == contact,
                PushSubscription.endpoint_hash == digest))
            return bool(getattr(found, "rowcount", 0))

    def secret(self, name: str, make: Callable[[], str]) -> str:
        """The server's secret `name`, made with `make` the first time (one for every
        process: two racing to make it keep the first)."""
        with self.db.read() as s:
            found = s.scalar(select(Secret.value).where(Secret.name == name))
        if found is not None:
            return found
        try:
            with self.db.write() as s:
                s.add(Secret(name=name, value=make()))
        except IntegrityError:
            pass
        with self.db.read() as s:
            value = s.scalar(select(Secret.value).where(Secret.name == name))
        assert value is not None
        return value

    # the log, as the chat layer reads it ---------------------------------------------------------
    def last_events(self, game_id: str) -> list[Event]:
        """The events of the game's last command."""
        with self.db.read() as s:
            head = s.scalar(select(func.max(LogEntry.seq)).where(
                LogEntry.game_id == game_id, LogEntry.kind != "event")) or 0
            bodies = list(s.scalars(select(LogEntry.body).where(
                LogEntry.game_id == game_id, LogEntry.seq > head).order_by(LogEntry.seq)))
        return [event_of(b) for b in bodies]

    def told(self, game_id: str, type_: str, phase: str | None, seat: int) -> list[Event]:
        """The events of `type_` in `phase` told to `seat`, the latest first."""
        with self.db.read() as s:
            rows = list(s.scalars(select(LogEntry).where(
                LogEntry.game_id == game_id, LogEntry.kind == "event", LogEntry.type == type_,
                LogEntry.phase == phase).order_by(LogEntry.seq.desc())))
        return [event_of(r.body) for r in rows if seat in (r.audience or {}).get("seats", [])]

    def outcome(self, msg_id: str) -> str | None:
        """What came of a message id in the pipeline (accepted, rejected, noop), if it got
        there (the demo's check)."""
        with self.db.read() as s:
            return s.scalar(select(InboxMessage.outcome).where(InboxMessage.msg_id == msg_id))
