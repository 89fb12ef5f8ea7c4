"""More than one WeChat account on one database (issue 21, item 8; docs/architecture.md "One bot
per account, one database for all"): each bot (`Service(host=...)`) creates, finds, schedules
and sends only its own games and its own messages; the operator's tools see every account. On
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from storehelp import at, classic_game
from test_store_outbox import Transport

from bot.outbox import deliver
from bot.service import Service
from bot.store.chat import ChatStore
from bot.store.db import Database


@pytest.fixture
def accounts(db_url: str) -> Iterator[tuple[Service, Service, Service]]:
    """The first account (no name), a second one ("b"), and an operator's view."""
    made = (Service(db_url), Service(Database(db_url), host="b"), Service(db_url))
    yield made
    for s in made:
        s.close()


def test_each_account_sees_and_schedules_its_own_games(
        accounts: tuple[Service, Service, Service]) -> None:
    first, second, _ = accounts
    classic_game(first, "ga")
    classic_game(second, "gb")
    assert first.game_ids(host=first.host) == ["ga"]
    assert second.game_ids(host=second.host) == ["gb"]
    assert first.game_ids() == second.game_ids() == ["ga", "gb"]  # the operator's view
    assert set(first.schedule_rows(first.host)) == {"ga"}
    assert set(second.schedule_rows(second.host)) == {"gb"}


def test_each_account_delivers_only_its_own_rows(
        accounts: tuple[Service, Service, Service]) -> None:
    first, second, _ = accounts
    classic_game(first, "ga")
    classic_game(second, "gb")
    first.advance("ga", at(1, 9))
    second.advance("gb", at(1, 9))
    # A message outside any game (a reply to a lobby command) goes from the account that
    # wrote it.
    ChatStore(first.db).dm("chat/x/0", "wx-someone", "一", None)
    ChatStore(second.db).dm("chat/y/0", "wx-someone", "二", None)
    on_a, on_b = Transport(), Transport()
    deliver(second.db, on_b)
    deliver(first.db, on_a)
    assert on_a.calls and on_b.calls
    assert {m.game_id for m in on_a.calls} == {"ga", None}
    assert {m.game_id for m in on_b.calls} == {"gb", None}
    assert [m.text for m in on_a.calls if m.game_id is None] == ["一"]
    assert [m.text for m in on_b.calls if m.game_id is None] == ["二"]
    assert deliver(first.db, Transport()).sent == deliver(second.db, Transport()).sent == 0


def test_a_lobby_room_or_token_of_another_account_is_unknown(
        accounts: tuple[Service, Service, Service]) -> None:
    first, second, _ = accounts
    chats_a, chats_b = ChatStore(first.db), ChatStore(second.db)
    code = chats_b.open_lobby(lambda: "LOBB", ruleset="classic", players=12, options={},
                              chat_options={}, judge="wx-judge", time_zone="Asia/Shanghai",
                              status="open", created_at=at(1, 8))
    assert code == "LOBB"
    assert chats_b.lobby(code) is not None and chats_a.lobby(code) is None
    assert chats_b.sender("wx-judge").judged == ("LOBB",)
    assert chats_a.sender("wx-judge").judged == ()
    classic_game(second, "gb", rooms={"public": "room-b"})
    in_b, in_a = chats_b.sender("x", "room-b"), chats_a.sender("x", "room-b")
    assert (in_b.room_game, in_b.room_group) == ("gb", "public") and in_a.room_game is None
    assert "room-b" in chats_b.all_rooms() and "room-b" not in chats_a.all_rooms()
    assert chats_b.sender("wx-gb-3").games() == ["gb"] and chats_a.sender("wx-gb-3").games() == []
    assert chats_a.sender("wx-gb-3").seat("gb") is None
    chats_b.add_token("hash-1", "gb", 3, at(1, 8))
    assert chats_a.take_seat("hash-1", "wx-new", at(1, 9), frozenset()) == "bad"
    taken = chats_b.take_seat("hash-1", "wx-new", at(1, 9), frozenset())
    assert not isinstance(taken, str) and taken.seat == 3
