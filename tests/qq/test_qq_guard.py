"""The risk guard (bot/transport/guard.py; README "Pacing and risk control on QQ"): it holds a
conversation before QQ's risk control would flag it (AstrBot's lessons: 20 a minute, 60 in ten
minutes, three near-identical texts in two minutes), lets it go after the rest, and the judge
is told once per hold which seat or player it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from onebotfake import FakeOneBot
from qqtable import JUDGE_QQ, QQTable

from bot.chat.demo import JUDGE
from bot.transport.guard import Guard, GuardSettings


class Clock:
    def __init__(self) -> None:
        self.at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.at


def sent(guard: Guard, conversation: str, text: str) -> bool:
    verdict = guard.check(conversation, text)
    if verdict.allowed:
        guard.sent(conversation, text)
    return verdict.allowed


def test_the_guard_stops_before_each_limit_and_rests() -> None:
    clock = Clock()
    guard = Guard(GuardSettings(per_minute=15, per_ten_minutes=45, same_text=2, rest=300),
                  now=clock)
    # a minute: 15 different texts go, the 16th is held (risk control's line: 20)
    assert all(sent(guard, "p1", f"第{i}条") for i in range(15))
    held = guard.check("p1", "第16条")
    assert not held.allowed and held.tripped and held.until == clock.at + timedelta(minutes=5)
    again = guard.check("p1", "第17条")
    assert not again.allowed and not again.tripped  # told once per hold
    assert sent(guard, "p2", "别人不受影响")
    clock.at += timedelta(minutes=5)
    assert sent(guard, "p1", "休息之后")
    # ten minutes: 45 spread over them, then held (risk control's line: 60)
    guard = Guard(GuardSettings(per_minute=15, per_ten_minutes=45, same_text=2), now=clock)
    for i in range(45):
        assert sent(guard, "p3", f"消息{i}")
        clock.at += timedelta(seconds=12)
    assert not guard.check("p3", "再一条").allowed
    # the same text: twice in two minutes goes, the third is held (risk control's line: 3)
    guard = Guard(GuardSettings(), now=clock)
    assert sent(guard, "p4", "没听懂") and sent(guard, "p4", " 没听懂 ")
    assert not guard.check("p4", "没听懂").allowed
    clock.at += timedelta(minutes=6)
    assert sent(guard, "p4", "没听懂")


def test_a_held_conversation_is_told_to_the_judge_and_its_messages_wait(
        onebot: FakeOneBot, tmp_path: Path) -> None:
    table = QQTable("classic", 6, onebot, f"sqlite:///{tmp_path / 'g.db'}",
                    guard=GuardSettings(same_text=2))
    try:
        table.say(JUDGE, "新游戏 经典 votes.channel=dm")
        table.say("玩家1", "报名 QQ06CL 马甲01")
        for _ in range(3):  # the same question, the same answer, three times
            table.say("玩家1", "帮助")
        answers = [t for t in onebot.dms_to(table.qq["玩家1"]) if "报名成功" not in t]
        assert len(answers) == 2  # the third waits in the outbox
        told = [t for t in onebot.dms_to(JUDGE_QQ) if "风控" in t]
        assert len(told) == 1 and "马甲01" in told[0] and "QQ号" in told[0], told
    finally:
        table.stop_bot()
