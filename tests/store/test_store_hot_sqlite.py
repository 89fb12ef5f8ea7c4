"""SQLite's hot path (bot/store/hot.py on the sqlite3 driver): SQLAlchemy's own SQL and rows,
the write opened by BEGIN IMMEDIATE (said by the hot path, on a pool without the `begin`
listener), the read in autocommit, SQLAlchemy's exceptions, and nothing left of a failed
write. What the driver is sent is read with sqlite3's trace callback (the statements as
expanded with their values)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from storehelp import at, classic_game, count, feed, hot_plan, random_games

import bot.store.games as service_module
import bot.store.hot as hot_module
from bot.service import Service
from bot.store import migrate
from bot.store.db import Database
from bot.store.games import GameStore
from bot.store.hot import _HOT, HotConnection, plan
from bot.store.models import Game, InboxMessage, LogEntry, OutboxRow, Snapshot
from engine.commands import Vote


@pytest.fixture
def url(tmp_path: Path, sqlite_template: Path) -> str:
    path = tmp_path / "wolfjudge.db"
    shutil.copy(sqlite_template, path)
    return f"sqlite:///{path}"


@pytest.fixture
def svc(url: str) -> Iterator[Service]:
    s = Service(url)
    yield s
    s.close()


def trace(svc: Service) -> list[str]:
    """What the hot path's connections are sent from now on (each connection checked out)."""
    sent: list[str] = []

    def checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        dbapi_conn.set_trace_callback(sent.append)

    assert svc.db._hot is not None
    event.listen(svc.db._hot.pool, "checkout", checkout)
    return sent


def test_every_hot_statement_plans_as_sqlalchemy_compiles_it_for_sqlite(svc: Service) -> None:
    assert svc.db.hot
    dialect = svc.db.engine.dialect
    refusals = list(service_module._REFUSALS.values())  # PostgreSQL's: data-modifying CTEs
    hot: list[Any] = [s for s in _HOT.values() if s not in refusals]
    assert len(hot) >= 15
    for stmt in hot:
        p, compiled = hot_plan(stmt, dialect)
        assert p is not None, stmt
        assert compiled.positional and p.order is not None  # sqlite3's `?`
        assert p.sql == compiled.string
    # a statement with a bound literal is left to SQLAlchemy
    assert plan(select(LogEntry.seq).where(LogEntry.kind == "event"), dialect, None) is None


