"""Trust fixes, round 2 (issue 19): what a second outside probe found, one test per finding.

F1 a signed seat number is refused everywhere a seat is read; F2/F3 `接替` by a contact
already seated, or by a judge of the game, is refused with the token still valid; F4 the
console's clock moves are bounded; F5 a restart raises no false alarm about a room's members;
F6 confusing 马甲 are refused; F7 options are bounded and a key given twice is refused; F8
the wording of four replies, and commands in rooms answered by DM.
"""

from __future__ import annotations

import io
import re
from datetime import datetime
from pathlib import Path

import pytest
from chathelp import JUDGE, ZONE, Table

from bot.chat.clocked import ClockedBot, VirtualClock
from bot.commands.parse import ParseError, parse
from bot.forum.posts import read_vote
from bot.gametime import instant_of, zone
from bot.service import Service
from bot.store import migrate
from bot.transport.memory import MemoryTransport

SIGNED = "前面有正负号"


# F1 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "投 -3", "投 +3", "投 －3", "投+3", "刀-3", "守 -1", "红牌 -5", "黄牌 -1", "代投 -2 -3",
    "代投 2 -3", "记票 3 -5", "延时 -3 22:00"])
def test_f1_a_signed_seat_number_is_refused_by_the_parser(text: str) -> None:
    with pytest.raises(ParseError) as err:
        parse(text)
    assert SIGNED in err.value.message and "正确写法" in err.value.message


@pytest.mark.parametrize("text", ["连 3-5", "作息 09:00-21:00", "判 12-1 更正"])
def test_f1_a_dash_between_numbers_still_separates_them(text: str) -> None:
    assert parse(text) is not None


@pytest.mark.parametrize("post", ["-5号", "+5号", "投 -5", "投-5 理由", "改票 -3"])
def test_f1_a_signed_seat_in_a_forum_post_is_no_vote_for_that_seat(post: str) -> None:
    said = read_vote(post)
    assert said.kind == "malformed" and said.target is None


def test_f1_a_judge_card_for_a_signed_seat_cards_nobody(table: Table) -> None:
    code = table.game("新游戏 经典 votes.channel=dm")
    table.link(code)
    table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
    before = [(st.yellow, st.red, st.alive) for st in table.state(code).seats]
    for text in ("红牌 -5", "黄牌 -1", "代投 -2 -3"):
        assert SIGNED in table.reply(JUDGE, text)
    assert [(st.yellow, st.red, st.alive) for st in table.state(code).seats] == before
    voter = table.contact(code, 4)
    assert SIGNED in table.reply(voter, "投 -3")
    assert 4 not in table.state(code).votes


# F2, F3 --------------------------------------------------------------------------------------
def _token(table: Table, seat: int) -> str:
    answer = table.reply(JUDGE, f"替补 {seat}")
    m = re.search(r"接替 ([A-Za-z0-9]{12})", answer)
    assert m, answer
    return m.group(1)


def test_f2_a_contact_already_seated_cannot_take_another_seat(table: Table) -> None:
    code = table.game()
    token = _token(table, 5)
    seated = table.contact(code, 3)
    answer = table.reply(seated, f"接替 {token}")
    assert "已经有座位" in answer and "仍然有效" in answer
    assert table.contact(code, 3) == seated and table.contact(code, 5) != seated
    # the token still works for a real substitute
    assert "你已接替" in table.reply("NEW", f"接替 {token}")
    assert table.contact(code, 5) == "NEW"


def test_f3_a_judge_of_the_game_cannot_take_a_seat_of_it(table: Table) -> None:
    code = table.game()
    token = _token(table, 5)
    old = table.contact(code, 5)
    answer = table.reply(JUDGE, f"接替 {token}")
    assert "法官" in answer and "仍然有效" in answer
    assert table.contact(code, 5) == old
    assert "你已接替" in table.reply("NEW", f"接替 {token}")


