"""The web channel's pages are live (issue 30, items 1-4): over a real server on loopback, the
judge's lobby page, the judge's home and a player's key are woken by a join, a kick and a
lobby's news (a DM of no game); a wolf's seat page by a line said on the wolves' room page; a
seat's DM reaches the push reminders where it asks to act (the deliverer's hook is the same on
the web channel as beside a chat)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from test_web_browser import _free_port, running
from test_web_live import stream
from webonly import JUDGE, WebOnlyGame

from bot.outbox import OutgoingMessage
from bot.web.app import create_app


class Reminders:
    """A stand-in for the push reminders: what the deliverer told them of."""

    public = "test-key"

    def __init__(self) -> None:
        self.told: list[OutgoingMessage] = []

    def delivered(self, message: OutgoingMessage) -> None:
        self.told.append(message)


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebOnlyGame]:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("WOLFJUDGE_WEB_URL", base)
    monkeypatch.delenv("WOLFJUDGE_WEB_SECRET", raising=False)
    game = WebOnlyGame("classic", 2, f"sqlite:///{tmp_path / 'g.db'}", base=base)
    game.audit = False
    game.reminders = Reminders()  # type: ignore[attr-defined]
    game.app = create_app(game.service, game.console.bot.chats, game.links, now=game.utc,
                          bot=game.console.bot, base=base,
                          pusher=game.reminders)  # type: ignore[attr-defined, arg-type]
    server = uvicorn.Server(uvicorn.Config(game.app, host="127.0.0.1", port=port,
                                           access_log=False, log_level="warning",
                                           lifespan="off", timeout_graceful_shutdown=1))
    with running(server):
        yield game
    game.service.close()


def _hello(s: Any) -> None:
    assert s.next_event() == "hello"


def test_joins_and_a_kick_reach_the_open_pages(served: WebOnlyGame) -> None:
    """README: the judge sees joins live; the kicked player's key page is told at once."""
    g = served
    g.open()
    first = g.join_as("小明")
    with stream(g.base, g.judge_page + "/events") as judge, \
            stream(g.base, g.home + "/events") as home, \
            stream(g.base, g.keys[first] + "/events") as key:
        for s in (judge, home, key):
            _hello(s)
        g.join_as("小红")
        assert judge.next_event() == "changed"  # the lobby on the judge's page
        assert home.next_event() == "changed"  # the home's count
        assert key.next_event() == "changed"  # the player's lobby count
        g.phone(JUDGE).post(g.judge_page, data={"cmd": "踢出 小明", "nonce": uuid.uuid4().hex})
        assert key.next_event() == "changed"  # 法官已将你移出游戏
        assert "法官已将你移出游戏" in g.phone(first).get(g.keys[first]).text


def test_a_line_in_the_room_wakes_the_other_wolves_pages(served: WebOnlyGame) -> None:
    g = served
    g.open()
    for i in range(1, 13):
        g.join_as(f"马甲{i:02d}")
    g.begin()
    while not g.room("wolves"):
        assert g.advance()
    first, second, *_ = g.service.state(g.code).groups["wolves"]
    villager = next(n for n in range(1, 13)
                    if not any(n in s for s in g.service.state(g.code).groups.values()))
    mate = g.seat_page(g.contact(second))
    hub = g.app.state.hub
    woken: list[tuple[str, ...]] = []
    wake = hub.wake
    hub.wake = lambda keys: (woken.extend(keys := list(keys)), wake(keys))[1]
    with stream(g.base, mate + "/events") as wolf:
        _hello(wolf)
        g.say(g.contact(first), "今晚刀谁", g.room("wolves"))
        assert wolf.next_event() == "changed"
    # nobody outside the room was woken by it: a page woken would tell its reader that the
    # wolves talked just then
    outside = {c for n, c in g.console.bot.chats.contacts(g.code).items()
               if n not in g.service.state(g.code).groups["wolves"]}
    assert not [k for k in woken if k[0] in ("to", "mine") and k[-1] in outside], woken
    assert any(k == ("to", g.code, g.contact(second)) for k in woken)
    assert villager not in g.service.state(g.code).groups["wolves"]


def test_a_seats_dm_that_asks_to_act_reaches_the_reminders(served: WebOnlyGame) -> None:
    """A DM stored for a seat's page goes to the push reminders too (they decide, by its
    asks, whether to notify; bot/web/push.py)."""
    g = served
    g.open()
    for i in range(1, 13):
        g.join_as(f"马甲{i:02d}")
    g.begin()
    told = g.reminders.told  # type: ignore[attr-defined]
    cards = [m for m in told if m.game_id == g.code and m.channel == "dm" and m.asks]
    assert {m.address for m in cards} == set(g.console.bot.chats.contacts(g.code).values())
