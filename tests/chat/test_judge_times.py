"""The judge's times in chat (`开门`, `关门`; docs/rules-judge.md P-CLOCK-1): an HH:MM names
the next such moment, so that the next open at night is tomorrow's."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table, _day1


@pytest.mark.rules("P-CLOCK-1", "P-TIME-2")
def test_the_next_open_set_before_midnight_is_tomorrows(tmp_path: Path) -> None:
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 22, 0))
    assert table.state.phase == "N1"
    reply = table.say(JUDGE, "开门 08:00")
    assert "晚于现在" not in reply, reply
    assert table.state.schedule.open_at(2) == datetime(2026, 12, 2, 8, 0)
    seat = next(iter(table.contact))
    assert any("开门时间改为" in m and "08:00" in m
               for m in table.transport.dms(table.contact[seat])), "the table is told"


@pytest.mark.rules("P-CLOCK-1")
def test_the_next_open_set_by_day_is_tomorrows_and_after_midnight_todays(
        tmp_path: Path) -> None:
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    table.say(JUDGE, "开门 08:30")  # by day: the next open is tomorrow's
    assert table.state.schedule.open_at(2) == datetime(2026, 12, 2, 8, 30)
    table.move(datetime(2026, 12, 2, 1, 0))
    table.say(JUDGE, "开门 10:00")  # after midnight: today's 10:00 is still to come
    assert table.state.schedule.open_at(2) == datetime(2026, 12, 2, 10, 0)


@pytest.mark.rules("P-CLOCK-1")
def test_a_close_in_the_past_is_still_refused(tmp_path: Path) -> None:
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    assert "晚于现在" in table.say(JUDGE, "关门 11:00")
    assert table.state.schedule.close_at(1) == datetime(2026, 12, 1, 21, 0)
