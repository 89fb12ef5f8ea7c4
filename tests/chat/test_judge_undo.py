"""`撤销 [列表|编号|确认]` (issue 25, part 3; docs/rules-judge.md P-UNDO-1..5): a judge's own
command of the phase still open is undone, event-sourced: the log keeps it and gains an undo
row, the state is the replay without it, and whoever was told of it is told of the undo."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table, _day1

from bot.audit import export_game, verify_export
from bot.store.models import UNDO


@pytest.fixture
def day(tmp_path: Path) -> Table:
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    return table


def _number(listing: str, what: str) -> int:
    m = re.search(rf"(\d+)\. \d\d:\d\d .*{what}", listing)
    assert m is not None, listing
    return int(m[1])


def _act_for(tmp_path: Path, role: str, verb: str) -> tuple[Table, int, int]:
    """Night 1 at 22:00, and the judge's `代行` of the `role`'s `verb` on another seat, sent at
    21:40: the table, the role's seat and its target."""
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 21, 5))
    seat = table.role_seat(role)
    target = next(n for n in range(1, 13) if n != seat)
    table.move(datetime(2026, 12, 1, 22, 0))
    table.say(JUDGE, f"代行 {seat} {verb} {target} 21:40")
    return table, seat, target


def _agree(table: Table) -> None:
    """The stored state is the replay of the log (rebuild), and so is the export of the game
    ended then (verify)."""
    report = table.service.rebuild(table.code)
    assert report.ok, report.problems
    table.say(JUDGE, "结束")
    table.say(JUDGE, "结束 确认")
    assert table.state.over
    checks = verify_export(export_game(table.service, table.code), commitment=None)
    replay = next(c for c in checks if c.name == "replay")
    assert replay.ok, replay.detail
    assert table.service.rebuild(table.code).ok


@pytest.mark.rules("P-UNDO-1", "P-UNDO-2", "P-UNDO-4")
def test_undo_of_a_public_card_asks_for_confirmation_and_is_announced(day: Table) -> None:
    day.say(JUDGE, "黄牌 9 发言违规")
    assert day.state.seat(9).yellow == 1
    listing = day.say(JUDGE, "撤销 列表")
    n = _number(listing, "9号 黄牌")
    assert "已公开" in listing
    before = {s: len(day.transport.dms(c)) for s, c in day.contact.items()}
    asked = day.say(JUDGE, f"撤销 {n}")
    assert "撤销 确认" in asked and "9号 黄牌" in asked, asked
    assert day.state.seat(9).yellow == 1  # nothing yet
    done = day.say(JUDGE, "撤销 确认")
    assert "已撤销" in done and "已公开通知" in done, done
    assert day.state.seat(9).yellow == 0
    for seat, contact in day.contact.items():  # the card was told to every seat: so is the undo
        told = day.transport.dms(contact)[before[seat]:]
        assert any("法官撤销了此前的一项操作：法官给 9号 黄牌" in m for m in told), (seat, told)
        assert len(told) == 1  # one message each
    rows = day.service.log(day.code)
    undo = [r for r in rows if r.kind == UNDO]
    assert len(undo) == 1 and undo[0].body == {"seq": n}
    assert any(r.kind == "command" and r.seq == n for r in rows)  # the log keeps the command
    assert "撤销 确认" not in day.say(JUDGE, "撤销 列表")
    assert "没有待确认" in day.say(JUDGE, "撤销 确认")
    _agree(day)


@pytest.mark.rules("P-UNDO-1", "P-UNDO-4")
def test_a_private_waiver_is_undone_at_once(day: Table) -> None:
    day.say(JUDGE, "报备 10")
    assert day.state.seat(10).notice
    before = len(day.transport.dms(day.contact[10]))
    done = day.say(JUDGE, "撤销")  # the latest: no confirmation, nobody but the judge knew
    assert "已撤销" in done and "报备" in done and "没有通知任何玩家" in done, done
    assert not day.state.seat(10).notice
    assert day.transport.dms(day.contact[10])[before:] == []  # told of neither
    _agree(day)


