"""PostgreSQL's hot path (bot/store/hot.py): the same SQL on the driver, no pre-ping, and a
dead connection replaced before a command's COMMIT."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError, OperationalError
from storehelp import at, classic_game, hot_plan

import bot.store.games as service_module
from bot.service import Service
from bot.store.hot import _HOT, HotConnection, PipelinedConnection, plan
from bot.store.models import InboxMessage, LogEntry, OutboxRow
from engine.commands import Vote


def test_every_hot_statement_runs_on_the_driver_as_sqlalchemy_compiles_it(pg_url: str) -> None:
    svc = Service(pg_url)
    try:
        dialect = svc.db.engine.dialect
        hot = list(_HOT.values())  # the service's, the refusals' CTE statements too
        assert len(hot) >= 19 and all(s in hot for s in service_module._REFUSALS.values())
        for stmt in hot:
            p, compiled = hot_plan(stmt, dialect)
            assert p is not None, stmt
            assert p.sql == compiled.string
        # a statement with a bound literal is left to SQLAlchemy
        assert plan(select(LogEntry.seq).where(LogEntry.kind == "event"), dialect, None) is None
    finally:
        svc.close()


def test_a_duplicate_key_on_the_driver_is_sqlalchemys_integrity_error(pg_url: str) -> None:
    svc = Service(pg_url)
    try:
        classic_game(svc)
        row = {"game_id": "g1", "msg_id": "m", "sender": None, "received_at": at(1, 9),
               "command": {}, "outcome": "noop", "version": 0, "first_seq": None,
               "last_seq": None, "rejection": None}
        with pytest.raises(IntegrityError), svc.db.write_hot() as conn:
            assert isinstance(conn, PipelinedConnection)
            with conn.batch():
                conn.execute(service_module._INSERT_INBOX, [row])
                conn.execute(service_module._INSERT_INBOX, [row])
        with svc.db.read() as s:  # rolled back: nothing of the block stays
            assert s.scalar(select(func.count()).select_from(InboxMessage)) == 0
    finally:
        svc.close()


def test_a_dead_connection_is_replaced_and_the_command_applied_once(pg_url: str) -> None:
    svc = Service(pg_url)
    try:
        classic_game(svc)
        svc.advance("g1", at(1, 9))
        first = svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1",
                           sender="wx-g1-1")
        assert first.accepted
        # cut every connection of this service (as a server restart would): the hot path's
        # pool still holds its connection, and pings none
        with svc.db.engine.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE datname = current_database() "
                              "AND pid <> pg_backend_pid()"))
        again = svc.submit("g1", Vote(seat=2, target=3), now=at(1, 10, 1), msg_id="m2",
                           sender="wx-g1-2")
        assert again.accepted and not again.duplicate
        assert again.version == first.version + 1
        with svc.db.read() as s:
            assert s.scalar(select(func.count()).select_from(LogEntry).where(
                LogEntry.msg_id == "m2", LogEntry.kind == "command")) == 1
        assert svc.rebuild("g1").ok
    finally:
        svc.close()


def test_a_refusal_decided_on_a_stale_state_writes_nothing_and_is_decided_again(
        db_url: str) -> None:
    # PostgreSQL writes a refusal as one statement (bot/service.py `_refusal`): when another
    # writer committed since the read, its UPDATE matches no row and nothing is inserted;
    # the command is read and decided again, on the new state (SQLite: separate statements)
    a, b = Service(db_url), Service(db_url)
    try:
        classic_game(a)
        a.advance("g1", at(1, 9))
        v0 = a.state("g1").version
        raced = []

        def interfere() -> None:
            if not raced:
                raced.append(b.submit("g1", Vote(seat=2, target=5), now=at(1, 10), msg_id="b"))

        a.before_write = interfere
        out = a.submit("g1", Vote(seat=1, target=99), now=at(1, 10, 1), msg_id="a",
                       sender="wx-g1-1")
        assert raced[0].accepted and raced[0].version == v0 + 1
        assert out.status == "rejected" and out.version == v0 + 1  # decided on B's state
        with a.db.read() as s:
            rows = list(s.scalars(select(InboxMessage).where(InboxMessage.msg_id == "a")))
            assert [(r.outcome, r.version) for r in rows] == [("rejected", v0 + 1)]
            replies = list(s.scalars(select(OutboxRow.dedupe_key).where(
                OutboxRow.dedupe_key == "g1/reply/a")))
            assert replies == ["g1/reply/a"]
        again = a.submit("g1", Vote(seat=1, target=99), now=at(1, 10, 2), msg_id="a",
                         sender="wx-g1-1")
        assert again.duplicate and again.rejection == out.rejection
        assert a.rebuild("g1").ok
    finally:
        a.close()
        b.close()


def test_a_refusal_whose_connection_is_lost_after_it_was_sent_is_not_tried_again(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the refusal's one statement commits by itself: a connection lost after sending it
    # leaves it unknown whether it was written, as after a COMMIT sent; the command is not
    # tried again (a retry of one without a message id would write its reply twice)
    svc = Service(pg_url)
    try:
        classic_game(svc)
        svc.advance("g1", at(1, 9))
        real = HotConnection.execute

        def lost(self: HotConnection, stmt: object, params: object = None) -> object:
            out = real(self, stmt, params)
            if stmt in service_module._REFUSALS.values():
                raise OperationalError("refusal", {}, Exception("connection lost"),
                                       connection_invalidated=True)
            return out

        monkeypatch.setattr(HotConnection, "execute", lost)
        with pytest.raises(OperationalError):
            svc.submit("g1", Vote(seat=1, target=99), now=at(1, 10), sender="wx-g1-1")
        monkeypatch.undo()
        with svc.db.read() as s:  # written once, and once only
            assert s.scalar(select(func.count()).select_from(OutboxRow).where(
                OutboxRow.dedupe_key.like("g1/reply/%"))) == 1
    finally:
        svc.close()