# F4 ------------------------------------------------------------------------------------------
def test_f4_the_console_clock_moves_at_most_a_year(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    migrate(url)
    service = Service(url)
    out = io.StringIO()
    try:
        start = instant_of(datetime(2026, 12, 1, 8, 0), zone("Asia/Shanghai"))
        console = ClockedBot(service, out, judges=[JUDGE], clock=VirtualClock(start))
        for line in ("/advance 999999d", "/advance 367d", "/clock 9999-12-31 23:59"):
            console.line(line)
        console.line("/advance 2d")
    finally:
        service.close()
    notes = out.getvalue().splitlines()
    assert notes == ["# ? the clock moves at most 366 days at a time"] * 3
    assert "internal error" not in out.getvalue()


# F5 ------------------------------------------------------------------------------------------
def test_f5_a_restart_raises_no_false_alarm_about_a_room(tmp_path: Path) -> None:
    """The console keeps no rooms across a restart: after one, the first change of a room's
    members told the judge that members were missing and put them in again."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    migrate(url)
    start = instant_of(datetime(2026, 12, 1, 7, 30), zone("Asia/Shanghai"))

    def console(out: io.StringIO) -> tuple[Service, ClockedBot]:
        service = Service(url)
        c = ClockedBot(service, out, judges=[JUDGE], clock=VirtualClock(start))
        c.bot.seeds = lambda: "ab" * 32
        c.bot.codes = lambda: "ROOM01"
        return service, c

    out = io.StringIO()
    service, first = console(out)
    try:
        first.line(f"{JUDGE}: 新游戏 经典")
        for i in range(1, 13):
            first.line(f"p{i}: 报名 ROOM01 马甲{i:02d}")
        first.line(f"{JUDGE}: 开始")
        state = service.state("ROOM01")
        cupid = next(st.seat for st in state.seats if st.role == "cupid")
        contacts = first.bot.chats.contacts("ROOM01")
        villagers = [st.seat for st in state.seats if st.role == "villager"]
        first.line(f"{contacts[cupid]}: 连 {villagers[0]} {villagers[1]}")
        assert "+ @ROOM01狼群:" in out.getvalue()
    finally:
        service.close()
    out2 = io.StringIO()
    service, second = console(out2)
    try:
        # Day 1 closes with a red card for a wolf (the room loses a member, in public).
        state = service.state("ROOM01")
        wolf = next(st.seat for st in state.seats if st.role == "wolf")
        second.line("/clock 2026-12-01 09:00")
        second.line(f"{JUDGE}: 红牌 {wolf}")
        second.line("/clock 2026-12-01 21:00")
    finally:
        service.close()
    text = out2.getvalue()
    assert f"- @ROOM01狼群 {contacts[wolf]}" in text
    assert "成员与应有成员不符" not in text
    assert not re.search(r"^\+ @ROOM01狼群 ", text, re.M)  # nobody put back in


# F6 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, what", [("1号", "座位号"), ("一号", "座位号"), ("12", "座位号"),
                                        ("法官", "法官"), ("狼人", "身份名"), ("预言家", "身份名"),
                                        ("狼头", "身份名"), ("帮助", "指令"), ("刀5", "指令")])
def test_f6_a_confusing_nickname_is_refused(table: Table, name: str, what: str) -> None:
    code = table.new_game()
    answer = table.reply("P1", f"报名 {code} {name}")
    assert "混淆" in answer and what in answer and "报名成功" not in answer
    assert "报名成功" in table.reply("P1", f"报名 {code} 小明")


# F7 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("options, detail", [
    ("deadlines.witch=9999999min", "最长 7 天"), ("reminders.before=3000h", "最长 7 天"),
    ("deadlines.night_action=8d", "最长 7 天"), ("cards.yellow_to_red=99", "0 到 20"),
    ("votes.channel=dm votes.channel=forum", "写了两次"),
    ("cards.yellow_to_red=2 cards.yellow_to_red=3", "写了两次")])
def test_f7_options_are_bounded_and_given_once(table: Table, options: str, detail: str
                                               ) -> None:
    answer = table.reply(JUDGE, f"新游戏 经典 {options}")
    assert "无效" in answer and detail in answer and "游戏码" not in answer
    assert not re.search(r"bad value|for option", answer)  # in Chinese, not the engine's


def test_f7_never_a_red_card_stays_valid(table: Table) -> None:
    assert "游戏码" in table.reply(JUDGE, "新游戏 经典 cards.yellow_to_red=0")


# F8 ------------------------------------------------------------------------------------------
def test_f8_a_bare_save_from_someone_not_the_witch(table: Table) -> None:
    code = table.game()
    table.link(code)
    table.move_to(datetime(2026, 12, 1, 21, 5, tzinfo=ZONE))
    seer = table.seats_with(code, "seer")[0]
    answer = table.reply(table.contact(code, seer), "救")
    assert answer == "你现在不能使用这个技能。"


def test_f8_a_substitute_for_no_such_seat(table: Table) -> None:
    table.game()
    assert table.reply(JUDGE, "替补 99") == "没有 99 号座位，请检查座位号。"


def test_f8_the_judges_start_and_kick_after_the_start(table: Table) -> None:
    code = table.game()
    for text in ("开始", "踢出 马甲3"):
        answer = table.reply(JUDGE, text)
        assert "已经开始" in answer and "替补" in answer and "联系法官" not in answer, answer
    assert code


def test_f8_commands_in_a_room_are_answered_by_dm(tmp_path: Path) -> None:
    table = Table(tmp_path, transport=MemoryTransport())
    try:
        code = table.game()
        table.link(code)
        room = table.room(code, "wolves")
        assert room is not None
        wolf = table.contact(code, table.seats_with(code, "wolf")[0])
        status = table.send(wolf, "状态", room=room)
        assert [s.kind for s in status] == ["dm"] and "你的座位" in status[0].text
        helped = table.send(wolf, "帮助", room=room)
        assert [s.kind for s in helped] == ["dm"] and "你现在可以发送" in helped[0].text
        stranger = table.send("STRANGER", "刀 3", room=room)
        assert [s.kind for s in stranger] == ["dm"] and stranger[0].target == "STRANGER"
        chatter = table.send(wolf, "今晚刀谁？", room=room)
        assert chatter == []  # talk is talk
        lovers = table.room(code, "lovers")
        assert lovers is not None
        elsewhere = table.send(table.contact(code, table.seats_with(code, "villager")[0]),
                               "验 3", room=lovers)
        assert [s.kind for s in elsewhere] == ["dm"] and "私聊" in elsewhere[0].text
        unknown = table.send(wolf, "状态", room="some-other-group")
        assert unknown == []  # a room of no game: not ours to answer
    finally:
        table.close()


# issue 33: a 马甲 that displays as another name -------------------------------------------------
@pytest.mark.parametrize("name", ["小\u202e明", "小\u200b明", "小\u200d明", "小\u2066明\u2069",
                                  "小\ufeff明", "小\u061c明", "小\u00ad明", "小\u3164明",
                                  "小\x07明", "小\u034f明", "小\u17b4明", "小\u180b明"])
def test_a_nickname_with_invisible_or_direction_characters_is_refused(table: Table, name: str
                                                                       ) -> None:
    code = table.new_game()
    answer = table.reply("P1", f"报名 {code} {name}")
    assert "报名成功" not in answer and "看不见" in answer, answer
    assert "报名成功" in table.reply("P1", f"报名 {code} 小明")


def test_the_nickname_check_is_one_function_a_form_can_call() -> None:
    from bot.chat.lobby import LobbyError, check_name

    check_name("小明")
    for bad, key in (("小\u202e明", "name_invisible"), ("1号", "name_reserved"),
                     ("小 明", "name_bad"), ("", "name_bad")):
        with pytest.raises(LobbyError) as refused:
            check_name(bad)
        assert refused.value.key == key
