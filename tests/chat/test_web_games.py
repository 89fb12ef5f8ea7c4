"""The pages over whole games of every registered ruleset (issue 24, part 6; issue 33): the
demo's scripted players play to the end, and every seat's page is opened as the browser gets
it (the app's HTML, through FastAPI's TestClient): the judge's page shows what `状态` shows;
each seat's page shows exactly what its contact was delivered (every line of its history is a
line the transport sent to that contact, or posted in a room it was in at that moment), its
own role card and its own `状态`, and no other seat's contact. After every step with the
default channels; at the end of a game under every channel option (votes, public
announcements, rooms). tests/chat/test_web_browser.py and test_web_replay.py open pages in
Chromium."""

from __future__ import annotations

import html
import io
import itertools
import re
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from told import history_lines, received, received_lines

from bot.chat import reports
from bot.chat.demo import Demo
from bot.render import render_event
from bot.router import announced
from bot.service import event_of
from bot.transport import TransportCourier
from bot.transport.console import ConsoleTransport, Output
from bot.transport.memory import Sent
from bot.web.app import create_app
from bot.web.links import Links
from engine.ruleset import ruleset_names

RULESETS = ruleset_names()
CHANNELS = [" ".join(words) for words in itertools.product(
    ("votes.channel=dm", "votes.channel=forum"), ("public.channel=dm", "public.channel=room"),
    ("groups.mode=auto", "groups.mode=relay"))]


def announced_alive(state: Any, rows: list[Any]) -> list[int]:
    """The living as the table was told (the scripted players' reading, bot/chat/demo.py):
    each day post's list, less the exiles, red cards and self-destructs announced since."""
    if state.over:
        return [st.seat for st in state.seats if st.alive]
    alive = [st.seat for st in state.seats]
    for r in rows:
        if r.kind != "event" or not (r.audience or {}).get("public"):
            continue
        data = event_of(r.body).data
        if r.type == "DayOpened":
            alive = list(data["alive"])
        elif r.type in ("Exiled", "RedCard", "SelfDestruct") and data.get("seat") in alive:
            alive.remove(data["seat"])
    return alive


def _pre(page: str, ident: str) -> str:
    m = re.search(rf'<section id="{ident}">.*?<pre>(.*?)</pre>', page, re.S)
    assert m is not None, page[:500]
    return html.unescape(m.group(1))


class Recording(ConsoleTransport):
    """The console's transport, keeping the record a memory transport keeps (tests/chat/
    told.py reads it): every DM and post, and every room's members as they change."""

    def __init__(self, out: Output) -> None:
        super().__init__(out)
        self.sent: list[Sent] = []

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        super().send_dm(contact, text, key=key)
        self.sent.append(Sent("dm", contact, text))

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        super().post(room, text, key=key)
        self.sent.append(Sent("post", room, text))

    def create_room(self, name: str, members: list[str]) -> str:
        room = super().create_room(name, members)
        self.sent.append(Sent("create", room, members=tuple(members)))
        return room

    def add_member(self, room: str, contact: str) -> None:
        if contact not in self.rooms.get(room, []):
            self.sent.append(Sent("add", room, members=(contact,)))
        super().add_member(room, contact)

    def remove_member(self, room: str, contact: str) -> None:
        if contact in self.rooms.get(room, []):
            self.sent.append(Sent("remove", room, members=(contact,)))
        super().remove_member(room, contact)


class PagedDemo(Demo):
    """The demo on a recording transport, with every page checked after each step
    (`every_step`) or when asked."""

    page_checks = 0
    every_step = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.recording = Recording(self.out)
        bot = self.console.bot
        self.console.transport = bot.transport = bot.rooms.transport = self.recording
        bot.courier = TransportCourier(self.recording)

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
            got = received_lines(self.recording.sent, contact)
            stray = [line for line in history_lines(page) if line not in got]
            assert stray == [], (seat, stray)
            card = _pre(page, "card")
            assert card and any(card in text for text in received(self.recording.sent,
                                                                    contact))
            assert _pre(page, "status") == reports.player_status(state, seat, self.code,
                                                                name or "", rows)
            others = [c for n, (c, _) in players.items() if n != seat and c]
            assert not any(f">{c}<" in page or f" {c} " in page for c in others)
        self.public_page(client, state, rows)
        self.page_checks += 1

    def public_page(self, client: TestClient, state: Any, rows: list[Any]) -> None:
        """The public page holds what the table was told in public, and nothing a seat was
        told privately: its posts are public announcements (or the public room's posts), its
        living are the announced ones, no private or group message is in it."""
        page = client.get(f"/g/{self.code}").text
        told = {line.strip() for r in rows if r.kind == "event"
                and (r.audience or {}).get("public")
                and announced(r.type)
                for line in render_event(event_of(r.body), state.ruleset).split("\n")}
        room = self.console.bot.chats.room_id(self.code, "public")
        told |= {line.strip() for s in self.recording.sent
                 if s.kind == "post" and s.target == room for line in s.text.split("\n")}
        stray = [line for line in history_lines(page) if line not in told]
        assert stray == [], stray
        text = html.unescape(re.sub(r"<[^>]+>", " ", page))
        for r in rows:
            if r.kind != "event" or (r.audience or {}).get("public"):
                continue
            secret = render_event(event_of(r.body), state.ruleset)
            assert len(secret) < 8 or secret not in text, (r.type, secret)
        board = re.search(r'<section id="board">\s*<h2>[^<]*</h2>\s*<p>([^<]*)</p>', page)
        assert board is not None
        shown = [int(n) for n in re.findall(r"(\d+)号", board.group(1))]
        assert shown == announced_alive(state, rows), (shown, state.phase)

    def turn(self, state: object) -> None:
        super().turn(state)
        if self.every_step:
            self.pages()

    def advance(self) -> bool:
        moved = super().advance()
        if self.every_step:
            self.pages()
        return moved


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_page_at_every_step_of_a_whole_game(tmp_path: Path, ruleset: str) -> None:
    demo = PagedDemo(ruleset, 2, io.StringIO(), f"sqlite:///{tmp_path / 'g.db'}")
    assert demo.run() != "none"
    assert demo.page_checks > 10


@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_line_of_every_seats_page_was_sent_to_that_seat(
        tmp_path: Path, ruleset: str, channels: str) -> None:
    """Issue 33: under every channel option, a seat's page holds only what its contact was
    sent (by DM, or in a room while it was in it): no vote it was not told, no room post
    from after it left the room."""
    demo = PagedDemo(ruleset, 3, io.StringIO(), f"sqlite:///{tmp_path / 'g.db'}",
                     channels.split())
    demo.every_step = False
    demo.run()
    demo.service = type(demo.service)(f"sqlite:///{tmp_path / 'g.db'}")  # (run closed it)
    demo.pages()
    assert demo.page_checks == 1
