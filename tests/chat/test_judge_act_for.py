"""`代行 S 命令 [HH:MM]` (issue 25, part 2; docs/rules-judge.md P-ACTFOR-1..4): the judge enters
a seat's night or set-up action that the bot never got, with the time the player sent it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table, _day1


@pytest.fixture
def night(tmp_path: Path) -> Table:
    """Day 1 closed at 21:00: night 1 is open (the seer and the wolves until 22:30)."""
    table = Table(tmp_path)
    _day1(table)
    table.move(datetime(2026, 12, 1, 21, 5))
    assert table.state.phase == "N1"
    return table


@pytest.mark.rules("P-ACTFOR-1", "P-ACTFOR-2")
def test_the_judge_enters_the_seers_check_with_its_sending_time(night: Table) -> None:
    seer = night.role_seat("seer")
    target = next(n for n in range(1, 13) if n != seer)
    night.move(datetime(2026, 12, 1, 22, 0))
    before = len(night.transport.dms(night.contact[seer]))
    reply = night.say(JUDGE, f"代行 {seer} 验 {target} 21:40")
    assert f"已代 {seer}号 提交" in reply and "21:40" in reply, reply
    sub = night.state.night.slots["see"].sub
    assert sub is not None and sub.by == seer and sub.targets == [target]
    assert sub.at == datetime(2026, 12, 1, 21, 40)  # when the player sent it
    told = "\n".join(night.transport.dms(night.contact[seer])[before:])
    assert "法官代你提交了" in told and "21:40" in told, told
    assert "查验结果" in told  # the seat's own feedback, as if it had been received
    # logged as the judge's: the accepted command's sender is the judge
    from sqlalchemy import select

    from bot.store.models import InboxMessage
    with night.service.db.read() as s:
        row = s.scalars(select(InboxMessage).where(InboxMessage.game_id == night.code,
                                                   InboxMessage.outcome == "accepted")
                        .order_by(InboxMessage.version.desc())).first()
    assert row is not None and row.sender == JUDGE and row.command["seat"] == seer


@pytest.mark.rules("P-ACTFOR-3")
def test_a_late_act_for_is_refused(night: Table) -> None:
    seer = night.role_seat("seer")
    target = next(n for n in range(1, 13) if n != seer)
    night.move(datetime(2026, 12, 1, 22, 10))
    reply = night.say(JUDGE, f"代行 {seer} 验 {target} 22:45")  # sent after its 22:30 limit
    assert "不在这项行动的时限内" in reply and "22:30" in reply, reply
    night.say(JUDGE, f"报备 {seer}")  # (no card for the missed check: the seer stays in)
    night.move(datetime(2026, 12, 1, 22, 40))  # the check's deadline fired
    assert night.state.seat(seer).alive
    reply = night.say(JUDGE, f"代行 {seer} 验 {target} 22:20")
    assert "时限已过" in reply and "不能代行" in reply, reply
    assert night.state.night.slots["see"].sub is None


@pytest.mark.rules("P-ACTFOR-3")
def test_a_time_before_the_night_or_in_the_future_is_outside(night: Table) -> None:
    seer = night.role_seat("seer")
    night.move(datetime(2026, 12, 1, 22, 0))
    assert "不在这项行动的时限内" in night.say(JUDGE, f"代行 {seer} 验 1 20:30")
    # 23:00 has not come yet: read as yesterday's 23:00, long before the night
    assert "不在这项行动的时限内" in night.say(JUDGE, f"代行 {seer} 验 1 23:00")
    assert night.state.night.slots["see"].sub is None


@pytest.mark.rules("P-ACTFOR-1")
def test_only_actions_and_only_judges(night: Table) -> None:
    assert "只能代替座位提交夜间或开局行动" in night.say(JUDGE, "代行 3 投 5")
    assert "只能代替座位提交夜间或开局行动" in night.say(JUDGE, "代行 3 你好")
    assert "不能代行" in night.say(JUDGE, "代行 13 验 5")
    wolf = night.role_seat("wolf")
    reply = night.seat(wolf, "代行 3 验 5")
    assert "已代" not in reply
    assert night.state.night.slots["see"].sub is None


@pytest.mark.rules("P-ACTFOR-4")
def test_a_set_up_action_is_entered_before_day_one(tmp_path: Path) -> None:
    table = Table(tmp_path)
    cupid = table.role_seat("cupid")
    table.move(datetime(2026, 12, 1, 8, 30))
    reply = table.say(JUDGE, f"代行 {cupid} 连 1 2 08:10")
    assert f"已代 {cupid}号 提交" in reply, reply
    lovers = sorted(s.seat for s in table.state.seats if s.lover_of)
    assert lovers == [1, 2]
