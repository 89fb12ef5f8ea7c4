"""Last words are submitted once (engine: `lastwords_due` is cleared by the first): the reply
never promises a resubmission (CHAT.md 遗言; RULES.md last words)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from test_chat_judge import Table, _day1


def test_last_words_once_and_the_reply_says_so(tmp_path: Path) -> None:
    table = Table(tmp_path, "votes.channel=dm")
    _day1(table)
    for n in table.state.living_numbers():  # everyone votes: no card for not voting
        table.seat(n, "投 1")
    table.move(datetime(2026, 12, 2, 9, 0))
    assert table.state.phase == "D2"
    target = next(n for n in table.state.living_numbers() if n != table.state.sheriff)
    for n in table.state.living_numbers():
        if n != target:
            table.seat(n, f"投 {target}")
    table.move(datetime(2026, 12, 2, 21, 0))
    assert target in table.state.lastwords_due, (table.state.phase, target)
    first = table.seat(target, "遗言 各位再见")
    assert "可重新提交" not in first and "只能提交一次" in first, first
    again = table.seat(target, "遗言 补充一句")
    assert "不能提交遗言" in again, again
