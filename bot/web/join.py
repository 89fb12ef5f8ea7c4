"""Players join by link (issue 30, item 3), and keep their key.

- `/join/TOKEN`: a lobby's join link (the judge posts it, or its QR code, `/join/TOKEN/qr.png`
  and `qr.svg`, in the forum or a group). The page asks for a 马甲 (`name`) and sends `报名
  CODE 马甲` through the same handler as a DM, so the same checks apply. A browser that joins
  gets a new contact (`page:…`: no chat platform's id looks like it, and no page shows it) and
  its own private link, `/k/TOKEN`, shown as a link and a QR code with a line telling the
  player to keep it: it is their only key. The browser keeps that key in a cookie (HttpOnly,
  read by the join and substitute pages only), so opening a join link again shows the same
  key (or joins the next game as the same person). A join link works until the game starts
  (then a page says so), and until the judge's `报名链接 重置`. The join form is rate-limited
  per address (behind a proxy we trust: the address it saw, `WOLFJUDGE_WEB_TRUSTED_PROXIES`).
- `/take/TOKEN`: a substitute's link (`替补 S` answers with it where people join by link): the
  seat taken (`接替 TOKEN`, the same checks) by this browser's contact, a new one if it has
  none, and its key given as a join's is.
- `/k/TOKEN`: the player's key. With one game under way it opens that seat's page (a fresh
  seat link); otherwise it lists their games and lobbies, what they were sent outside a game
  (the lobby's replies: a kick, the rules changed) and a send box (`退出`, `状态`, `网页 重置`
  …). It never expires; `网页 重置` gives a new one (the old one is then refused).
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from bot.ids import new_page_contact
from bot.store.models import Lobby
from bot.store.web import Seated
from bot.texts import ruleset_name, t
from bot.web import qr
from bot.web.links import Claim, digest
from bot.web.site import Site

SUB_TOKEN = re.compile(r"[A-Za-z0-9]{8,32}")  # `替补`'s one-time token (bot/chat/lobby.py)
COOKIE = "wolfjudge_key"
COOKIE_DAYS = 90


def key_url(site: Site, contact: str) -> str:
    """The contact's key of their current link generation."""
    return site.link("k", "", contact)


