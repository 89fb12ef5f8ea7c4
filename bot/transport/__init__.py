"""The one transport interface (issues 8 and 33). Everything outside `bot/transport/` talks to
a `Transport`; only the modules in here know whether that is the terminal, memory or a chat
platform (a channel: bot/transport/channels.py says which there are and how to add one).

A transport receives messages (handed to its `handler` as `Incoming`) and does five things: send
a DM, post in a room, create a room with members, add or remove a member, list a room's members.
What it cannot do it says up front (`capabilities`, `can_create_rooms`, `can_manage_members`) or
by raising `Unsupported` (never supported) or `Refused` (not now: rate-limited, blocked,
offline); the bot then degrades (the judge makes the room by hand and binds it, or the bot
relays). The bot degrades on capabilities, never on which platform it is.

Its life cycle, as `wolfjudge run` (bot/chat/live.py) drives it: the runner sets `handler`,
`on_reconnect` and `on_capabilities`, calls `start()`, waits for `wait_ready()` (connected) and
`wait_settled()` (what the platform kept while the bot was away handled), and at a stop calls
`halt()` (no new send starts; safe from a signal handler) and then `stop()`. A transport with
no connection of its own (the console's, memory's) keeps the defaults: ready and settled at
once, nothing to start or stop (`LocalTransport`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
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
    failure). `puppet`: the puppet's package name, when known. `nouns`: the words that name
    the platform's things to people (texts.yaml `channels`: 微信群 or QQ群, 微信号 or QQ号):
    the chat layer words every text with them, whatever the platform. `announce_in_room`: the
    platform's risk control watches one text DMed to many, so a game's public announcements go
    to its public room by default (`public.channel=room`; by DM until one is bound).
    `account`: the bot's own id where people must type it (QQ: the number to befriend)."""

    send_dm: bool = True
    create_rooms: bool = True
    add_members: bool = True
    remove_members: bool = True
    list_members: bool = True
    puppet: str | None = None
    reported: bool = False
    nouns: str = "wechat"
    announce_in_room: bool = False
    account: str | None = None  # the account's own id, where people need it (a QQ number)


class TransportError(Exception):
    pass


class Unsupported(TransportError):
    """This transport can never do that (a personal account without room creation)."""


class Refused(TransportError):
    """The platform refused it this time (rate limit, blocked, not a friend)."""


class Unreachable(Refused):
    """The contact cannot get a DM from this account until they do something (on QQ: become
    the bot's friend); the message stays queued."""


class ByHand(Unsupported):
    """A person must do this (on QQ: remove a member from a group the bot is no admin of)."""


class Interrupted(TransportError, SendInterrupted):
    """The bot is stopping: nothing was sent (bot/outbox.py's `SendInterrupted`)."""


