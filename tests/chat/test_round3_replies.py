"""What a judge or player reads back in three corners an outside probe found (issue 33, polish):
a judge's command that reaches no game, 上警/退水 after a day-1 自爆 swallowed the election, and
the name a DM gives the wolves' and the lovers' room."""

from __future__ import annotations

from datetime import datetime

import pytest
from chathelp import JUDGE, ZONE, Table

from bot.texts import room_name


@pytest.mark.parametrize("text", ["黄牌 3", "状态", "关门 20:00", "投 3", "预览"])
def test_a_judges_command_that_reaches_no_game_says_so_briefly(table: Table, text: str) -> None:
    reply = table.reply(JUDGE, text)
    assert "没有进行中的游戏" in reply, reply
    assert "法官指令：" not in reply and len(reply) < 120, reply  # not the whole help list


@pytest.mark.rules("S-SHERIFF-9")
@pytest.mark.parametrize("when", ["night_now", "night_at_close"])
def test_after_a_self_destruct_swallowed_the_election_withdraw_says_why(
        table: Table, when: str) -> None:
    code = table.game(f"新游戏 标准 12 votes.channel=dm standard.self_destruct={when}")
    seer = table.contact(code, table.seats_with(code, "seer")[0])
    villager = table.contact(code, table.seats_with(code, "villager")[0])
    wolf = table.contact(code, table.seats_with(code, "wolf")[0])
    table.move_to(datetime(2026, 12, 1, 9, 30, tzinfo=ZONE))
    table.reply(seer, "上警")
    table.reply(wolf, "自爆")
    for who, verb in ((seer, "退水"), (villager, "上警")):
        reply = table.reply(who, verb)
        assert "自爆" in reply and "截止" not in reply, reply


@pytest.mark.parametrize("mode", ["auto", "relay", "judge"])
def test_the_messages_name_the_rooms_as_they_are_named(table: Table, mode: str) -> None:
    """The wolves' room is made as `CODE狼群` and relayed as `【狼群】`: no message calls it
    狼人群 (nor the lovers' room anything but 情侣群)."""
    code = table.game(f"新游戏 经典 groups.mode={mode}")
    table.link(code)
    texts = "\n".join(s.text for s in table.transport.sent if s.text)
    assert "狼人群" not in texts, [t for t in texts.splitlines() if "狼人群" in t]
    named = [line for line in texts.splitlines() if "群" in line and "成员" in line]
    assert any(room_name("wolves") in line for line in named), named
    assert any(room_name("lovers") in line for line in named), named
