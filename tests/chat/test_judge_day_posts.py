"""`公示`, complete (issue 25, part 5; docs/rules-judge.md P-POST-1, P-POST-2): at a day's open,
the post a forum judge writes (the dawn, yesterday's 票型 by voter with each post's time and
its outcome, last words, the sheriff, the period's cards, today's times, the living); at night,
the day's result post."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table


def _day_one_votes(table: Table) -> None:
    table.seat(table.role_seat("cupid"), "连 1 2")
    table.move(datetime(2026, 12, 1, 9, 0))
    table.move(datetime(2026, 12, 1, 10, 30))
    table.seat(3, "投 5")
    table.seat(4, "投 5")
    table.move(datetime(2026, 12, 1, 11, 15))
    table.seat(3, "改票 6")
    table.seat(6, "弃权")
    table.move(datetime(2026, 12, 1, 12, 0))
    table.say(JUDGE, "代投 7 5")


@pytest.mark.rules("P-POST-2")
def test_the_result_post_at_night_has_the_days_ballots_and_outcome(tmp_path: Path) -> None:
    table = Table(tmp_path, "votes.channel=dm")
    _day_one_votes(table)
    table.move(datetime(2026, 12, 1, 21, 5))
    text = table.say(JUDGE, "公示")
    assert "第1天结果公示" in text, text
    assert "  3号：投 5号（10:30）；改票 6号（11:15）" in text, text
    assert "  6号：弃权（11:15）" in text, text
    assert "  7号：法官代投·投 5号（12:00）" in text, text
    assert "结果：" in text and "第1天投票结果" in text, text
    assert "存活：" in text


@pytest.mark.rules("P-POST-1")
def test_the_open_post_has_yesterday_today_and_the_living(tmp_path: Path) -> None:
    table = Table(tmp_path, "votes.channel=dm")
    _day_one_votes(table)
    table.say(JUDGE, "黄牌 8 发言违规")
    table.move(datetime(2026, 12, 2, 9, 5))  # night 1 resolved, day 2 open
    assert table.state.phase == "D2"
    text = table.say(JUDGE, "公示")
    assert "第2天开贴公示" in text and "第2天讨论日开始" in text, text
    assert "第1天票型" in text and "  4号：投 5号（10:30）" in text, text
    assert "本期牌：" in text and "8号黄牌" in text, text  # (in the dawn's own text)
    assert "今日时间：09:00 开贴，21:00 关贴；20:00 后不得改票，20:30 后不再代投。" in text, text
    alive = "、".join(f"{n}号" for n in table.state.living_numbers())
    assert f"存活：{alive}" in text, text
    if table.state.sheriff:
        assert f"警长：{table.state.sheriff}号" in text


@pytest.mark.rules("P-POST-3")
def test_the_public_room_gets_the_whole_open_post_in_one_message(tmp_path: Path) -> None:
    from chathelp import ZONE
    from chathelp import Table as RoomTable

    table = RoomTable(tmp_path)
    try:
        code = table.game("新游戏 经典 public.channel=room votes.channel=dm")
        room = table.room(code, "public")
        table.link(code)
        table.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE))
        for n in table.state(code).living_numbers():
            table.send(table.contact(code, n), "投 1")
        opened = table.move_to(datetime(2026, 12, 2, 9, 5, tzinfo=ZONE))
        posts = [s.text for s in opened if s.kind == "post" and s.target == room]
        dawn = [p for p in posts if "第2天讨论日开始" in p]
        assert len(dawn) == 1, posts  # one message: the dawn and the rest of the open post
        assert "第1天票型" in dawn[0] and "今日时间：" in dawn[0], dawn[0]
        assert dawn[0].index("第2天讨论日开始") < dawn[0].index("第1天票型")
    finally:
        table.close()
