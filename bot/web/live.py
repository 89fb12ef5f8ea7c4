"""Live pages (issue 30, part 4): who has a page open on what, and waking them.

A page holds one server-sent event stream (`/p/TOKEN/events`, `/j/TOKEN/events`,
`/g/CODE/events`) that says only "something changed" (`event: changed`); the page's script then
fetches the page again and puts in what changed (bot/web/static/live.js). A stream is woken by
what concerns its page, decided in memory, never by a database query per stream:

- a seat's page: a message delivered to its contact in that game: a DM, or a post in a room of
  the game it is in (the deliverer says so once the row is marked sent: `Notifying`), or an
  answer its contact was shown on another page (another tab: bot/web/site.py `send`). Nothing
  else wakes it: a page woken by a commit it was not told of would tell its reader when a
  secret action happened;
- a judge's page: every commit of the game, and what is delivered to the judge;
- the game's public page: what the table is told in public (a public room's post, or the
  public page's copy of an announcement, written with its commit);
- a judge's home and a player's key (a game with no chat account: bot/web/home.py, join.py):
  every DM delivered to the contact, of a game or of none (`mine`), and who joined or left a
  lobby they judge or joined (`lobby`, woken by the pages' actions: bot/web/site.py).

`Hub.wake` is called from any thread (the deliverer, a request, the scheduler); each stream
waits on an asyncio event set through its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from bot.outbox import Courier, OutgoingMessage
from bot.router import PAGE, announced
from bot.store.chat import ROOM_CHANNELS, ChatStore
from engine.events import Event
from engine.model import GameState

Key = tuple[str, ...]  # ("to", game, contact) | ("judge", game) | ("public", game)
#                        | ("mine", contact) | ("lobby", code)
PUBLIC_TARGETS = ("public", "group:public")  # a public room's posts (the router's, the notices)
KEEP_ALIVE = 20.0  # seconds between comment lines on a quiet stream (proxies close idle ones)
LIFETIME = 300.0  # seconds a stream lasts; the browser opens a new one (its link checked again)


def to(game: str, contact: str) -> Key:
    return ("to", game, contact)


def judged(game: str) -> Key:
    return ("judge", game)


def public(game: str) -> Key:
    return ("public", game)


def mine(contact: str) -> Key:
    return ("mine", contact)


def lobby(code: str) -> Key:
    return ("lobby", code)


@dataclass(eq=False)
class Watcher:
    """One open stream: woken through its own event loop."""

    loop: asyncio.AbstractEventLoop
    event: asyncio.Event = field(default_factory=asyncio.Event)

    def wake(self) -> None:
        self.loop.call_soon_threadsafe(self.event.set)


class Hub:
    """The open streams by what they watch."""

    def __init__(self) -> None:
        self._watchers: dict[Key, set[Watcher]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def watch(self, keys: Iterable[Key]) -> Iterator[Watcher]:
        """A watcher woken by any of `keys` while the block runs (inside the stream's loop)."""
        watcher = Watcher(asyncio.get_running_loop())
        keys = list(keys)
        with self._lock:
            for key in keys:
                self._watchers.setdefault(key, set()).add(watcher)
        try:
            yield watcher
        finally:
            with self._lock:
                for key in keys:
                    found = self._watchers.get(key)
                    if found is not None:
                        found.discard(watcher)
                        if not found:
                            del self._watchers[key]

    def wake(self, keys: Iterable[Key]) -> int:
        """Wake every stream watching one of `keys`; how many were woken."""
        with self._lock:
            woken = {w for key in keys for w in self._watchers.get(key, ())}
        for watcher in woken:
            with suppress(RuntimeError):  # its loop has closed: the stream is gone
                watcher.wake()
        return len(woken)

    def open_streams(self) -> int:
        with self._lock:
            return len({w for found in self._watchers.values() for w in found})

    # what wakes whom ---------------------------------------------------------------------------
    def committed(self, game: str, _state: GameState, events: tuple[Event, ...]) -> None:
        """A commit (Service.on_commit_state): the judge's pages, and the public page when
        the commit wrote its copy of an announcement."""
        keys = [judged(game)]
        if any(e.audience.public and announced(e.type) for e in events):
            keys.append(public(game))
        self.wake(keys)

    def delivered(self, message: OutgoingMessage, chats: ChatStore) -> None:
        """A row marked sent: the pages of whoever got it."""
        game = message.game_id
        if game is None:  # a lobby's message: its contact's home or key
            if message.channel not in ROOM_CHANNELS:
                self.wake([mine(message.address)])
            return
        if message.channel in ROOM_CHANNELS:
            group = message.target.removeprefix("group:")
            keys = [to(game, c) for c in chats.room_members(game, group)]
            if message.target in PUBLIC_TARGETS:
                keys.append(public(game))
            self.wake(keys)
        elif message.channel != PAGE:
            self.wake([to(game, message.address), mine(message.address)])


class Notifying:
    """The outbox's courier, telling the hub (and the push reminders) of each row sent."""

    def __init__(self, inner: Courier, hub: Hub, chats: ChatStore,
                 also: Iterable[object] = ()) -> None:
        self.inner = inner
        self.hub = hub
        self.chats = chats
        self.also = list(also)  # more listeners with a `delivered(message)` (push reminders)
        self.instant = getattr(inner, "instant", False)

    def send(self, message: OutgoingMessage) -> None:
        self.inner.send(message)

    def delivered(self, message: OutgoingMessage) -> None:
        self.hub.delivered(message, self.chats)
        for listener in self.also:
            listener.delivered(message)  # type: ignore[attr-defined]


async def stream(hub: Hub, keys: list[Key], *, keep_alive: float = KEEP_ALIVE,
                 lifetime: float = LIFETIME) -> AsyncIterator[str]:
    """The event stream of a page watching `keys`: `hello` first (a page that reconnects
    fetches itself then: it may have missed a change), `changed` on each wake (several wakes
    while one is being read make one), a comment line when quiet, and an end after
    `lifetime` (the browser reconnects, its link checked again)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + lifetime
    with hub.watch(keys) as watcher:
        yield "retry: 3000\nevent: hello\ndata: 0\n\n"
        count = 0
        while (left := end - loop.time()) > 0:
            try:
                await asyncio.wait_for(watcher.event.wait(), timeout=min(keep_alive, left))
            except TimeoutError:
                yield ": \n\n"
                continue
            watcher.event.clear()
            count += 1
            yield f"event: changed\ndata: {count}\n\n"