@pytest.mark.rules("P-UNDO-1")
def test_a_vote_entered_by_the_judge_is_undone_and_leaves_the_day_post(day: Table) -> None:
    day.say(JUDGE, "记票 3 5 10:30")
    day.say(JUDGE, "记票 4 6 11:00")
    listing = day.say(JUDGE, "撤销 列表")
    n = _number(listing, r"记票.*3号")
    day.say(JUDGE, f"撤销 {n}")
    if 3 in day.state.votes:  # a public vote post: confirmed first
        day.say(JUDGE, "撤销 确认")
    assert 3 not in day.state.votes and day.state.votes[4][-1].target == 6
    post = day.say(JUDGE, "公示")
    assert "法官撤销" not in post
    _agree(day)


@pytest.mark.rules("P-UNDO-3")
def test_undo_after_the_phase_moved_on_is_refused(day: Table) -> None:
    day.say(JUDGE, "报备 10")
    n = _number(day.say(JUDGE, "撤销 列表"), "报备")
    day.move(datetime(2026, 12, 1, 21, 5))  # the day closed: night 1
    assert day.state.phase == "N1"
    assert "没有可以撤销" in day.say(JUDGE, "撤销 列表")
    assert "不能撤销" in day.say(JUDGE, f"撤销 {n}")
    assert day.state.seat(10).notice  # unchanged
    _agree(day)


@pytest.mark.rules("P-UNDO-3")
def test_a_command_a_later_one_depends_on_stays(day: Table) -> None:
    seat = day.role_seat("villager")
    day.say(JUDGE, f"黄牌 {seat}")
    day.say(JUDGE, f"黄牌 {seat}")  # the second yellow is a red card: it depends on the first
    assert day.state.seat(seat).red and not day.state.seat(seat).alive
    listing = day.say(JUDGE, "撤销 列表")
    first, second = sorted(int(n) for n in re.findall(r"(\d+)\. \d\d:\d\d ", listing))
    assert "之后的操作依赖" in day.say(JUDGE, f"撤销 {first}")
    assert day.state.seat(seat).yellow == 2
    day.say(JUDGE, f"撤销 {second}")
    assert "已撤销" in day.say(JUDGE, "撤销 确认")
    assert day.state.seat(seat).alive and day.state.seat(seat).yellow == 1
    day.say(JUDGE, f"撤销 {first}")
    assert "已撤销" in day.say(JUDGE, "撤销 确认")
    assert day.state.seat(seat).yellow == 0
    _agree(day)


@pytest.mark.rules("P-UNDO-1", "P-UNDO-4", "P-UNDO-5")
def test_an_act_for_is_undone_and_the_seat_is_told(tmp_path: Path) -> None:
    table, guard, target = _act_for(tmp_path, "guard", "守")
    assert table.state.night.slots["guard"].sub is not None
    before = len(table.transport.dms(table.contact[guard]))
    assert "已撤销" in table.say(JUDGE, "撤销")
    assert table.state.night.slots["guard"].sub is None
    told = table.transport.dms(table.contact[guard])[before:]
    assert any("法官撤销了此前的一项操作" in m for m in told), told
    # the guard may send the choice again (it was never final)
    table.seat(guard, f"守 {target}")
    assert table.state.night.slots["guard"].sub is not None
    _agree(table)


@pytest.mark.rules("P-UNDO-1")
def test_only_the_judges_own_commands(day: Table) -> None:
    day.move(datetime(2026, 12, 1, 21, 5))
    wolf = day.role_seat("wolf")
    day.seat(wolf, "刀 3")  # a player's own action is not the judge's to undo
    assert "没有可以撤销" in day.say(JUDGE, "撤销 列表")
    assert "只有法官能用" in day.seat(wolf, "撤销")


