"""A transport in memory, for tests: records every DM, post and room change in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.transport import LocalTransport, Refused, Unsupported


@dataclass(frozen=True)
class Sent:
    kind: str  # dm | post | create | add | remove
    target: str  # contact or room id
    text: str = ""
    members: tuple[str, ...] = ()
    key: str | None = None  # the send's dedupe key (a DM, a post)


@dataclass
class MemoryTransport(LocalTransport):
    """`rooms_allowed=False`: a transport that cannot make rooms; `refuse`: contacts or room
    ids whose sends are refused (the platform said no); `max_text`: the longest text one send
    carries (None: any)."""

    rooms_allowed: bool = True
    refuse: set[str] = field(default_factory=set)
    sent: list[Sent] = field(default_factory=list)
    rooms: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # room id -> name
    max_text: int | None = None
    instant = True

    @property
    def can_create_rooms(self) -> bool:  # type: ignore[override]
        return self.rooms_allowed

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        if contact in self.refuse:
            raise Refused(f"DM to {contact} refused")
        self._fits(text)
        self.sent.append(Sent("dm", contact, text, key=key))

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        if room in self.refuse or room not in self.rooms:
            raise Refused(f"post in {room} refused")
        self._fits(text)
        self.sent.append(Sent("post", room, text, key=key))

    def _fits(self, text: str) -> None:
        if self.max_text is not None and len(text) > self.max_text:
            raise Refused(f"a text of {len(text)} characters (at most {self.max_text})")

    def create_room(self, name: str, members: list[str]) -> str:
        if not self.rooms_allowed:
            raise Unsupported("no room creation")
        room = name
        self.rooms[room] = list(members)
        self.names[room] = name
        self.sent.append(Sent("create", room, members=tuple(members)))
        return room

    def add_member(self, room: str, contact: str) -> None:
        if contact not in self.rooms[room]:
            self.rooms[room].append(contact)
            self.sent.append(Sent("add", room, members=(contact,)))

    def remove_member(self, room: str, contact: str) -> None:
        if contact in self.rooms[room]:
            self.rooms[room].remove(contact)
            self.sent.append(Sent("remove", room, members=(contact,)))

    def members(self, room: str) -> list[str]:
        return list(self.rooms.get(room, []))

    # test helpers ------------------------------------------------------------------------------
    def dms(self, contact: str) -> list[str]:
        return [s.text for s in self.sent if s.kind == "dm" and s.target == contact]

    def posts(self, room: str) -> list[str]:
        return [s.text for s in self.sent if s.kind == "post" and s.target == room]
