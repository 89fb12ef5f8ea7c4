"""The judge's times in chat (`开门`, `关门`, `延时`; docs/rules-judge.md P-CLOCK-1, P-CLOCK-2): an
HH:MM names the next such moment, so that the next open at night is tomorrow's and a close
after midnight runs the day past midnight; every time told without seconds."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table, _day1

from bot.render import has_judge_wording, render_event, render_for_judge
from engine.events import Audience, Event


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


@pytest.mark.rules("P-CLOCK-2")
def test_a_close_after_midnight_runs_the_day_past_midnight(tmp_path: Path) -> None:
    """`关门 00:30` sent at 20:30 on a day that closes at 21:00: the next 00:30, tomorrow's,
    before day 2 opens at 09:00."""
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 20, 30))
    reply = table.say(JUDGE, "关门 00:30")
    assert "晚于现在" not in reply, reply
    assert "12-02 00:30" in reply, reply
    assert table.state.schedule.close_at(1) == datetime(2026, 12, 2, 0, 30)
    table.move(datetime(2026, 12, 2, 0, 10))
    assert table.state.phase == "D1"
    table.say(JUDGE, "关门 00:45")  # after midnight: today's 00:45, still to come
    assert table.state.schedule.close_at(1) == datetime(2026, 12, 2, 0, 45)
    table.move(datetime(2026, 12, 2, 0, 45))
    assert table.state.phase == "N1"


@pytest.mark.rules("P-CLOCK-2")
def test_a_close_that_would_pass_the_next_open_is_refused_with_the_reason(
        tmp_path: Path) -> None:
    """At 12:00, `关门 11:00` names tomorrow's 11:00, after day 2 opens (09:00): refused,
    saying which moment it named and why, and nothing moves."""
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    reply = table.say(JUDGE, "关门 11:00")
    assert "12-02 11:00" in reply and "12-02 09:00" in reply and "开门" in reply, reply
    assert table.state.schedule.close_at(1) == datetime(2026, 12, 1, 21, 0)
    assert table.state.schedule.open_at(2) == datetime(2026, 12, 2, 9, 0)
    table.say(JUDGE, "开门 12:00")  # day 2 opens later: then tomorrow's 11:00 will do
    table.say(JUDGE, "关门 11:00")
    assert table.state.schedule.close_at(1) == datetime(2026, 12, 2, 11, 0)


SECONDS = re.compile(r"\d{1,2}:\d{2}:\d{2}")


@pytest.mark.rules("P-CLOCK-1")
def test_the_judges_times_are_told_without_seconds(tmp_path: Path) -> None:
    """Issue 33, "Times never with seconds": 关门, 开门, 作息, 延时, 暂停 and 继续, their replies
    and what the table is told, each time as `12-01 22:30` (or `22:30`), never `22:30:00`."""
    table = Table(tmp_path)
    _day1(table)
    before = len(table.transport.sent)
    table.move(datetime(2026, 12, 1, 12, 0))
    table.say(JUDGE, "关门 22:30")
    table.say(JUDGE, "开门 08:30")
    table.say(JUDGE, "作息 09:30-21:30")
    table.say(JUDGE, "暂停")
    table.move(datetime(2026, 12, 1, 12, 30))
    table.say(JUDGE, "继续")
    table.move(datetime(2026, 12, 1, 23, 0))
    seer = table.role_seat("seer")
    assert "12-02 01:00" in table.say(JUDGE, f"延时 {seer} 01:00")
    texts = [s.text for s in table.transport.sent[before:] if s.text]
    assert any("关门时间改为 12-01 22:30" in text for text in texts), texts
    assert any("12-02 01:00" in text for text in texts), texts
    timed = [text for text in texts if SECONDS.search(text)]
    assert not timed, timed


NEWS = (("关门 22:30", "关门时间改为 12-01 22:30"), ("开门 08:30", "开门时间改为 12-02 08:30"))


@pytest.mark.rules("P-CLOCK-1", "P-CLOCK-2")
@pytest.mark.parametrize("channel", ["dm", "room"])
def test_the_judge_is_told_a_moved_close_or_open_once(tmp_path: Path, channel: str) -> None:
    """One message per recipient per step, no text repeated: the answer to the judge's own
    `关门`/`开门` tells them the new time, so their feed does not add the table's announcement
    of it (as it leaves out a public room's posts the judge reads there); the table's
    announcement is as before."""
    table = Table(tmp_path, f"public.channel={channel}")
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    for command, news in NEWS:
        before = len(table.transport.sent)
        table.say(JUDGE, command)
        sent = table.transport.sent[before:]
        judge = [s.text for s in sent if s.kind == "dm" and s.target == JUDGE]
        assert len(judge) == 1 and judge[0].count(news) == 1, judge
        told = f"法官调整时间：第{1 if '关门' in command else 2}天{news}。"
        if channel == "dm":
            for contact in table.contact.values():
                assert [s.text for s in sent if s.target == contact] == [told]
        else:
            assert [s.text for s in sent if s.kind == "post"] == [told]
            assert not [s for s in sent if s.kind == "dm" and s.target != JUDGE]


@pytest.mark.rules("P-REVIEW-4")
def test_the_reviews_moved_open_still_reads_as_the_table_reads_it() -> None:
    """The judge's wording hides only the cases their own command says; the open the review
    moves (no command of theirs) reads to the judge as to the table, and is left out of a
    public room's judge feed as other public news is."""
    moved = Event(type="TimeChanged", at=datetime(2026, 12, 2, 8, 1), phase="N1",
                  audience=Audience(public=True),
                  data={"which": "review", "day": 2, "at": "12-02 09:30"})
    assert render_for_judge(moved, "classic") == render_event(moved, "classic")
    assert "09:30" in render_for_judge(moved, "classic")
    assert not has_judge_wording(moved, "classic")
    closed = moved.model_copy(update={"data": {**moved.data, "which": "close"}})
    assert render_for_judge(closed, "classic") == "" and has_judge_wording(closed, "classic")
