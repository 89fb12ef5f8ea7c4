"""The lobby through the chat layer (CHAT.md): 新游戏 and its refusals, 报名, 退出, 踢出, 开始,
the role DMs and their markers, seating, replayed message ids, and a stranger's first DM."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from chathelp import ANOMALY_ROLES, CJK, CLASSIC_ROLES, CODE, JUDGE, Table, dm_texts

from bot.gametime import utcnow
from bot.outbox import deliver

SEAT = re.compile(r"你的座位：(\d+)号")
ROLE = re.compile(r"你的身份：([^\s。，,；;（(]+)")


def role_dms(sent: list, contacts: list[str]) -> dict[str, str]:
    out = {}
    for c in contacts:
        texts = [x for x in dm_texts(sent, c) if SEAT.search(x) and ROLE.search(x)]
        assert len(texts) == 1, (c, dm_texts(sent, c))
        out[c] = texts[0]
    return out


def test_new_game_reply_carries_the_code(table: Table) -> None:
    answer = table.reply(JUDGE, "新游戏 经典")
    m = CODE.search(answer)
    assert m and 4 <= len(m.group(1)) <= 8
    assert table.reply(JUDGE, "状态").count(m.group(1)) >= 1


@pytest.mark.parametrize("text, key", [
    ("新游戏 经典 classic.nope=1", "classic.nope"),
    ("新游戏 经典 votes.channel=xx", "votes.channel"),
    ("新游戏 经典 cards.yellow_to_red=-1", "cards.yellow_to_red"),
    ("新游戏 经典 groups.mode=everywhere", "groups.mode"),
    ("新游戏 异常 deal.seats=random", "deal.seats"),
])
def test_bad_option_is_refused_naming_the_key(table: Table, text: str, key: str) -> None:
    answer = table.reply(JUDGE, text)
    assert key in answer and CJK.search(answer), answer
    assert not CODE.search(answer)


def test_bad_ruleset_and_count(table: Table) -> None:
    answer = table.reply(JUDGE, "新游戏 象棋")
    assert "新游戏" in answer and CJK.search(answer) and not CODE.search(answer)
    answer = table.reply(JUDGE, "新游戏 经典 9")
    assert "9" in answer and "12" in answer and not CODE.search(answer), answer
    answer = table.reply(JUDGE, "新游戏 异常 13")
    assert CODE.search(answer) and "13" in answer, answer


def test_join_twice_name_taken_full_unknown(table: Table) -> None:
    code = table.new_game()
    assert "报名成功" in table.reply("P1", f"报名 {code} 小明")
    again = table.reply("P1", f"报名 {code} 小红")
    assert "已经报名" in again and "小明" in again
    taken = table.reply("P2", f"报名 {code} 小明")
    assert "小明" in taken and "已经有人" in taken
    table.fill(code, 11, first=2)
    full = table.reply("P99", f"报名 {code} 迟到")
    assert "已满" in full
    unknown = table.reply("P98", "报名 ZZZZ99 某人")
    assert "ZZZZ99" in unknown and "没有" in unknown


def test_join_tells_the_judge_and_status_counts(table: Table) -> None:
    code = table.new_game()
    sent = table.send("P1", f"报名 {code} 小明")
    assert not dm_texts(sent, JUDGE)  # the judge's summary waits for its minute
    before = len(table.transport.sent)
    deliver(table.service.db, table.bot.courier, now=utcnow() + timedelta(minutes=1, seconds=1))
    assert dm_texts(table.transport.sent[before:], JUDGE) == [f"【{code}】报名 1/12：小明"]
    assert "1/12" in table.reply("P1", "状态")
    assert "小明" in table.reply(JUDGE, "状态")


def test_leave_and_kick(table: Table) -> None:
    code = table.new_game()
    table.fill(code, 3)
    sent = table.send("P2", "退出")
    assert "已退出" in "".join(dm_texts(sent, "P2"))
    assert not dm_texts(sent, JUDGE)  # the judge's summary waits for its minute
    before = len(table.transport.sent)
    deliver(table.service.db, table.bot.courier, now=utcnow() + timedelta(minutes=1, seconds=1))
    told = dm_texts(table.transport.sent[before:], JUDGE)
    assert told == [f"【{code}】报名 2/12：马甲1、马甲3"]
    assert "不在任何" in table.reply("P2", "状态")
    sent = table.send(JUDGE, "踢出 马甲3")
    assert "移出" in "".join(dm_texts(sent, "P3"))
    assert "马甲3" in "".join(dm_texts(sent, JUDGE))
    assert "马甲9" in table.reply(JUDGE, "踢出 马甲9")  # no such name: named, nothing done
    status = table.reply(JUDGE, "状态")
    assert "1/12" in status and "马甲1" in status and "马甲3" not in status
    # a freed name can be taken again
    assert "报名成功" in table.reply("P4", f"报名 {code} 马甲3")


def test_joins_reach_the_judge_as_a_summary_at_most_once_a_minute(table: Table) -> None:
    """Issue 20: not a DM per join: a summary a minute after a join (the latest count and
    names), at most one a minute, and at once when the lobby is full, with what to do next."""
    code = table.new_game()
    judged: list[str] = []
    for i in range(1, 13):
        judged += dm_texts(table.send(f"P{i}", f"报名 {code} 马甲{i}"), JUDGE)
        if i == 6:  # a minute on: the summary that waited goes out, with 6 names
            before = len(table.transport.sent)
            deliver(table.service.db, table.bot.courier,
                    now=utcnow() + timedelta(minutes=1, seconds=1))
            judged += dm_texts(table.transport.sent[before:], JUDGE)
    assert judged[0].startswith(f"【{code}】报名 6/12：马甲1、") and "马甲6" in judged[0]
    assert judged[1].startswith(f"【{code}】报名 12/12：") and "人齐了，可以发送：开始" in judged[1]
    assert len(judged) == 2
    # The start answers at once (a waiting summary holds nothing back).
    assert "已开始" in table.reply(JUDGE, "开始")


def test_start_with_too_few(table: Table) -> None:
    code = table.new_game()
    table.fill(code, 11)
    answer = table.reply(JUDGE, "开始")
    assert "11" in answer and "12" in answer and "不能开始" in answer
    assert "报名成功" in table.reply("P12", f"报名 {code} 马甲12")


@pytest.mark.parametrize("text, players, roles", [
    ("新游戏 经典", 12, CLASSIC_ROLES),
    ("新游戏 异常", 12, ANOMALY_ROLES),
    ("新游戏 异常 13", 13, ANOMALY_ROLES),
])
def test_start_deals_a_role_dm_to_everyone(table: Table, text: str, players: int,
                                           roles: set[str]) -> None:
    code = table.new_game(text)
    contacts = table.fill(code, players)
    sent = table.send(JUDGE, "开始")
    dms = role_dms(sent, contacts)
    seats = {c: int(SEAT.search(x).group(1)) for c, x in dms.items()}  # type: ignore[union-attr]
    assert sorted(seats.values()) == list(range(1, players + 1))
    state = table.state(code)
    for c, x in dms.items():
        role = ROLE.search(x).group(1)  # type: ignore[union-attr]
        assert role in roles, x
        assert table.contact(code, seats[c]) == c
        from bot.texts import role_name
        assert role == role_name(state.ruleset, state.seat(seats[c]).role)
    assert "已开始" in "".join(dm_texts(sent, JUDGE))
    assert "已经开始" in table.reply("P99", f"报名 {code} 迟到")


def test_deal_seats_join_gives_join_order(table: Table) -> None:
    code = table.new_game("新游戏 经典 deal.seats=join")
    contacts = table.fill(code, 12)
    sent = table.send(JUDGE, "开始")
    dms = role_dms(sent, contacts)
    for i, c in enumerate(contacts, 1):
        assert SEAT.search(dms[c]).group(1) == str(i)  # type: ignore[union-attr]


def test_replayed_message_is_handled_once(table: Table) -> None:
    code = table.new_game()
    msg = table.incoming("P1", f"报名 {code} 小明")
    assert table.handle(msg)
    assert table.handle(msg) == []  # no second reply, nothing done
    second = table.incoming(JUDGE, "新游戏 经典")
    first_answer = table.handle(second)
    assert CODE.search(first_answer[0].text)
    assert table.handle(second) == []  # no second game
    leave = table.incoming("P1", "退出")
    assert table.handle(leave)
    assert table.handle(leave) == []
    assert "报名成功" in table.reply("P1", f"报名 {code} 小明")
    assert table.handle(leave) == []  # an old id stays spent
    assert "1/12" in table.reply("P1", "状态")


def test_replayed_start_and_game_command(table: Table) -> None:
    code = table.new_game()
    table.fill(code, 12)
    start = table.incoming(JUDGE, "开始")
    assert table.handle(start)
    assert table.handle(start) == []
    state = table.state(code)
    cupid = table.seats_with(code, "cupid")[0]
    link = table.incoming(table.contact(code, cupid), "连 1 2" if cupid > 2 else "连 3 4")
    assert table.handle(link)
    v = table.state(code).version
    assert v > state.version
    assert table.handle(link) == []
    assert table.state(code).version == v


def test_strangers_first_dm_gets_an_introduction(table: Table) -> None:
    answer = table.ask("陌生人", "你好")
    assert len(answer) == 1 and "\n" not in answer[0] and CJK.search(answer[0])
    assert "报名" in answer[0]
