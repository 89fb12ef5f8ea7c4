"""README, "Public announcements": the end of the game (`游戏结束`, `CAMP胜利`) goes to every
seat and the judge always (issue 33, item 11): with `public.channel=room` too, and whatever the
judge's feed, the judge's own DM carries it, with how to get the 复盘 posts."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from randomplay import play

from bot.chat.demo import JUDGE, Demo
from bot.feed import FEEDS
from bot.router import RoomsView, route
from engine import handle
from engine.events import Rejection


def judge_dms(transcript: str) -> list[str]:
    """The judge's DMs in a console transcript (`→ NAME: …`, further lines indented)."""
    out: list[str] = []
    mine = False
    for line in transcript.splitlines():
        if line.startswith("  ") and mine:
            out[-1] += "\n" + line.strip()
            continue
        mine = line.startswith(f"→ {JUDGE}: ")
        if mine:
            out.append(line[len(f"→ {JUDGE}: "):])
    return out


@pytest.mark.parametrize("options", [(), ("public.channel=room",)])
def test_the_end_goes_to_the_judge_always_with_a_public_room_too(
        tmp_path: Path, options: tuple[str, ...]) -> None:
    out = io.StringIO()
    winner = Demo("classic", 1, out, f"sqlite:///{tmp_path / 'demo.db'}", options).run()
    assert winner != "none"
    ends = [m for m in judge_dms(out.getvalue()) if "游戏结束" in m]
    assert ends and "胜利" in ends[-1] and "复盘 DEMO01" in ends[-1], judge_dms(out.getvalue())[-3:]


@pytest.mark.parametrize("feed", FEEDS)
def test_the_end_reaches_the_judge_whatever_the_feed(feed: str) -> None:
    """`法官通知 关闭` silences the judge's feed, never the end of the game."""
    trace = play(random.Random(7))
    state = trace.initial_state
    rooms = RoomsView(frozenset({"public"}))
    told = []
    for at, cmd, _ in trace.accepted:
        out = handle(state, cmd, at)
        assert not isinstance(out, Rejection)
        state, events = out
        if any(e.type in ("GameOver", "GameEnded") for e in events):
            told = [m for m in route("G1", state, events, head=1, cmd=cmd, rooms=rooms,
                                     feed=feed) if m.target == "judge"]
    assert state.over and told, "the game did not end, or the judge was not told"
    assert "游戏结束" in told[0].text and "复盘 G1" in told[0].text, told[0].text
