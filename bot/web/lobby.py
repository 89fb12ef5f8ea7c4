"""The judge's page of a game before it starts (issue 30, item 3): who joined, seen live, each
with a `踢出` button; `开始`, `结束` (the lobby closed: the game cancelled) and `报名链接 重置`;
the join link with its QR code (inline, and as PNG and SVG files to paste into the forum or a
group). Every button is a form sending `cmd` (the command as a judge types it) and `nonce`,
through the judge's page (`/j/TOKEN`, bot/web/app.py), answered there."""

from __future__ import annotations

from fastapi.responses import HTMLResponse

from bot.store.models import Lobby
from bot.texts import ruleset_name, t
from bot.web import qr
from bot.web.site import Site


def lobby_view(site: Site, lobby: Lobby, contact: str, answers: list[str] | None = None
               ) -> HTMLResponse:
    code = lobby.code
    members = [m.forum_name for m in site.chats.members(code)]
    is_open = lobby.status == "open"
    join = site.join_url(code, lobby.join_epoch or 0) if is_open and site.joins_open else None
    status = (t("web.lobby_status", joined=len(members), players=lobby.players) if is_open
              else t("web.lobby_closed"))
    return site.page(
        "lobby.html", answers=answers, code=code, open=is_open, state_line=status,
        title=t("web.lobby_title", code=code, ruleset=ruleset_name(lobby.ruleset),
                players=lobby.players),
        members=members, players=lobby.players, join=join,
        join_qr=qr.inline_svg(join, t("web.lobby_join")) if join else "",
        inbox=site.inbox(contact, lobby.time_zone, free_only=True),
        home=site.link("h", "", contact) if site.chats.creates_games(contact) else None,
        inbox_title=t("web.lobby_inbox"))
