"""What the desks (bot/chat/desk_lobby.py, desk_player.py, desk_judge.py) use of the `ChatBot`
they are mixed into (bot/chat/bot.py) and of each other: declared here for the type checker
only, so that a misspelt or missing attribute is found there; nothing is defined at run time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.chat.common import Turn
    from bot.chat.rooms import Rooms
    from bot.commands.parse import Parsed
    from bot.forum.votes import ForumVotes
    from bot.service import Outcome, Service
    from bot.store.models import Lobby
    from bot.transport import Incoming
    from engine.commands import Command
    from engine.events import Event
    from engine.model import GameState


class Desk:
    if TYPE_CHECKING:
        # ChatBot's own (bot/chat/bot.py)
        service: Service
        rooms: Rooms
        forum: ForumVotes
        seeds: Callable[[], str]
        codes: Callable[[], str]
        time_zone: str
        export_dir: Path

        @property
        def judges(self) -> frozenset[str]: ...
        def _lobby(self, code: str) -> Lobby | None: ...
        def _is_judge(self, gid: str, contact: str) -> bool: ...
        def after_commit(self, gid: str, events: Iterable[Event] = (), *,
                         state: GameState | None = None) -> None: ...

        # one desk's, used by another
        def _judge_verb(self, msg: Incoming, p: Parsed, gid: str, turn: Turn) -> None: ...
        def _judged(self, contact: str) -> list[str]: ...
        def _active_judged(self, contact: str) -> list[str]: ...
        def _chat_option(self, gid: str, key: str) -> str | None: ...
        def _wall(self, gid: str, at: datetime) -> datetime: ...
        def _submit(self, msg: Incoming, gid: str, cmd: Command, turn: Turn,
                    *, seat: int | None = None, at: datetime | None = None) -> Outcome: ...
