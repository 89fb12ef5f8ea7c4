"""Engines, transactions, migrations and the schema check."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text, true
from sqlalchemy.orm import Session

from bot.store.settings import database_url

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic is imported where a migration or its script directory is needed, not at start-up:
# it (with mako and every dialect's DDL) is some 0.4-0.6 s of the bot's imports, and the bot
# only checks the schema revision, which `check_schema` reads without it (bench/recovery.py).


def _migrations() -> Path:
    """The Alembic scripts: the `migrations` package, in a checkout or an installed wheel."""
    import migrations

    return Path(migrations.__file__).resolve().parent


MIGRATIONS = _migrations()


class SchemaError(RuntimeError):
    """The database schema is not the one this wolfjudge needs."""


# allow_nan=False: NaN is no JSON (PostgreSQL refuses it); fail before the database does.
# One encoder for every value: `json.dumps` with these options makes a new one per call
# (a third of a small value's time; the hot path serializes some five values a command).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class RawJSON(str):
    """A text that is JSON already (a snapshot: bot/store/codec.py `encode_state`): a JSON
    column's serializer writes it as it is."""

    __slots__ = ()


def _dumps(value: Any) -> str:
    if type(value) is RawJSON:
        return value
    return _ENCODER.encode(value)


# More than one WeChat account on one database (issue 21, ARCHITECTURE.md "Scale"): each bot is
# one hosting account (WOLFJUDGE_HOST; None: the single account of a one-account deployment)
# and sees only its own lobbies, games and messages. `Host` is a host, or `...`: every host
# (the operator's tools: export, rebuild, status).
Host = str | None | EllipsisType


def of_host(column: Any, host: Host) -> Any:
    """The condition that `column` (a `host` column) names `host`: NULL for the single account;
    always true for `...`."""
    if host is ...:
        return true()
    return column.is_(None) if host is None else column == host


def make_engine(url: str | None = None, *, hot: bool = False) -> Engine:
    """`hot`: the hot path's own engine (`Database.write_hot`): on PostgreSQL without the
    pre-ping of every connection checked out (a round trip); on SQLite without the `begin`
    listener (the hot path says BEGIN IMMEDIATE itself, and with a connection event listened
    to SQLAlchemy dispatches its event machinery around every statement executed)."""
    url = database_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, json_serializer=_dumps,
                               connect_args={"timeout": 60, "check_same_thread": False})
        _sqlite_setup(engine, begin=not hot)
        return engine
    return create_engine(url, json_serializer=_dumps, pool_pre_ping=not hot)


def sqlite_file(engine: Engine) -> bool:
    """Whether the engine is a SQLite file (not an in-memory database, which is one per
    connection pool: a second engine would not see it)."""
    return engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:")


def _sqlite_setup(engine: Engine, *, begin: bool = True) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy (or the hot path) say BEGIN itself: pysqlite's own transaction
        # handling would defer it, and say a BEGIN of its own before a write.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        if sqlite_file(engine):
            cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.close()

    if not begin:
        return

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        # A writing transaction takes the write lock at BEGIN: a deferred one that read first
        # could fail to upgrade (SQLITE_BUSY_SNAPSHOT) without waiting for the busy timeout.
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