class Transport(ABC):
    """What the bot needs of a chat platform. Room ids are the transport's; `name` is what
    players see. `instant`: a send is local and cannot half-fail (bot/outbox.py).

    The callbacks the runner sets before `start`: `handler` gets each received message, one
    at a time and in arrival order (it does database work: call it off any event loop);
    `on_reconnect` is called after each connection but the first (messages sent meanwhile
    may be lost: the judges are told); `on_capabilities` with what the account can do, each
    time the platform reports it (the judges are told). A transport calls the last two on the
    thread it calls `handler` on, in order with the messages.

    Three more, for a platform that limits whom the bot reaches (QQ; bot/chat/reach.py
    answers them, a platform without such limits never calls them), on the same thread:
    `on_friend_request(contact, comment) -> bool` (approve someone asking to be the bot's
    contact?), `on_unreachable(contact)` (a DM cannot reach them until they act: the judge is
    told), `on_guarded(conversation, is_room)` (the transport holds sends to one conversation a
    while, before the platform's risk control would flag it: the judge is told).

    A message is kept by the channel until the bot has committed it: `handler` returns only
    once the message is committed (applied and marked handled with its answer), and until it
    has returned the transport keeps the message, or can have it again, across a crash of the
    bot (WeChat: the gateway keeps it until the transport acknowledges it,
    bot/transport/wechaty.py; QQ: the next process reads it again from QQ's history,
    bot/transport/onebot.py; a `LocalTransport`'s input is the terminal's or the test's). The
    bot applies a message id once, so a message handed over again is harmless; and a message
    is one transaction (bot/chat/bot.py), so one a crash interrupted left nothing, and is
    applied, once, when it comes again."""

    can_create_rooms: bool = True
    can_manage_members: bool = True
    instant: bool = False
    # The longest text one send may carry on the platform (None: no limit). A longer one goes
    # as several sends, cut at line breaks (`TransportCourier`, `split_text`).
    max_text: int | None = None
    # What the platform is like, beside what the account can do (the chat layer degrades on
    # these, never on a channel's name). `shows_room_talk`: a member's line in a room reaches
    # its other members by itself (a chat group); False: the bot posts each line said in a
    # room there itself, as relay mode does (the pages' rooms). `rooms_by_hand`: a judge can
    # make a room on the platform and bind it (`绑定`). `contacts_by_link`: people have no
    # account on the platform: a lobby's join link makes them a contact (the pages).
    shows_room_talk: bool = True
    rooms_by_hand: bool = True
    contacts_by_link: bool = False
    capabilities: Capabilities = Capabilities()  # until the platform reports them
    handler: Callable[[Incoming], None] | None = None
    on_reconnect: Callable[[], None] | None = None
    on_capabilities: Callable[[Capabilities], None] | None = None
    on_friend_request: Callable[[str, str], bool] | None = None
    on_unreachable: Callable[[str], None] | None = None
    on_guarded: Callable[[str, bool], None] | None = None

    # life cycle -------------------------------------------------------------------------------
    @abstractmethod
    def start(self) -> None:
        """Connect and receive in the background; return at once."""

    @abstractmethod
    def wait_ready(self, timeout: float | None = None) -> bool:
        """Connected (logged in), within `timeout` seconds; False if not yet."""

    @abstractmethod
    def wait_settled(self, limit: float = 30.0) -> bool:
        """Connected, and what the platform kept for the bot while it was away handled (the
        runner starts the deadlines after this, so a night action sent before a deadline
        that passed meanwhile counts); False after `limit` seconds."""

    @abstractmethod
    def halt(self) -> None:
        """No new send starts from now on (a waiting send ends with `Interrupted`); the one in
        flight finishes. The first step of a clean stop; safe from a signal handler."""

    @abstractmethod
    def stop(self) -> None:
        """Disconnect and stop receiving (after `halt`): the message being handled finishes."""

    # sending ----------------------------------------------------------------------------------

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


class LocalTransport(Transport):
    """A transport with no connection of its own (the terminal's, memory's): nothing to
    start or stop, ready and settled at once."""

    def start(self) -> None:
        return None

    def wait_ready(self, timeout: float | None = None) -> bool:
        return True

    def wait_settled(self, limit: float = 30.0) -> bool:
        return True

    def halt(self) -> None:
        return None

    def stop(self) -> None:
        return None


def split_text(text: str, limit: int | None) -> list[str]:
    """`text` as parts of at most `limit` characters, in order, cut at line breaks (a line
    longer than `limit` alone is cut where it must be); blank lines at a cut are dropped. One
    part when it fits (or `limit` is None)."""
    if limit is None or len(text) <= limit:
        return [text]
    parts: list[str] = []
    lines: list[str] = []
    size = -1  # len("\n".join(lines))
    for line in text.split("\n"):
        while len(line) > limit:
            if lines:
                parts.append("\n".join(lines))
                lines, size = [], -1
            parts.append(line[:limit])
            line = line[limit:]
        if lines and size + 1 + len(line) > limit:
            parts.append("\n".join(lines))
            lines, size = [], -1
        lines.append(line)
        size += 1 + len(line)
    if lines:
        parts.append("\n".join(lines))
    return [kept for kept in (part.strip("\n") for part in parts) if kept.strip()]


class TransportCourier:
    """The outbox's `Courier` over a transport: DMs (players, judges, replies) and room posts.
    A text longer than the transport's `max_text` goes as several sends, in order, cut at line
    breaks; each part under a key of its own (`KEY#2`): a transport that drops a key it has
    delivered never takes part 2 for a repeat of part 1, and sends a retried row's missing
    parts only."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.instant = transport.instant

    def send(self, message: OutgoingMessage) -> None:
        parts = split_text(message.text, self.transport.max_text)
        for n, part in enumerate(parts, 1):
            key = message.dedupe_key if len(parts) == 1 else f"{message.dedupe_key}#{n}"
            if message.channel in ("group", "public"):
                self.transport.post(message.address, part, key=key)
            else:
                self.transport.send_dm(message.address, part, key=key)
