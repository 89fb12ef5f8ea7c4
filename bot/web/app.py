"""The game on a page (issue 24): `wolfjudge web`, a FastAPI app of server-rendered pages.

Access is by link only (bot/web/links.py): `/j/TOKEN` a judge's page of a game, `/p/TOKEN` a
seat's page. A token we did not make, an expired one, one of an older link generation (`网页
重置`), a judge's link of someone no longer the game's judge, or a seat's link after the seat
changed hands (`接替`), gets 403 and a page that names nothing of the game.

The pages read the game through the service and the chat store only. Links are bearer
secrets: no access log is written, `Referrer-Policy: no-referrer`, and a Content Security
Policy that lets the page load nothing but our own files (no script, no third party).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool

from bot.chat.bot import ChatBot
from bot.chat.desk_records import new_slug
from bot.forum.thread import CHANNEL as FORUM_AUTO
from bot.gametime import utcnow, wall_clock, zone
from bot.ids import GAME_ID
from bot.records.balance import Background
from bot.records.report import pct
from bot.service import Service, UnknownGame
from bot.store.chat import ChatStore
from bot.texts import t, text_data
from bot.transport import Incoming
from bot.web import community, pages
from bot.web.links import Claim, Kind, Links
from bot.web.replay import replay_data, replay_page

HERE = Path(__file__).parent
NO_CLAIM = Claim("p", "", "", 0, -1, -1)  # what a token that is none of ours is checked as
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
                               "script-src 'self'; form-action 'self'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def create_app(service: Service, chats: ChatStore, links: Links,
               now: Callable[[], datetime] = utcnow, bot: ChatBot | None = None,
               simulations: Callable[[str], None] | None = None) -> FastAPI:
    """The pages of `service`'s games. `bot`: the chat bot that takes what is typed on a page
    (the same router and checks as a DM); None: the pages only read (`wolfjudge web` beside a
    bot in another process). `simulations`: how a board the community page shows gets the
    simulator's numbers computed (default: once, in a process of its own)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals["t"] = t
    env.globals["data"] = text_data
    env.globals["pct"] = pct
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    limits = RateLimits()
    lock = threading.Lock()  # one page action at a time (the chat bot's own order)

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]
                      ) -> Response:
        response = await call_next(request)
        for key, value in HEADERS.items():  # (the replay sets its own policy)
            response.headers.setdefault(key, value)
        return response

    def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template(name).render(nonce=uuid.uuid4().hex, actions=bot is not None,
                                             **values)
        return HTMLResponse(html, status_code=status)

    def denied() -> HTMLResponse:
        return page("denied.html", status=403)

    def game_time(code: str) -> datetime:
        return wall_clock(now().replace(tzinfo=UTC), zone(service.time_zone(code)))

    def judge_view(code: str, answers: list[str] | None = None) -> HTMLResponse:
        state = service.state(code)
        lobby = chats.lobby(code)
        ledger = ""
        if bot is not None and lobby is not None and state.phase.startswith("D") and (
                lobby.chat_options.get("votes.channel") == FORUM_AUTO):
            ledger = bot.forum.ledger_text(code, state.day)
        return page("judge.html", answers=answers, p=pages.judge_page(
            state, code, chats.players(code), service.game_log(code), game_time(code),
            ledger))

    def player_view(code: str, seat: int, contact: str, answers: list[str] | None = None
                    ) -> HTMLResponse:
        name = chats.players(code).get(seat, (None, None))[1] or ""
        tz = zone(service.time_zone(code))
        return page("player.html", answers=answers, p=pages.player_page(
            service.state(code), seat, code, name, service.game_log(code),
            chats.delivered(code, contact), lambda at: wall_clock(at.replace(tzinfo=UTC), tz)))

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
        """What the page's form says, sent as `contact`'s DM (addressed to the game);
        the answers it got, or the page's refusal (too many, or the pages only read)."""
        code = claim.game
        if bot is None:
            return page("denied.html", status=405, reason=t("web.read_only"))
        # per claim, not per token: another spelling of the same link is the same budget
        if not limits.take((claim.kind, claim.game, claim.contact, claim.seat), now()):
            return page("denied.html", status=429, reason=t("web.too_many"))
        form = await request.form()
        text = " ".join(str(form.get(k, "")).strip() for k in ("cmd", "a", "b", "c")
                        if str(form.get(k, "")).strip())
        nonce = str(form.get("nonce", ""))[:64] or uuid.uuid4().hex
        if not text:
            return [t("web.empty")]
        msg = Incoming(msg_id=f"web/{nonce}", sender=contact, text=f"#{code} {text}"[:2000],
                       at=now().replace(tzinfo=UTC))
        with lock:
            got = await run_in_threadpool(bot.handle_page, msg, answers)
        return [t("web.again")] if got is None else got or [t("web.done")]

    @app.get("/j/{token}", response_class=HTMLResponse)
    def judge(token: str) -> HTMLResponse:
        found = admitted(token, "j")
        return denied() if found is None else judge_view(found[0].game)

    @app.post("/j/{token}", response_class=HTMLResponse)
    async def judge_send(token: str, request: Request) -> HTMLResponse:
        found = admitted(token, "j")
        if found is None:
            return denied()
        claim, contact = found
        got = await act(request, claim, contact, {"judge", f"contact:{contact}"})
        return got if isinstance(got, HTMLResponse) else judge_view(claim.game, got)

    @app.get("/p/{token}", response_class=HTMLResponse)
    def player(token: str) -> HTMLResponse:
        found = admitted(token, "p")
        if found is None:
            return denied()
        claim, contact = found
        return player_view(claim.game, claim.seat or 0, contact)

    @app.post("/p/{token}", response_class=HTMLResponse)
    async def player_send(token: str, request: Request) -> HTMLResponse:
        found = admitted(token, "p")
        if found is None:
            return denied()
        claim, contact = found
        seat = claim.seat or 0
        got = await act(request, claim, contact, {f"contact:{contact}", f"seat:{seat}"})
        return got if isinstance(got, HTMLResponse) else player_view(claim.game, seat, contact,
                                                                      got)

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
    return app


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
