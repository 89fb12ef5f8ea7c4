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
    reply = night.say(JUDGE, f"代行 {seer} 验 {target} 22:45")  # after its 22:30 limit, and
    assert "还没到" in reply and "22:10" in reply, reply  # not come yet: a time to come
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
    # 23:00 has not come yet (yesterday's 23:00 is long before the night): a time to come
    reply = night.say(JUDGE, f"代行 {seer} 验 1 23:00")
    assert "还没到" in reply and "不在这项行动的时限内" not in reply, reply
    assert night.state.night.slots["see"].sub is None


@pytest.mark.rules("P-ACTFOR-3")
def test_a_future_time_inside_the_window_is_refused_as_future_not_as_outside(
        night: Table) -> None:
    """22:20 at 22:00 lies between the night's start and the 22:30 deadline: refusing it as
    "not within 21:00–22:30" would contradict itself; it is refused as a time to come."""
    seer = night.role_seat("seer")
    night.move(datetime(2026, 12, 1, 22, 0))
    reply = night.say(JUDGE, f"代行 {seer} 验 1 22:20")
    assert "22:20" in reply and "还没到" in reply and "22:00" in reply, reply
    assert "不在这项行动的时限内" not in reply
    assert night.state.night.slots["see"].sub is None


@pytest.mark.rules("P-ACTFOR-2", "P-ACTFOR-4")
def test_a_refusal_speaks_of_the_seat_to_the_judge(night: Table) -> None:
    """The engine's refusal of a 代行 is worded for the judge, about seat S, never in the
    player's own voice ("你…")."""
    seer = night.role_seat("seer")
    night.move(datetime(2026, 12, 1, 22, 0))
    night.say(JUDGE, f"代行 {seer} 验 1 21:40")
    reply = night.say(JUDGE, f"代行 {seer} 验 2 21:50")  # a check is final once answered
    assert f"{seer}号" in reply and "你" not in reply, reply
    assert night.state.night.slots["see"].sub.targets == [1]
    witch = night.role_seat("witch")
    reply = night.say(JUDGE, f"代行 {witch} 验 2 21:50")  # not the witch's skill
    assert f"{witch}号" in reply and "你" not in reply, reply
    reply = night.say(JUDGE, f"代行 {witch} 救 21:50")  # no kill reported to her yet
    assert "你" not in reply, reply


@pytest.mark.rules("P-ACTFOR-1")
def test_only_actions_and_only_judges(night: Table) -> None:
    assert "只能代替座位提交夜间或开局行动" in night.say(JUDGE, "代行 3 投 5")
    assert "只能代替座位提交夜间或开局行动" in night.say(JUDGE, "代行 3 你好")
    assert "不能代行" in night.say(JUDGE, "代行 13 验 5")
    wolf = night.role_seat("wolf")
    reply = night.seat(wolf, "代行 3 验 5")
    assert "已代" not in reply
    assert night.state.night.slots["see"].sub is None


@pytest.fixture
def morning(tmp_path: Path) -> Table:
    """The game dealt at 07:00, 08:30 before day 1 opens: the cupid's link is due."""
    table = Table(tmp_path)
    table.move(datetime(2026, 12, 1, 8, 30))
    return table


@pytest.mark.rules("P-ACTFOR-4")
def test_a_set_up_action_is_entered_before_day_one(morning: Table) -> None:
    table = morning
    cupid = table.role_seat("cupid")
    reply = table.say(JUDGE, f"代行 {cupid} 连 1 2 08:10")
    assert f"已代 {cupid}号 提交" in reply, reply
    lovers = sorted(s.seat for s in table.state.seats if s.lover_of)
    assert lovers == [1, 2]


@pytest.mark.rules("P-ACTFOR-4")
def test_a_set_up_action_before_the_game_existed_is_refused(morning: Table) -> None:
    """The game was dealt at 07:00: a link "sent" at 06:00 was sent to no game."""
    table = morning
    cupid = table.role_seat("cupid")
    reply = table.say(JUDGE, f"代行 {cupid} 连 3 4 06:00")
    assert "不在这项行动的时限内" in reply and "07:00" in reply, reply
    assert not any(s.lover_of for s in table.state.seats)
    assert "已代" in table.say(JUDGE, f"代行 {cupid} 连 3 4 07:00")


# Refusals of commands that 代行 never enters (votes, last words, the badge, surrender, the
# election): their player's wording is never said to a judge acting for a seat.
NOT_ACTIONS = {"already_voted", "no_vote_to_change", "no_vote_to_correct", "change_used",
               "no_handover_due", "no_lastwords_due", "camp_already_lost",
               "already_surrendered", "not_permitted", "already_candidate",
               "withdrawn_no_return", "not_a_candidate_self", "idiot_no_vote"}


@pytest.mark.rules("P-ACTFOR-2")
def test_every_refusal_in_the_players_voice_has_the_judges_wording() -> None:
    from bot.texts import text_data
    from engine.ruleset import ruleset_names
    from rulesets.data import load

    reasons = text_data("act_for.reasons")
    for ruleset in ("common", *ruleset_names()):
        for code, text in load(ruleset, "templates").get("rejections", {}).items():
            if "你" in text and code not in NOT_ACTIONS:
                assert code in reasons, (ruleset, code, text)
    for code, text in reasons.items():
        said = text.format(seat=6, target=3)
        assert "6号" in said and "你" not in said, (code, said)
