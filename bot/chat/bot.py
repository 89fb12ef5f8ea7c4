"""The conversation layer (issue 8): one incoming message in, every reply and post out.

    Incoming ─> who sent it, where (one look-up: a `Sender`) ─> parse (bot.commands) ─>
        which game, which stage, as whom ─> may they? ─> its handler (bot/chat/verbs.py)
    the handler ─> Service ─> outbox; rooms follow every commit; replies go with the turn

Transport-independent: it talks to a `Transport` only. Every DM command gets one reply at once
(the engine's own message to the seat or the judge when there is one, else a short receipt);
chatter in a room gets none. A refusal names no secret: the engine's rejections are worded the
same whoever asks, and the permission check runs before the engine sees the command. A message
id seen before is not handled again, lobby commands included.

A message is applied at most once, whatever arrives twice and wherever a kill lands: what it
changes (a lobby, a game's commit, a season …), its handled mark and its answer are one
transaction (`Database.unit`); a kill before that commits leaves nothing of it, and the
channel, which keeps a message until the handler has returned, hands it over again.

Who sent a message and where (their seats, lobbies and judged games, the room's game, whether
the id was handled) is asked of the store once per message (`ChatStore.sender`, one statement)
and handed down as `Request.who`; a DM, a room's message and a page's action (`handle_page`)
alike, whatever the channel.

Who may send a command is declared once, in vocabulary.yaml (`who` of the form that matched),
and checked once, here, with bot/access.py's answer to who is a judge of the game.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from bot import access
from bot.chat import reports
from bot.chat.desk_judge import JudgeDesk
from bot.chat.desk_lobby import LobbyDesk
from bot.chat.desk_player import PlayerDesk
from bot.chat.desk_records import RecordsDesk
from bot.chat.lobby import new_code
from bot.chat.review import preview
from bot.chat.rooms import Rooms
from bot.chat.submit import Submitter
from bot.chat.verbs import (
    GAME,
    JUDGE,
    LOBBY,
    PLAYER,
    DeskContext,
    Registry,
    Request,
    Role,
    Stage,
)
from bot.commands.parse import Parsed, ParseError, parse
from bot.commands.vocabulary import VERBS
from bot.forum.reader import ThreadSource
from bot.forum.thread import ForumVotes
from bot.gametime import DEFAULT_TIME_ZONE
from bot.ids import GAME_ID, MAX_ID, new_seed
from bot.outbox import Courier, current_turn, deliver
from bot.render import check_templates
from bot.service import MessageIdReused, Service, UnknownGame
from bot.store.chat import ChatStore, Sender
from bot.texts import room_name, seats_text, t
from bot.transport import Incoming, Transport, TransportCourier
from bot.web.links import PageLinks
from engine.events import Event
from engine.model import GameState

log = logging.getLogger(__name__)
MAX_TEXT = 4096
KILLERS_ROOM = "wolves"  # the engine group whose room takes the killers' commands
# Where a command may be sent (vocabulary.yaml `where`): the killers' room, or the room bound.
KILLERS_ROOM_VERBS = frozenset(k for k, v in VERBS.items() if "killers_room" in v.where)
ROOM_VERBS = frozenset(k for k, v in VERBS.items() if "room" in v.where) | KILLERS_ROOM_VERBS
# Asked in a game's room, answered by DM as if asked there (nothing is said in the room).
ANSWERED_FROM_ROOMS = frozenset({"status", "help"})


class _HandledMeanwhile(Exception):
    """The message's handled mark was written by another handling first: this one is undone."""


