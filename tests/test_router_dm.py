"""What one seat's DM of a commit reads like (issue 33, polish): the role DM opens with the seat
and the role, the commitment and the key last under a line that says what they are for; a
carded player reads the card once, in its own words."""

from __future__ import annotations

from datetime import datetime

import pytest
from randomplay import start_game

from bot.router import route
from engine import handle
from engine.commands import JudgeCard
from engine.events import Rejection


@pytest.mark.parametrize("ruleset", ["classic", "anomaly", "standard"])
def test_the_role_dm_opens_with_seat_and_role_and_ends_with_the_commitment(ruleset: str) -> None:
    _, state, events = start_game("1" * 64, ruleset=ruleset)
    for m in route("G", state, events, head=0, cmd=None):
        if not m.target.startswith("seat:"):
            continue
        lines = m.text.splitlines()
        assert lines[0].startswith(f"你的座位：{m.target[5:]}号。你的身份："), m.text
        at = next(i for i, line in enumerate(lines) if "随机种子承诺" in line)
        assert at >= 2 and "核对" in lines[at - 1], m.text  # under a line saying what for
        assert not any("你的" in line for line in lines[at:]), m.text  # nothing after but it


def test_a_carded_player_reads_the_card_once_in_its_own_words() -> None:
    _, state, _ = start_game("2" * 64)
    out = handle(state, JudgeCard(seat=1, color="yellow"), datetime(2026, 3, 1, 10, 0))
    assert not isinstance(out, Rejection)
    after, events = out
    told = {m.target: m.text for m in route("G", after, events, head=5, cmd=None)}
    assert told["seat:1"] == "法官给了你一张黄牌（累计 1 张）。", told["seat:1"]
    assert told["seat:2"] == "1 号获得一张黄牌（累计 1 张）。"
