"""The game on a page (issue 24, issue 30): `wolfjudge web`, a FastAPI app of server-rendered
pages.

Access is by link only (bot/web/links.py): `/j/TOKEN` a judge's page of a game, `/p/TOKEN` a
seat's page. A token we did not make, an expired one, one of an older link generation (`网页
重置`), a judge's link of someone no longer the game's judge, or a seat's link after the seat
changed hands (`接替`), gets 403 and a page that names nothing of the game. `/g/CODE` is the
game's public page (spectators: what the table was told in public, nothing else) and
`/replay/CODE` the replay once the game is over.

Each page keeps itself current through a server-sent event stream (`…/events`, bot/web/
live.py) and our own script (static/live.js), falling back to fetching itself every 30
seconds where the stream breaks, and reading as it is without JavaScript. A seat's page can
ask for push reminders (bot/web/push.py: `…/push`, the service worker `/sw.js`, the web app
manifest `…/manifest.webmanifest`).

The pages read the game through the service and the chat store only. Links are bearer
secrets: no access log is written, `Referrer-Policy: no-referrer`, and a Content Security
Policy that lets the page load and connect to nothing but our own server. Every link a page
shows is an absolute URL under the pages' base (WOLFJUDGE_WEB_URL); every action form posts
`cmd` (the command as typed in a DM) and `nonce`.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Hashable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.chat.bot import ChatBot
from bot.chat.desk_records import new_slug
from bot.forum.thread import CHANNEL as FORUM_AUTO
from bot.gametime import instant_of, utcnow, wall_clock, zone
from bot.ids import GAME_ID, is_page_contact
from bot.records.balance import Background
from bot.records.report import pct
from bot.service import Service, UnknownGame
from bot.store.chat import ChatStore
from bot.texts import t, text_data
from bot.web import community, home, join, live, pages, rooms
from bot.web.links import Claim, Kind, Links
from bot.web.lobby import lobby_view
from bot.web.push import BadSubscription, Pusher
from bot.web.replay import replay_data, replay_page
from bot.web.rooms import room_links
from bot.web.site import Site

HERE = Path(__file__).parent
NO_CLAIM = Claim("p", "", "", 0, -1, -1)  # what a token that is none of ours is checked as
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
                               "script-src 'self'; connect-src 'self'; worker-src 'self'; "
                               "manifest-src 'self'; form-action 'self'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
MAX_BODY = 16 * 1024  # bytes of a form or a subscription (a command is at most 4096 characters)
# what a browser's Sec-Fetch-Site says of a form posted from another site's page (ours say
# same-origin; a browser too old to say is taken at its word: no header)
OTHER_SITES = ("cross-site", "same-site")
VOTES_IN_PUBLIC = ("forum", FORUM_AUTO)  # votes.channel values whose votes the forum shows


def create_app(service: Service, chats: ChatStore, links: Links,
               now: Callable[[], datetime] = utcnow, bot: ChatBot | None = None, *,
               base: str = "", pusher: Pusher | None = None,
               simulations: Callable[[str], None] | None = None,
               proxies: Iterable[str] = ()) -> FastAPI:
    """The pages of `service`'s games. `bot`: the chat bot that takes what is typed on a page
    (the same router and checks as a DM), whose deliveries and commits wake the pages' streams;
    None: the pages only read (`wolfjudge web` beside a bot in another process: they fetch
    themselves every 30 seconds). `base`: the pages' public base URL (WOLFJUDGE_WEB_URL),
    which every link shown starts with; `pusher`: the push reminders (None: off).
    `simulations`: how a board the community page shows gets the simulator's numbers
    computed (default: once, in a process of its own). `proxies`: the addresses of the
    proxies in front whose X-Forwarded-For is believed (the join form's limit per address)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals["t"] = t
    env.globals["data"] = text_data
    env.globals["pct"] = pct
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    root = base.rstrip("/")
    hub = live.Hub()
    app.state.hub = hub
    if bot is not None:  # the streams wake on what this bot commits and delivers
        inner = bot.courier.inner if isinstance(bot.courier, live.Notifying) else bot.courier
        bot.courier = live.Notifying(inner, hub, chats, [pusher] if pusher else [])
        service.on_commit_state.append(hub.committed)

    app.add_middleware(Guard, too_large=lambda: page(
        "denied.html", status=413, reason=t("web.too_large", kb=MAX_BODY // 1024)),
                       other_site=lambda: page("denied.html", status=403,
                                               reason=t("web.other_site")))

    def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template(name).render(nonce=uuid.uuid4().hex, actions=bot is not None,
                                             live=bot is not None, root=root,
                                             now_ms=int(now().replace(tzinfo=UTC).timestamp()
                                                        * 1000), **values)
        return HTMLResponse(html, status_code=status)

    def denied() -> HTMLResponse:
        return page("denied.html", status=403)

    @app.exception_handler(StarletteHTTPException)
    async def no_such_page(_request: Request, exc: StarletteHTTPException) -> Response:
        """No page here (or not that way): the same Chinese page as a bad link, no English;
        a body that is no form (what Starlette's form parser refuses): said so."""
        return page("denied.html", status=exc.status_code,
                    reason=t("web.bad_form") if exc.status_code == 400 else None)

    # the pages of a game with no chat account (issue 30): a judge's home, join links and
    # keys, rooms as pages (bot/web/home.py, join.py, rooms.py)
    site = Site(service, chats, links, page, RateLimits(), threading.Lock(), now, bot, root,
                frozenset(proxies), joins=RateLimits(), hub=hub)

    def game_time(code: str) -> datetime:
        return wall_clock(now().replace(tzinfo=UTC), zone(service.time_zone(code)))

    def to_ms(code: str) -> Callable[[datetime], int]:
        tz = zone(service.time_zone(code))
        return lambda wall: int(instant_of(wall, tz).timestamp() * 1000)

    def wall_of(code: str) -> Callable[[datetime], datetime]:
        tz = zone(service.time_zone(code))
        return lambda at: wall_clock(at.replace(tzinfo=UTC), tz)

    def judge_view(code: str, contact: str, token: str, answers: list[str] | None = None
                   ) -> HTMLResponse:
        lobby = chats.lobby(code)
        if lobby is not None and lobby.status != "started":
            return lobby_view(site, lobby, contact, answers)  # before the start (bot/web/lobby.py)
        state = service.state(code)
        ledger = ""
        if bot is not None and lobby is not None and state.phase.startswith("D") and (
                lobby.chat_options.get("votes.channel") == FORUM_AUTO):
            ledger = bot.forum.ledger_text(code, state.day)
        return page("judge.html", answers=answers, stream=f"/j/{token}/events",
                    p=pages.judge_page(state, code, chats.players(code), service.game_log(code),
                                       game_time(code), ledger, to_ms(code),
                                       f"{root}/g/{code}"),
                    rooms=room_links(site, "j", token, code, contact),
                    inbox=site.inbox(contact, lobby.time_zone if lobby else None, game=code))

    def player_view(code: str, seat: int, contact: str, token: str,
                    answers: list[str] | None = None) -> HTMLResponse:
        name = chats.players(code).get(seat, (None, None))[1] or ""
        return page("player.html", answers=answers, stream=f"/p/{token}/events",
                    manifest=f"/p/{token}/manifest.webmanifest",
                    push=f"/p/{token}/push" if pusher is not None else "",
                    push_key=pusher.public if pusher is not None else "",
                    rooms=room_links(site, "p", token, code, contact),
                    p=pages.player_page(service.state(code), seat, code, name,
                                        service.game_log(code), chats.delivered(code, contact),
                                        wall_of(code), game_time(code), to_ms(code)))

    def admitted(token: str, kind: Kind) -> tuple[Claim, str] | None:
        """The link's claim and its contact, if the link opens a page of `kind` now: a
        judge's link while its contact judges the game, a seat's while its contact holds the
        seat, both of the contact's current generation (`网页 重置`), a seat's of the seat's
        current hand-over. The same reads and comparisons for every token, a random one
        included (no early return that skips a read): a revoked link is not told from a
        forged one by the time it takes."""
        claim = links.read(token)
        c = claim if claim is not None else NO_CLAIM
        judges = [j for j in sorted(service.judges) if c.given_to(j)]
        facts = chats.link_facts(c.game, c.seat or 0, judges[:1])
        if kind == "p":
            contact = facts.holder
            fresh = c.seat is not None and c.gen == facts.hand_overs
        else:
            own = facts.judge is not None and c.given_to(facts.judge)
            contact = facts.judge if own else (judges[0] if judges else None)
            fresh = facts.judge is not None  # a game of this account's
        ok = ((claim is not None) & (c.kind == kind) & fresh & (contact is not None)
              & c.given_to(contact or "") & (c.epoch == facts.epoch(contact)))
        return (c, contact) if ok and contact is not None else None

    async def act(request: Request, claim: Claim, contact: str, answers: set[str]
                  ) -> list[str] | HTMLResponse:
        """What the page's form says (`cmd`, and the quick forms' fields after it), sent as
        `contact`'s DM addressed to the game (Site.send, as every page's action); the
        answers it got, or the page's refusal (too many, or the pages only read)."""
        if bot is None:
            return page("denied.html", status=405, reason=t("web.read_only"))
        # per claim, not per token: another spelling of the same link is the same budget
        if not site.allowed((claim.kind, claim.game, claim.contact, claim.seat)):
            return page("denied.html", status=429, reason=t("web.too_many"))
        form = await request.form()
        text = " ".join(str(form.get(k, "")).strip() for k in ("cmd", "a", "b", "c")
                        if str(form.get(k, "")).strip())
        return await site.send(contact, text, str(form.get("nonce", "")), answers,
                               game=claim.game)

    @app.get("/j/{token}", response_class=HTMLResponse)
    def judge(token: str) -> HTMLResponse:
        found = admitted(token, "j")
        return denied() if found is None else judge_view(found[0].game, found[1], token)

    @app.post("/j/{token}", response_class=HTMLResponse)
    async def judge_send(token: str, request: Request) -> HTMLResponse:
        found = await run_in_threadpool(admitted, token, "j")
        if found is None:
            return denied()
        claim, contact = found
        got = await act(request, claim, contact, {"judge", f"contact:{contact}"})
        return got if isinstance(got, HTMLResponse) else judge_view(claim.game, contact, token,
                                                                     got)

    @app.get("/j/{token}/events")
    async def judge_events(token: str) -> Response:
        found = await run_in_threadpool(admitted, token, "j")
        if found is None:
            return denied()
        claim, contact = found
        return site.streaming([live.judged(claim.game), live.to(claim.game, contact)])

    @app.get("/p/{token}", response_class=HTMLResponse)
    def player(token: str) -> HTMLResponse:
        found = admitted(token, "p")
        if found is None:
            return denied()
        claim, contact = found
        return player_view(claim.game, claim.seat or 0, contact, token)

    @app.post("/p/{token}", response_class=HTMLResponse)
    async def player_send(token: str, request: Request) -> HTMLResponse:
        found = await run_in_threadpool(admitted, token, "p")
        if found is None:
            return denied()
        claim, contact = found
        seat = claim.seat or 0
        got = await act(request, claim, contact, {f"contact:{contact}", f"seat:{seat}"})
        return got if isinstance(got, HTMLResponse) else player_view(claim.game, seat, contact,
                                                                      token, got)

    @app.get("/p/{token}/events")
    async def player_events(token: str) -> Response:
        found = await run_in_threadpool(admitted, token, "p")
        if found is None:
            return denied()
        claim, contact = found
        return site.streaming([live.to(claim.game, contact)])

    @app.get("/p/{token}/manifest.webmanifest")
    def manifest(token: str) -> Response:
        """The web app manifest of a seat's page: added to the home screen, it opens that
        page (iOS 16.4+ pushes only to a page opened from there); for a player who joined by
        link, their key, which never expires and opens the seat's page."""
        found = admitted(token, "p")
        if found is None:
            return denied()
        claim, contact = found
        start, scope = f"{root}/p/{token}", f"{root}/p/{token}"
        if is_page_contact(contact):
            start, scope = site.link("k", "", contact), f"{root}/"
        body = {"name": t("web.player_manifest", code=claim.game, seat=claim.seat),
                "short_name": claim.game, "start_url": start,
                "scope": scope, "display": "standalone",
                "background_color": "#f6f6f3", "theme_color": "#1b1b1b", "lang": "zh-CN",
                "icons": [{"src": f"{root}/static/icon-192.png", "sizes": "192x192",
                           "type": "image/png"},
                          {"src": f"{root}/static/icon-512.png", "sizes": "512x512",
                           "type": "image/png"}]}
        return Response(json.dumps(body, ensure_ascii=False),
                        media_type="application/manifest+json")

    @app.post("/p/{token}/push")
    async def push_on(token: str, request: Request) -> JSONResponse:
        """`提醒我`: the browser's subscription (form fields endpoint, p256dh, auth), kept for
        the seat's contact."""
        return await subscription(token, request, keep=True)

    @app.post("/p/{token}/push/remove")
    async def push_off(token: str, request: Request) -> JSONResponse:
        """`不再提醒`: the browser's subscription (its endpoint) dropped."""
        return await subscription(token, request, keep=False)

    async def subscription(token: str, request: Request, *, keep: bool) -> JSONResponse:
        found = await run_in_threadpool(admitted, token, "p")
        if found is None:
            return JSONResponse({"ok": False, "text": t("web.denied")}, status_code=403)
        if pusher is None:
            return JSONResponse({"ok": False, "text": t("web.push_off_server")},
                                status_code=405)
        claim, contact = found
        if not site.allowed((claim.kind, claim.game, claim.contact, claim.seat)):
            return JSONResponse({"ok": False, "text": t("web.too_many")}, status_code=429)
        form = await request.form()
        fields = [str(form.get(k, "")) for k in ("endpoint", "p256dh", "auth")]
        if not keep:
            dropped = await run_in_threadpool(chats.drop_push, contact, fields[0].strip())
            return JSONResponse({"ok": dropped, "text": t(
                "web.push_removed" if dropped else "web.push_not_found")})
        try:
            sub = pusher.parse(*fields)
        except BadSubscription as exc:
            return JSONResponse({"ok": False, "text": t(f"web.{exc.reason}")}, status_code=400)
        await run_in_threadpool(chats.add_push, contact, sub.endpoint, sub.p256dh, sub.auth,
                                now())
        return JSONResponse({"ok": True, "text": t("web.push_done")})

    @app.get("/sw.js")
    def service_worker() -> Response:
        """Our service worker, at the root so that it may serve every page's reminders."""
        return Response((HERE / "static" / "sw.js").read_text(encoding="utf-8"),
                        media_type="text/javascript")

    def public_game(code: str) -> bool:
        if not GAME_ID.fullmatch(code):
            return False
        lobby = chats.lobby(code)
        if lobby is None or lobby.status == "open":
            return False
        try:
            service.state(code)
        except UnknownGame:
            return False
        return True

    @app.get("/g/{code}", response_class=HTMLResponse)
    def spectators(code: str) -> HTMLResponse:
        """The game's public page: the public board only."""
        if not public_game(code):
            return page("denied.html", status=404, reason=t("web.public_none"))
        state = service.state(code)
        lobby = chats.lobby(code)
        votes = (lobby.chat_options.get("votes.channel", "forum") if lobby else "forum")
        return page("public.html", stream=f"/g/{code}/events", p=pages.public_page(
            state, code, service.game_log(code), chats.public_posts(code), wall_of(code),
            to_ms(code), game_time(code), votes_public=votes in VOTES_IN_PUBLIC,
            replay=f"{root}/replay/{code}"))

    @app.get("/g/{code}/events")
    def spectator_events(code: str) -> Response:
        if not public_game(code):
            return page("denied.html", status=404, reason=t("web.public_none"))
        return site.streaming([live.public(code)])

    @app.get("/replay/{code}", response_class=HTMLResponse)
    def replay(code: str) -> HTMLResponse:
        """Public once the game is over (no link needed); 404 before, as for no game."""
        data = None
        if GAME_ID.fullmatch(code):
            try:
                data = replay_data(service, code)
            except UnknownGame:
                data = None
        if data is None:
            return page("denied.html", status=404, reason=t("web.replay_not_over"))
        data["community"] = community.community_link(service, code, new_slug)
        built = replay_page(data)
        return HTMLResponse(built.html, headers={"Content-Security-Policy": built.csp})

    # the community pages (records, leaderboard, boards): /c/SLUG (bot/web/community.py)
    community.mount(app, service, page, simulations or Background(
        service.db.engine.url.render_as_string(hide_password=False)).request)
    for router in (home.router(site), join.router(site), rooms.router(site, admitted)):
        app.include_router(router)
    return app


class Guard:
    """Every response gets the headers that keep a link secret (the replay sets its own
    policy); a POST body over MAX_BODY, or of no stated size, is refused before it is read;
    a POST the browser says came from another site's page (Sec-Fetch-Site: a cross-site or
    sibling-subdomain form riding the key's cookie, which SameSite=Lax does not stop on the
    same site) is refused. (Not the Origin header: with `Referrer-Policy: no-referrer` a
    browser sends `Origin: null` for our own forms too.) Plain ASGI, so that a page's event
    stream passes through untouched."""

    def __init__(self, app: ASGIApp, too_large: Callable[[], Response],
                 other_site: Callable[[], Response]) -> None:
        self.app = app
        self.too_large = too_large
        self.other_site = other_site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in HEADERS.items():
                    if key not in headers:
                        headers[key] = value
            await send(message)

        if scope["method"] == "POST":
            headers = Headers(scope=scope)
            if headers.get("sec-fetch-site", "") in OTHER_SITES:
                await self.other_site()(scope, receive, send_with_headers)
                return
            size = headers.get("content-length", "")
            if not size.isdigit() or int(size) > MAX_BODY:
                await self.too_large()(scope, receive, send_with_headers)
                return
        await self.app(scope, receive, send_with_headers)


class RateLimits:
    """At most ACTIONS page actions a minute per key (a link's claim: a fixed window each)."""

    ACTIONS = 20

    def __init__(self) -> None:
        self._windows: dict[Hashable, tuple[datetime, int]] = {}
        self._lock = threading.Lock()

    def take(self, key: Hashable, at: datetime) -> bool:
        minute = at.replace(second=0, microsecond=0)
        with self._lock:
            start, count = self._windows.get(key, (minute, 0))
            if start != minute:
                start, count = minute, 0
            if count >= self.ACTIONS:
                return False
            if len(self._windows) > 10_000:  # old windows go
                self._windows = {k: v for k, v in self._windows.items() if v[0] == minute}
            self._windows[key] = (start, count + 1)
            return True
