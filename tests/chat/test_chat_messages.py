"""Fewer, clearer messages through the chat layer (issue 20): one message per recipient per
step, the judge's feed (法官通知) in Chinese, the public room (public.channel=room), and seats
out of the game (public.dm_out)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

from chathelp import JUDGE, ZONE, Table, dm_texts

from bot.transport.memory import MemoryTransport, Sent


def once_each(sent: list[Sent]) -> None:
    """No recipient got two messages from this step."""
    told = Counter((s.kind, s.target) for s in sent if s.kind in ("dm", "post"))
    assert max(told.values(), default=1) == 1, told


def test_the_start_is_one_dm_per_seat_and_one_to_the_judge(table: Table) -> None:
    code = table.new_game()
    table.fill(code, 12)
    sent = table.send(JUDGE, "开始")
    once_each(sent)
    assert sorted(s.target for s in sent if s.kind == "dm") == sorted(
        [f"P{i}" for i in range(1, 13)] + [JUDGE])
    assert sent[0].target == JUDGE  # the answer first
    judge = dm_texts(sent, JUDGE)[0]
    assert judge.startswith(f"【{code}】开局") and "已开始" in judge and "预言家" in judge
    for i in range(1, 13):
        text = dm_texts(sent, f"P{i}")[0]
        assert "随机种子承诺" in text and "你的座位：" in text and "你的身份：" in text


def test_every_step_of_a_whole_game_tells_each_recipient_once(table: Table) -> None:
    code = table.game("新游戏 经典 votes.channel=dm")
    table.link(code)
    steps = 0
    for day in range(1, 4):
        once_each(table.move_to(datetime(2026, 12, day, 9, 0, tzinfo=ZONE)))
        state = table.state(code)
        if state.over:
            break
        for st in state.living():
            once_each(table.send(table.contact(code, st.seat), f"投 {1 + st.seat % 12}"))
            steps += 1
        once_each(table.move_to(datetime(2026, 12, day, 21, 0, tzinfo=ZONE)))
    assert steps > 10


def test_the_judge_feed_setting_per_game(table: Table) -> None:
    code = table.game("新游戏 经典 votes.channel=dm")
    table.link(code)
    table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
    voter = table.contact(code, 1)
    # 摘要 (the default): a vote is not the judge's business ...
    assert dm_texts(table.send(voter, "投 2"), JUDGE) == []
    assert "「全部」" in table.reply(JUDGE, "法官通知 全部")
    # ... with 全部 it is, in Chinese
    told = dm_texts(table.send(table.contact(code, 2), "投 3"), JUDGE)
    assert told == [f"【{code}】2号 投票给 3号"]
    assert "「关闭」" in table.reply(JUDGE, "法官通知 关闭")
    closed = table.move_to(datetime(2026, 12, 1, 21, 0, tzinfo=ZONE))
    assert dm_texts(closed, JUDGE) == []
    # the judge's own commands are always answered
    assert table.reply(JUDGE, "报备 5").startswith(f"【{code}】法官登记 5号 报备")
    assert "「关闭」" in table.reply(JUDGE, "法官通知")


def test_a_public_room_carries_the_announcements(table: Table) -> None:
    code = table.game("新游戏 经典 public.channel=room")
    room = table.room(code, "public")
    assert room is not None
    transport = table.transport
    assert isinstance(transport, MemoryTransport)
    contacts = table.contacts(code)
    assert set(transport.rooms[room]) == set(contacts.values()) | {JUDGE}
    table.link(code)
    opened = table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
    once_each(opened)
    posts = [s.text for s in opened if s.kind == "post" and s.target == room]
    assert len(posts) == 1 and "第1天讨论日开始" in posts[0]
    assert not any("第1天讨论日开始" in t for c in contacts.values() for t in dm_texts(opened, c))
    # a seat that goes out stays in the room
    table.move_to(datetime(2026, 12, 3, 9, 0, tzinfo=ZONE))
    out = [st.seat for st in table.state(code).seats if not st.alive]
    assert out and all(contacts[n] in transport.rooms[room] for n in out)


def test_a_judge_made_public_room_is_bound_with_bind(tmp_path: Path) -> None:
    table = Table(tmp_path, transport=MemoryTransport(rooms_allowed=False))
    try:
        code = table.new_game("新游戏 经典 public.channel=room")
        table.fill(code, 12)
        started = table.reply(JUDGE, "开始")
        assert f"绑定 {code} 公告群" in started
        contacts = table.contacts(code)
        transport = table.transport
        assert isinstance(transport, MemoryTransport)
        transport.rooms["hall"] = [c for n, c in contacts.items() if n != 1] + [
            JUDGE, "spectator"]  # somebody else may read the public room too
        refused = table.reply(JUDGE, f"绑定 {code} 公告群", room="hall")
        assert "缺少 1号" in refused and "spectator" not in refused
        transport.rooms["hall"].append(contacts[1])
        assert "已绑定" in table.reply(JUDGE, f"绑定 {code} 公告群", room="hall")
        table.link(code)
        opened = table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
        assert [s.target for s in opened if s.kind == "post"] == ["hall"]
    finally:
        table.close()


def test_seats_out_get_the_announcements_only_with_dm_out(tmp_path: Path) -> None:
    for dm_out in ("false", "true"):
        (tmp_path / dm_out).mkdir()
        table = Table(tmp_path / dm_out)
        try:
            code = table.game(f"新游戏 经典 votes.channel=dm public.dm_out={dm_out}")
            table.link(code)
            table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
            red = table.send(JUDGE, "红牌 5")  # out in this step: 5 still reads why
            assert any("5 号被红牌罚下" in t for t in dm_texts(red, table.contact(code, 5)))
            closed = table.move_to(datetime(2026, 12, 1, 21, 0, tzinfo=ZONE))
            said = any("讨论日结束" in t for t in dm_texts(closed, table.contact(code, 5)))
            assert said == (dm_out == "true")
            assert any("讨论日结束" in t for t in dm_texts(closed, table.contact(code, 6)))
        finally:
            table.close()
