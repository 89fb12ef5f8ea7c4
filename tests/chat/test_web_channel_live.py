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
from test_web_live import stream
from webonly import JUDGE, WebOnlyGame, served

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
def game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebOnlyGame]:
    """The web-only game served on loopback, its deliveries told to the `Reminders`."""
    reminders = Reminders()

    def app(g: WebOnlyGame) -> Any:
        g.reminders = reminders  # type: ignore[attr-defined]
        return create_app(g.service, g.console.bot.chats, g.links, now=g.utc,
                          bot=g.console.bot, base=g.base,
                          pusher=reminders)  # type: ignore[arg-type]

    with served(tmp_path, monkeypatch, app) as g:
        yield g


def _hello(s: Any) -> None:
    assert s.next_event() == "hello"


def test_joins_and_a_kick_reach_the_open_pages(game: WebOnlyGame) -> None:
    """README: the judge sees joins live; the kicked player's key page is told at once."""
    game.open()
    first = game.join_as("小明")
    with stream(game.base, game.judge_page + "/events") as judge, \
            stream(game.base, game.home + "/events") as home, \
            stream(game.base, game.keys[first] + "/events") as key:
        for s in (judge, home, key):
            _hello(s)
        game.join_as("小红")
        assert judge.next_event() == "changed"  # the lobby on the judge's page
        assert home.next_event() == "changed"  # the home's count
        assert key.next_event() == "changed"  # the player's lobby count
        game.phone(JUDGE).post(game.judge_page,
                               data={"cmd": "踢出 小明", "nonce": uuid.uuid4().hex})
        assert key.next_event() == "changed"  # 法官已将你移出游戏
        assert "法官已将你移出游戏" in game.phone(first).get(game.keys[first]).text


def test_a_line_in_the_room_wakes_the_other_wolves_pages(game: WebOnlyGame) -> None:
    game.open()
    game.fill()
    game.begin()
    game.until_room("wolves")
    first, second, *_ = game.service.state(game.code).groups["wolves"]
    villager = next(n for n in range(1, 13)
                    if not any(n in s for s in game.service.state(game.code).groups.values()))
    mate = game.seat_page(game.contact(second))
    hub = game.app.state.hub
    woken: list[tuple[str, ...]] = []
    wake = hub.wake
    hub.wake = lambda keys: (woken.extend(keys := list(keys)), wake(keys))[1]
    with stream(game.base, mate + "/events") as wolf:
        _hello(wolf)
        game.say(game.contact(first), "今晚刀谁", game.room("wolves"))
        assert wolf.next_event() == "changed"
    # nobody outside the room was woken by it: a page woken would tell its reader that the
    # wolves talked just then
    outside = {c for n, c in game.console.bot.chats.contacts(game.code).items()
               if n not in game.service.state(game.code).groups["wolves"]}
    assert not [k for k in woken if k[0] in ("to", "mine") and k[-1] in outside], woken
    assert any(k == ("to", game.code, game.contact(second)) for k in woken)
    assert villager not in game.service.state(game.code).groups["wolves"]


def test_a_seats_dm_that_asks_to_act_reaches_the_reminders(game: WebOnlyGame) -> None:
    """A DM stored for a seat's page goes to the push reminders too (they decide, by its
    asks, whether to notify; bot/web/push.py)."""
    game.open()
    game.fill()
    game.begin()
    told = game.reminders.told  # type: ignore[attr-defined]
    cards = [m for m in told if m.game_id == game.code and m.channel == "dm" and m.asks]
    assert {m.address for m in cards} == set(game.console.bot.chats.contacts(game.code).values())
