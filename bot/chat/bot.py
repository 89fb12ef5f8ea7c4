"""The conversation layer (issue 8): one incoming message in, every reply and post out.

    Incoming ─> parse (bot.commands) ─> which game, which seat ─> may they? ─> Service ─> outbox
                                                                              └─> rooms, replies

Transport-independent: it talks to a `Transport` only. Every DM command gets one reply at once
(the engine's own message to the seat or the judge when there is one, else a short receipt);
chatter in a room gets none. A refusal names no secret: the engine's rejections are worded the
same whoever asks, and the permission check runs before the engine sees the command. A message
id seen before is not handled again, lobby commands included.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from bot.chat.common import (
    KILLERS_ROOM,
    KILLERS_ROOM_VERBS,
    MAX_TEXT,
    ROOM_VERBS,
    Turn,
    chat_row,
    judge_form,
)
from bot.chat.desk_judge import JudgeDesk
from bot.chat.desk_lobby import LobbyDesk
from bot.chat.desk_player import PlayerDesk
from bot.chat.lobby import new_code
from bot.chat.rooms import Rooms
from bot.commands.parse import Parsed, ParseError, parse
from bot.forum.reader import ThreadSource
from bot.forum.votes import ForumVotes
from bot.gametime import DEFAULT_TIME_ZONE
from bot.outbox import NORMAL, REPLY, deliver
from bot.service import GAME_ID, MAX_ID, MessageIdReused, Service, UnknownGame, event_of, new_seed
from bot.store.models import ChatMessage, Game, Lobby, LobbyPlayer, LogEntry, Player, Room
from bot.texts import seats_text, t
from bot.transport import Incoming, Transport, TransportSender
from engine.events import Event
from engine.model import GameState

log = logging.getLogger(__name__)


class ChatBot(LobbyDesk, PlayerDesk, JudgeDesk):
    """`judges`: the contacts with judge rights (CHAT.md: WOLFJUDGE_JUDGES, `--judge`)."""

    def __init__(self, service: Service, transport: Transport, *,
                 judges: Iterable[str] | None = None, time_zone: str = DEFAULT_TIME_ZONE,
                 export_dir: Path | str = "exports",
                 seeds: Callable[[], str] = new_seed,
                 codes: Callable[[], str] = new_code,
                 forum_source: ThreadSource | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        """`forum_source`: where `votes.channel=forum-auto` games read their vote thread
        (aiotieba by default); `clock`: now (the real clock by default)."""
        self.service = service
        # Where `开始` gets a game's secret seed: the OS CSPRNG; a fixed one only in tests.
        self.seeds = seeds
        self.codes = codes  # game codes (not secret): random, fixed in tests
        if judges is not None:
            service.judges = frozenset(judges)
        self.transport = transport
        self.sender = TransportSender(transport)
        self.time_zone = time_zone
        self.export_dir = Path(export_dir)
        self.rooms = Rooms(service, transport, self._dm, self.post)
        self.forum = (ForumVotes(service, forum_source) if clock is None
                      else ForumVotes(service, forum_source, clock=clock))
        self.on_deliver: Callable[[], None] | None = None
        # Rooms follow every commit, the scheduler's ticks included: told the state and the
        # events just committed, so that no commit decodes the snapshot or reads the log again.
        service.on_commit_state.append(self._after_commit)
        service.turn_ended.append(self.deliver)

    @property
    def judges(self) -> frozenset[str]:
        return self.service.judges

    # delivery ----------------------------------------------------------------------------------
    def deliver(self, _now: datetime | None = None) -> None:
        """Send what the outbox holds. Retries wait on the real clock, whatever the game's.
        With `on_deliver` set (a transport that must have one deliverer: WeChat), that one
        deliverer is woken instead."""
        if self.on_deliver is not None:
            self.on_deliver()
            return
        deliver(self.service.db, self.sender)

    def _dm(self, to: str, text: str, game_id: str | None = None) -> None:
        """A DM of the chat layer's own (to a judge, about rooms, a reconnect): through the
        outbox like every send, so it is paced, retried and sent once."""
        with self.service.db.write() as s:
            s.add(chat_row(f"chat/{uuid.uuid4().hex}", to, text, game_id))
        self.deliver()

    def post(self, game_id: str, group: str, room: str, text: str) -> None:
        """A room notice of the chat layer's own (members, someone out): through the outbox."""
        with self.service.db.write() as s:
            s.add(chat_row(f"chat/{uuid.uuid4().hex}", room, text, game_id, group=group))
        self.deliver()

    # the entry point ---------------------------------------------------------------------------
    def handle(self, msg: Incoming) -> None:
        """Handle one message completely: apply it, sync rooms, send what it caused."""
        if not msg.msg_id or len(msg.sender) > MAX_ID or not msg.sender:
            log.warning("message without id or with a bad sender dropped")
            return
        msg_key = msg.msg_id if len(msg.msg_id) <= MAX_ID else "sha256:" + hashlib.sha256(
            msg.msg_id.encode()).hexdigest()
        with self.service.db.read() as s:
            if s.get(ChatMessage, msg_key) is not None:
                return  # seen before: handled once
        # One turn: everything this message causes, replies and posts alike, leaves as one
        # message per recipient when it is handled (bot/outbox.py), the answer first.
        with self.service.turn(f"msg/{msg_key}"):
            turn = Turn()
            try:
                self._route(msg, turn)
            except MessageIdReused:
                log.warning("message id %s reused by %s", msg.msg_id, msg.sender)
            except Exception:
                log.exception("message %s from %s failed", msg.msg_id, msg.sender)
                if msg.room is None:
                    turn.say(msg.sender, t("busy"))
            try:  # the message is marked handled together with its replies (outbox rows)
                with self.service.db.write() as s:
                    s.add(ChatMessage(msg_id=msg_key, sender=msg.sender,
                                      received_at=msg.at.astimezone(UTC).replace(tzinfo=None)))
                    s.flush()
                    for i, reply in enumerate(turn.replies):
                        s.add(chat_row(f"chat/{msg_key}/{i}", reply.to, reply.text, None,
                                       priority=REPLY if reply.to == msg.sender else NORMAL))
            except IntegrityError:
                log.warning("message %s was handled meanwhile: its replies are dropped", msg_key)

    def _after_commit(self, gid: str, state: GameState, events: tuple[Event, ...]) -> None:
        self.after_commit(gid, events, state=state)

    def after_commit(self, gid: str, events: Iterable[Event] = (), *,
                     state: GameState | None = None) -> None:
        """Rooms follow the state (the scheduler's ticks come here too). `state`: the one
        just committed (else it is read)."""
        lobby = self._lobby(gid)
        if lobby is None:
            return
        if state is None:
            try:
                state = self.service.state(gid)
            except UnknownGame:
                return
        recent = list(events) or self._recent_events(gid)
        self.rooms.sync(gid, state, recent, lobby)

    def _recent_events(self, gid: str) -> list[Event]:
        """The events of the game's last command (what the rooms react to)."""
        with self.service.db.read() as s:
            head = s.scalar(select(func.max(LogEntry.seq)).where(
                LogEntry.game_id == gid, LogEntry.kind == "command")) or 0
            bodies = list(s.scalars(select(LogEntry.body).where(
                LogEntry.game_id == gid, LogEntry.seq > head).order_by(LogEntry.seq)))
        return [event_of(b) for b in bodies]

    # routing -----------------------------------------------------------------------------------
    def _route(self, msg: Incoming, turn: Turn) -> None:
        text = msg.text
        in_room = msg.room is not None
        if len(text) > MAX_TEXT:
            if not in_room:
                turn.say(msg.sender, t("too_long", limit=MAX_TEXT))
            return
        try:
            p = parse(text)
        except ParseError as exc:
            if not in_room:
                turn.say(msg.sender, exc.message)
            return
        if p is None:
            if not in_room:
                self._chatter(msg, turn)
            return
        if in_room and (p.verb not in ROOM_VERBS or (
                p.verb in KILLERS_ROOM_VERBS and not self._killers_room(msg.room))):
            self._in_room(msg, p, turn)  # a room is for talk; commands go by DM
            return
        if p.verb == "new_game":
            self._new_game(msg, p, turn)
            return
        if p.verb == "join":
            self._join(msg, p, turn)
            return
        if p.verb == "take_seat":
            self._take_seat(msg, p, turn)
            return
        if p.verb == "bind":
            self._bind(msg, p, turn)
            return
        if p.verb == "feed" and msg.room is None:
            self._feed(msg, p, turn)
            return
        gid = self._game_for(msg, p, turn)
        if gid is None:
            return
        lobby = self._lobby(gid)
        if lobby is not None and lobby.status == "cancelled":
            turn.say(msg.sender, t("game_finished", code=gid))
            return
        judge = self._is_judge(gid, msg.sender)
        if self._is_lobby(gid):
            self._lobby_verb(msg, p, gid, judge, turn)
            return
        if judge_form(p) or (p.verb == "status" and judge and self.service.seat_of(
                gid, msg.sender) is None):
            if not judge:
                log.warning("%s: judge command %s from %s refused", gid, p.verb, msg.sender)
                turn.say(msg.sender, t("judge_only"))
                return
            self._judge_verb(msg, p, gid, turn)
            return
        self._player_verb(msg, p, gid, turn)

    def _in_room(self, msg: Incoming, p: Parsed, turn: Turn) -> None:
        """A command other than kill/lock/bind in a room: nothing is said in the room. A judge
        command from anyone but a judge is refused by DM and logged (CHAT.md: people)."""
        if not judge_form(p):
            return  # a player's command word in room talk ("过") is talk
        with self.service.db.read() as s:
            gid = s.scalar(select(Room.game_id).where(Room.room_id == msg.room))
        if msg.sender in self.judges or (gid is not None and self._is_judge(gid, msg.sender)):
            turn.say(msg.sender, t("not_here"))
            return
        log.warning("%s: judge command %s from %s in room %s refused", gid, p.verb,
                    msg.sender, msg.room)
        turn.say(msg.sender, t("judge_only"))

    def _chatter(self, msg: Incoming, turn: Turn) -> None:
        """A DM that is no command: relayed to the sender's room in relay mode, else help."""
        games = self._player_games(msg.sender)
        for gid in games:
            if self._relay(gid, msg, turn):
                return
        if games or msg.sender in self.judges or self._judged(msg.sender):
            turn.say(msg.sender, t("not_understood"))
        else:
            turn.say(msg.sender, t("intro"))

    # which game --------------------------------------------------------------------------------
    def _lobby(self, code: str) -> Lobby | None:
        with self.service.db.read() as s:
            row = s.get(Lobby, code)
            if row is not None:
                s.expunge(row)
            return row

    def _is_lobby(self, code: str) -> bool:
        lobby = self._lobby(code)
        return lobby is not None and lobby.status == "open"

    def _is_judge(self, gid: str, contact: str) -> bool:
        if contact in self.judges:
            return True
        lobby = self._lobby(gid)
        return lobby is not None and lobby.judge == contact

    def _judged(self, contact: str) -> list[str]:
        with self.service.db.read() as s:
            return list(s.scalars(select(Lobby.code).where(
                Lobby.judge == contact, Lobby.status.in_(("open", "started")))
                .order_by(Lobby.code)))

    def _player_games(self, contact: str) -> list[str]:
        """The active games (and open lobbies) the contact plays in."""
        with self.service.db.read() as s:
            games = set(s.scalars(select(Player.game_id).join(Game, Game.id == Player.game_id)
                                  .where(Player.contact_id == contact,
                                         Game.status == "active")))
            games |= set(s.scalars(select(LobbyPlayer.code).join(
                Lobby, Lobby.code == LobbyPlayer.code).where(
                LobbyPlayer.contact_id == contact, Lobby.status == "open")))
        return sorted(games)

    def _active_judged(self, contact: str) -> list[str]:
        out = []
        for code in self._judged(contact):
            with self.service.db.read() as s:
                game = s.get(Game, code)
                if game is None or game.status == "active":
                    out.append(code)
        return out

    def _killers_room(self, room: str | None) -> bool:
        """The wolves' room, or the room of the group that holds tonight's kill (classic: the
        black lovers after 寡妇刀, whose room the engine asks for the kill)."""
        with self.service.db.read() as s:
            row = s.execute(select(Room.game_id, Room.name).where(Room.room_id == room)).first()
        if row is None:
            return False
        if row.name == KILLERS_ROOM:
            return True
        try:
            night = self.service.state(row.game_id).night
        except UnknownGame:
            return False
        return night is not None and night.data.get("kill_group") == row.name

    def _game_for(self, msg: Incoming, p: Parsed, turn: Turn) -> str | None:
        if msg.room is not None:
            with self.service.db.read() as s:
                gid = s.scalar(select(Room.game_id).where(Room.room_id == msg.room))
            return gid
        if p.game is not None:
            if not GAME_ID.fullmatch(p.game) or self._lobby(p.game) is None:
                turn.say(msg.sender, t("unknown_code", code=p.game[:16]))
                return None
            return p.game
        mine = sorted(set(self._player_games(msg.sender)) | set(self._active_judged(msg.sender)))
        if not mine:
            if judge_form(p) and msg.sender not in self.judges:
                log.warning("judge command %s from %s (no game) refused", p.verb, msg.sender)
                turn.say(msg.sender, t("judge_only"))
            elif p.verb == "help":
                turn.say(msg.sender, self._stranger_help(msg.sender))
            else:
                turn.say(msg.sender, t("no_game") if msg.sender not in self.judges else
                         t("help_judge"))
            return None
        if len(mine) > 1:
            turn.say(msg.sender, t("choose_game", codes="、".join(mine), first=mine[0],
                                   example=msg.text.strip()[:20]))
            return None
        return mine[0]

    def _stranger_help(self, contact: str) -> str:
        lines = [t("help_head", when=t("help_now")), t("help_stranger")]
        if contact in self.judges:
            lines.append(t("help_judge"))
        return "\n".join(lines)


__all__ = ["ChatBot", "Incoming", "seats_text", "UnknownGame"]
