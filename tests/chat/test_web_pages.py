"""The game on a page (issue 24, the first parts): `网页` links (signed, expiring, bound to a
contact, a game and a seat, revoked by `网页 重置` and by a substitution), the judge's page
(what `状态` shows, the tally, the timeline), a seat's page (only what the seat was told),
403 for every bad link, the headers that keep a link secret, and hostile text kept inert.

Served by FastAPI's TestClient on the test's own clock; tests/chat/test_web_browser.py opens
the same pages in a real browser."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_chat_judge import JUDGE, TZ, Table, _day1
from told import history_lines, received, received_lines

from bot.chat.bot import ChatBot
from bot.web.app import HEADERS, create_app
from bot.web.links import Links, PageLinks

BASE = "https://pages.example"


class WebTable(Table):
    """The chat table with the pages on: `网页` gives links, `get` opens one."""

    def __init__(self, tmp_path: Path, *options: str, names: dict[int, str] | None = None
                 ) -> None:
        self._names = names or {}
        super().__init__(tmp_path, *options)

    def say(self, sender: str, text: str, room: str | None = None) -> str:
        if text.startswith("报名 ") and sender.startswith("p"):
            i = int(sender[1:])
            text = re.sub(r"马甲\d+$", self._names.get(i, f"马甲{i}"), text)
        return super().say(sender, text, room)

    @property
    def links(self) -> Links:
        return Links("test-secret", lambda: self.now.astimezone(TZ).replace(tzinfo=None)
                     - timedelta(hours=8))

    pusher: Any = None  # the push reminders (tests/chat/test_web_push.py sets them)

    def pages_on(self) -> None:
        self.bot.players.ctx.web = PageLinks(BASE, self.links)
        self.client = TestClient(create_app(self.service, self.bot.chats, self.links,
                                            now=lambda: self.now.replace(tzinfo=None)
                                            - timedelta(hours=8), bot=self.bot, base=BASE,
                                            pusher=self.pusher))

    def link(self, sender: str, which: str = "") -> str:
        reply = self.say(sender, "网页")
        urls = re.findall(rf"{BASE}(/[jp]/\S+)", reply)
        assert urls, reply
        return next(u for u in urls if which in u) if which else urls[0]

    def get(self, path: str) -> tuple[int, str]:
        r = self.client.get(path)
        return r.status_code, r.text

    def post(self, path: str, text: str, nonce: str = "n1", **fields: str
             ) -> tuple[int, str]:
        r = self.client.post(path, data={"cmd": text, "nonce": nonce, **fields})
        self.bot.deliver()
        return r.status_code, r.text


@pytest.fixture
def web(tmp_path: Path) -> WebTable:
    table = WebTable(tmp_path)
    table.pages_on()
    _day1(table)
    return table


def _section(page: str, ident: str) -> str:
    m = re.search(rf'<section id="{ident}">(.*?)</section>', page, re.S)
    assert m is not None, page
    return m.group(1)


def _pre(page: str, ident: str) -> str:
    m = re.search(r"<pre>(.*?)</pre>", _section(page, ident), re.S)
    assert m is not None, page
    return html.unescape(m.group(1))


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_pages_off_without_a_base_url(tmp_path: Path) -> None:
    table = Table(tmp_path)
    assert "网页未开启" in table.say(JUDGE, "网页")


def test_the_judges_page_shows_what_status_shows(web: WebTable) -> None:
    web.move(datetime(2026, 12, 1, 12, 0))
    web.say(JUDGE, "记票 3 5 10:30")
    status, page = web.get(web.link(JUDGE, "/j/"))
    assert status == 200
    said = web.say(JUDGE, "状态")
    assert _pre(page, "status").strip() == said.strip()
    assert "5号" in _text(_section(page, "tally"))
    seats = _text(_section(page, "seats"))
    for n, contact in web.contact.items():
        assert contact in seats and f"马甲{n}" in seats
    assert "3号 投票给 5号" in _text(_section(page, "timeline"))


def test_a_seats_page_holds_only_what_the_seat_was_told(web: WebTable) -> None:
    web.move(datetime(2026, 12, 1, 21, 5))  # night 1: private messages went out
    for seat, contact in web.contact.items():
        status, page = web.get(web.link(contact))
        assert status == 200
        told = received_lines(web.transport.sent, contact)  # the outbox is the truth
        history = history_lines(page)
        assert history and all(line in told for line in history)
        text = _text(page)
        for other, other_contact in web.contact.items():
            assert other_contact not in text or other == seat
        own = web.state.seat(seat).role
        for st in web.state.seats:  # no other seat's role with its number (as 状态 names it)
            if st.seat != seat and st.role != own:
                assert f"{st.seat}号 马甲{st.seat} " not in text
        assert _pre(page, "status").strip() == web.say(contact, "状态").strip()


def test_every_bad_link_gets_403_and_shows_nothing(web: WebTable) -> None:
    seat = 3
    good = web.link(web.contact[seat])
    judge = web.link(JUDGE, "/j/")
    assert web.get(good)[0] == 200 and web.get(judge)[0] == 200
    token = good.split("/")[-1]
    bad = [
        "/p/forged", "/j/" + token,  # a seat's token is no judge's
        "/p/" + token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB"),  # tampered
        "/p/" + Links("another-secret", lambda: datetime(2026, 12, 1)).make(
            "p", web.code, web.contact[seat], seat, 0),  # signed by someone else
        "/p/" + web.links.make("p", web.code, web.contact[4], seat, 0),  # someone else's seat
    ]
    for path in bad:
        status, page = web.get(path)
        assert status == 403 and web.code not in page, path
    # expired: 7 days
    web.now += timedelta(days=8)
    assert web.get(good)[0] == 403 and web.get(judge)[0] == 403
    web.now -= timedelta(days=8)
    assert web.get(good)[0] == 200
    # revoked: 网页 重置
    assert "失效" in web.say(web.contact[seat], "网页 重置")
    assert web.get(good)[0] == 403
    fresh = web.link(web.contact[seat])
    assert web.get(fresh)[0] == 200
    # the seat changes hands: the old player's link stops working
    token_reply = web.say(JUDGE, f"替补 {seat}")
    sub = re.search(r"接替 (\S+)", token_reply)
    assert sub is not None, token_reply
    web.say("newcomer", f"接替 {sub.group(1)}")
    assert web.get(fresh)[0] == 403
    assert web.get(web.link("newcomer"))[0] == 200


def test_the_headers_keep_a_link_secret(web: WebTable) -> None:
    r = web.client.get(web.link(web.contact[1]))
    for key, value in HEADERS.items():
        assert r.headers[key] == value
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    # nothing from anywhere else: no absolute URL in the page but our own (its rooms' pages)
    assert not re.search(rf"(src|href)=\"(https?:)?//(?!{re.escape(BASE[8:])}/)", r.text)
    assert web.client.get("/p/forged").headers["Referrer-Policy"] == "no-referrer"


HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "{{7*7}}"]


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    """In a 马甲 (the lobby keeps `<`, `>` and `/`; it drops quotes, braces and spaces) and in
    last words (kept as written), on the judge's page and on every seat's."""
    names = {1: HOSTILE[0], 2: "><img/src=x/onerror=alert(1)>"}
    web = WebTable(tmp_path, names=names)
    web.pages_on()
    _day1(web)
    web.move(datetime(2026, 12, 1, 21, 5))
    killer = web.state.night.slots["kill"].seats[0]
    victim = next(s.seat for s in web.state.seats if s.role == "villager" and not s.lover_of)
    web.seat(killer, f"刀 {victim}")
    web.seat(killer, "锁定")
    web.move(datetime(2026, 12, 2, 8, 1))  # the night resolved: the victim has last words
    assert not web.state.seat(victim).alive
    words = " ".join(HOSTILE)
    web.seat(victim, f"遗言 {words}")
    web.move(datetime(2026, 12, 2, 9, 0))
    pages = [web.get(web.link(JUDGE, "/j/"))[1]] + [web.get(web.link(c))[1]
                                                    for c in web.contact.values()]
    stored = {n: name for n, (_, name) in web.players().items()}
    hostile_names = [name for name in stored.values() if "<" in (name or "")]
    assert len(hostile_names) == 2
    told = [JUDGE] + [c for c in web.contact.values()
                      if any(words in x for x in received(web.transport.sent, c))]
    assert len(told) >= 10  # the living seats (the dead were sent no more news)
    for contact, page in zip([JUDGE, *web.contact.values()], pages, strict=True):
        text = html.unescape(page)
        assert (words in text) == (contact in told)  # the last words, shown as written
        # and never markup: the one script is our own file
        assert re.findall(r"<script[^>]*>", page) == [
            '<script src="/static/live.js" defer>'] and "<img" not in page
        assert ("{{7*7}}" in page) == (contact in told)  # not a template either
    for name in hostile_names:
        assert name not in pages[0] and name in html.unescape(pages[0])


def test_a_judge_link_stops_working_for_a_judge_no_more(tmp_path: Path) -> None:
    web = WebTable(tmp_path)
    web.pages_on()
    link = web.link(JUDGE, "/j/")
    assert web.get(link)[0] == 200
    # a player's contact cannot use the judge's link kind for the game
    forged = "/j/" + web.links.make("j", web.code, web.contact[1], None, 0)
    assert web.get(forged)[0] == 403
    assert ChatBot  # (imported for the type of the table's bot)


def _answers(page: str) -> str:
    m = re.search(r'<div class="answers" role="status">(.*?)</div>', page, re.S)
    return _text(m.group(1)) if m else ""


def test_an_action_typed_on_a_seats_page_is_applied_and_answered_once(web: WebTable) -> None:
    web.move(datetime(2026, 12, 1, 21, 5))
    seer = web.role_seat("seer")
    target = next(n for n in range(1, 13) if n != seer)
    link = web.link(web.contact[seer])
    before = len(web.transport.dms(web.contact[seer]))
    status, page = web.post(link, f"验 {target}", nonce="check-1")
    assert status == 200 and "查验结果" in _answers(page), _answers(page)
    assert web.state.night.slots["see"].sub.targets == [target]
    assert web.transport.dms(web.contact[seer])[before:] == []  # the page answered, not a DM
    status, again = web.post(link, f"验 {target}", nonce="check-1")  # the same form again
    assert "已经处理过" in _answers(again)
    versions = web.service.log(web.code)
    assert sum(1 for r in versions if r.kind == "command" and r.type == "act"
               and r.body["seat"] == seer) == 1
    # a refusal is answered on the page too
    assert "不" in _answers(web.post(link, "验 99", nonce="check-2")[1])


def test_a_judges_action_from_the_page_is_the_judges(web: WebTable) -> None:
    web.move(datetime(2026, 12, 1, 12, 0))
    link = web.link(JUDGE, "/j/")
    others = {n: len(web.transport.dms(c)) for n, c in web.contact.items()}
    status, page = web.post(link, "黄牌", a="9", b="发言违规", nonce="card-1")
    assert status == 200 and "9号 黄牌" in _answers(page), _answers(page)
    assert web.state.seat(9).yellow == 1
    from sqlalchemy import select

    from bot.store.models import InboxMessage
    with web.service.db.read() as s:
        sender = s.scalar(select(InboxMessage.sender).where(
            InboxMessage.game_id == web.code, InboxMessage.outcome == "accepted")
            .order_by(InboxMessage.version.desc()))
    assert sender == JUDGE  # logged as that judge's
    # the announcement goes where it always goes
    assert all(len(web.transport.dms(c)) > others[n] for n, c in web.contact.items())
    assert "【公开】" not in page


def test_page_actions_are_rate_limited_per_link(web: WebTable) -> None:
    link = web.link(web.contact[1])
    codes = [web.post(link, "状态", nonce=f"s{i}")[0] for i in range(21)]
    assert codes[:20] == [200] * 20 and codes[20] == 429
    web.now += timedelta(minutes=1)
    assert web.post(link, "状态", nonce="s-next")[0] == 200


def test_pages_without_a_bot_only_read(tmp_path: Path) -> None:
    table = WebTable(tmp_path)
    table.pages_on()
    table.client = TestClient(create_app(table.service, table.bot.chats, table.links))
    link = table.link(table.contact[1])
    assert table.get(link)[0] == 200 and 'name="cmd"' not in table.get(link)[1]
    assert table.post(link, "状态")[0] == 405


def test_a_link_never_reaches_a_log(web: WebTable, caplog: pytest.LogCaptureFixture) -> None:
    """The production server (no access log), on loopback: a page request, good or bad, logs
    nothing that holds the token."""
    import logging
    import urllib.error
    import urllib.request

    from test_web_browser import _free_port, running

    from bot.web.server import WebSettings, make_server

    settings = WebSettings(WOLFJUDGE_WEB_URL=BASE, WOLFJUDGE_WEB_PORT=_free_port())
    server: Any = make_server(web.service, PageLinks(BASE, web.links), settings, web.bot)
    assert server.config.access_log is False
    caplog.set_level(logging.DEBUG)
    with running(server) as base:
        link = web.link(web.contact[1])
        token = link.split("/")[-1]
        with urllib.request.urlopen(base + link) as r:
            assert r.status == 200
        try:
            urllib.request.urlopen(f"{base}/p/{token}x")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
    assert token not in caplog.text and token[:20] not in caplog.text
