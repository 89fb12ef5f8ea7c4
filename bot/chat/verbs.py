"""One handler per verb: the chat layer's registry (issue 22).

The words of a command, its aliases, its grammar and who may send it are data
(bot/commands/vocabulary.yaml; `who` of the form that matched, bot/access.py for who is a
judge). Here each verb gets its handler, with where it applies:

    @handles("join", stage=FREE)                          a game named in the command, or none
    @handles("leave", stage=LOBBY, role=PLAYER)          a game not started yet
    @handles(*SKILL_VERBS, stage=GAME, role=PLAYER)      a game under way

The desks (lobby, player, judge) are objects given a narrow `DeskContext` (the service, the
chat store, the rooms, the forum, the bot's settings); each registers its handlers with this
decorator, and `Registry.collect` finds them. A test checks that every verb of the vocabulary
has a handler and every handler a verb.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from bot.commands.parse import Parsed
from bot.commands.vocabulary import VERBS
from bot.outbox import NORMAL, REPLY
from bot.store.chat import ChatStore, Sender
from bot.store.models import Lobby
from bot.transport import Incoming
from bot.web.links import PageLinks

if TYPE_CHECKING:
    from datetime import datetime

    from bot.chat.rooms import Rooms
    from bot.forum.thread import ForumVotes
    from bot.service import Service

Stage = Literal["free", "lobby", "game"]
Role = Literal["player", "judge"]
FREE: Stage = "free"
LOBBY: Stage = "lobby"
GAME: Stage = "game"
PLAYER: Role = "player"
JUDGE: Role = "judge"
SKILL_VERBS = tuple(k for k, v in VERBS.items() if v.skills)

F = TypeVar("F", bound=Callable[..., None])


@dataclass
class Request:
    """One command being handled: the message, what it says, who sent it where (`who`, looked
    up once per message), the game it is for, the sender's rank in it (a judge of that game,
    the seat they hold), and the replies so far."""

    msg: Incoming
    p: Parsed
    who: Sender
    code: str | None = None
    lobby: Lobby | None = None
    judge: bool = False
    seat: int | None = None
    # (to, text, priority, the game it concerns: its seat's page shows it, whether it asks
    # its reader to act: a push reminder goes with it)
    replies: list[tuple[str, str, int, str | None, bool]] = field(default_factory=list)

    @property
    def sender(self) -> str:
        """The sender's contact id."""
        return self.msg.sender

    def say(self, text: str, *, game: str | None = None) -> None:
        """The answer to the sender (it leaves first)."""
        self.tell(self.msg.sender, text, game=game)

    def tell(self, contact: str, text: str, *, game: str | None = None,
             asks: bool = False) -> None:
        """A DM to someone else (a judge told of a join, a relayed line). `game`: the game
        it concerns, if not the request's; `asks`: it asks its reader to act (`代行`'s
        notice)."""
        self.replies.append((contact, text, REPLY if contact == self.msg.sender else NORMAL,
                             game or self.code, asks))


@dataclass
class DeskContext:
    """What a desk may use: the service, the chat layer's rows, the rooms, the forum thread,
    and the bot's settings."""

    service: Service
    chats: ChatStore
    rooms: Rooms
    forum: ForumVotes
    seeds: Callable[[], str]
    codes: Callable[[], str]
    time_zone: str
    export_dir: Path
    after_commit: Callable[[str], None]  # rooms follow a change made outside the service
    clock: Callable[[], datetime] | None = None
    web: PageLinks | None = None  # the page links (`网页`), when the pages are on

    @property
    def judges(self) -> frozenset[str]:
        return self.service.judges


def handles(*verbs: str, stage: Stage, role: Role | None = None) -> Callable[[F], F]:
    """Mark a desk method as the handler of `verbs` at `stage` for `role` (None: whoever sent
    it, the handler decides)."""
    unknown = [v for v in verbs if v not in VERBS]
    if unknown:
        raise ValueError(f"no such verbs in the vocabulary: {unknown}")

    def mark(fn: F) -> F:
        routes: list[tuple[str, Stage, Role | None]] = getattr(fn, "_routes", [])
        routes.extend((v, stage, role) for v in verbs)
        fn._routes = routes  # type: ignore[attr-defined]
        return fn

    return mark


Handler = Callable[[Request], None]


class Registry:
    """The verbs' handlers, by (verb, stage, role)."""

    def __init__(self) -> None:
        self.table: dict[tuple[str, Stage, Role | None], Handler] = {}

    def collect(self, desks: Iterable[Any]) -> Registry:
        for desk in desks:
            for name in dir(type(desk)):
                fn = getattr(type(desk), name)
                for verb, stage, role in getattr(fn, "_routes", ()):
                    key = (verb, stage, role)
                    if key in self.table:
                        raise ValueError(f"two handlers for {key}")
                    self.table[key] = getattr(desk, name)
        return self

    def find(self, verb: str, stage: Stage, role: Role | None) -> Handler | None:
        return self.table.get((verb, stage, role)) or self.table.get((verb, stage, None))

    def free(self, verb: str) -> Handler | None:
        """The handler of a verb that names its own game (or none)."""
        return self.table.get((verb, FREE, None))

    def verbs(self) -> set[str]:
        return {verb for verb, _, _ in self.table}
