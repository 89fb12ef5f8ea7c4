"""A game's rooms as pages (issue 30, item 1): the wolves' room, the lovers' room, the public room
where the platform is the pages (or beside a chat platform: a member reads the room there too).

`/p/TOKEN/room/GROUP` (from a seat's page) and `/j/TOKEN/room/GROUP` (from the judge's): the
room's posts that went while the page's contact was in the room, and a send box. What a member
types there is said in the room: the bot posts it to the others (`【狼群】5号：…`, as relay
mode does in chat) and handles a command in it as in a chat room (`刀 5` in the wolves' room);
an answer meant for the sender alone is shown on the page. The public room (`public.channel=
room`) is read only: it carries the announcements; the table talks on the forum, where the
spectators read too. Who may open a room is decided on
every request by the room's members as the bot records them: a member taken out (gone out,
the lovers' room after a death, a seat handed over) loses the page at once (403).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from bot.chat.rooms import PUBLIC
from bot.service import UnknownGame
from bot.texts import phase_text, room_name, t
from bot.web.links import Claim, Kind
from bot.web.site import Site

Admit = Callable[[str, Kind], "tuple[Claim, str] | None"]


@dataclass(frozen=True)
class Line:
    at: str
    text: str


def room_links(site: Site, kind: Kind, token: str, game: str, contact: str
               ) -> list[tuple[str, str]]:
    """The rooms `contact` is in now, each with its page under the page `kind`/`token`."""
    return [(t("web.room_title", code=game, room=room_name(g)),
             site.url(f"/{kind}/{token}/room/{g}"))
            for g in site.web.rooms_in(game, contact) if site.chats.room_id(game, g)]


def router(site: Site, admitted: Admit) -> APIRouter:
    """`admitted(token, kind)`: the app's check of a judge's or a seat's link (bot/web/app.py)
    -> (claim, contact) or None."""
    api = APIRouter()

    def entry(token: str, kind: Kind, group: str) -> tuple[Claim, str, str] | None:
        """The link's claim, its contact and the room's id, if the contact is in the room
        now."""
        found = admitted(token, kind)
        if found is None:
            return None
        claim, contact = found
        room = site.chats.room_id(claim.game, group)
        if room is None or contact not in site.chats.room_members(claim.game, group):
            return None
        return claim, contact, room

    def view(kind: Kind, token: str, claim: Claim, contact: str, group: str,
             answers: list[str] | None = None) -> HTMLResponse:
        code = claim.game
        tz = site.service.time_zone(code)
        history = [Line(site.wall(at, tz), text)
                   for at, text in site.web.room_posts(code, group, contact)][::-1]
        try:
            phase = phase_text(site.service.state(code).phase)
        except UnknownGame:
            phase = ""
        return site.page("room.html", answers=answers, history=history, phase=phase,
                         talk=group != PUBLIC,
                         title=t("web.room_title", code=code, room=room_name(group)),
                         back=site.url(f"/{kind}/{token}"),
                         stream=site.stream(f"/{kind}/{token}/events"))

    async def show(kind: Kind, token: str, group: str) -> HTMLResponse:
        found = await run_in_threadpool(entry, token, kind, group)
        if found is None:
            return site.denied(t("web.room_denied"))
        claim, contact, _room = found
        return await run_in_threadpool(view, kind, token, claim, contact, group)

    async def say(kind: Kind, token: str, group: str, request: Request) -> HTMLResponse:
        found = await run_in_threadpool(entry, token, kind, group)
        if found is None:
            return site.denied(t("web.room_denied"))
        claim, contact, room = found
        if group == PUBLIC:  # announcements only: the table talks on the forum
            return site.denied(t("web.room_read_only"), 405)
        if not site.allowed((claim.kind, claim.game, claim.contact, claim.seat)):
            return site.denied(t("web.too_many"), 429)
        fields = await site.form(request)
        answers = {f"contact:{contact}"} | ({f"seat:{claim.seat}"} if kind == "p" else {"judge"})
        got = await site.send(contact, fields.get("cmd", ""), fields.get("nonce", ""), answers,
                              game=claim.game, room=room)
        return await run_in_threadpool(view, kind, token, claim, contact, group, got)

    @api.get("/p/{token}/room/{group}", response_class=HTMLResponse)
    async def seat_room(token: str, group: str) -> HTMLResponse:
        return await show("p", token, group)

    @api.post("/p/{token}/room/{group}", response_class=HTMLResponse)
    async def seat_room_say(token: str, group: str, request: Request) -> HTMLResponse:
        return await say("p", token, group, request)

    @api.get("/j/{token}/room/{group}", response_class=HTMLResponse)
    async def judge_room(token: str, group: str) -> HTMLResponse:
        return await show("j", token, group)

    @api.post("/j/{token}/room/{group}", response_class=HTMLResponse)
    async def judge_room_say(token: str, group: str, request: Request) -> HTMLResponse:
        return await say("j", token, group, request)

    return api
