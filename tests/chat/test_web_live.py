"""Live pages (issue 30, part 4): a page's event stream is woken by what concerns it, within
the wait for the event (a real server on loopback, the stream read as a browser reads it),
and by nothing else (a seat's stream never learns when a secret action was taken); where the
stream cannot be had the page fetches itself; the countdowns carry their instants; the
Content Security Policy lets the page reach its stream and nothing else."""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from test_chat_judge import JUDGE, _day1
from test_web_browser import _free_port, running
from test_web_pages import WebTable

from bot.web import live
from bot.web.app import create_app

WAIT = 20.0  # seconds: the longest a read waits for an event it expects (a bound, not a pace)


@pytest.fixture
def web(tmp_path: Path) -> WebTable:
    table = WebTable(tmp_path)
    table.pages_on()
    _day1(table)
    return table


class Stream:
    """An open event stream, read line by line as a browser's EventSource reads it."""

    def __init__(self, conn: http.client.HTTPConnection, response: Any) -> None:
        self.conn = conn
        self.response = response

    def next_event(self) -> str:
        """The name of the next event (comment lines skipped); a socket timeout fails."""
        name = ""
        while True:
            line = self.response.fp.readline().decode()
            if not line:
                raise EOFError("the stream ended")
            line = line.rstrip("\r\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line == "" and name:
                return name


@contextmanager
def stream(base: str, path: str) -> Iterator[Stream]:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=WAIT)
    conn.request("GET", path, headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    assert response.status == 200, response.status
    assert response.getheader("Content-Type", "").startswith("text/event-stream")
    try:
        yield Stream(conn, response)
    finally:
        conn.close()


def _served(web: WebTable) -> Any:
    import uvicorn

    return uvicorn.Server(uvicorn.Config(web.client.app, host="127.0.0.1", port=_free_port(),
                                         access_log=False, log_level="warning",
                                         lifespan="off", timeout_graceful_shutdown=1))


def test_a_commit_reaches_an_open_stream(web: WebTable) -> None:
    """README "Web pages": a card given by the judge reaches the carded seat's open page, a
    judge's page hears every commit, a spectator's every public post."""
    seat = 9
    link = web.link(web.contact[seat])
    judge = web.link(JUDGE, "/j/")
    with running(_served(web)) as base, stream(base, link + "/events") as player, \
            stream(base, judge + "/events") as judging, \
            stream(base, f"/g/{web.code}/events") as public:
        assert player.next_event() == "hello"
        assert judging.next_event() == "hello"
        assert public.next_event() == "hello"
        web.say(JUDGE, f"黄牌 {seat} 发言违规")  # another client: the judge's DM
        assert player.next_event() == "changed"
        assert judging.next_event() == "changed"
        assert public.next_event() == "changed"  # the card is announced in public


def test_a_seats_stream_is_not_woken_by_what_it_was_not_told(web: WebTable) -> None:
    """A wake would tell a seat when a secret action was taken: only a message delivered to
    its contact (or a post in a room it is in) wakes its page."""
    woken: list[live.Key] = []
    hub: live.Hub = web.client.app.state.hub
    wake = hub.wake
    hub.wake = lambda keys: woken.extend(keys) or wake(keys)  # type: ignore[method-assign]
    web.move(datetime(2026, 12, 1, 21, 5))
    seer = web.role_seat("seer")
    other = next(n for n in range(1, 13) if n != seer and web.state.seat(n).alive)
    woken.clear()
    web.seat(seer, f"验 {other}")
    concerned = {k for k in woken if k[0] == "to"}
    assert concerned == {live.to(web.code, web.contact[seer])}, concerned
    assert live.public(web.code) not in woken and live.judged(web.code) in woken


def test_an_answer_taken_on_one_page_wakes_the_senders_other_pages(web: WebTable) -> None:
    """A page's answer is the page's to show, not delivered: the same contact's other open
    pages (another tab, the phone beside the computer) are woken for it as for a DM, and
    nobody else's."""
    woken: list[live.Key] = []
    hub: live.Hub = web.client.app.state.hub
    wake = hub.wake
    hub.wake = lambda keys: woken.extend(keys) or wake(keys)  # type: ignore[method-assign]
    seat = 4
    status, page = web.post(web.link(web.contact[seat]), "状态", nonce="tab-1")
    assert status == 200
    concerned = {k for k in woken if k[0] in ("to", "mine")}
    assert concerned == {live.to(web.code, web.contact[seat]), live.mine(web.contact[seat])}


def test_without_a_bot_the_page_fetches_itself(web: WebTable) -> None:
    """`wolfjudge web` beside a bot in another process: no stream (204: the browser does not
    try again), the page polls (an empty data-stream)."""
    reading = TestClient(create_app(web.service, web.bot.chats, web.links))
    link = web.link(web.contact[1])
    page = reading.get(link).text
    assert 'data-stream=""' in page
    assert reading.get(link + "/events").status_code == 204
    live_page = web.get(link)[1]
    assert f'data-stream="{link}/events"' in live_page


def test_bad_streams_are_refused_and_show_nothing(web: WebTable) -> None:
    good = web.link(web.contact[2])
    for path in ("/p/forged/events", "/j/" + good.split("/")[-1] + "/events",
                 "/g/NOSUCH/events", "/g/../events"):
        r = web.client.get(path)
        assert r.status_code in (403, 404) and web.code not in r.text, path


def test_the_countdowns_carry_their_instants(web: WebTable) -> None:
    web.move(datetime(2026, 12, 1, 12, 0))
    judge = web.get(web.link(JUDGE, "/j/"))[1]
    tz = ZoneInfo("Asia/Shanghai")
    close = web.state.schedule.close_at(1).replace(tzinfo=tz)
    ms = int(close.timestamp() * 1000)
    assert f'data-due-ms="{ms}"' in judge
    assert re.search(rf'data-due-ms="{ms}">（还有 9小时0分）</span>', judge), judge[:3000]
    seat = web.get(web.link(web.contact[3]))[1]
    assert f'data-due-ms="{ms}"' in seat  # the day's close, on the public schedule
    now_ms = int((web.now.astimezone(tz)).timestamp() * 1000)
    assert f'data-now="{now_ms}"' in seat  # the server's clock, which the script counts on


def test_the_policy_lets_a_page_reach_its_stream_only(web: WebTable) -> None:
    csp = web.client.get(web.link(web.contact[1])).headers["Content-Security-Policy"]
    assert "connect-src 'self'" in csp and "default-src 'none'" in csp
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
