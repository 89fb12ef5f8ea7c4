"""A game with no chat account, played over HTTP (issue 30): the bot on the web channel
(bot/transport/web.py) with its pages (FastAPI's TestClient, one client per phone, each with its
own cookies), the demo's scripted players deciding what to do, and every word they say going
through their pages: the judge from `wolfjudge judge-link` (their home, the 新游戏 form, the
lobby on the judge's page, `开始`, then the judge's page), twelve players joined by the join
link (each keeps the key it was given; the key opens the seat's page), every action on the
seat's page, the killers' on their room's page, where they also talk to each other.

The transport records what it was given (the record tests/chat/told.py reads), so that every
page can be audited after every step against what was delivered to its contact."""

from __future__ import annotations

import contextlib
import html
import io
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_web_games import PagedDemo
from told import history_lines, received_lines

from bot.chat.demo import Demo
from bot.cli import main
from bot.transport import TransportCourier
from bot.transport.memory import Sent
from bot.transport.web import WebTransport
from bot.web.app import create_app
from bot.web.links import SECRET_NAME, Links, PageLinks, new_secret

BASE = "https://wolf.example.org"
JUDGE = "法官"
TALK = "今晚我们商量一下刀谁"


class RecordingWeb(WebTransport):
    """The web transport, keeping the record told.py reads: what each contact and room got,
    and the rooms' members as the chat layer changed them."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.sent: list[Sent] = []

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        self.sent.append(Sent("dm", contact, text))

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        self.sent.append(Sent("post", room, text))

    def create_room(self, name: str, members: list[str]) -> str:
        room = super().create_room(name, members)
        self.sent.append(Sent("create", room, members=tuple(members)))
        return room

    def add_member(self, room: str, contact: str) -> None:
        self.sent.append(Sent("add", room, members=(contact,)))

    def remove_member(self, room: str, contact: str) -> None:
        self.sent.append(Sent("remove", room, members=(contact,)))


def path(url: str, base: str = BASE) -> str:
    assert url.startswith(base + "/"), url  # every link a page shows is absolute, ours
    return url[len(base):]


def links_on(page: str) -> list[str]:
    return [html.unescape(u) for u in re.findall(r'href="([^"]+)"', page)]


def shown(page: str) -> list[str]:
    """The answers a page shows, one per message."""
    m = re.search(r'<div class="answers"[^>]*>(.*?)</div>', page, re.S)
    return [html.unescape(a) for a in re.findall(r"<pre>(.*?)</pre>", m.group(1), re.S)
            ] if m else []


def answers(page: str) -> str:
    m = re.search(r'<div class="answers"[^>]*>(.*?)</div>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1))) if m else ""


def web_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, base: str = BASE,
             options: tuple[str, ...] = ()) -> WebOnlyGame:
    """A classic game (seed 2) web-only, its pages at `base` (`judge-link` reads it from the
    environment, with the key kept in the database), not audited after every step."""
    monkeypatch.setenv("WOLFJUDGE_WEB_URL", base)
    monkeypatch.delenv("WOLFJUDGE_WEB_SECRET", raising=False)
    game = WebOnlyGame("classic", 2, f"sqlite:///{tmp_path / 'g.db'}", options=options,
                       base=base)
    game.audit = False
    return game


@contextlib.contextmanager
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           app: Callable[[WebOnlyGame], Any] | None = None) -> Iterator[WebOnlyGame]:
    """`web_only`'s game with its pages served by uvicorn on loopback (its base: a
    browser's or an event stream's), closed after; `app`: another app for the game."""
    import uvicorn
    from test_web_browser import _free_port, running

    port = _free_port()
    game = web_only(tmp_path, monkeypatch, base=f"http://127.0.0.1:{port}")
    if app is not None:
        game.app = app(game)
    server = uvicorn.Server(uvicorn.Config(game.app, host="127.0.0.1", port=port,
                                           access_log=False, log_level="warning",
                                           lifespan="off", timeout_graceful_shutdown=1))
    with running(server):
        yield game
    game.service.close()


class WebOnlyGame(Demo):
    """The demo's game, played web-only. `audit`: every page checked after every step."""

    audit = True

    def __init__(self, ruleset: str, seed: int, db_url: str, *, options: tuple[str, ...] = (),
                 base: str = BASE) -> None:
        """`base`: the pages' public base URL (a browser test's own server)."""
        super().__init__(ruleset, seed, io.StringIO(), db_url, options)
        self.db_url = db_url
        self.base = base
        bot = self.console.bot
        self.transport = self.recording = RecordingWeb(bot.chats)
        self.console.transport = bot.transport = bot.rooms.transport = self.transport
        bot.courier = TransportCourier(self.transport)
        self.service.judges = frozenset()  # nobody judges by the settings: the judge is granted
        self.links = Links(bot.chats.secret(SECRET_NAME, new_secret), self.utc)
        bot.lobby.ctx.web = PageLinks(base, self.links)
        self.app = create_app(self.service, bot.chats, self.links, now=self.utc, bot=bot,
                              base=base)
        self.phones: dict[str, TestClient] = {}  # contact -> its browser
        self.keys: dict[str, str] = {}  # contact -> its key (path)
        self.seat_pages: dict[str, str] = {}  # contact -> its seat's page (path)
        self.home = ""
        self.judge_page = ""
        self.join = ""
        self.audits = 0
        self.talked: list[tuple[int, str]] = []  # (seat, line) said in the wolves' room

    def path(self, url: str) -> str:
        return path(url, self.base)

    def utc(self) -> datetime:
        return self.clock.now().astimezone(UTC).replace(tzinfo=None)

    def phone(self, contact: str) -> TestClient:
        if contact not in self.phones:
            self.phones[contact] = TestClient(self.app, base_url=self.base,
                                              follow_redirects=False)
        return self.phones[contact]

    # the start: judge-link, the home, the join link --------------------------------------------
    def run(self) -> str:
        self.open()
        self.fill()
        self.begin()
        return self.play()

    def fill(self, players: int = 12) -> None:
        """`players` phones join by the join link, as 马甲01, 马甲02 …"""
        for i in range(1, players + 1):
            self.join_as(f"马甲{i:02d}")

    def until_room(self, group: str) -> None:
        """The game moves on until its room `group` is made."""
        while not self.room(group):
            assert self.advance()

    def open(self, **form: str) -> str:
        """The judge from `judge-link` to a lobby made with the home's 新游戏 form (`form`:
        more of its fields); the answer."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["judge-link", JUDGE, "--db", self.db_url]) == 0
        self.home = self.path(out.getvalue().strip())
        judge = self.phone(JUDGE)
        page = judge.get(self.home)
        assert page.status_code == 200 and "新游戏" in page.text
        fields = {"cmd": "新游戏", "nonce": uuid.uuid4().hex, "ruleset": self.ruleset,
                  "players": "12", "opt.votes.channel": "dm"}
        for option in self.options:
            key, _, value = option.partition("=")
            fields[f"opt.{key}"] = value
        page = judge.post(self.home, data={**fields, **form})
        said = answers(page.text)
        m = re.search(r"游戏码 ([A-Z0-9]{4,8})", said)
        assert page.status_code == 200 and m, said
        self.code = m.group(1)
        self.join = self.path(next(u for u in links_on(page.text) if "/join/" in u
                              and not u.endswith((".png", ".svg"))))
        self.judge_page = self.path(next(u for u in links_on(page.text) if "/j/" in u))
        return said

    def begin(self) -> None:
        """The judge sees the twelve who joined on the lobby's page and presses 开始."""
        judge = self.phone(JUDGE)
        page = judge.get(self.judge_page)
        names = [m.forum_name for m in self.console.bot.chats.members(self.code)]
        assert f"{len(names)}/12" in page.text and all(n in page.text for n in names)
        page = judge.post(self.judge_page, data={"cmd": "开始", "nonce": uuid.uuid4().hex})
        assert page.status_code == 200 and "已开始" in answers(page.text), answers(page.text)
        self.check_pages()

    def join_as(self, name: str) -> str:
        """A new phone opens the join link and joins as `name`; it keeps its key."""
        before = {m.contact_id for m in self.console.bot.chats.members(self.code)}
        browser = TestClient(self.app, base_url=self.base, follow_redirects=False)
        assert browser.get(self.join).status_code == 200
        page = browser.post(self.join, data={"name": name, "nonce": uuid.uuid4().hex})
        assert page.status_code == 200, answers(page.text)
        key = self.path(next(u for u in links_on(page.text) if "/k/" in u))
        (contact,) = {m.contact_id for m in self.console.bot.chats.members(self.code)} - before
        self.phones[contact] = browser
        self.keys[contact] = key
        return contact

    def play(self) -> str:
        """The demo's game from the start to the end, its pages audited at the end too."""
        winner = self.play_out()
        self.check_pages()
        return winner

    # every word through a page -----------------------------------------------------------------
    def seat_page(self, contact: str) -> str:
        """The seat's page, as the player's key opens it."""
        if contact not in self.seat_pages:
            r = self.phone(contact).get(self.keys[contact])
            assert r.status_code == 303, r.text[:300]
            self.seat_pages[contact] = self.path(r.headers["location"])
        return self.seat_pages[contact]

    def say(self, name: str, text: str, room: str | None = None) -> str:
        nonce = uuid.uuid4().hex
        page = self.judge_page if name == JUDGE else self.seat_page(name)
        if room is not None:
            group = self.console.bot.chats.sender(None, room).room_group
            assert group is not None
            page = f"{page}/room/{group}"
        r = self.phone(name).post(page, data={"cmd": text, "nonce": nonce})
        assert r.status_code == 200, (name, text, r.status_code, r.text[:500])
        for said in shown(r.text):  # the page delivered its answer itself: to this contact
            self.transport.sent.append(Sent("dm", name, said))
        return self.console.bot.chats.outcome(f"web/{nonce}") or "handled"

    def night_action(self, key: str, seat: int, name: str, seen: Any, others: list[int]
                     ) -> None:
        if key.split(":")[0] == "kill" and self.room("wolves"):
            line = f"{TALK}（{seat}号，{self.service.state(self.code).phase}）"
            self.say(name, line, self.room("wolves"))  # the wolves talk on their room's page
            self.talked.append((seat, line))
        super().night_action(key, seat, name, seen, others)

    def turn(self, state: Any) -> None:
        super().turn(state)
        if self.audit:
            self.check_pages()

    def advance(self) -> bool:
        moved = super().advance()
        if self.audit:
            self.check_pages()
        return moved

    # the knowledge audit -----------------------------------------------------------------------
    def check_pages(self) -> None:
        """Every seat's page and every room page its contact may open holds nothing its
        contact was not delivered; no page shows a contact made by a join link."""
        chats = self.console.bot.chats
        contacts = set(self.keys)
        for contact in contacts:
            page = self.phone(contact).get(self.seat_page(contact)).text
            got = received_lines(self.transport.sent, contact)
            stray = [line for line in history_lines(page) if line not in got]
            assert stray == [], (contact, stray)
            assert "page:" not in page
            for room in [u for u in links_on(page) if "/room/" in u]:
                r = self.phone(contact).get(self.path(room))
                assert r.status_code == 200
                stray = [line for line in history_lines(r.text) if line not in got]
                assert stray == [], (contact, room, stray)
                assert "page:" not in r.text
        judge = self.phone(JUDGE).get(self.judge_page).text
        assert "page:" not in judge
        assert all(c.startswith("page:") for c in chats.contacts(self.code).values())
        # the spectators' page: the public board only (tests/chat/test_web_games.py's audit)
        spectator = TestClient(self.app, base_url=self.base)
        PagedDemo.public_page(self, spectator, self.service.state(self.code),  # type: ignore[arg-type]
                              self.service.game_log(self.code))
        assert "page:" not in spectator.get(f"/g/{self.code}").text
        self.audits += 1
