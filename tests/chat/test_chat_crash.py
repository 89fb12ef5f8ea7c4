"""A message that comes again after a crash (issue 33): the gateway keeps a message until the
bot has committed it (README "Restarts, stops and messages sent meanwhile"), so a bot killed
while it handled a message is handed the message again. Every command that changes something
is applied once and answered once, as the first time, wherever the kill landed: the message's
effects, its handled mark and its answer are one transaction (docs/architecture.md, "A
kill"), so a kill before that commit leaves nothing of the message, and one after it leaves
the message marked with its answer queued."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from chathelp import ZONE, Table, dm_texts
from crashhelp import SCENARIOS, Killed, kill_everywhere

from bot.commands.convert import player_command
from bot.commands.parse import parse


def test_a_command_killed_before_its_mark_is_applied_once_when_it_comes_again(
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

    monkeypatch.setattr(table.bot.chats, "handled", killed)  # the vote is applied, then ...
    with pytest.raises(Killed):
        table.handle(msg)
    monkeypatch.undo()
    assert table.state(code).version == version  # ... nothing of the message stands
    table.restart()
    table.handle(msg)  # the restarted bot is handed the message again
    answers = dm_texts(table.transport.sent[before:], voter)
    assert len(answers) == 1 and "2号" in answers[0], answers
    assert table.state(code).version == version + 1  # applied once
    table.handle(msg)  # marked handled now: a third time is nothing
    assert len(dm_texts(table.transport.sent[before:], voter)) == 1


def test_a_command_the_game_applied_without_the_chat_layer_is_answered_as_it_was(
        table: Table) -> None:
    """The game's own inbox (its message ids) answers a message it applied whose handled mark
    the chat layer never wrote (bot/chat/submit.py, `Outcome.duplicate`): once, as it was."""
    code = table.game("新游戏 经典 votes.channel=dm")
    table.link(code)
    table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
    voter = table.contact(code, 1)
    msg = table.incoming(voter, "投 2")
    version = table.state(code).version
    parsed = parse(msg.text)
    assert parsed is not None
    cmd = player_command(parsed, seat=1, ruleset="classic")
    table.service.receive(code, cmd, now=table.wall(), msg_id=msg.msg_id, sender=voter)
    before = len(table.transport.sent)
    table.handle(msg)
    answers = dm_texts(table.transport.sent[before:], voter)
    assert len(answers) == 1 and "2号" in answers[0], answers
    assert table.state(code).version == version + 1  # applied once


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


# every chat-layer command that writes, killed at each of its commits ----------------------------
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_command_killed_anywhere_is_applied_once_and_answered_once(
        name: str, tmp_path: Path) -> None:
    """README "Restarts, stops and messages sent meanwhile": a command applied just before the
    kill is answered as it would have been, once."""
    kill_everywhere(tmp_path, SCENARIOS[name])
