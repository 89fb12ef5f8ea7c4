"""A text longer than the platform carries in one message (README "Long messages"): the
channel declares its limit (`Transport.max_text`) and what the bot says goes out in parts, cut
at line breaks, in order, each a send of its own; nothing fails for its length. Here the
memory transport refuses a text longer than its limit, as QQ does past some 4,500 characters
(the limits shrunk, so that short games' texts are long)."""

from __future__ import annotations

from pathlib import Path

from chathelp import JUDGE, Table
from sqlalchemy import select

from bot.store.models import OutboxRow
from bot.transport.memory import MemoryTransport


def unsent(table: Table) -> list[str]:
    with table.service.db.read() as s:
        return list(s.scalars(select(OutboxRow.text).where(OutboxRow.sent_at.is_(None))))


def test_a_replay_and_the_judges_status_reach_the_judge_in_parts(tmp_path: Path) -> None:
    memory = MemoryTransport(max_text=120)
    table = Table(tmp_path, transport=memory)
    try:
        code = table.ended()
        for text in (f"复盘 {code}", f"#{code} 状态", f"#{code} 公示"):
            before = len(memory.sent)
            table.send(JUDGE, text)
            parts = [s for s in memory.sent[before:] if s.kind == "dm" and s.target == JUDGE]
            assert len(parts) > 1 and all(len(s.text) <= 120 for s in parts), text
            assert len({s.key for s in parts}) == len(parts)  # a key of its own each
        assert not unsent(table)  # nothing failed, nothing waits
    finally:
        table.close()
