"""One look-up of the sender (issue 33, "the house"): a message's way through the chat layer
asks the store who sent it and where (the contact's seats, lobbies and judged games, the room's
game, whether the message id was handled) once, in one statement (bot/store/chat.py
`ChatStore.sender`), and hands the answer down; the service's own read of the seat, inside the
command's transaction, is its permission check, not counted here. The pages' actions and every
channel build the same `Sender` through the same function."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from chathelp import JUDGE, Table
from sqlalchemy import event

from bot.store.chat import ChatStore, Sender


class Lookups:
    """The SELECTs the chat layer itself (not the service) runs with the sender's contact,
    the room or the message's key among their parameters: a look-up of who and where."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.keys: set[str] = set()
        self.found: list[str] = []
        self.sent: list[Any] = []
        event.listen(table.service.db.engine, "before_cursor_execute", self._statement)

    def _statement(self, _conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if not statement.lstrip().upper().startswith("SELECT"):
            return
        values = set((params.values() if isinstance(params, dict) else params) or ())
        if not values & self.keys:
            return
        files = [f.filename for f in traceback.extract_stack()]
        if any(f.endswith("/bot/service.py") for f in files):
            return  # the service's own read, inside the command's transaction
        self.found.append(statement)

    def count(self, sender: str, text: str, room: str | None = None) -> int:
        """How many look-ups one message from `sender` made."""
        msg = self.table.incoming(sender, text, room)
        self.keys = {sender, msg.msg_id, *([room] if room else [])}
        self.found.clear()
        self.sent = self.table.handle(msg)
        return len(self.found)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path)
    yield t
    t.close()


def test_one_dm_looks_its_sender_up_once(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    code = table.game("新游戏 经典 votes.channel=dm")
    table.advance(timedelta(hours=3))  # day 1 is open: votes are taken by DM
    lookups = Lookups(table)
    calls: list[Sender] = []
    original = ChatStore.sender

    def counted(self: ChatStore, *args: Any, **kw: Any) -> Sender:
        calls.append(original(self, *args, **kw))
        return calls[-1]

    monkeypatch.setattr(ChatStore, "sender", counted)
    voter, target = table.contact(code, 3), 5
    wolves = table.room(code, "wolves")
    wolf = table.contact(code, table.seats_with(code, "wolf")[0])
    assert wolves is not None
    cases = [
        (voter, f"投 {target}", None),  # a player's command in a game
        (voter, "哈哈", None),  # chatter: the games they play, the games they judge
        (voter, "状态", None),
        (JUDGE, "状态", None),  # a judge's command
        (wolf, "投 6", wolves),  # a command said in a room: by DM, please
        (wolf, "刀 6", wolves),  # the killers' room's own command (not at night: refused)
        ("stranger", "你好", None),
    ]
    for sender, text, room in cases:
        before = len(calls)
        assert lookups.count(sender, text, room) == 1, (text, lookups.found)
        assert len(calls) == before + 1, text
        answers = [s.text for s in lookups.sent if s.kind == "dm" and s.target == sender]
        assert answers, text  # each was answered, as before
        if text.startswith("投 5"):
            assert any("已记录你的投票" in a for a in answers), answers


def test_the_sender_tells_seats_lobbies_judged_games_and_the_room(table: Table) -> None:
    code = table.game("新游戏 经典 votes.channel=dm")
    table.advance(timedelta(hours=3))  # the rooms are made
    lobby = table.new_game()
    contact = table.contact(code, table.seats_with(code, "wolf")[0])
    table.reply(contact, f"报名 {lobby} 马甲X")
    wolves = table.room(code, "wolves")
    who = table.bot.chats.sender(contact, wolves, "m1")
    assert who.seat(code) == table.seats_with(code, "wolf")[0]
    assert who.games() == sorted([code, lobby])
    assert (who.room_game, who.room_group) == (code, "wolves") and who.handled
    judge = table.bot.chats.sender(JUDGE)
    assert judge.judged == tuple(sorted([code, lobby])) and judge.active_judged() == [
        *judge.judged]
    assert judge.room is None and not judge.handled and not judge.seats
