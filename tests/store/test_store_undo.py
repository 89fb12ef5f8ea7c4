"""`Service.undo` on both databases (docs/rules-judge.md P-UNDO-3..5): the undo row and its
notices in one transaction with the replayed snapshot, the public room told once, `rebuild`
agreeing, and a deadline fired since refusing it."""

from __future__ import annotations

from sqlalchemy import select
from storehelp import at, classic_game

from bot.service import Service
from bot.store.models import UNDO, LogEntry, OutboxRow
from bot.undo import Refusal
from engine.commands import JudgeCard, JudgeWaiver


def test_an_undo_is_one_transaction_and_rebuilds(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 9))  # day 1 open
    out = service.submit("g1", JudgeCard(seat=5, color="yellow"), now=at(1, 10),
                         msg_id="m1", sender="wx-judge")
    assert out.accepted and service.state("g1").seat(5).yellow == 1
    [target] = service.undoable("g1")
    assert target.public and isinstance(target.cmd, JudgeCard)
    version = service.state("g1").version
    done = service.undo("g1", target.seq, now=at(1, 10, 5))
    assert done == target
    state = service.state("g1")
    assert state.seat(5).yellow == 0 and state.version == version + 1
    rows = service.log("g1")
    assert [r.kind for r in rows[-2:]] == [UNDO, "event"]
    assert rows[-1].type == "CommandUndonePublic" and rows[-1].audience["public"]
    with service.db.read() as s:
        posts = list(s.scalars(select(OutboxRow.text).where(
            OutboxRow.game_id == "g1", OutboxRow.seq == rows[-1].seq)))
    assert posts == ["法官撤销了此前的一项操作：法官给 5号 黄牌。"]  # the public room, once
    assert service.undoable("g1") == []
    assert service.undo("g1", target.seq, now=at(1, 10, 6)) == Refusal("undo.not_undoable")
    assert service.rebuild("g1").ok
    with service.db.read() as s:
        assert s.scalar(select(LogEntry.body).where(LogEntry.kind == UNDO)) == {
            "seq": target.seq}


def test_a_deadline_fired_since_refuses_the_undo(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 9))
    service.submit("g1", JudgeWaiver(seat=4, waiver="notice"), now=at(1, 10), msg_id="m1",
                   sender="wx-judge")
    [target] = service.undoable("g1")
    service.advance("g1", at(1, 21))  # the day closes
    assert service.undoable("g1") == []
    assert service.undo("g1", target.seq, now=at(1, 21, 5)) == Refusal("undo.not_undoable")
    assert service.state("g1").seat(4).notice