def test_the_hot_path_sends_what_sqlalchemy_sends(url: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The same random games, once on the hot path and once with every statement left to
    # SQLAlchemy (no statement registered hot) on the same connections: the same statements,
    # with the same values as the driver expands them, in the same transactions.
    clock = iter(range(10**6))
    monkeypatch.setattr(service_module, "utcnow", lambda: datetime(2026, 3, 1, 0, 0, 0,
                                                                     next(clock) % 999_999))
    games = random_games(3, "h")

    def run(path: str) -> tuple[list[str], list[Any]]:
        nonlocal clock
        clock = iter(range(10**6))
        s = Service(path)
        try:
            sent = trace(s)
            outs = [o for g in games for o in feed(s, g)]
            again = s.submit(games[0].args["game_id"], games[0].steps[0].command,
                             now=games[0].steps[0].now, msg_id=f"{games[0].args['game_id']}#0")
            assert again.duplicate
            return sent, [(o.status, o.version) for o in outs]
        finally:
            s.close()

    hot_sent, hot_outs = run(url)
    fresh = tmp_path / "fresh.db"
    migrate(f"sqlite:///{fresh}")
    monkeypatch.setattr(hot_module, "_HOT", {})
    sa_sent, sa_outs = run(f"sqlite:///{fresh}")
    assert hot_outs == sa_outs
    assert hot_sent == sa_sent
    # each command: its reads in autocommit (no BEGIN for them), then its write opened by
    # BEGIN IMMEDIATE and committed (a duplicate message only reads)
    commands: list[list[str]] = [[]]
    for q in hot_sent:
        commands[-1].append(q)
        if q == "COMMIT":
            commands.append([])
    assert len(commands) > 100 and commands[-1]  # the last, a duplicate: no write
    for command in commands[:-1]:
        begin = command.index("BEGIN IMMEDIATE")
        assert begin > 0 and all(q.startswith("SELECT") for q in command[:begin]), command
        assert command[begin + 1].startswith("UPDATE snapshots"), command  # the version check
        assert not any(q.startswith("BEGIN") for q in command[begin + 1:]), command
    assert all(q.startswith("SELECT") for q in commands[-1])


def test_rows_are_sqlalchemys(svc: Service) -> None:
    classic_game(svc)
    svc.advance("g1", at(1, 9))
    svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1", sender="wx-g1-1")
    reads: list[tuple[Any, dict[str, Any]]] = [
        (service_module._PROBE, {"gid": "g1", "mid": "m1", "contact": "wx-g1-1"}),
        (service_module._PROBE, {"gid": "g1", "mid": None, "contact": None}),
        (service_module._HEAD, {"gid": "g1"}), (service_module._FULL, {"gid": "g1"}),
        (service_module._INBOX, {"gid": "g1", "mid": "m1"}),
        (service_module._ROOMS, {"gid": "g1"}), (service_module._ROOM_MEMBERS, {"gid": "g1"})]
    with svc.db.read_core() as conn:
        expected = [list(conn.execute(stmt, params)) for stmt, params in reads]
    with svc.db.write_hot() as hot:
        assert isinstance(hot, HotConnection)
        got = [list(hot.execute(stmt, params)) for stmt, params in reads]
    for want, have in zip(expected, got, strict=True):
        assert have == [tuple(r) for r in want]
        for w, h in zip(want, have, strict=True):
            assert [type(v) for v in h] == [type(v) for v in w]  # datetime, dict: processed
            assert h._fields == w._fields
    assert isinstance(got[0][0].clock, datetime) and got[0][0].i_outcome == "accepted"


def test_a_duplicate_key_on_the_driver_is_sqlalchemys_integrity_error(svc: Service) -> None:
    classic_game(svc)
    row: dict[str, Any] = {
        "game_id": "g1", "msg_id": "m", "sender": None, "received_at": at(1, 9), "command": {},
        "outcome": "noop", "version": 0, "first_seq": None, "last_seq": None, "rejection": None}
    with pytest.raises(IntegrityError) as info, svc.db.write_hot() as conn:
        assert isinstance(conn, HotConnection)
        conn.execute(service_module._INSERT_INBOX, [row])
        conn.execute(service_module._INSERT_INBOX, [row])
    assert isinstance(info.value.orig, sqlite3.IntegrityError)
    assert count(svc, InboxMessage) == 0  # rolled back: nothing of the block stays
    with svc.db.write_hot() as conn:  # and the connection is usable again
        conn.execute(service_module._INSERT_INBOX, [row])
    assert count(svc, InboxMessage) == 1


def test_a_failed_write_leaves_nothing(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    classic_game(svc)
    svc.advance("g1", at(1, 9))
    before = svc.state("g1")
    logged, outbox = count(svc, LogEntry), count(svc, OutboxRow)

    def broken(*_a: Any, **_k: Any) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(GameStore, "_sync_cards", broken)  # after the snapshot, inbox and log
    with pytest.raises(RuntimeError):
        svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1", sender="wx-g1-1")
    monkeypatch.undo()
    assert svc.state("g1").version == before.version
    assert (count(svc, LogEntry), count(svc, OutboxRow)) == (logged, outbox)
    assert count(svc, InboxMessage, msg_id="m1") == 0
    out = svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1", sender="wx-g1-1")
    assert out.accepted and out.version == before.version + 1 and not out.duplicate
    assert svc.rebuild("g1").ok


def test_a_refusal_and_a_noop_are_recorded(svc: Service) -> None:
    classic_game(svc)
    svc.advance("g1", at(1, 9))
    sent = trace(svc)
    v = svc.state("g1").version
    refused = svc.submit("g1", Vote(seat=1, target=99), now=at(1, 10), msg_id="r",
                         sender="wx-g1-1")
    assert refused.status == "rejected" and refused.version == v
    # its write: the version check, the inbox row, the reply, under BEGIN IMMEDIATE
    writes = sent[sent.index("BEGIN IMMEDIATE"):]
    assert [q.split()[0] for q in writes] == ["BEGIN", "UPDATE", "INSERT", "INSERT", "COMMIT"]
    with svc.db.read() as s:
        row = s.get(InboxMessage, ("g1", "r"))
        assert row is not None and (row.outcome, row.version) == ("rejected", v)
        assert s.scalar(select(func.count()).select_from(OutboxRow).where(
            OutboxRow.dedupe_key == "g1/reply/r", OutboxRow.address == "wx-g1-1")) == 1
        assert s.scalar(select(Snapshot.version).where(Snapshot.game_id == "g1")) == v
    again = svc.submit("g1", Vote(seat=1, target=99), now=at(1, 11), msg_id="r",
                       sender="wx-g1-1")
    assert again.duplicate and again.rejection == refused.rejection
    denied = svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="d",
                        sender="wx-g1-2")  # not seat 1's contact
    assert denied.rejection is not None and denied.rejection.code == "not_permitted"
    assert count(svc, InboxMessage, msg_id="d", outcome="rejected") == 1
    assert svc.rebuild("g1").ok


def test_a_locked_database_raises_and_writes_nothing(svc: Service, url: str) -> None:
    classic_game(svc)
    svc.advance("g1", at(1, 9))
    v = svc.state("g1").version
    assert svc.db._hot is not None

    def no_wait(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=0")  # SQLITE_BUSY at once, not in 60 s

    event.listen(svc.db._hot.pool, "checkout", no_wait)
    other = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
        with pytest.raises(OperationalError, match="locked") as info:
            svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1",
                       sender="wx-g1-1")
        assert not info.value.connection_invalidated
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert count(svc, InboxMessage, msg_id="m1") == 0 and svc.state("g1").version == v
    out = svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1", sender="wx-g1-1")
    assert out.accepted and out.version == v + 1


def test_a_dead_connection_is_invalidated_and_not_tried_again(svc: Service) -> None:
    # as before the hot path: on SQLite a command whose connection is found dead is not
    # tried again (PostgreSQL's reconnect retry is for a server restarted under it)
    classic_game(svc)
    svc.advance("g1", at(1, 9))
    assert svc.db._hot is not None
    with svc.db._hot.connect() as conn:
        raw = conn.connection.driver_connection
    assert raw is not None
    raw.close()  # closed while it waits in the pool (nothing pings it when it is checked out)
    with pytest.raises(DBAPIError) as info:
        svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1", sender="wx-g1-1")
    assert info.value.connection_invalidated
    assert count(svc, InboxMessage, msg_id="m1") == 0
    out = svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1", sender="wx-g1-1")
    assert out.accepted and not out.duplicate


def test_the_other_ways_in_keep_their_begin(svc: Service) -> None:
    # the ORM sessions and core transactions of the main engine: BEGIN IMMEDIATE for a
    # writer, BEGIN DEFERRED for a reader, said by the engine's `begin` listener as before
    sent: list[str] = []

    def checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        dbapi_conn.set_trace_callback(sent.append)

    event.listen(svc.db.engine.pool, "checkout", checkout)
    ways: list[tuple[Callable[[], Any], str]] = [
        (svc.db.write, "BEGIN IMMEDIATE"), (svc.db.write_core, "BEGIN IMMEDIATE"),
        (svc.db.read, "BEGIN DEFERRED"), (svc.db.read_core, "BEGIN DEFERRED")]
    for way, begin in ways:
        sent.clear()
        with way() as s:
            s.execute(select(func.count()).select_from(Game))
        assert sent[0] == begin and sent[-1] == "COMMIT", sent


def test_an_in_memory_database_keeps_the_two_transactions() -> None:
    # no hot pool for it (a second pool would be another database): the read transaction,
    # then the write, on the engine as before
    db = Database("sqlite://", check=False)
    migrate(engine=db.engine)
    svc = Service(db)
    try:
        assert not db.hot
        classic_game(svc)
        svc.advance("g1", at(1, 9))
        out = svc.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="m1",
                         sender="wx-g1-1")
        assert out.accepted
        refused = svc.submit("g1", Vote(seat=1, target=99), now=at(1, 10), msg_id="m2",
                             sender="wx-g1-1")
        assert refused.status == "rejected"
        assert svc.rebuild("g1").ok
    finally:
        svc.close()
