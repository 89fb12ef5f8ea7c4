"""Whole games on QQ over the real protocol (issue 32, item 7): the bot with the OneBot
transport, connected over a WebSocket on loopback to our fake NapCat, and a table of QQ people
(tests/qq/qqtable.py) playing a classic and a standard game in Chinese from the lobby to the
end: rooms made by the judge as QQ groups and bound with 绑定, the public announcements in the
community's QQ group, night actions, votes, last words; every message checked for what its
reader may know; the message economy of every step."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from knowledge import engine_audit, wire_audit
from onebotfake import FakeOneBot
from qqtable import COMMUNITY, JUDGE_QQ, QQTable

from bot.service import Service


@pytest.fixture
def table_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'qq.db'}"


def one_message_per_recipient_per_step(table: QQTable) -> None:
    for step in table.steps:
        sends = Counter((s.kind, s.to) for s in step)
        assert max(sends.values(), default=1) == 1, [(s.kind, s.to, s.text[:30]) for s in step]


@pytest.mark.parametrize(("ruleset", "seed"), [("classic", 3), ("standard", 5)])
def test_a_whole_game_on_qq(onebot: FakeOneBot, table_db: str, ruleset: str,
                            seed: int) -> None:
    table = QQTable(ruleset, seed, onebot, table_db)
    try:
        winner = table.run()
    finally:
        table.stop_bot()
    assert winner != "none"
    one_message_per_recipient_per_step(table)
    texts = [s.text for s in onebot.sent]
    assert not any("微信" in t for t in texts), [t for t in texts if "微信" in t][:3]
    assert any("QQ群" in t for t in onebot.dms_to(JUDGE_QQ))
    assert onebot.posts_in(COMMUNITY)
    service = Service(table_db)
    try:
        assert engine_audit(service, table.code) > 100
        assert wire_audit(onebot, service, table.code) > 100
        # The audit catches a leak: seat 1's role card DMed to seat 2.
        card = next(s for s in onebot.sent if s.kind == "dm" and "你的身份" in s.text
                    and s.to == table.contact(1))
        onebot.sent.append(replace(card, to=table.contact(2)))
        with pytest.raises(AssertionError, match="was told"):
            wire_audit(onebot, service, table.code)
    finally:
        service.close()
