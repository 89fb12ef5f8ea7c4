"""A message that comes again after a crash (issue 33): the gateway keeps a message until the
bot has committed it (README "Restarts, stops and messages sent meanwhile"), so a bot killed
after a command's commit and before the message was marked handled with its answer is handed
the message again: it is applied once, and answered once."""

from __future__ import annotations

from datetime import datetime

import pytest
from chathelp import ZONE, Table, dm_texts


class Killed(BaseException):
    """The process dies here (nothing the bot catches)."""


def test_a_command_applied_before_a_crash_is_answered_when_it_comes_again(
        table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    code = table.game("新游戏 经典 votes.channel=dm")
    table.link(code)
    table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
    voter = table.contact(code, 1)
    msg = table.incoming(voter, "投 2")
    before = len(table.transport.sent)
    version = table.state(code).version

    def killed(*_args: object, **_kwargs: object) -> bool:
        raise Killed

    monkeypatch.setattr(table.bot.chats, "handled", killed)  # the vote is committed, then ...
    with pytest.raises(Killed):
        table.handle(msg)
    monkeypatch.undo()
    assert table.state(code).version == version + 1
    table.handle(msg)  # ... the restarted bot is handed the message again
    answers = dm_texts(table.transport.sent[before:], voter)
    assert len(answers) == 1 and "2号" in answers[0], answers
    assert table.state(code).version == version + 1  # applied once
    table.handle(msg)  # marked handled now: a third time is nothing
    assert len(dm_texts(table.transport.sent[before:], voter)) == 1


def test_a_join_applied_before_a_crash_is_answered_when_it_comes_again(
        table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    code = table.new_game()
    msg = table.incoming("P1", f"报名 {code} 小明")
    before = len(table.transport.sent)

    def killed(*_args: object, **_kwargs: object) -> bool:
        raise Killed

    monkeypatch.setattr(table.bot.chats, "handled", killed)
    with pytest.raises(Killed):
        table.handle(msg)
    monkeypatch.undo()
    table.handle(msg)
    answers = dm_texts(table.transport.sent[before:], "P1")
    assert len(answers) == 1 and "报名成功" in answers[0] and "小明" in answers[0], answers
    assert [m.contact_id for m in table.bot.chats.members(code)] == ["P1"]
    # Another 马甲 is still told the one that stands.
    assert "已经报名" in table.reply("P1", f"报名 {code} 小红")