@pytest.mark.rules("P-UNDO-6")
def test_a_kick_before_the_start_is_undone(tmp_path: Path) -> None:
    from chathelp import Table as Lobby
    from chathelp import dm_texts

    table = Lobby(tmp_path)
    try:
        code = table.new_game()
        table.reply("P1", f"报名 {code} 马甲1")
        table.reply("P3", f"报名 {code} 马甲3")
        table.send(JUDGE, "踢出 马甲3")
        assert "1/12" in table.reply(JUDGE, "状态")
        sent = table.send(JUDGE, "撤销")
        assert any("重新加入" in m for m in dm_texts(sent, "P3"))
        assert any("已撤销踢出" in m and "2/12" in m for m in dm_texts(sent, JUDGE))
        assert "马甲3" in table.reply(JUDGE, "状态")
        assert "没有可以撤销的踢出" in table.reply(JUDGE, "撤销")  # once
    finally:
        table.close()


@pytest.mark.rules("P-UNDO-6")
def test_a_room_bound_by_mistake_is_unbound(tmp_path: Path) -> None:
    from chathelp import Table as Chat

    from bot.transport.memory import MemoryTransport

    table = Chat(tmp_path, transport=MemoryTransport(rooms_allowed=False))
    try:
        code = table.new_game("新游戏 经典 public.channel=room")
        table.fill(code, 12)
        table.reply(JUDGE, "开始")
        contacts = table.contacts(code)
        transport = table.transport
        assert isinstance(transport, MemoryTransport)
        transport.rooms["hall"] = [*contacts.values(), JUDGE]
        assert "已绑定" in table.reply(JUDGE, f"绑定 {code} 公告群", room="hall")
        assert "公告群" in table.reply(JUDGE, "撤销 列表")
        before = len(transport.sent)
        assert "已撤销绑定" in table.reply(JUDGE, "撤销 绑定")
        assert any(s.target == "hall" and "撤销了绑定" in s.text for s in transport.sent[before:])
        assert table.bot.chats.room_id(code, "public") is None
        assert "没有可以撤销的绑定" in table.reply(JUDGE, "撤销 绑定")
    finally:
        table.close()


@pytest.mark.rules("P-UNDO-7")
def test_undoing_a_close_moved_past_a_close_that_passed_meanwhile_is_refused(
        tmp_path: Path) -> None:
    """`关门 22:30` at 20:50, a vote at 21:10: without the 关门 the day would have closed at
    21:00, before that vote; the undo would count it at a close that never fired."""
    table = Table(tmp_path, "votes.channel=dm")
    _day1(table)
    table.move(datetime(2026, 12, 1, 20, 50))
    table.say(JUDGE, "关门 22:30")
    table.move(datetime(2026, 12, 1, 21, 10))
    table.seat(3, "投 5")
    reply = table.say(JUDGE, "撤销")
    assert "不能撤销" in reply and "第1天关门" in reply and "21:00" in reply, reply
    assert "撤销 确认" not in reply  # refused at once, nothing to confirm
    assert "没有待确认" in table.say(JUDGE, "撤销 确认")
    state = table.state
    assert state.phase == "D1" and state.schedule.close_at(1) == datetime(2026, 12, 1, 22, 30)
    assert [v.target for v in state.votes[3]] == [5]
    _agree(table)


@pytest.mark.rules("P-UNDO-7")
def test_undoing_a_close_moved_before_the_old_close_came_is_done(tmp_path: Path) -> None:
    table = Table(tmp_path, "votes.channel=dm")
    _day1(table)
    table.move(datetime(2026, 12, 1, 20, 50))
    table.say(JUDGE, "关门 22:30")
    table.seat(3, "投 5")
    table.move(datetime(2026, 12, 1, 20, 55))
    assert "撤销 确认" in table.say(JUDGE, "撤销")
    assert "已撤销" in table.say(JUDGE, "撤销 确认")
    assert table.state.schedule.close_at(1) == datetime(2026, 12, 1, 21, 0)
    _agree(table)


