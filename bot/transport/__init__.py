"""The one transport interface (issue 8). Everything outside `bot/transport/` talks to a
`Transport`; only the modules in here know whether that is the terminal, memory or WeChat.

A transport receives messages (handed to the bot as `Incoming`) and does five things: send a DM,
post in a room, create a room with members, add or remove a member, list a room's members. What
it cannot do it says up front (`can_create_rooms`, `can_manage_members`) or by raising
`Unsupported` (never supported) or `Refused` (not now: rate-limited, blocked, offline); the bot
then degrades (the judge makes the room by hand and binds it, or the bot relays).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime

from bot.outbox import OutgoingMessage, SendInterrupted


@dataclass(frozen=True)
class Incoming:
    """One message to the bot. `room`: the room's id, or None for a DM. `at`: when the
    transport received it (time-zone aware)."""

    msg_id: str
    sender: str
    text: str
    at: datetime
    room: str | None = None


@dataclass(frozen=True)
class Capabilities:
    """What the account behind a transport can do, as its gateway reported it at login
    (`reported` False: nothing was reported, everything is assumed and learned on the first
    failure). `puppet`: the puppet's package name, when known."""

    send_dm: bool = True
    create_rooms: bool = True
    add_members: bool = True
    remove_members: bool = True
    list_members: bool = True
    puppet: str | None = None
    reported: bool = False


class TransportError(Exception):
    pass


class Unsupported(TransportError):
    """This transport can never do that (a personal account without room creation)."""


class Refused(TransportError):
    """The platform refused it this time (rate limit, blocked, not a friend)."""


class Interrupted(TransportError, SendInterrupted):
    """The bot is stopping: nothing was sent (bot/outbox.py's `SendInterrupted`)."""


class Transport(ABC):
    """What the bot needs of a chat platform. Room ids are the transport's; `name` is what
    players see. `instant`: a send is local and cannot half-fail (bot/outbox.py).

    A message is kept by the channel until the bot has committed it: the handler an
    `Incoming` is handed to returns only once the message is committed (applied and marked
    handled with its answer), and until it has returned the transport keeps the message, or
    can have it again, across a crash of the bot (WeChat: the gateway keeps it until the
    transport acknowledges it, bot/transport/wechaty.py; the console's input is the
    terminal's, typed again after a kill). The bot applies a message id once,
    so a message handed over again is harmless; one whose command was applied before a
    crash is answered as it was."""

    can_create_rooms: bool = True
    can_manage_members: bool = True
    instant: bool = False

    @abstractmethod
    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        """`key`: the outbox row's dedupe key; a transport that can should drop a key it
        has delivered (a resend after a lost acknowledgement, or by a bot restarted after a
        crash between the send and its mark)."""

    @abstractmethod
    def post(self, room: str, text: str, *, key: str | None = None) -> None: ...

    def create_room(self, name: str, members: list[str]) -> str:
        """Make a room called `name` with exactly `members`; return its id."""
        raise Unsupported("this transport cannot create rooms")

    def add_member(self, room: str, contact: str) -> None:
        raise Unsupported("this transport cannot add room members")

    def remove_member(self, room: str, contact: str) -> None:
        raise Unsupported("this transport cannot remove room members")

    def members(self, room: str) -> list[str]:
        raise Unsupported("this transport cannot list room members")


class TransportSender:
    """The outbox's `Sender` over a transport: DMs (players, judges, replies) and room posts."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.instant = transport.instant

    def send(self, message: OutgoingMessage) -> None:
        if message.channel in ("group", "public"):
            self.transport.post(message.address, message.text, key=message.dedupe_key)
        else:
            self.transport.send_dm(message.address, message.text, key=message.dedupe_key)
