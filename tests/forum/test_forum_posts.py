"""Forum vote posts as the bot reads them (the words are vocabulary.yaml's)."""

from __future__ import annotations

import pytest

from bot.commands.parse import parse
from bot.forum.posts import read_vote


@pytest.mark.parametrize(("text", "kind", "target"), [
    ("投5", "vote", 5), ("投 5", "vote", 5), ("5号", "vote", 5), ("５号", "vote", 5),
    ("投 五号 理由：发言划水", "vote", 5), ("投票：十二号\n理由很长", "vote", 12),
    ("弃权", "abstain", None), ("投弃权", "abstain", None), ("改票 7号", "change", 7),
    ("更正 4", "correct", 4), ("投 大家好", "malformed", None), ("投13", "malformed", None),
    ("3楼说得对", "talk", None), ("我觉得2号是狼", "talk", None), ("", "talk", None),
])
def test_votes(text: str, kind: str, target: int | None) -> None:
    got = read_vote(text, 12)
    assert (got.kind, got.target) == (kind, target)


def test_the_reason_is_kept() -> None:
    assert read_vote("投 五号 理由：发言划水", 12).reason == "理由:发言划水"


def test_judge_forms() -> None:
    p = parse("判 12-1 更正")
    assert p is not None and p.verb == "rule" and p.words == ("12-1", "correct")
    p = parse("判3 废票")
    assert p is not None and p.words == ("3", "void")
    assert parse("判断一下") is None
    p = parse("投票贴 8123456789")
    assert p is not None and p.verb == "thread"