@pytest.mark.rules("P-UNDO-7")
def test_undoing_an_extension_after_the_original_deadline_is_refused(tmp_path: Path) -> None:
    """`延时` gave the witch until 08:30; she answered at 08:10, after her original 08:00:
    undone, her answer would stand with no card for the deadline she missed."""
    table = Table(tmp_path, "night.resolve_early=false")
    _day1(table)
    table.move(datetime(2026, 12, 2, 7, 50))
    assert table.state.phase == "N1"
    witch = table.role_seat("witch")
    table.say(JUDGE, f"延时 {witch} 08:30")
    table.move(datetime(2026, 12, 2, 8, 10))
    table.seat(witch, "跳过")
    table.move(datetime(2026, 12, 2, 8, 15))
    reply = table.say(JUDGE, "撤销")
    assert "不能撤销" in reply and "女巫用药截止" in reply and "08:00" in reply, reply
    dl = table.state.deadline("night:1:witch")
    assert dl is not None and dl.due == datetime(2026, 12, 2, 8, 30)
    _agree(table)


@pytest.mark.rules("P-UNDO-8", "G-RES-1")
def test_an_act_for_check_whose_result_was_told_is_not_undone(tmp_path: Path) -> None:
    table, seer, target = _act_for(tmp_path, "seer", "验")
    reply = table.say(JUDGE, "撤销")
    assert "不能撤销" in reply and f"{seer}号" in reply and "结果" in reply, reply
    slot = table.state.night.slots["see"]
    assert slot.final and slot.sub is not None and slot.sub.targets == [target]
    other = next(n for n in range(1, 13) if n not in (seer, target))
    assert "查验结果" not in table.seat(seer, f"验 {other}")  # no second check that night
    _agree(table)


@pytest.mark.rules("P-UNDO-7", "P-REVIEW-4")
def test_the_moved_opens_notice_since_the_command_does_not_refuse_its_undo(
        tmp_path: Path) -> None:
    """Under the review the moved open is told at the original open (a notice, no phase
    move). A waiver given before it is undone after it: the notice fired then as it would have
    without the waiver; it is no deadline that passed unfired."""
    from test_judge_review import _night

    table = Table(tmp_path, "resolve.judge_review=true", "resolve.review_minutes=90")
    _night(table)
    table.move(datetime(2026, 12, 2, 8, 30))  # the witch's deadline fired: the review
    table.say(JUDGE, "报备 10")
    table.move(datetime(2026, 12, 2, 9, 5))  # 09:00: the open, moved to 09:30, is told
    assert table.state.phase == "N1" and table.state.seat(10).notice
    done = table.say(JUDGE, "撤销")
    assert "已撤销" in done and "报备" in done, done
    assert not table.state.seat(10).notice
    _agree(table)


@pytest.mark.rules("P-UNDO-7", "P-REVIEW-4")
def test_a_judges_open_that_replaced_the_notice_is_not_undone_after_it_was_due(
        tmp_path: Path) -> None:
    """The judge's own `开门` during the review replaces the notice of the moved open: undone
    after the original open, that notice would be told late (it never fired): refused."""
    from test_judge_review import _night

    table = Table(tmp_path, "resolve.judge_review=true", "resolve.review_minutes=90")
    _night(table)
    table.move(datetime(2026, 12, 2, 8, 30))
    table.say(JUDGE, "开门 10:00")
    table.move(datetime(2026, 12, 2, 9, 5))
    assert table.state.phase == "N1"
    refused = table.say(JUDGE, "撤销")
    assert "不能撤销" in refused and "09:00" in refused, refused
    assert table.state.schedule.open_at(2) == datetime(2026, 12, 2, 10, 0)
