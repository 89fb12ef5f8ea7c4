"""One transaction for one message (`Database.unit`, issue 33's follow-up) on SQLite and on
PostgreSQL: everything a thread reads and writes inside is one transaction, each write a
savepoint of it; what waits for the commit runs after it, never after a rollback; and the
chat layer's commands killed at each of their commits are applied once when the message comes
again (tests/chat/crashhelp.py, on both databases)."""

from __future__ import annotations

import itertools
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from bot.store.db import Database
from bot.store.models import ChatMessage

# the chat layer's table and its kill harness (tests/chat)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "chat"))
from chathelp import Table  # noqa: E402
from crashhelp import SCENARIOS, kill_everywhere  # noqa: E402

AT = datetime(2026, 12, 1, 9, 0)
BACKENDS = ["sqlite", "postgresql"]  # as tests/store/conftest.py's
_names = itertools.count()


@pytest.fixture(params=BACKENDS)
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Migrated databases of their own, as many as asked for, on one backend."""
    made: list[str] = []

    def new() -> str:
        n = next(_names)
        if request.param == "sqlite":
            path = tmp_path / f"unit{n}.db"
            shutil.copy(request.getfixturevalue("sqlite_template"), path)
            return f"sqlite:///{path}"
        server = request.getfixturevalue("pg_server")
        name = f"unit_{n}"
        server.admin(f"CREATE DATABASE {name} TEMPLATE wolfjudge_template")
        made.append(name)
        return str(server.url(name))

    yield new
    if made:
        server = request.getfixturevalue("pg_server")
        for name in made:
            server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _mark(db: Database, key: str) -> None:
    with db.write() as s:
        s.add(ChatMessage(msg_id=key, sender="x", received_at=AT))


def _marks(db: Database) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(ChatMessage)) or 0


def test_a_unit_is_one_transaction(fresh: Callable[[], str]) -> None:
    db = Database(fresh())
    other = Database(db.engine.url.render_as_string(hide_password=False))
    try:
        after: list[str] = []
        seen: list[int] = []
        with db.unit():
            _mark(db, "a")
            db.after_unit(lambda: after.append("committed"))
            assert _marks(db) == 1  # its own writes, read inside
            with pytest.raises(IntegrityError):
                _mark(db, "a")  # a duplicate key: that write alone is undone
            with pytest.raises(KeyError), db.unit():  # a unit inside: a savepoint
                _mark(db, "b")
                db.after_unit(lambda: after.append("inner"))
                raise KeyError
            _mark(db, "c")
            # another connection sees none of it yet (a reader never waits on SQLite's WAL)
            reader = threading.Thread(target=lambda: seen.append(_marks(other)))
            reader.start()
            reader.join(30)
            assert after == []
        assert seen == [0]
        assert after == ["committed"]  # once committed; the undone inner unit's never
        assert _marks(other) == 2
        with pytest.raises(RuntimeError), db.unit():
            _mark(db, "d")
            db.after_unit(lambda: after.append("never"))
            raise RuntimeError
        assert _marks(other) == 2 and after == ["committed"]
        db.after_unit(lambda: after.append("now"))  # outside a unit: at once
        assert after == ["committed", "now"]
    finally:
        other.dispose()
        db.dispose()


@pytest.mark.parametrize("name", ["new_game", "restart", "start", "kick", "vote",
                                  "season_start", "take_seat"])
def test_a_command_killed_anywhere_is_applied_once_on_both_databases(
        name: str, fresh: Callable[[], str], tmp_path: Path) -> None:
    """README "Restarts, stops and messages sent meanwhile", on SQLite and PostgreSQL."""
    kill_everywhere(tmp_path, SCENARIOS[name], make=lambda where: Table(where, url=fresh()))
