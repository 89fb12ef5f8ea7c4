"""`复盘` (issue 25, part 6; docs/rules-judge.md P-REPLAY-1): after the end, the whole game as
forum posts for the judge: roles with 马甲, lovers and camps, each night and day, the seed with
how to check it; refused while the game runs (it reveals every role)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table

from bot.chat.recap import replay_posts
from bot.texts import role_name


@pytest.mark.rules("P-REPLAY-1")
def test_the_replay_is_refused_until_the_end_then_tells_everything(tmp_path: Path) -> None:
    table = Table(tmp_path, "votes.channel=dm")
    assert "还没有结束" in table.say(JUDGE, f"复盘 {table.code}")
    assert "只有法官" in table.seat(1, f"复盘 {table.code}")
    cupid = table.role_seat("cupid")
    table.seat(cupid, "连 1 2")
    from datetime import datetime
    table.move(datetime(2026, 12, 1, 9, 0))
    table.seat(3, "投 5")
    table.say(JUDGE, "结束")
    table.say(JUDGE, "结束 确认")
    text = table.say(JUDGE, "复盘")  # the sender's latest game over
    assert f"【{table.code} 复盘 1/" in text, text
    for seat in table.state.seats:
        line = f"{seat.seat}号 马甲{_name_of(table, seat.seat)}：{role_name('classic', seat.role)}"
        assert line in text, line
    assert "情侣：1号、2号" in text
    assert "第1天" in text and "开局" in text
    seed = table.state.seed
    assert f"种子：{seed}" in text and "wolfjudge verify" in text
    assert "_" not in re.sub(r"[0-9a-f]{64}", "", text)  # no internal identifier


def _name_of(table: Table, seat: int) -> str:
    return table.players()[seat][1].removeprefix("马甲")


@pytest.mark.rules("P-REPLAY-1")
def test_posts_are_split_at_line_breaks_within_the_limit(tmp_path: Path) -> None:
    table = Table(tmp_path)
    table.say(JUDGE, "结束")
    table.say(JUDGE, "结束 确认")
    names = {n: name for n, (_, name) in table.players().items()}
    posts = replay_posts(table.code, table.state, table.service.log(table.code), names,
                         limit=200)
    assert len(posts) > 1
    assert all(len(p) <= 200 for p in posts)
    assert posts[0].startswith(f"【{table.code} 复盘 1/{len(posts)}】")
    whole = replay_posts(table.code, table.state, table.service.log(table.code), names,
                         limit=100_000)
    assert len(whole) == 1
    lines = [line for line in whole[0].splitlines()[1:] if line]
    # every line is there, in order; a line longer than a post is split, not cut
    assert "".join(lines) == "".join(line for p in posts for line in p.splitlines()[1:] if line)