def router(site: Site) -> APIRouter:
    api = APIRouter()

    def key_contact(token: str) -> str | None:
        """The key's contact, if the key is of their current generation (Site.lasting: one
        read whatever the token)."""
        known = site.lasting(token, "k")
        return known.contact if known is not None else None

    # the join link -------------------------------------------------------------------------------
    def lobby_of(token: str) -> tuple[Lobby | None, str | None]:
        """The lobby a join link opens, or why not (the words of a refusal page): a link we
        never made, or of an older generation, reads as no link at all."""
        claim = site.links.read(token)
        c = claim if claim is not None else Claim("join", "", "", None, -1)
        lobby = site.chats.lobby(c.game) if c.game else None
        if claim is None or c.kind != "join" or lobby is None or c.epoch != lobby.join_epoch:
            return None, t("web.join_bad")
        if lobby.status == "started":
            return None, t("web.join_started", code=lobby.code)
        if lobby.status != "open":
            return None, t("web.join_cancelled", code=lobby.code)
        if not site.joins_open:
            return None, t("web.join_off")
        return lobby, None

    def known_key(request: Request) -> str | None:
        """The contact whose key this browser keeps (its cookie), if the key is still good:
        the key page's own check (one read whatever the cookie holds)."""
        return key_contact(request.cookies.get(COOKIE, "")[:512])

    def form(lobby: Lobby, answers: list[str] | None = None, name: str = "",
             status: int = 200) -> HTMLResponse:
        return site.page("join.html", status=status, answers=answers, typed=name,
                         code=lobby.code, ruleset=ruleset_name(lobby.ruleset),
                         joined=len(site.chats.members(lobby.code)), players=lobby.players)

    def keep(code: str, contact: str, answers: list[str] | None = None) -> HTMLResponse:
        """The page that gives a player their key (a join, a seat taken over), and keeps it
        in this browser for the join pages."""
        key = key_url(site, contact)
        response = site.page("joined.html", answers=answers, code=code, key=key,
                             key_qr=qr.inline_svg(key, t("web.key_qr")))
        token = key.rsplit("/", 1)[1]
        response.set_cookie(COOKIE, token, max_age=COOKIE_DAYS * 86400, path="/",
                            secure=site.root.startswith("https:"), httponly=True,
                            samesite="lax")
        return response

    def new_contact() -> str:
        """A contact for a browser with no key (a join, a seat taken), known before it joins
        so that a key is never given that finds no one."""
        contact = new_page_contact()
        site.web.know(contact, digest(contact), site.now())
        return contact

    def member(code: str, contact: str | None) -> bool:
        return contact is not None and any(m.contact_id == contact
                                           for m in site.chats.members(code))

    @api.get("/join/{token}", response_class=HTMLResponse)
    async def join_page(token: str, request: Request) -> HTMLResponse:
        lobby, why = await run_in_threadpool(lobby_of, token)
        if lobby is None:
            return site.denied(why, 410 if why != t("web.join_bad") else 404)
        contact = await run_in_threadpool(known_key, request)
        if contact is not None and await run_in_threadpool(member, lobby.code, contact):
            return keep(lobby.code, contact, [t("web.join_again")])
        return form(lobby)

    @api.post("/join/{token}", response_class=HTMLResponse)
    async def join(token: str, request: Request) -> HTMLResponse:
        if site.joins is not None and not site.joins.take(("join", site.client(request)),
                                                           site.now()):
            return site.denied(t("web.join_too_many"), 429)
        lobby, why = await run_in_threadpool(lobby_of, token)
        if lobby is None:
            return site.denied(why, 410 if why != t("web.join_bad") else 404)
        fields = await site.form(request)
        name = fields.get("name", "").strip()
        if not name:
            return form(lobby, [t("web.join_empty")], status=400)
        contact = await run_in_threadpool(known_key, request)
        if contact is not None and await run_in_threadpool(member, lobby.code, contact):
            return keep(lobby.code, contact, [t("web.join_again")])
        new = contact is None
        if contact is None:
            contact = await run_in_threadpool(new_contact)
        answers = await site.send(contact, f"报名 {lobby.code} {name}",
                                  fields.get("nonce", ""), {f"contact:{contact}"})
        if await run_in_threadpool(member, lobby.code, contact):
            return keep(lobby.code, contact, answers)
        if new:
            await run_in_threadpool(site.web.forget, contact)
        return form(lobby, answers, name[:32], status=400)

    @api.get("/join/{token}/qr.png")
    async def join_png(token: str) -> Response:
        lobby, why = await run_in_threadpool(lobby_of, token)
        if lobby is None:
            return site.denied(why, 404)
        return Response(qr.png(site.url(f"/join/{token}")), media_type="image/png")

    @api.get("/join/{token}/qr.svg")
    async def join_svg(token: str) -> Response:
        lobby, why = await run_in_threadpool(lobby_of, token)
        if lobby is None:
            return site.denied(why, 404)
        return Response(qr.svg(site.url(f"/join/{token}")), media_type="image/svg+xml")

    # a substitute's link (`替补 S` where people join by link) ------------------------------------
    def take_form(token: str, answers: list[str] | None = None, status: int = 200
                  ) -> HTMLResponse:
        return site.page("take.html", status=status, answers=answers)

    @api.get("/take/{token}", response_class=HTMLResponse)
    async def take_page(token: str) -> HTMLResponse:
        if not SUB_TOKEN.fullmatch(token) or not site.joins_open:
            return site.denied(t("web.take_bad"), 404)
        return take_form(token)

    @api.post("/take/{token}", response_class=HTMLResponse)
    async def take(token: str, request: Request) -> HTMLResponse:
        """`接替 TOKEN` sent for this browser's contact (a new one if it has no key): the
        same checks as the chat's; the seat's key given as a join's is."""
        if site.joins is not None and not site.joins.take(("join", site.client(request)),
                                                           site.now()):
            return site.denied(t("web.join_too_many"), 429)
        if not SUB_TOKEN.fullmatch(token) or not site.joins_open:
            return site.denied(t("web.take_bad"), 404)
        fields = await site.form(request)
        contact = await run_in_threadpool(known_key, request)
        new = contact is None
        if contact is None:
            contact = await run_in_threadpool(new_contact)
        before = set((await run_in_threadpool(site.chats.sender, contact)).playing)
        answers = await site.send(contact, f"接替 {token}", fields.get("nonce", ""),
                                  {f"contact:{contact}"})
        after = (await run_in_threadpool(site.chats.sender, contact)).playing
        gained = sorted(after - before)
        if gained:
            return keep(gained[0], contact, answers)
        if new:
            await run_in_threadpool(site.web.forget, contact)
        return take_form(token, answers, 400)

    # the player's key ----------------------------------------------------------------------------
    def mine(contact: str, seats: list[Seated], lobbies: list[tuple[str, str]]
             ) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        for code, name in lobbies:
            lobby = site.chats.lobby(code)
            if lobby is not None:
                out.append((t("web.key_lobby", code=code, name=name,
                              joined=len(site.chats.members(code)), players=lobby.players),
                            None))
        epoch = site.chats.link_epoch(contact)  # (once, not once per seat)
        for seat in seats:
            out.append((t("web.key_seat" if seat.active else "web.key_seat_over",
                          code=seat.code, seat=seat.seat),
                        site.seat_link(seat.code, contact, seat.seat, epoch=epoch)))
        return out

    def key_view(contact: str, token: str, answers: list[str] | None = None, *,
                 seats: list[Seated] | None = None,
                 lobbies: list[tuple[str, str]] | None = None) -> HTMLResponse:
        """The key's page (`seats`, `lobbies`: as the request already read them)."""
        seats = site.web.seats(contact) if seats is None else seats
        lobbies = site.web.lobbies(contact) if lobbies is None else lobbies
        return site.page("key.html", answers=answers, mine=mine(contact, seats, lobbies),
                         inbox=site.inbox(contact, free_only=True),
                         inbox_title=t("web.key_inbox"),
                         stream=site.stream(f"/k/{token}/events"))

    @api.get("/k/{token}", response_class=HTMLResponse)
    async def key(token: str) -> Response:
        contact = await run_in_threadpool(key_contact, token)
        if contact is None:
            return site.denied(t("web.key_denied"))
        seats = await run_in_threadpool(site.web.seats, contact)
        lobbies = await run_in_threadpool(site.web.lobbies, contact)
        active = [s for s in seats if s.active]
        if len(active) == 1 and not lobbies:  # the game under way: its seat's page
            url = await run_in_threadpool(site.seat_link, active[0].code, contact,
                                          active[0].seat)
            return RedirectResponse(url, status_code=303)
        return await run_in_threadpool(key_view, contact, token, seats=seats, lobbies=lobbies)

    @api.get("/k/{token}/events")
    async def key_events(token: str) -> Response:
        """The key's stream: what the player is sent (a lobby's news), and their lobbies'
        joins; once the game is under way the key opens the seat's page and its stream."""
        contact = await run_in_threadpool(key_contact, token)
        if contact is None:
            return site.denied(t("web.key_denied"))
        return site.streaming(await run_in_threadpool(site.own_keys, contact))

    @api.post("/k/{token}", response_class=HTMLResponse)
    async def key_send(token: str, request: Request) -> HTMLResponse:
        contact = await run_in_threadpool(key_contact, token)
        if contact is None:
            return site.denied(t("web.key_denied"))
        if not site.allowed(("k", contact)):
            return site.denied(t("web.too_many"), 429)
        fields = await site.form(request)
        answers = await site.send(contact, fields.get("cmd", ""), fields.get("nonce", ""),
                                  {f"contact:{contact}"})
        return await run_in_threadpool(key_view, contact, token, answers)

    return api
