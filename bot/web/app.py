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

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from bot.clock import utcnow
from bot.gametime import wall_clock, zone
from bot.service import Service, UnknownGame
from bot.store.chat import ChatStore
from bot.texts import t
from bot.web import pages
from bot.web.links import SECRET_NAME, Claim, Links, new_secret

HERE = Path(__file__).parent
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
                               "script-src 'self'; form-action 'self'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
REFRESH = 60  # seconds: the pages reload themselves (live without JavaScript)


def links_for(service: Service, chats: ChatStore, secret: str | None = None,
              now: Callable[[], datetime] = utcnow) -> Links:
    """The signer of the page links: WOLFJUDGE_WEB_SECRET, else the one kept in the database
    (made the first time)."""
    return Links(secret or chats.secret(SECRET_NAME, new_secret), now)


def create_app(service: Service, chats: ChatStore, links: Links,
               now: Callable[[], datetime] = utcnow) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals["t"] = t
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]
                      ) -> Response:
        response = await call_next(request)
        response.headers.update(HEADERS)
        return response

    def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template(name).render(refresh=REFRESH, **values)
        return HTMLResponse(html, status_code=status)

    def denied() -> HTMLResponse:
        return page("denied.html", status=403)

    def game_time(code: str) -> datetime:
        return wall_clock(now().replace(tzinfo=UTC), zone(service.time_zone(code)))

    @app.get("/j/{token}", response_class=HTMLResponse)
    def judge(token: str) -> HTMLResponse:
        claim = links.read(token)
        if claim is None or claim.kind != "j" or not _judges(claim, service, chats):
            return denied()
        code = claim.game
        state = service.state(code)
        return page("judge.html", p=pages.judge_page(
            state, code, chats.players(code), service.game_log(code), game_time(code)))

    @app.get("/p/{token}", response_class=HTMLResponse)
    def player(token: str) -> HTMLResponse:
        claim = links.read(token)
        if claim is None or claim.kind != "p" or claim.seat is None or not _holds(
                claim, service, chats):
            return denied()
        code, seat = claim.game, claim.seat
        name = chats.players(code).get(seat, (None, None))[1] or ""
        return page("player.html", p=pages.player_page(service.state(code), seat, code, name,
                                                        service.game_log(code)))

    return app


def _judges(claim: Claim, service: Service, chats: ChatStore) -> bool:
    """The link's contact still judges its game, and the link is of its current generation."""
    lobby = chats.lobby(claim.game)
    if lobby is None:
        return False
    judge = next((c for c in (lobby.judge, *sorted(service.judges)) if claim.given_to(c)), None)
    return judge is not None and claim.epoch == chats.link_epoch(judge)


def _holds(claim: Claim, service: Service, chats: ChatStore) -> bool:
    """The link's contact still holds its seat (not after `接替`), of the current generation."""
    try:
        contact = chats.contacts(claim.game).get(claim.seat or 0)
    except UnknownGame:
        return False
    return contact is not None and claim.given_to(contact) and (
        claim.epoch == chats.link_epoch(contact))
