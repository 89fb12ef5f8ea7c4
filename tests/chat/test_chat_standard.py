"""The standard board through the chat layer: 新游戏 标准, the role DM's markers (CHAT.md), the
day-1 verbs 上警 / 退水 in a DM, 帮助 and 状态 that name them, 自爆 by day, 撕警徽, the public
announcements reaching every seat, and the judge's 票型 with the 1.5 weight."""

from __future__ import annotations

from datetime import datetime, timedelta

from chathelp import JUDGE, ZONE, Table, dm_texts


def _day1(table: Table, code: str, hour: int, minute: int = 0) -> None:
    table.move_to(datetime(2026, 12, 1, hour, minute, tzinfo=ZONE))


def test_a_standard_game_speaks_chinese_and_takes_its_day_verbs(table: Table) -> None:
    code = table.game("新游戏 标准 12 votes.channel=dm")
    state = table.state(code)
    assert state.ruleset == "standard"
    wolf = table.seats_with(code, "wolf")[0]
    idiot = table.seats_with(code, "idiot")[0]
    seer = table.seats_with(code, "seer")[0]
    villager = table.seats_with(code, "villager")[0]
    _day1(table, code, 9, 30)
    # the role DM's markers (CHAT.md)
    dealt = "\n".join(s.text for s in table.transport.sent
                      if s.kind == "dm" and s.target == table.contact(code, idiot))
    assert f"你的座位：{idiot}号" in dealt and "你的身份：白痴" in dealt
    helped = table.reply(table.contact(code, villager), "帮助")
    assert "上警（报名竞选警长" in helped, helped
    assert "自爆" not in helped
    assert "投 座位号" not in helped  # the election's vote opens after the sign-up
    assert "自爆（白天" in table.reply(table.contact(code, wolf), "帮助")
    sent = table.send(table.contact(code, seer), "上警")
    assert any(f"{seer} 号上警" in t for t in dm_texts(sent, table.contact(code, villager)))
    assert "你已上警" in table.reply(table.contact(code, seer), "状态")
    assert "退水（退出警长竞选" in table.reply(table.contact(code, seer), "帮助")
    assert "已经上警" in table.reply(table.contact(code, seer), "上警")
    assert "上警截止后开始" in table.reply(table.contact(code, villager), f"投 {seer}")
    table.send(table.contact(code, wolf), "上警")  # two candidates: a contest
    _day1(table, code, 12, 30)
    assert "投 座位号" in table.reply(table.contact(code, villager), "帮助")
    assert "投 座位号" not in table.reply(table.contact(code, seer), "帮助")  # a candidate
    assert "不是警长候选人" in table.reply(table.contact(code, idiot), f"投 {villager}")
    assert "候选人不参加" in table.reply(table.contact(code, seer), f"投 {seer}")
    table.send(table.contact(code, villager), f"投 {seer}")
    sent = table.send(table.contact(code, seer), "退水")
    assert any(f"{seer} 号退水。投给 {seer} 号的票" in t
               for t in dm_texts(sent, table.contact(code, idiot))), sent
    assert "已经退水" in table.reply(table.contact(code, seer), "上警") or "不能上警" in \
        table.reply(table.contact(code, seer), "上警")


def test_self_destruct_and_the_tally_weight(table: Table) -> None:
    code = table.game("新游戏 标准 votes.channel=dm")
    seer = table.seats_with(code, "seer")[0]
    wolves = table.seats_with(code, "wolf")
    _day1(table, code, 9, 30)
    table.send(table.contact(code, seer), "上警")
    _day1(table, code, 21, 1)  # day 1 closed: the single candidate is sheriff
    assert table.state(code).sheriff == seer
    table.move_to(datetime(2026, 12, 2, 9, 30, tzinfo=ZONE))
    assert table.state(code).phase == "D2"
    table.send(table.contact(code, seer), f"投 {wolves[0]}")
    tally = table.reply(JUDGE, "票型")
    assert "1.5票" in tally and "计1.5票" in tally, tally
    sent = table.send(table.contact(code, wolves[1]), "自爆")
    everyone = dm_texts(sent, table.contact(code, seer))
    assert any(f"{wolves[1]} 号狼人自爆出局" in t for t in everyone), everyone
    assert table.state(code).phase == "N2"
    assert "自爆" not in table.reply(table.contact(code, wolves[0]), "帮助")
    table.advance(timedelta(minutes=1))
