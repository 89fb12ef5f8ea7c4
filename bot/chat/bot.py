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
import json
import logging
import secrets
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from bot.chat import views
from bot.chat.lobby import (
    DEFAULT_PLAYERS,
    RULESETS,
    LobbyError,
    check_game,
    first_day,
    new_code,
    seat_order,
    split_options,
)
from bot.chat.rooms import Rooms
from bot.chat.texts import room_name, ruleset_name, seats_text, t
from bot.commands.convert import ConvertError, judge_command, player_command
from bot.commands.parse import Parsed, ParseError, parse
from bot.commands.vocabulary import VERBS
from bot.forum.reader import ThreadSource, thread_id
from bot.forum.votes import CHANNEL as FORUM_AUTO
from bot.forum.votes import ForumVotes
from bot.gametime import DEFAULT_TIME_ZONE, wall_clock, zone
from bot.outbox import deliver
from bot.render import messages_for
from bot.service import (
    GAME_ID,
    MAX_ID,
    GameExists,
    MessageIdReused,
    Outcome,
    Service,
    UnknownGame,
    describe_command,
    event_of,
    new_seed,
    utcnow,
)
from bot.store.models import (
    ChatMessage,
    Game,
    Lobby,
    LobbyPlayer,
    LogEntry,
    OutboxRow,
    Player,
    Room,
    SeatToken,
)
from bot.transport import Incoming, Transport, TransportSender
from engine import commands as engine_commands
from engine.commands import Act, Command
from engine.events import Event
from engine.model import GameState

log = logging.getLogger(__name__)
MAX_TEXT = 4096
END_CONFIRM = timedelta(minutes=10)
# Who may send what, and where, is the vocabulary's (bot/commands/vocabulary.yaml).
JUDGE_VERBS = frozenset(k for k, v in VERBS.items() if v.who == "judge")
KILLERS_ROOM_VERBS = frozenset(k for k, v in VERBS.items() if "killers_room" in v.where)
ROOM_VERBS = frozenset(k for k, v in VERBS.items() if "room" in v.where) | KILLERS_ROOM_VERBS
KILLERS_ROOM = "wolves"  # the engine group whose room takes the killers' commands
VOTE_VERBS = {"vote", "abstain", "change", "correct"}


@dataclass
class _Reply:
    to: str
    text: str


@dataclass
class _Turn:
    """What one message causes besides the outbox: direct replies, in order."""

    replies: list[_Reply] = field(default_factory=list)

    def say(self, to: str, text: str) -> None:
        self.replies.append(_Reply(to, text))


def chat_row(key: str, to: str, text: str, game_id: str | None, *,
             group: str | None = None) -> OutboxRow:
    """An outbox row of the chat layer: a DM to contact `to`, or (with `group`) a post in
    room `to`."""
    now = utcnow()
    return OutboxRow(dedupe_key=key[:255], game_id=game_id, seq=None,
                     channel="group" if group else "dm",
                     target=f"group:{group}" if group else f"contact:{to}"[:160], address=to,
                     text=text, created_at=now, attempts=0, next_attempt_at=now)


