"""The witch whose earlier answer stands (issue 33, polish): after her 通灵 said "此前的答复已记
录", her reminder does not say that her action is not in ("尚未提交"): it says the earlier answer
stands at the deadline unless she confirms or changes it (G-RES-6 (b))."""

from __future__ import annotations

from datetime import datetime

import pytest
from chathelp import ZONE, Table, dm_texts


@pytest.mark.rules("G-RES-6")
@pytest.mark.parametrize("kind", ["新游戏 经典", "新游戏 标准"])
def test_a_witch_whose_answer_stands_is_reminded_that_it_stands(table: Table, kind: str) -> None:
    code = table.game(kind)
    if kind.endswith("经典"):
        table.link(code)
    witch = table.contact(code, table.seats_with(code, "witch")[0])
    wolf = table.contact(code, table.seats_with(code, "wolf")[0])
    villager = table.seats_with(code, "villager")[0]
    table.move_to(datetime(2026, 12, 1, 21, 5, tzinfo=ZONE))
    table.reply(witch, "不救")  # before 通灵: her answer is in
    table.reply(wolf, f"刀 {villager}")
    sent = table.move_to(datetime(2026, 12, 1, 22, 31, tzinfo=ZONE))  # the kill is final
    assert any("此前的答复已记录" in m for m in dm_texts(sent, witch)), dm_texts(sent, witch)
    sent = table.move_to(datetime(2026, 12, 2, 7, 31, tzinfo=ZONE))  # her reminder
    reminder = "\n".join(dm_texts(sent, witch))
    assert "提醒" in reminder and "尚未提交" not in reminder, reminder
    assert "此前的答复" in reminder and "08:00" in reminder, reminder
