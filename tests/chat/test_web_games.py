"""The pages over whole games of both rulesets (issue 24, part 6): the demo's scripted players
play to the end, and after every step (each seat's turn, each deadline) every page is opened
as the browser gets it (the app's HTML, through FastAPI's TestClient): the judge's page shows
what `状态` shows; each seat's page shows only messages whose audience reaches that seat (so no
other seat's role, no seer result or kill target it was not told: tests/test_hygiene.py
checks those audiences), its own role card and its own `状态`, and no other seat's contact.
tests/chat/test_web_browser.py and test_web_replay.py open pages in Chromium."""

from __future__ import annotations

import html
import io
import re
from datetime import UTC
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bot.chat import reports
from bot.chat.demo import Demo
from bot.render import render_event
from bot.service import event_of
from bot.web.app import create_app
from bot.web.links import Links
from engine.ruleset import ruleset_names


def _pre(page: str, ident: str) -> str:
    m = re.search(rf'<section id="{ident}">.*?<pre>(.*?)</pre>', page, re.S)
    assert m is not None, page[:500]
    return html.unescape(m.group(1))


class PagedDemo(Demo):
    """The demo, with every page checked after each step."""

    page_checks = 0

    def pages(self) -> None:
        if not self.code:
            return
        chats = self.console.bot.chats
        links = Links("s", lambda: self.clock.now().astimezone(UTC).replace(tzinfo=None))
        client = TestClient(create_app(self.service, chats, links,
                                       now=lambda: self.clock.now().astimezone(UTC)
                                       .replace(tzinfo=None)))
        state = self.service.state(self.code)
        players = chats.players(self.code)
        judge_page = client.get("/j/" + links.make("j", self.code, "法官", None, 0)).text
        assert _pre(judge_page, "status") == reports.judge_status(state, self.code, players)
        rows = self.service.game_log(self.code)
        for seat, (contact, name) in players.items():
            assert contact is not None
            page = client.get("/p/" + links.make("p", self.code, contact, seat, 0)).text
            told = [r for r in rows if r.kind == "event" and (
                (r.audience or {}).get("public") or seat in (r.audience or {}).get("seats", []))]
            texts = {render_event(event_of(r.body), state.ruleset) for r in told}
            history = [html.unescape(h) for h in re.findall(
                r"<li><time>[^<]*</time> (.*?)</li>", page, re.S)]
            assert all(h in texts for h in history), (seat, set(history) - texts)
            dealt = next(render_event(event_of(r.body), state.ruleset) for r in told
                         if r.type == "RoleDealt")
            assert _pre(page, "card") == dealt
            assert _pre(page, "status") == reports.player_status(state, seat, self.code,
                                                                name or "", rows)
            others = [c for n, (c, _) in players.items() if n != seat and c]
            assert not any(f">{c}<" in page or f" {c} " in page for c in others)
        self.page_checks += 1

    def turn(self, state: object) -> None:
        super().turn(state)
        self.pages()

    def advance(self) -> bool:
        moved = super().advance()
        self.pages()
        return moved


@pytest.mark.parametrize("ruleset", ruleset_names())
def test_every_page_at_every_step_of_a_whole_game(tmp_path: Path, ruleset: str) -> None:
    demo = PagedDemo(ruleset, 2, io.StringIO(), f"sqlite:///{tmp_path / 'g.db'}")
    assert demo.run() != "none"
    assert demo.page_checks > 10
