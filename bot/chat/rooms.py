"""The game's rooms (CHAT.md "Rooms"): made with exact members once the camps are formed, or
made by a judge and bound, or replaced by relaying DMs; kept in step with who is entitled.

Who is entitled to a group's room: the living members of the engine's group (RULES.md §2.1,
C-SETUP-7) and, with `groups.judges_in_rooms`, the game's judge. A member who goes out is
taken out of the room (and the room told) only with a commit that tells the table something in
public, so that the room does not learn of a night's death before the day post does. Until
then the outbox posts in the room only what every member may read, and DMs the rest
(`Service._outbox`), so a room never carries what one of its members may not know.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial

from bot.service import Service
from bot.store.chat import ChatStore
from bot.store.models import Lobby
from bot.texts import nouns, room_name, seats_text, t
from bot.transport import ByHand, Transport, TransportError
from engine.events import Event
from engine.model import GameState

log = logging.getLogger(__name__)
PUBLIC = "public"  # the public room's name among the game's rooms (bot/router.py)


@dataclass
class RoomPlan:
    group: str
    seats: list[int]  # the seats entitled now
    contacts: list[str]  # their contacts, then the judge's


def entitled(state: GameState, group: str, keep: Sequence[int] = ()) -> list[int]:
    """The seats that belong in `group`'s room: its living members, and `keep` (members out
    whose going out is not public yet)."""
    seats = state.groups.get(group, [])
    return [n for n in seats if state.seat(n).alive or n in keep]


def _formed(state: GameState, group: str, events: Sequence[Event]) -> bool:
    """The camps are formed once the group is announced (after Cupid's link) or set-up is over."""
    return state.phase != "SETUP" or any(
        e.type == "GroupFormed" and e.data.get("group") == group for e in events)


class Rooms:
    def __init__(self, service: Service, chats: ChatStore, transport: Transport,
                 dm: Callable[[str, str], None],
                 post: Callable[[str, str, str, str], None]) -> None:
        self.service = service
        self.chats = chats
        self.transport = transport
        self.dm = dm  # the chat layer's direct message (to a judge), through the outbox
        self.notice = post  # (game, group, room, text): a room notice, through the outbox

    def nouns(self) -> dict[str, str]:
        """The platform's words for its things (微信群 or QQ群), from what it reported."""
        return nouns(self.transport.capabilities.nouns)

    def _contacts(self, gid: str) -> dict[int, str]:
        return self.chats.contacts(gid)

    def members(self, gid: str, group: str) -> list[str]:
        return self.chats.room_members(gid, group)

    def room_id(self, gid: str, group: str) -> str | None:
        return self.chats.room_id(gid, group)

    def plan(self, gid: str, state: GameState, group: str, lobby: Lobby,
             keep: Sequence[int] = (), contacts: dict[int, str] | None = None) -> RoomPlan:
        """`contacts`: the game's, when already read (else they are)."""
        if contacts is None:
            contacts = self._contacts(gid)
        seats = entitled(state, group, keep)
        people = [contacts[n] for n in seats if n in contacts]
        if lobby.chat_options.get("groups.judges_in_rooms", "true") == "true":
            people.append(lobby.judge)
        return RoomPlan(group, seats, list(dict.fromkeys(people)))

    def sync(self, gid: str, state: GameState, events: Sequence[Event], lobby: Lobby) -> None:
        """After a commit: make the rooms that are due, bring members in line."""
        if state.winner or getattr(state, "ended", False):
            return
        mode = lobby.chat_options.get("groups.mode", "auto")
        public_room = lobby.chat_options.get("public.channel") == "room" and mode != "relay"
        groups = [] if mode == "relay" else [g for g in state.groups if state.groups.get(g)]
        if not public_room and not groups:
            return
        # The store read once for the whole sync (not once per room): each room's record is
        # written only by its own room's step below, and the contacts by none of them.
        rooms = self.chats.rooms(gid)
        contacts = cache(partial(self._contacts, gid))
        if public_room:
            self._public(gid, state, lobby, mode, rooms.get(PUBLIC), contacts())
        public = any(e.audience.public for e in events)
        for group in groups:
            bound = rooms.get(group)
            if bound is None:
                if _formed(state, group, events):
                    self._make(gid, state, group, lobby, mode, contacts())
                continue
            room, current = bound
            self._align(gid, state, group, lobby, room, public, current, contacts())

    def _make(self, gid: str, state: GameState, group: str, lobby: Lobby, mode: str,
              contacts: dict[int, str]) -> None:
        plan = self.plan(gid, state, group, lobby, contacts=contacts)
        if not plan.seats:
            return
        name = f"{gid}{room_name(group)}"
        if group in self._asked(lobby.code):
            return  # the judge makes this one by hand: no second room, no more attempts
        if mode == "auto" and self.transport.can_create_rooms:
            try:
                room = self.transport.create_room(name, plan.contacts)
            except TransportError as exc:
                log.warning("%s: could not make room %s: %s", gid, name, exc)
            else:
                self._bind(gid, group, room, plan.contacts)
                self._audit(gid, group, room, plan.contacts, lobby)
                self.notice(gid, group, room, t("room_members", code=gid,
                                                room=room_name(group),
                                                members=seats_text(plan.seats)))
                return
        judges = t("room_judges") if lobby.chat_options.get(
            "groups.judges_in_rooms", "true") == "true" else ""
        self._ask_by_hand(gid, group, lobby, plan.seats, judges=judges)

    # the public room (public.channel=room) ---------------------------------------------------
    def public_plan(self, gid: str, state: GameState, lobby: Lobby,
                    contacts: dict[int, str] | None = None) -> RoomPlan:
        """Every seat's contact, in or out (the forum is public anyway), and the judge."""
        if contacts is None:
            contacts = self._contacts(gid)
        seats = [st.seat for st in state.seats]
        people = [contacts[n] for n in seats if n in contacts] + [lobby.judge]
        return RoomPlan(PUBLIC, seats, list(dict.fromkeys(people)))

    def _public(self, gid: str, state: GameState, lobby: Lobby, mode: str,
                bound: tuple[str, list[str]] | None, contacts: dict[int, str]) -> None:
        """Make the public room once; afterwards only add who is missing (a substitute): a
        seat that goes out stays, and nobody the judge removed by hand is put back unless
        their seat changed hands. `bound`: the room's id and members, if it is bound."""
        plan = self.public_plan(gid, state, lobby, contacts)
        if bound is None:
            if PUBLIC in self._asked(lobby.code):
                return
            if mode == "auto" and self.transport.can_create_rooms:
                name = f"{gid}{room_name(PUBLIC)}"
                try:
                    room = self.transport.create_room(name, plan.contacts)
                except TransportError as exc:
                    log.warning("%s: could not make room %s: %s", gid, name, exc)
                else:
                    self._bind(gid, PUBLIC, room, plan.contacts)
                    self.notice(gid, PUBLIC, room, t("room_public", code=gid))
                    return
            self._ask_by_hand(gid, PUBLIC, lobby, plan.seats, judges=t("room_judges"))
            return
        room, known = bound[0], set(bound[1])
        new = [c for c in plan.contacts if c not in known]
        for c in new:
            self._try(partial(self.transport.add_member, room, c))
        if new:
            self.chats.change_room_members(gid, PUBLIC, (), new)

    def _ask_by_hand(self, gid: str, group: str, lobby: Lobby, seats: list[int], *,
                     judges: str) -> None:
        """The judge is asked, once, to make the room by hand and bind it."""
        if not self.chats.ask_once(lobby.code, group):
            return  # the judge was told once
        self.dm(lobby.judge, t("room_make_by_hand", code=gid, name=f"{gid}{room_name(group)}",
                               members=seats_text(seats), judges=judges,
                               room=room_name(group), **self.nouns()))

    def _asked(self, code: str) -> list[str]:
        """The groups whose room the judge was asked to make by hand."""
        row = self.chats.lobby(code)
        return list(row.chat_options.get("rooms_asked", [])) if row else []

    def _bind(self, gid: str, group: str, room: str, contacts: list[str]) -> None:
        self.service.set_room(gid, group, room)
        self.chats.set_room_members(gid, group, contacts)

    def _align(self, gid: str, state: GameState, group: str, lobby: Lobby, room: str,
               public: bool, current: list[str], contacts: dict[int, str]) -> None:
        """`current`: the members the bot knows of the room."""
        seat_of = {c: n for n, c in contacts.items()}
        # Not yet public: members out stay until a public post tells the table.
        keep = [] if public else [seat_of[c] for c in current if c in seat_of]
        plan = self.plan(gid, state, group, lobby, keep, contacts)
        gone = [c for c in current if c not in plan.contacts]
        new = [c for c in plan.contacts if c not in current]
        if not gone and not new:
            return
        # Who leaves is out of the record before the room lets them go, who comes is in after
        # it let them in: a post sent meanwhile is on no page that did not get it (bot/web).
        if gone:
            self.chats.change_room_members(gid, group, gone, ())
        by_hand = [c for c in gone if isinstance(
            self._try(partial(self.transport.remove_member, room, c)), ByHand)]
        for c in new:
            self._try(partial(self.transport.add_member, room, c))
        if new:
            self.chats.change_room_members(gid, group, (), new)
        self._audit(gid, group, room, plan.contacts, lobby, asked=by_hand)
        if by_hand:  # the bot may not remove them (not a group admin): the judge does
            seat_of_c = {c: n for n, c in contacts.items()}
            self.dm(lobby.judge, t("room_kick_by_hand", code=gid, room=room_name(group),
                                   who="、".join(t("words.seat", n=seat_of_c[c])
                                                if c in seat_of_c else c for c in by_hand),
                                   **self.nouns()))
        outs = sorted(seat_of[c] for c in gone if c in seat_of and not state.seat(
            seat_of[c]).alive)
        for n in outs:
            self.notice(gid, group, room, t("room_out", seat=n))

    def _audit(self, gid: str, group: str, room: str, wanted: list[str], lobby: Lobby,
               asked: Sequence[str] = ()) -> None:
        """After every change, the room's real members against what it should hold (a
        platform may drop an add or a removal without saying so): the judge is told of a
        difference, the bot's record follows the room. `asked`: members the judge was just
        asked to remove (not told twice)."""
        try:
            present = self.transport.members(room)
        except TransportError:
            return  # a transport that cannot list members: nothing to check
        judges = {lobby.judge} | self.service.judges
        missing = [c for c in wanted if c not in present and c not in judges]
        extra = [c for c in present if c not in wanted and c not in judges and c not in asked]
        if not missing and not extra:
            if asked:
                self.chats.set_room_members(gid, group, present)
            return
        log.warning("%s: room %s has %s missing, %s extra", gid, room, missing, extra)
        seat_of = {c: n for n, c in self._contacts(gid).items()}

        def who(c: str) -> str:
            return t("words.seat", n=seat_of[c]) if c in seat_of else c

        problems = [t("room_missing", who="、".join(map(who, missing)))] if missing else []
        if extra:
            problems.append(t("room_extra", who="、".join(map(who, extra))))
        self.dm(lobby.judge, t("room_audit", code=gid, room=room_name(group),
                               problems="；".join(problems)))
        self.chats.set_room_members(gid, group, present)

    def bind(self, gid: str, state: GameState, group: str, lobby: Lobby, room: str
             ) -> str:
        """`绑定 CODE 狼群` in a judge-made room: check its members, bind it if exact. The
        public room (`公告群`) needs every seat's contact; others may be in it too."""
        public = group == PUBLIC
        if public and (lobby.chat_options.get("public.channel") != "room"
                       or lobby.chat_options.get("groups.mode") == "relay"):
            return t("room_no_group", code=gid, room=room_name(group))
        if not public and not state.groups.get(group):
            return t("room_no_group", code=gid, room=room_name(group))
        plan = self.public_plan(gid, state, lobby) if public else self.plan(
            gid, state, group, lobby)
        try:
            present = self.transport.members(room)
        except TransportError:
            return t("room_unknown_members")
        contacts = self._contacts(gid)
        seat_of = {c: n for n, c in contacts.items()}
        judges = {lobby.judge} | self.service.judges

        def who(c: str) -> str:
            return t("words.seat", n=seat_of[c]) if c in seat_of else c

        missing = [c for c in plan.contacts if c not in present and c not in judges]
        extra = [] if public else [c for c in present if c not in plan.contacts
                                   and c not in judges]
        problems = []
        if missing:
            problems.append(t("room_missing", who="、".join(map(who, missing))))
        if extra:
            problems.append(t("room_extra", who="、".join(map(who, extra))))
        if problems:
            return t("room_bad_members", room=room_name(group), problems="；".join(problems),
                     code=gid)
        self._bind(gid, group, room, [c for c in present])
        self.notice(gid, group, room, t("room_public", code=gid) if public else t(
            "room_members", code=gid, room=room_name(group), members=seats_text(plan.seats)))
        return t("room_bound", code=gid, room=room_name(group))

    @staticmethod
    def _try(action: Callable[[], None]) -> TransportError | None:
        """The action, or what the transport raised (the room goes on; it is logged)."""
        try:
            action()
        except TransportError as exc:
            log.warning("room action failed: %s", exc)
            return exc
        return None