def alembic_config(url: str | None = None, engine: Engine | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["url"] = database_url(url) if engine is None else str(engine.url)
    if engine is not None:
        cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    if len(heads) != 1:
        raise SchemaError(f"the migrations have {len(heads)} heads: {heads}")
    return heads[0]


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


_REVISION = re.compile(
    r"^(down_revision|revision)\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", re.M)


def _script_head() -> str | None:
    """The head revision read from the scripts' own `revision`/`down_revision` lines, without
    Alembic; None when that reading is not a single plain chain (then Alembic is asked)."""
    links: dict[str, str | None] = {}
    for path in (MIGRATIONS / "versions").glob("*.py"):
        found = dict((m[1], m[2] or m[3] or None) for m in _REVISION.finditer(path.read_text()))
        if "revision" not in found or not found["revision"]:
            return None
        links[found["revision"]] = found.get("down_revision")
    heads = set(links) - {d for d in links.values() if d is not None}
    return next(iter(heads)) if len(heads) == 1 else None


def _stored_revision(engine: Engine) -> str | None:
    """What `current_revision` says, in one plain query (no Alembic import)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        rows = [r[0] for r in conn.execute(text("SELECT version_num FROM alembic_version"))]
    return rows[0] if len(rows) == 1 else None


def migrate(url: str | None = None, revision: str = "head", engine: Engine | None = None
            ) -> None:
    """Upgrade the database to `revision` (the only way the schema is made)."""
    from alembic import command

    own = engine is None
    engine = engine or make_engine(url)
    try:
        command.upgrade(alembic_config(engine=engine), revision)
    finally:
        if own:
            engine.dispose()


@dataclass(frozen=True)
class SchemaState:
    """What `wolfjudge doctor` says of a database: `state` is new (no table, or a SQLite file
    that does not exist: not created here), current, old (`revision` before `head`) or foreign
    (tables, but not wolfjudge's)."""

    shown: str  # the URL without its password
    state: Literal["new", "current", "old", "foreign"]
    revision: str | None
    head: str


def shown_url(url: str) -> str:
    """The URL to print: without its password (ValueError if it is not a URL)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception as exc:
        raise ValueError(str(exc)) from None


def schema_state(url: str) -> SchemaState:
    """The database's schema, read only (it may raise: the database cannot be reached)."""
    shown, head = shown_url(url), head_revision()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:") \
            and not Path(parsed.database or "").exists():
        return SchemaState(shown, "new", None, head)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            if not inspect(conn).get_table_names():
                return SchemaState(shown, "new", None, head)
        current = current_revision(engine)
    finally:
        engine.dispose()
    state: Literal["current", "old", "foreign"] = (
        "current" if current == head else "foreign" if current is None else "old")
    return SchemaState(shown, state, current, head)


def check_schema(engine: Engine) -> None:
    # The fast way first (one query, the scripts' headers read as text); Alembic itself
    # decides whenever that does not say "at head" (so it can only ever accept what Alembic
    # would: tests/store/test_store_migrations.py checks the two readings agree).
    fast = _script_head()
    if fast is not None and _stored_revision(engine) == fast:
        return
    current, head = current_revision(engine), head_revision()
    if current == head:
        return
    where = engine.url.render_as_string(hide_password=True)
    if current is None:
        raise SchemaError(f"the database {where} has no wolfjudge schema: run `wolfjudge "
                          f"migrate` first")
    raise SchemaError(f"the database {where} is at schema revision {current}, this wolfjudge "
                      f"needs {head}: run `wolfjudge migrate` (and back it up first)")


class _Unit:
    """The transaction `Database.unit` holds on one thread: its connection, and at each level
    (the unit, then each unit inside it: a savepoint) what waits for it to commit."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.waiting: list[list[Callable[[], None]]] = [[]]


class Database:
    """One database: a reading and a writing way in. Refuses an old schema unless told not to.

    `unit()` makes everything one thread does inside it one transaction (what one incoming
    message changes, with its handled mark: bot/chat/bot.py): inside, every `read`, `write`,
    `read_core`, `write_core` and `write_hot` of that thread runs on the unit's connection,
    each write in a savepoint of it (its rollback, an expected IntegrityError, undoes that
    write alone), and the whole commits when the block ends, or nothing of it does."""

    def __init__(self, url: str | None = None, *, check: bool = True) -> None:
        self.engine = make_engine(url)
        self.host: str | None = None  # the hosting account this process is (of_host)
        self.sqlite = self.engine.dialect.name == "sqlite"
        self._writer = self.engine.execution_options(sqlite_begin="IMMEDIATE")
        self._plans: dict[Any, Any] = {}  # bot.store.hot: the hot statements, compiled
        self._units = threading.local()  # the `unit` each thread is in
        # The hot path's own pool (`write_hot`). PostgreSQL: without the pre-ping round trip
        # on every checkout; a dead connection fails its statement instead, SQLAlchemy
        # invalidates it, and the caller tries again on a new one (Service.submit, before any
        # COMMIT is sent). SQLite: without the `begin` listener, the hot path says BEGIN
        # IMMEDIATE itself; not for an in-memory database (a second pool is another one).
        self._hot = make_engine(url, hot=True) if not self.sqlite or sqlite_file(
            self.engine) else None
        if check:
            try:
                check_schema(self.engine)
            except BaseException:
                self.dispose()
                raise

    # one transaction for a thread's work (a message) ----------------------------------------
    def _unit(self) -> _Unit | None:
        unit: _Unit | None = getattr(self._units, "unit", None)
        return unit

    @property
    def in_unit(self) -> bool:
        """Whether this thread is inside `unit()`."""
        return self._unit() is not None

    @contextmanager
    def unit(self) -> Iterator[None]:
        """Everything this thread reads and writes on the database inside the block is one
        transaction: committed when the block ends, rolled back (all of it) if it raises.
        SQLite takes the write lock at its start (a unit always writes; a deferred one could
        fail to upgrade, see `_sqlite_setup`). A unit inside another is a savepoint of it: if
        it raises, what it did is undone and the outer unit goes on."""
        unit = self._unit()
        if unit is not None:
            unit.waiting.append([])
            try:
                with unit.conn.begin_nested():
                    yield
            except BaseException:
                unit.waiting.pop()
                raise
            done = unit.waiting.pop()
            unit.waiting[-1].extend(done)
            return
        with self._writer.connect() as conn:
            unit = _Unit(conn)
            self._units.unit = unit
            try:
                with conn.begin():
                    yield
            finally:
                self._units.unit = None
        for call in unit.waiting[0]:
            try:
                call()
            except Exception:  # committed: what follows the commit must not undo it
                log.exception("a call after a unit's commit failed")

    def after_unit(self, call: Callable[[], None]) -> None:
        """`call` once what this thread has done is committed: when its unit (all of it, the
        outer one included) has committed, never if it rolls back; at once outside a unit."""
        unit = self._unit()
        if unit is None:
            call()
        else:
            unit.waiting[-1].append(call)

    # ways in -----------------------------------------------------------------------------------
    @contextmanager
    def read(self) -> Iterator[Session]:
        unit = self._unit()
        if unit is not None:
            # inside the unit's transaction; the session never ends it (nor rolls it back)
            with Session(unit.conn, expire_on_commit=False,
                         join_transaction_mode="rollback_only") as session:
                yield session
            return
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back if it raises (inside a
        unit: a savepoint of it)."""
        unit = self._unit()
        if unit is not None:
            with Session(unit.conn, expire_on_commit=False,
                         join_transaction_mode="create_savepoint") as session, session.begin():
                yield session
            return
        with Session(self._writer, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def read_core(self) -> Iterator[Connection]:
        """A reading transaction on a bare connection: for the pipeline's hot path, core
        statements without the ORM's unit of work."""
        unit = self._unit()
        if unit is not None:
            yield unit.conn
            return
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write_core(self) -> Iterator[Connection]:
        """Like `write`, on a bare connection: committed when the block ends, rolled back if
        it raises (inside a unit: a savepoint of it)."""
        unit = self._unit()
        if unit is not None:
            with unit.conn.begin_nested():
                yield unit.conn
            return
        with self._writer.connect() as conn, conn.begin():
            yield conn

    @property
    def hot(self) -> bool:
        """Whether `write_hot` gives a `bot.store.hot.HotConnection` (reads before its first
        write outside any transaction, holding no lock); never inside a unit (its statements
        are the unit's)."""
        return self._hot is not None and self._unit() is None

    @contextmanager
    def write_hot(self) -> Iterator[Any]:
        """Like `write_core`, on a `bot.store.hot.HotConnection` from the hot path's own pool
        (`self.hot`): the hot path's statements sent on the driver, reads before the first
        write outside the transaction, which that write opens (SQLite: BEGIN IMMEDIATE;
        PostgreSQL: BEGIN, and `batch()` for a pipeline). Else (an in-memory SQLite) the
        SQLAlchemy connection of a writing transaction (inside a unit: a savepoint of it)."""
        if self._hot is None or not self.hot:
            with self.write_core() as conn:
                yield conn
            return
        from bot.store import hot

        if self.sqlite:
            import sqlite3

            # the write lock at BEGIN, as `write_core` takes it (see _sqlite_setup)
            made: hot.HotConnection = hot.HotConnection(
                self._hot, self._plans, error=sqlite3.Error, begin="BEGIN IMMEDIATE")
        else:
            made = hot.PipelinedConnection(self._hot, self._plans)
        try:
            yield made
            made.commit()
        except BaseException:
            made.rollback()
            raise
        finally:
            made.close()

    def dispose(self) -> None:
        self.engine.dispose()
        if self._hot is not None:
            self._hot.dispose()
