"""What the pages' routers share (bot/web/home.py, join.py, rooms.py; registered by
bot/web/app.py): the service and the stores, the link signer and the pages' base URL, the
page renderer, the chat bot that takes an action, and the limits.

An action typed on a page goes as the same DM would (`send`: the chat bot's `handle_page`,
one at a time, the form's nonce as its message id, so a form sent twice is applied once); its
answer is the page's to show. Every link a page shows is an absolute URL under the pages' base
(WOLFJUDGE_WEB_URL)."""

from __future__ import annotations

import ipaddress
import threading
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from bot.chat.bot import MAX_TEXT, ChatBot
from bot.gametime import DEFAULT_TIME_ZONE, wall_clock, zone
from bot.service import Service
from bot.store.chat import ChatStore
from bot.store.web import Known, WebStore
from bot.texts import t
from bot.transport import Incoming
from bot.web import live
from bot.web.links import Claim, Kind, Links

FIELD_LIMIT = 4096  # characters of one form field that are read (a command is at most 4096)


class Render(Protocol):
    def __call__(self, name: str, status: int = 200, **values: Any) -> HTMLResponse: ...


class Limits(Protocol):
    def take(self, key: Hashable, at: datetime) -> bool: ...


@dataclass
class Site:
    service: Service
    chats: ChatStore
    links: Links
    page: Render
    limits: Limits
    lock: threading.Lock  # one page action at a time (the chat bot's own order)
    now: Callable[[], datetime]  # naive UTC
    bot: ChatBot | None = None
    root: str = ""  # the pages' public base URL, without its last /
    # the addresses (or networks, 172.16.0.0/12) of the proxies in front whose
    # X-Forwarded-For is believed (none: the connection's own address is the client's)
    proxies: frozenset[str] = frozenset()
    joins: Limits | None = None  # the join form's limit, per address
    hub: live.Hub | None = None  # the open pages' streams (bot/web/live.py)
    web: WebStore = field(init=False)

    def __post_init__(self) -> None:
        self.web = WebStore(self.service.db)
        self._trusted = [n for n in map(_network, self.proxies) if n is not None]

    @property
    def joins_open(self) -> bool:
        """Whether people join by link here: a bot whose platform is the pages."""
        return self.bot is not None and self.bot.transport.contacts_by_link

    @property
    def time_zone(self) -> str:
        return self.bot.lobby.ctx.time_zone if self.bot is not None else DEFAULT_TIME_ZONE

    def wall(self, at: datetime, time_zone: str | None = None) -> str:
        """A bookkeeping time (naive UTC) as a page shows it, in the game's (or the bot's)
        time zone."""
        local = wall_clock(at.replace(tzinfo=UTC), zone(time_zone or self.time_zone))
        return local.strftime("%m-%d %H:%M")

    def inbox(self, contact: str, time_zone: str | None = None, *, free_only: bool = False,
              game: str | None = None, tagged: bool = False) -> list[tuple[str, str]]:
        """What was delivered to `contact` (WebStore.inbox: `free_only`, `game`) as a page
        lists it: the latest first, each at its wall time; `tagged`: a game's marked 【CODE】."""
        return [(self.wall(at, time_zone), f"【{g}】{text}" if tagged and g else text)
                for at, g, text in reversed(self.web.inbox(contact, free_only=free_only,
                                                           game=game))]

    def stream(self, path: str) -> str:
        """A page's event stream (where this process serves streams: a bot runs here; else
        none, and the page fetches itself now and then)."""
        return path if self.bot is not None else ""

    def streaming(self, keys: list[live.Key]) -> Response:
        """A page's stream watching `keys`; none where this process commits nothing (the
        pages only read): 204 tells the browser not to try again (the page fetches itself
        every 30 s)."""
        if self.bot is None or self.hub is None:
            return Response(status_code=204)
        return StreamingResponse(live.stream(self.hub, keys), media_type="text/event-stream",
                                 headers={"X-Accel-Buffering": "no"})

    # pages ---------------------------------------------------------------------------------------
    def denied(self, reason: str | None = None, status: int = 403) -> HTMLResponse:
        return self.page("denied.html", status=status, reason=reason)

    # links ---------------------------------------------------------------------------------------
    def url(self, path: str) -> str:
        """An absolute URL of ours (`path` starts with /)."""
        return f"{self.root}{path}"

    def join_url(self, code: str, epoch: int) -> str:
        """A lobby's join link of generation `epoch` (`报名链接 重置` starts a new one)."""
        return self.url(f"/join/{self.links.make('join', code, '', None, epoch)}")

    def link(self, kind: Kind, game: str, contact: str, seat: int | None = None,
             gen: int = 0, *, epoch: int | None = None) -> str:
        """A signed link of `kind` for `contact`, of their current link generation (`epoch`:
        as already read, for a page that lists many of their links)."""
        if epoch is None:
            epoch = self.chats.link_epoch(contact) if contact else 0
        return self.url(f"/{kind}/{self.links.make(kind, game, contact, seat, epoch, gen)}")

    def seat_link(self, game: str, contact: str, seat: int, *, epoch: int | None = None
                  ) -> str:
        return self.link("p", game, contact, seat, self.chats.hand_overs(game, seat),
                         epoch=epoch)

    def lasting(self, token: str, kind: Kind) -> Known | None:
        """The contact a lasting link (a judge's home `h`, a player's key `k`) names, if the
        link is of `kind` and of the contact's current generation: one read whatever the
        token (a revoked or forged link costs what a good one costs)."""
        claim = self.links.read(token)
        c = claim if claim is not None else Claim(kind, "", "", None, -1)
        known = self.web.known(c.contact)
        ok = claim is not None and c.kind == kind and known is not None and c.epoch == known.epoch
        return known if ok else None

    # actions -------------------------------------------------------------------------------------
    async def form(self, request: Request) -> dict[str, str]:
        """The form's fields, each cut to FIELD_LIMIT characters. (A body over the pages'
        limit was refused before any route ran, bot/web/app.py's Guard; one that is no form
        is refused by the app as such, 400.)"""
        form = await request.form()
        return {k: str(v)[:FIELD_LIMIT] for k, v in form.items() if isinstance(v, str)}

    async def lists(self, request: Request, prefix: str) -> dict[str, list[str]]:
        """The form's fields named `prefix…` with every value each was sent with (checkboxes),
        after `form` read the body."""
        form = await request.form()
        return {k: [str(v)[:FIELD_LIMIT] for v in form.getlist(k) if isinstance(v, str)]
                for k in form if k.startswith(prefix)}

    def lobbies(self, contact: str) -> set[str]:
        """The open lobbies `contact` joined or judges."""
        who = self.chats.sender(contact)
        judged = [self.chats.lobby(c) for c in who.active_judged()]
        return set(who.joined) | {lb.code for lb in judged if lb and lb.status == "open"}

    def own_keys(self, contact: str) -> list[live.Key]:
        """What a contact's own page (a judge's home, a player's key) watches: what they are
        sent, and who joins their open lobbies."""
        return [live.mine(contact), *map(live.lobby, sorted(self.lobbies(contact)))]

    def lobby_changed(self, codes: set[str]) -> None:
        """Who joined these lobbies may have changed: their judge's page, the judge's home
        and the keys of who joined (live), however it changed (a join, `退出`, `踢出`)."""
        if self.hub is not None and codes:
            self.hub.wake([k for c in codes for k in (live.judged(c), live.lobby(c))])

    async def send(self, contact: str, text: str, nonce: str, answers: set[str], *,
                   game: str | None = None, room: str | None = None) -> list[str]:
        """`text` sent as `contact`'s DM (to `game` when given: `#CODE` before it), or said
        in `room`; the answers it got (the turn's rows for `answers`), shown on the page.
        The lobbies the sender was or is in are told it may have changed them."""
        text = text.strip()
        if not text:
            return [t("web.empty")]
        if len(text) > MAX_TEXT:
            return [t("too_long", limit=MAX_TEXT)]
        if self.bot is None:
            return [t("web.read_only")]
        if game is not None and room is None:
            text = f"#{game} {text}"
        msg = Incoming(msg_id=f"web/{nonce[:64] or uuid.uuid4().hex}", sender=contact,
                       text=text, at=self.now().replace(tzinfo=UTC), room=room)
        bot = self.bot
        before = await run_in_threadpool(self.lobbies, contact) if room is None else set()
        with self.lock:
            got = await run_in_threadpool(bot.handle_page, msg, answers)
        if room is None:
            self.lobby_changed(before | await run_in_threadpool(self.lobbies, contact))
        if got and self.hub is not None:
            # The answers were taken for this page, not delivered: the sender's other open
            # pages (another tab, a phone and a computer) are woken as a delivery would.
            self.hub.wake([live.mine(contact), *([live.to(game, contact)] if game else [])])
        return [t("web.again")] if got is None else got or [t("web.done")]

    def allowed(self, key: Hashable) -> bool:
        """Another action for `key` this minute (20 at most)."""
        return self.limits.take(key, self.now())

    # who is asking -------------------------------------------------------------------------------
    def client(self, request: Request) -> str:
        """The client's address: the connection's, or, behind a proxy we trust, the last
        address in X-Forwarded-For that is not one of our proxies (what the proxy saw)."""
        peer = request.client.host if request.client else ""
        if not self._proxy(peer):
            return peer
        hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",")]
        for hop in reversed(hops):
            if hop and not self._proxy(hop) and _address(hop) is not None:
                return hop
        return peer

    def _proxy(self, host: str) -> bool:
        if host in self.proxies:
            return True
        address = _address(host)
        return address is not None and any(address in n for n in self._trusted)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None