class ChatBot:
    """`judges`: the contacts with judge rights (CHAT.md: WOLFJUDGE_JUDGES, `--judge`)."""

    def __init__(self, service: Service, transport: Transport, *,
                 judges: Iterable[str] | None = None, time_zone: str = DEFAULT_TIME_ZONE,
                 export_dir: Path | str = "exports",
                 seeds: Callable[[], str] = new_seed,
                 codes: Callable[[], str] = new_code,
                 forum_source: ThreadSource | None = None,
                 clock: Callable[[], datetime] | None = None,
                 web: PageLinks | None = None) -> None:
        """`forum_source`: where `votes.channel=forum-auto` games read their vote thread
        (aiotieba by default); `clock`: now (the real clock by default); `web`: the page
        links `网页` hands out (None: the pages are off)."""
        check_templates()  # a template naming a field its event lacks stops the start here
        self.service = service
        # Where `开始` gets a game's secret seed: the OS CSPRNG; a fixed one only in tests.
        self.seeds = seeds
        self.codes = codes  # game codes (not secret): random, fixed in tests
        if judges is not None:
            service.judges = frozenset(judges)
        self.transport = transport
        self.courier: Courier = TransportCourier(transport)  # (the pages wrap it: bot/web/live.py)
        self.chats = ChatStore(service.db)
        self.rooms = Rooms(service, self.chats, transport, self.tell, self.post)
        self.forum = (ForumVotes(service, forum_source) if clock is None
                      else ForumVotes(service, forum_source, clock=clock))
        self.on_deliver: Callable[[], None] | None = None
        ctx = DeskContext(service=service, chats=self.chats, rooms=self.rooms,
                          forum=self.forum, seeds=lambda: self.seeds(),
                          codes=lambda: self.codes(), time_zone=time_zone,
                          export_dir=Path(export_dir),
                          after_commit=lambda gid: self.after_commit(gid), web=web)
        submitter = Submitter(ctx)
        self.lobby = LobbyDesk(ctx)
        self.players = PlayerDesk(ctx, submitter)
        self.judging = JudgeDesk(ctx, submitter)
        self.records = RecordsDesk(ctx)
        self.verbs = Registry().collect([self.lobby, self.players, self.judging, self.records])
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
        deliverer is woken instead; an instant transport (the pages) is delivered here, in
        the thread that wrote the rows, so a page answered next shows what its action
        caused (several deliverers of an instant transport never send a row twice)."""
        if self.on_deliver is not None and not getattr(self.courier, "instant", False):
            self.on_deliver()
            return
        deliver(self.service.db, self.courier)

    def tell(self, to: str, text: str, game_id: str | None = None) -> None:
        """A DM of the chat layer's own (to a judge, about rooms, a reconnect): through the
        outbox like every send, so it is paced, retried and sent once."""
        self.chats.dm(f"chat/{uuid.uuid4().hex}", to, text, game_id)
        self.service.db.after_unit(self.deliver)

    def tell_once(self, key: str, to: str, text: str) -> None:
        """A DM that goes once for `key`, ever (what the account can do, told at login)."""
        if self.chats.dm_once(key, to, text):
            self.service.db.after_unit(self.deliver)

    def post(self, game_id: str, group: str, room: str, text: str) -> None:
        """A room notice of the chat layer's own (members, someone out): through the outbox."""
        self.chats.post(f"chat/{uuid.uuid4().hex}", game_id, group, room, text)
        self.service.db.after_unit(self.deliver)

    # the entry point ---------------------------------------------------------------------------
    def handle(self, msg: Incoming) -> None:
        """Handle one message completely: apply it, sync rooms, send what it caused."""
        found = self._sender(msg)
        if found is None:
            return
        msg_key, who = found
        # One turn: everything this message causes, replies and posts alike, leaves as one
        # message per recipient when it is handled (bot/outbox.py), the answer first.
        with self.service.turn(f"msg/{msg_key}"):
            self._apply(msg, msg_key, who)

    def handle_page(self, msg: Incoming, answers: Iterable[str]) -> list[str] | None:
        """A message typed on a page (bot/web): handled as the same DM would be, but its
        answer (what the turn holds for `answers`, the sender's targets: `contact:X`,
        `seat:N`, `judge`) is the page's to show, and goes nowhere else: answered once. The
        rest it caused goes out as usual. None: the message id was handled before."""
        found = self._sender(msg)
        if found is None:
            return None
        msg_key, who = found
        with self.service.turn(f"msg/{msg_key}"):
            return self._apply(msg, msg_key, who, set(answers))

    def _sender(self, msg: Incoming) -> tuple[str, Sender] | None:
        """The message's key and who sent it where (one look-up, whatever the channel), or
        None when it is not to be handled (no id, a bad sender, or handled before)."""
        if not msg.msg_id or len(msg.sender) > MAX_ID or not msg.sender:
            log.warning("message without id or with a bad sender dropped")
            return None
        # A message id is unique on its account only: with several, the key names the account.
        raw = msg.msg_id if self.service.host is None else f"{self.service.host}/{msg.msg_id}"
        msg_key = raw if len(raw) <= MAX_ID else "sha256:" + hashlib.sha256(
            raw.encode()).hexdigest()
        who = self.chats.sender(msg.sender, msg.room, msg_key)
        return None if who.handled else (msg_key, who)  # seen before: handled once

    def _apply(self, msg: Incoming, msg_key: str, who: Sender,
               answers: set[str] | None = None) -> list[str] | None:
        """The message applied in one transaction (`Database.unit`) with all it changes, its
        handled mark and its answer: a kill anywhere before that commits leaves nothing of
        it (the channel hands it over again: applied then, once), one after leaves it marked
        with its answer queued. What follows a commit (rooms, the scheduler, the records)
        runs once the unit has committed. `answers`: a page's (handle_page)."""
        try:
            with self.service.db.unit():
                self._handle(msg, msg_key, who)
                if answers is None:
                    return None
                return self.chats.take_answers(current_turn() or "", msg.sender, answers)
        except _HandledMeanwhile:
            log.warning("message %s was handled meanwhile: it is not applied again", msg_key)
            return None

    def _handle(self, msg: Incoming, msg_key: str, who: Sender) -> None:
        """The message applied and marked handled with its replies, inside its unit."""
        r = Request(msg, p=Parsed(verb=""), who=who)
        try:
            with self.service.db.unit():  # a savepoint: a failure undoes what it began
                if msg.room is not None and not self.transport.shows_room_talk:
                    self._room_talk(msg, msg_key, who)
                self._route(msg, r)
        except MessageIdReused:
            log.warning("message id %s reused by %s", msg.msg_id, msg.sender)
            r.replies.clear()
        except Exception:
            log.exception("message %s from %s failed", msg.msg_id, msg.sender)
            r.replies.clear()  # nothing of it stands: no answer says it does
            if msg.room is None:
                r.say(t("busy"))
        # the message is marked handled together with its replies (outbox rows)
        if not self.chats.handled(msg_key, msg.sender,
                                  msg.at.astimezone(UTC).replace(tzinfo=None), r.replies):
            raise _HandledMeanwhile(msg_key)  # another handling committed it: undo this one

    def _after_commit(self, gid: str, state: GameState, events: tuple[Event, ...]) -> None:
        self.after_commit(gid, events, state=state)

    def after_commit(self, gid: str, events: Iterable[Event] = (), *,
                     state: GameState | None = None) -> None:
        """Rooms follow the state (the scheduler's ticks come here too), once it is committed
        (inside a message's unit: when that commits, so that no room is made for a change
        that a kill undoes). `state`: the one just committed (else it is read)."""
        if self.service.db.in_unit:
            self.service.db.after_unit(partial(self.after_commit, gid, tuple(events),
                                               state=state))
            return
        lobby = self.chats.lobby(gid)
        if lobby is None:
            return
        if state is None:
            try:
                state = self.service.state(gid)
            except UnknownGame:
                return
        recent = list(events) or self.chats.last_events(gid)
        self.rooms.sync(gid, state, recent, lobby)
        review = next((e for e in events if e.type == "DawnReview"), None)
        if review is not None:  # the night waits for the judge: the preview, once (P-REVIEW-1)
            self.service.tell_judge(gid, f"review/{review.data['day']}/{review.at.isoformat()}",
                                    preview(state, gid, review.at))
        if any(e.type == "DayOpened" for e in events) and lobby.chat_options.get(
                "public.channel") == "room" and self.chats.room_id(gid, "public"):
            # The public room gets the whole open post with the dawn (P-POST-3).
            details = reports.open_details(state, self.service.game_log(gid))
            self.chats.public_post(f"{gid}/open-post/D{state.day}", gid, "\n".join(details))

    # routing -----------------------------------------------------------------------------------
    def _route(self, msg: Incoming, r: Request) -> None:
        in_room = msg.room is not None
        if len(msg.text) > MAX_TEXT:
            if not in_room:
                r.say(t("too_long", limit=MAX_TEXT))
            return
        try:
            p = parse(msg.text)
        except ParseError as exc:
            if not in_room:
                r.say(exc.message)
            return
        if p is None:
            if not in_room:
                self._chatter(msg, r)
            return
        r.p = p
        if in_room and p.verb not in ANSWERED_FROM_ROOMS and (p.verb not in ROOM_VERBS or (
                p.verb in KILLERS_ROOM_VERBS and not self._killers_room(r.who))):
            self._in_room(msg, r)  # a room is for talk; commands go by DM
            return
        free = self.verbs.free(p.verb)
        if free is not None:
            free(r)  # a command that names its game (or needs none)
            return
        code = self._game_for(msg, r)
        if code is None:
            return
        lobby = self.chats.lobby(code)
        if lobby is not None and lobby.status == "cancelled":
            r.say(t("game_finished", code=code))
            return
        r.code, r.lobby = code, lobby
        r.judge = access.is_judge(r.sender, self.judges, lobby.judge if lobby else None)
        stage: Stage = LOBBY if lobby is not None and lobby.status == "open" else GAME
        if p.who == "judge" and not r.judge:  # who may send it: vocabulary.yaml, once
            log.warning("%s: judge command %s from %s refused", code, p.verb, msg.sender)
            r.say(t("judge_only"))
            return
        role = self._role(r, stage)
        if role is None:
            r.say(t("players_only"))
            return
        handler = self.verbs.find(p.verb, stage, role)
        if handler is not None:
            handler(r)
        elif stage == LOBBY:
            self.lobby.not_started(r)  # a command for a game under way
        else:
            r.say(t("players_only"))  # a player's command from a judge without a seat

    def _role(self, r: Request, stage: Stage) -> Role | None:
        """As whom the sender speaks: a judge's form, or a command a judge without a seat
        sends, as the judge; otherwise as a player (None: a game they have no seat in)."""
        if r.p.who == "judge" or (stage == LOBBY and r.judge):
            return JUDGE
        if stage == LOBBY:
            return PLAYER
        assert r.code is not None
        r.seat = r.who.seat(r.code)
        if r.seat is not None:
            return PLAYER
        return JUDGE if r.judge else None

    def _in_room(self, msg: Incoming, r: Request) -> None:
        """A command other than kill/lock/bind in a room: nothing is said in the room; the
        sender is told by DM where to send it (a command always gets an answer). A judge
        command from anyone but a judge is refused by DM and logged (CHAT.md: people). A room
        of no game of ours is not ours to answer in any way."""
        gid = r.who.room_game
        if r.p.who != "judge":
            if gid is not None:
                r.say(self._not_here())
            return
        if access.judges_game(r.who, self.judges, gid):
            r.say(self._not_here())
            return
        log.warning("%s: judge command %s from %s in room %s refused", gid, r.p.verb,
                    msg.sender, msg.room)
        r.say(t("judge_only"))

    def _not_here(self) -> str:
        """Where a command said in a room is to be sent: by DM, or on a page of one's own
        where the rooms are pages."""
        return t("not_here_page" if self.transport.contacts_by_link else "not_here")

    def _room_talk(self, msg: Incoming, msg_key: str, who: Sender) -> None:
        """A line said in a room of a platform that does not show it to the other members
        (the pages' rooms): the bot posts it there, as relay mode does, before it is handled
        (a command in it is then handled as in a chat room). Only a member's, and only what
        the room would carry."""
        gid, group, text = who.room_game, who.room_group, msg.text.strip()
        if gid is None or group is None or not text or len(text) > MAX_TEXT:
            return
        if msg.sender not in self.chats.room_members(gid, group):
            return
        seat = who.seat(gid)
        head = (t("relay_prefix", room=room_name(group), seat=seat) if seat is not None
                else t("room_talk_judge", room=room_name(group)))
        self.chats.post(f"talk/{msg_key}", gid, group, msg.room or "", head + text)

    def _chatter(self, msg: Incoming, r: Request) -> None:
        """A DM that is no command: relayed to the sender's room in relay mode, else help."""
        games = r.who.games()
        for gid in games:
            if self.players.relay(gid, msg, r):
                return
        if games or access.may_create(r.who, self.judges) or r.who.judged:
            r.say(t("not_understood"))
        else:
            r.say(t("intro"))

    # which game --------------------------------------------------------------------------------
    def _killers_room(self, who: Sender) -> bool:
        """The wolves' room, or the room of the group that holds tonight's kill (classic: the
        black lovers after 寡妇刀, whose room the engine asks for the kill)."""
        gid, name = who.room_game, who.room_group
        if gid is None or name is None:
            return False
        if name == KILLERS_ROOM:
            return True
        try:
            night = self.service.state(gid).night
        except UnknownGame:
            return False
        return night is not None and night.data.get("kill_group") == name

    def _game_for(self, msg: Incoming, r: Request) -> str | None:
        p = r.p
        if msg.room is not None:
            return r.who.room_game
        if p.game is not None:
            if not GAME_ID.fullmatch(p.game) or self.chats.lobby(p.game) is None:
                r.say(t("unknown_code", code=p.game[:16]))
                return None
            return p.game
        mine = sorted(set(r.who.games()) | set(r.who.active_judged()))
        if not mine:
            if p.who == "judge" and not access.may_create(r.who, self.judges):
                log.warning("judge command %s from %s (no game) refused", p.verb, msg.sender)
                r.say(t("judge_only"))
            elif p.verb == "help":
                r.say(self._stranger_help(r))
            else:
                r.say(t("judge_no_game") if access.may_create(r.who, self.judges)
                      else t("no_game"))
            return None
        if len(mine) > 1:
            r.say(t("choose_game", codes="、".join(mine), first=mine[0],
                    example=msg.text.strip()[:20]))
            return None
        return mine[0]

    def _stranger_help(self, r: Request) -> str:
        lines = [t("help_head", when=t("help_now")), t("help_stranger")]
        if access.may_create(r.who, self.judges):
            lines.append(t("help_judge"))
        return "\n".join(lines)


__all__ = ["ChatBot", "Incoming", "seats_text", "UnknownGame"]