class ChatBot:
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
        self.forum = ForumVotes(service, forum_source, **({"clock": clock} if clock else {}))
        self.on_deliver: Callable[[], None] | None = None
        # Rooms follow every commit, the scheduler's ticks included.
        service.on_commit.append(self.after_commit)

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
        turn = _Turn()
        touched: set[str] = set()
        try:
            self._route(msg, turn, touched)
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
                    s.add(chat_row(f"chat/{msg_key}/{i}", reply.to, reply.text, None))
        except IntegrityError:
            log.warning("message %s was handled meanwhile: its replies are dropped", msg_key)
        for gid in touched:  # rooms follow changes made outside the pipeline (a substitute)
            self.after_commit(gid)
        self.deliver(msg.at)

    def after_commit(self, gid: str, events: Iterable[Event] = ()) -> None:
        """Rooms follow the state (the scheduler's ticks come here too)."""
        lobby = self._lobby(gid)
        if lobby is None:
            return
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
    def _route(self, msg: Incoming, turn: _Turn, touched: set[str]) -> None:
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
            self._take_seat(msg, p, turn, touched)
            return
        if p.verb == "bind":
            self._bind(msg, p, turn)
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
            self._lobby_verb(msg, p, gid, judge, turn, touched)
            return
        if _judge_form(p) or (p.verb == "status" and judge and self.service.seat_of(
                gid, msg.sender) is None):
            if not judge:
                log.warning("%s: judge command %s from %s refused", gid, p.verb, msg.sender)
                turn.say(msg.sender, t("judge_only"))
                return
            self._judge_verb(msg, p, gid, turn, touched)
            return
        self._player_verb(msg, p, gid, turn, touched)

    def _in_room(self, msg: Incoming, p: Parsed, turn: _Turn) -> None:
        """A command other than kill/lock/bind in a room: nothing is said in the room. A judge
        command from anyone but a judge is refused by DM and logged (CHAT.md: people)."""
        if not _judge_form(p):
            return  # a player's command word in room talk ("过") is talk
        with self.service.db.read() as s:
            gid = s.scalar(select(Room.game_id).where(Room.room_id == msg.room))
        if msg.sender in self.judges or (gid is not None and self._is_judge(gid, msg.sender)):
            turn.say(msg.sender, t("not_here"))
            return
        log.warning("%s: judge command %s from %s in room %s refused", gid, p.verb,
                    msg.sender, msg.room)
        turn.say(msg.sender, t("judge_only"))

    def _chatter(self, msg: Incoming, turn: _Turn) -> None:
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

    def _game_for(self, msg: Incoming, p: Parsed, turn: _Turn) -> str | None:
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
            if _judge_form(p) and msg.sender not in self.judges:
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

    # the lobby ---------------------------------------------------------------------------------
    def _new_game(self, msg: Incoming, p: Parsed, turn: _Turn) -> None:
        if msg.sender not in self.judges:
            log.warning("新游戏 from %s refused (not a judge)", msg.sender)
            turn.say(msg.sender, t("judge_only"))
            return
        ruleset = RULESETS.get(p.words[0] if p.words else "")
        if ruleset is None:
            turn.say(msg.sender, t("bad_ruleset", name=(p.words or ("-",))[0][:20]))
            return
        players = p.count or DEFAULT_PLAYERS[ruleset]
        try:
            engine_opts, chat_opts = split_options(list(p.words[1:]))
            check_game(ruleset, players, engine_opts)
        except LobbyError as exc:
            turn.say(msg.sender, t(exc.key, **exc.fields))
            return
        now = msg.at.astimezone(UTC).replace(tzinfo=None)
        for _ in range(20):
            code = self.codes()
            try:
                with self.service.db.write() as s:
                    if s.get(Game, code) is not None:
                        continue
                    s.add(Lobby(code=code, ruleset=ruleset, players=players,
                                options=engine_opts, chat_options=chat_opts, judge=msg.sender,
                                time_zone=self.time_zone, status="open", created_at=now))
                break
            except IntegrityError:
                continue
        else:
            turn.say(msg.sender, t("busy"))
            return
        items = [f"{k}={v}" for k, v in {**engine_opts, **chat_opts}.items()]
        turn.say(msg.sender, t("created", ruleset=ruleset_name(ruleset), players=players,
                               code=code, options_text=t("created_options",
                                                         items=" ".join(items))))

    def _members(self, code: str) -> list[LobbyPlayer]:
        with self.service.db.read() as s:
            rows = list(s.scalars(select(LobbyPlayer).where(LobbyPlayer.code == code)
                                  .order_by(LobbyPlayer.joined)))
            for r in rows:
                s.expunge(r)
            return rows

    def _join(self, msg: Incoming, p: Parsed, turn: _Turn) -> None:
        code = (p.words[0] if p.words else "").upper()
        lobby = self._lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None:
            turn.say(msg.sender, t("unknown_code", code=code[:16] or "-"))
            return
        name = p.text.strip()
        if not 0 < len(name) <= 32 or any(c.isspace() for c in name):
            turn.say(msg.sender, t("name_bad"))
            return
        members = self._members(code)
        mine = next((m for m in members if m.contact_id == msg.sender), None)
        if mine is not None:
            turn.say(msg.sender, t("already_joined", code=code, name=mine.forum_name))
            return
        if lobby.status != "open":
            turn.say(msg.sender, t("lobby_closed", code=code))
            return
        if any(m.forum_name == name for m in members):
            turn.say(msg.sender, t("name_taken", name=name))
            return
        if len(members) >= lobby.players:
            turn.say(msg.sender, t("game_full", code=code, players=lobby.players))
            return
        try:
            with self.service.db.write() as s:
                order = (s.scalar(select(func.max(LobbyPlayer.joined)).where(
                    LobbyPlayer.code == code)) or 0) + 1
                s.add(LobbyPlayer(code=code, contact_id=msg.sender, forum_name=name,
                                  joined=order))
        except IntegrityError:
            turn.say(msg.sender, t("name_taken", name=name))
            return
        n = len(members) + 1
        turn.say(msg.sender, t("joined", code=code, name=name, joined=n, players=lobby.players))
        turn.say(lobby.judge, t("joined_judge", code=code, name=name, joined=n,
                                players=lobby.players))

    def _lobby_verb(self, msg: Incoming, p: Parsed, code: str, judge: bool, turn: _Turn,
                    touched: set[str]) -> None:
        lobby = self._lobby(code)
        assert lobby is not None
        members = self._members(code)
        mine = next((m for m in members if m.contact_id == msg.sender), None)
        if p.verb == "leave" and mine is not None:
            with self.service.db.write() as s:
                row = s.get(LobbyPlayer, (code, msg.sender))
                if row is not None:
                    s.delete(row)
            turn.say(msg.sender, t("left", code=code))
            turn.say(lobby.judge, t("left_judge", code=code, name=mine.forum_name,
                                    joined=len(members) - 1, players=lobby.players))
            return
        if p.verb in ("status", "help") and mine is not None and not judge:
            turn.say(msg.sender, t("status_lobby", code=code, name=mine.forum_name,
                                   joined=len(members), players=lobby.players)
                     + ("\n" + t("help_lobby_player") if p.verb == "help" else ""))
            return
        if not judge:
            if p.verb in JUDGE_VERBS:
                log.warning("%s: judge command %s from %s refused", code, p.verb, msg.sender)
                turn.say(msg.sender, t("judge_only"))
            else:
                turn.say(msg.sender, t("game_not_started", code=code, joined=len(members),
                                       players=lobby.players))
            return
        if p.verb == "kick":
            target = next((m for m in members if m.forum_name == p.text.strip()), None)
            if target is None:
                turn.say(msg.sender, t("no_such_name", code=code, name=p.text.strip()[:32]))
                return
            with self.service.db.write() as s:
                row = s.get(LobbyPlayer, (code, target.contact_id))
                if row is not None:
                    s.delete(row)
            turn.say(target.contact_id, t("kicked", code=code))
            turn.say(msg.sender, t("kicked_judge", name=target.forum_name, code=code,
                                   joined=len(members) - 1, players=lobby.players))
            return
        if p.verb == "start":
            self._start(msg, lobby, members, turn, touched)
            return
        if p.verb in ("status", "help"):
            names = "、".join(m.forum_name for m in members) or t("words.none")
            text = t("judge_status_lobby", code=code, joined=len(members),
                     players=lobby.players, names=names)
            turn.say(msg.sender, text + ("\n" + t("help_judge") if p.verb == "help" else ""))
            return
        if p.verb == "end":
            with self.service.db.write() as s:
                row = s.get(Lobby, code)
                if row is not None:
                    row.status = "cancelled"
            for m in members:
                turn.say(m.contact_id, t("kicked", code=code))
            turn.say(msg.sender, t("received", what=t("cancelled", code=code)))
            return
        turn.say(msg.sender, t("game_not_started", code=code, joined=len(members),
                               players=lobby.players))

    def _start(self, msg: Incoming, lobby: Lobby, members: list[LobbyPlayer], turn: _Turn,
               touched: set[str]) -> None:
        code = lobby.code
        if len(members) < lobby.players:
            turn.say(msg.sender, t("not_enough", code=code, players=lobby.players,
                                   joined=len(members)))
            return
        now = wall_clock(msg.at, zone(lobby.time_zone)).replace(second=0, microsecond=0)
        seed = self.seeds()
        order = seat_order(seed, [m.contact_id for m in members],
                           lobby.chat_options.get("deal.seats", "seed"))
        names = {m.contact_id: m.forum_name for m in members}
        bindings = {i + 1: (c, names[c]) for i, c in enumerate(order)}
        try:
            self.service.create_game(
                game_id=code, ruleset=lobby.ruleset, start=first_day(now), seed=seed,
                players=lobby.players, options=lobby.options, now=now,
                bindings=bindings, judge_contact=lobby.judge, time_zone=lobby.time_zone)
        except GameExists:
            return
        with self.service.db.write() as s:
            row = s.get(Lobby, code)
            assert row is not None
            row.status = "started"
        touched.add(code)
        state = self.service.state(code)
        seats = "\n".join(t("seat_line", seat=n, name=names[c], contact=c)
                          for n, (c, _) in bindings.items())
        open_at = state.schedule.open_at(1).strftime("%m-%d %H:%M")
        turn.say(msg.sender, t("started_judge", code=code, open=open_at, seats=seats))

    # judge-made rooms --------------------------------------------------------------------------
    def _bind(self, msg: Incoming, p: Parsed, turn: _Turn) -> None:
        code = (p.words[0] if p.words else "").upper()
        group = p.words[1] if len(p.words) > 1 else ""
        lobby = self._lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None or lobby.status != "started":
            turn.say(msg.sender, t("unknown_code", code=code[:16] or "-"))
            return
        if not self._is_judge(code, msg.sender):
            log.warning("%s: 绑定 from %s refused", code, msg.sender)
            turn.say(msg.sender, t("bind_only_judge"))
            return
        if msg.room is None:
            turn.say(msg.sender, t("room_not_in_room"))
            return
        state = self.service.state(code)
        turn.say(msg.sender, self.rooms.bind(code, state, group, lobby, msg.room))

    def _relay(self, gid: str, msg: Incoming, turn: _Turn) -> bool:
        """groups.mode=relay: a member's DM goes to the other members of the group."""
        lobby = self._lobby(gid)
        if lobby is None or lobby.status != "started" or lobby.chat_options.get(
                "groups.mode") != "relay":
            return False
        seat = self.service.seat_of(gid, msg.sender)
        state = self.service.state(gid)
        if seat is None or state.winner or not state.seat(seat).alive:
            return False
        groups = [g for g, seats in state.groups.items() if seat in seats]
        text = msg.text.strip()
        if len(groups) > 1:
            named = [g for g in groups if text.startswith(room_name(g))]
            if not named:
                turn.say(msg.sender, t("relay_choose", rooms="、".join(map(room_name, groups))))
                return True
            groups = named[:1]
            text = text[len(room_name(groups[0])):].strip()
        if not groups:
            return False
        group = groups[0]
        plan = self.rooms.plan(gid, state, group, lobby)
        for contact in plan.contacts:
            if contact != msg.sender:
                turn.say(contact, t("relay_prefix", room=room_name(group), seat=seat) + text)
        return True

    # player commands ---------------------------------------------------------------------------
    def _player_verb(self, msg: Incoming, p: Parsed, gid: str, turn: _Turn,
                     touched: set[str]) -> None:
        seat = self.service.seat_of(gid, msg.sender)
        judge = self._is_judge(gid, msg.sender)
        if seat is None:
            if p.verb in ("help", "status") and judge:
                self._judge_verb(msg, p, gid, turn, touched)
                return
            turn.say(msg.sender, t("players_only"))
            return
        loaded = self.service.state(gid)
        if p.verb == "help":
            dm = self._chat_option(gid, "votes.channel") == "dm"
            turn.say(msg.sender, views.player_help(loaded, seat, dm))
            return
        if p.verb == "status":
            with self.service.db.read() as s:
                row = s.get(Player, (gid, seat))
                name = row.forum_name if row else ""
            turn.say(msg.sender, views.player_status(loaded, seat, gid, name or "",
                                                     self.service.log(gid)))
            return
        if p.verb == "leave":
            turn.say(msg.sender, t("lobby_closed", code=gid))
            return
        if p.verb in VOTE_VERBS and self._chat_option(gid, "votes.channel") != "dm":
            turn.say(msg.sender, t("forum_votes"))
            return
        if p.verb == "save" and not p.seats:  # `救`: the target the witch was told tonight
            target = self._reported_target(gid, seat, loaded)
            if target is None:
                turn.say(msg.sender, t("save_whom"))
                return
            p = replace(p, seats=(target,))
        try:
            cmd = player_command(p, seat=seat, ruleset=loaded.ruleset)
        except ConvertError as exc:
            turn.say(msg.sender, str(exc.message if hasattr(exc, "message") else exc))
            return
        self._submit(msg, gid, cmd, turn, touched, seat=seat)

    def _reported_target(self, gid: str, seat: int, state: GameState) -> int | None:
        """The kill target the witch at `seat` was told tonight (通灵), if any."""
        night = f"N{state.night.day}" if state.night else None
        with self.service.db.read() as s:
            rows = list(s.scalars(select(LogEntry).where(
                LogEntry.game_id == gid, LogEntry.kind == "event", LogEntry.type == "Tongling",
                LogEntry.phase == night).order_by(LogEntry.seq.desc())))
        for row in rows:
            if seat in (row.audience or {}).get("seats", []):
                target = event_of(row.body).data.get("target")
                return target if isinstance(target, int) else None
        return None

    def _chat_option(self, gid: str, key: str) -> str | None:
        lobby = self._lobby(gid)
        return None if lobby is None else lobby.chat_options.get(key)

    def _wall(self, gid: str, at: datetime) -> datetime:
        return wall_clock(at, zone(self.service.time_zone(gid)))

    def _submit(self, msg: Incoming, gid: str, cmd: Command, turn: _Turn, touched: set[str],
                *, seat: int | None = None, at: datetime | None = None) -> Outcome:
        if at is None:
            out = self.service.receive(gid, cmd, now=self._wall(gid, msg.at),
                                       msg_id=msg.msg_id, sender=msg.sender, monotonic=True)
        else:  # a forum post entered with its own time: it counts at that time
            out = self.service.submit(gid, cmd, now=at, msg_id=msg.msg_id, sender=msg.sender)
        touched.add(gid)
        if out.duplicate or out.status == "rejected":
            return out  # replied already (the service queued the refusal)
        if out.status == "noop":
            turn.say(msg.sender, t("unchanged"))
            return out
        if not self._answered(gid, out, msg.sender, seat, in_room=msg.room is not None):
            # A killer's DM answered in the killers' room still gets its answer by DM.
            echo = [messages_for(e, seat, out.state.ruleset if out.state else "classic") or ""
                    for e in self._room_events(gid, out)] if seat is not None else []
            turn.say(msg.sender, "\n".join(x for x in echo if x) or self._receipt(gid, cmd, seat))
        return out

    def _room_events(self, gid: str, out: Outcome) -> list[Event]:
        """The outcome's events for a group that has a room (posted there, not DMed)."""
        with self.service.db.read() as s:
            rooms = set(s.scalars(select(Room.name).where(Room.game_id == gid)))
        return [e for e in out.events if not e.audience.public and e.audience.group in rooms]

    def _receipt(self, gid: str, cmd: Command, seat: int | None) -> str:
        """The reply to an accepted command whose events say nothing to the sender."""
        if seat is None:
            return t("receipts.judge", what=describe_command(cmd))
        target = getattr(cmd, "target", None)
        target_text = t("words.abstain") if target is None else t("words.seat", n=target)
        if cmd.kind == "vote" and cmd.mode in ("vote", "change"):  # type: ignore[union-attr]
            state = self.service.state(gid)
            day = state.day or 1
            close = state.schedule.close_at(day).strftime("%H:%M")
            return t(f"receipts.{cmd.mode}", target=target_text, close=close)  # type: ignore[union-attr]
        if cmd.kind in ("handover", "lastwords"):
            return t(f"receipts.{cmd.kind}", target=target_text)
        if isinstance(cmd, Act):
            return t("receipts.default", what=views.submission(cmd.skill, list(cmd.targets)))
        return t("receipts.default", what=describe_command(cmd))

    def _answered(self, gid: str, out: Outcome, sender: str, seat: int | None, *,
                  in_room: bool = False) -> bool:
        """Whether the outcome's own messages already answer the sender (a room post answers
        a command sent in that room, not one sent by DM)."""
        if seat is not None:
            by_room = [] if in_room else self._room_events(gid, out)
            return any(seat in e.audience.seats and not e.audience.public and e not in by_room
                       for e in out.events)
        with self.service.db.read() as s:
            judge = s.scalar(select(Game.judge_contact).where(Game.id == gid))
        return judge == sender

    # judge commands ----------------------------------------------------------------------------
    def _judge_verb(self, msg: Incoming, p: Parsed, gid: str, turn: _Turn,
                    touched: set[str]) -> None:
        state = self.service.state(gid)
        now = self._wall(gid, msg.at)
        if p.verb == "status":
            with self.service.db.read() as s:
                players = {r.seat: (r.contact_id, r.forum_name) for r in s.scalars(
                    select(Player).where(Player.game_id == gid))}
            turn.say(msg.sender, views.judge_status(state, gid, players, state.version))
            return
        if p.verb == "help":
            turn.say(msg.sender, t("help_judge"))
            return
        if p.verb == "tally":
            text = views.vote_tally(state, gid, now)
            if self._chat_option(gid, "votes.channel") == FORUM_AUTO and state.phase.startswith(
                    "D"):
                text += "\n" + self.forum.ledger_text(gid, state.day)
            turn.say(msg.sender, text)
            return
        if p.verb in ("thread", "check_votes", "rule"):
            self._forum_verb(msg, p, gid, state, turn, touched)
            return
        if p.verb == "publish":
            turn.say(msg.sender, views.publish(state, gid, self.service.log(gid)))
            return
        if p.verb == "export":
            turn.say(msg.sender, self._export(gid, msg.at))
            return
        if p.verb == "substitute":
            self._substitute(msg, p, gid, state, turn)
            return
        if p.verb in ("start", "kick", "new_game"):
            turn.say(msg.sender, t("lobby_closed", code=gid))
            return
        if p.verb == "end":
            self._end(msg, p, gid, turn, touched)
            return
        if p.verb in ("pause", "resume"):
            self._submit(msg, gid, engine_commands.JudgePause() if p.verb == "pause" else  # type: ignore[attr-defined]
                         engine_commands.JudgeResume(), turn,
                         touched)
            return
        at = None
        if p.time is not None and p.verb in ("record_vote", "change", "correct", "void"):
            at = now.replace(hour=p.time.hour, minute=p.time.minute, second=0, microsecond=0)
            if at > now:
                turn.say(msg.sender, t("time_in_future", time=p.time.strftime("%H:%M")))
                return
        try:
            cmd = judge_command(p, at=now)
        except ConvertError as exc:
            turn.say(msg.sender, str(getattr(exc, "message", exc)))
            return
        if cmd is None:
            turn.say(msg.sender, t("not_understood"))
            return
        self._submit(msg, gid, cmd, turn, touched, at=at)

    def _forum_verb(self, msg: Incoming, p: Parsed, gid: str, state: GameState, turn: _Turn,
                    touched: set[str]) -> None:
        """`投票贴`, `核票`, `判`: the vote thread of a votes.channel=forum-auto game."""
        if self._chat_option(gid, "votes.channel") != FORUM_AUTO:
            turn.say(msg.sender, t("forum.not_auto", code=gid))
            return
        if p.verb == "thread":
            tid = thread_id(p.text)
            if tid is None:
                turn.say(msg.sender, t("forum.bad_tid", text=p.text[:60]))
                return
            turn.say(msg.sender, self.forum.bind(gid, tid, msg.at))
            if state.phase.startswith("D"):
                self.forum.read(gid)
                touched.add(gid)
            return
        if not state.phase.startswith("D"):
            turn.say(msg.sender, t("forum.not_day"))
            return
        if p.verb == "check_votes":
            turn.say(msg.sender, self.forum.ledger_text(gid, state.day, only_open=True))
            return
        ref, decision = p.words[0], p.words[1]
        turn.say(msg.sender, self.forum.decide(gid, ref, decision, msg.at))
        touched.add(gid)

    def _end(self, msg: Incoming, p: Parsed, gid: str, turn: _Turn, touched: set[str]) -> None:
        now = msg.at.astimezone(UTC).replace(tzinfo=None)
        confirm = bool(p.words)  # `结束 确认` (the parser takes no other word)
        with self.service.db.write() as s:
            row = s.get(Lobby, gid)
            if row is None:
                turn.say(msg.sender, t("unknown_code", code=gid))
                return
            if not confirm:
                row.end_requested_at = now
                turn.say(msg.sender, t("end_confirm", code=gid))
                return
            asked = row.end_requested_at
            row.end_requested_at = None
        if asked is None or now - asked > END_CONFIRM:
            turn.say(msg.sender, t("end_no_request"))
            return
        self._submit(msg, gid, engine_commands.JudgeEnd(), turn, touched)

    def _export(self, gid: str, at: datetime) -> str:
        from bot.store.audit import export_game

        data = export_game(self.service, gid)
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        self.export_dir.mkdir(parents=True, exist_ok=True)
        stamp = at.astimezone(UTC).strftime("%Y%m%dT%H%M%S")
        path = self.export_dir / f"{gid}-{stamp}.json"
        path.write_text(text, encoding="utf-8")
        return t("export_done", code=gid, path=str(path), entries=len(data["log"]),
                 digest=hashlib.sha256(text.encode()).hexdigest()[:16])

    # substitution ------------------------------------------------------------------------------
    def _substitute(self, msg: Incoming, p: Parsed, gid: str, state: GameState,
                    turn: _Turn) -> None:
        if len(p.seats) != 1 or not 1 <= p.seats[0] <= len(state.seats):
            turn.say(msg.sender, t("not_understood"))
            return
        seat = p.seats[0]
        token = secrets.token_urlsafe(9)
        with self.service.db.write() as s:
            s.add(SeatToken(token_hash=hashlib.sha256(token.encode()).hexdigest(), game_id=gid,
                            seat=seat, created_at=msg.at.astimezone(UTC).replace(tzinfo=None)))
        turn.say(msg.sender, t("sub_token", code=gid, seat=seat, token=token))

    def _take_seat(self, msg: Incoming, p: Parsed, turn: _Turn, touched: set[str]) -> None:
        token = p.text.strip()
        digest = hashlib.sha256(token.encode()).hexdigest()
        now = msg.at.astimezone(UTC).replace(tzinfo=None)
        with self.service.db.write() as s:
            row = s.get(SeatToken, digest)
            if row is None or row.used_by is not None:
                turn.say(msg.sender, t("sub_bad_token"))
                return
            game = s.get(Game, row.game_id)
            if game is None or game.status != "active":
                turn.say(msg.sender, t("sub_bad_token"))
                return
            player = s.get(Player, (row.game_id, row.seat))
            assert player is not None
            old = player.contact_id
            row.used_by, row.used_at = msg.sender, now
            player.contact_id = msg.sender
            gid, seat, name = row.game_id, row.seat, player.forum_name
            history = list(s.scalars(select(OutboxRow.text).where(
                OutboxRow.game_id == gid, OutboxRow.target == f"seat:{seat}")
                .order_by(OutboxRow.id)))
        log.info("%s: seat %s handed from %s to %s", gid, seat, old, msg.sender)
        touched.add(gid)
        body = "\n".join(f"· {h}" for h in history) or t("sub_history_empty")
        turn.say(msg.sender, t("sub_done", code=gid, seat=seat, name=name or "-") + "\n" + body)
        if old and old != msg.sender:
            turn.say(old, t("sub_old", code=gid, seat=seat))
        lobby = self._lobby(gid)
        if lobby is not None:
            turn.say(lobby.judge, t("sub_done_judge", code=gid, seat=seat, contact=msg.sender))


def _judge_form(p: Parsed) -> bool:
    """A judge's command (`改票 S T` and `更正 S T` name the voter: the judge's forms)."""
    return p.verb in JUDGE_VERBS or (len(p.seats) == 2 and p.verb in ("change", "correct"))


__all__ = ["ChatBot", "Incoming", "seats_text", "UnknownGame"]
