"""The pipeline's hot path on PostgreSQL: its statements run on the psycopg connection itself.

A command costs this process some 1.1 ms of CPU on PostgreSQL, and much of it was SQLAlchemy's
execution of each statement (the cache key, the execution context, the result object), on top
of psycopg's own work (docs/benchmarks.md, "The third round"). `HotConnection` stands in for
the SQLAlchemy `Connection` of one transaction where the service's hot path asks it to
(`execute`, `scalar`, `scalars`): a statement registered with `hot` (built once at import) is
compiled once per database, by SQLAlchemy, for this very dialect, and then sent as that SQL on
the DBAPI connection underneath, its parameters passed through the same bind processors
SQLAlchemy applies (the JSON serializer); any other statement goes to the SQLAlchemy
connection as before. A statement is only taken if compiling it leaves nothing to SQLAlchemy
at execution time (no bound literal, no default, no result processing); else it is not hot.

A psycopg error is handed to SQLAlchemy's own handling (`_handle_dbapi_exception`), so the
caller sees the same exceptions (an `IntegrityError` for a duplicate key) and a dead connection
is invalidated as SQLAlchemy would.

`batch()`: the statements executed in it are sent in one psycopg pipeline, one round trip
for all of them (their results, a row count, are there once it is synced: reading one syncs).

The connection is in autocommit until the first write (see `HotConnection.__init__`): the
command's read is a statement of its own, with no BEGIN, and so is a write made of one
statement that is atomic by itself (a SELECT whose data-modifying CTEs are the whole write);
any other write opens the transaction, which the block's end commits (or rolls back).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql import Insert, Select
from sqlalchemy.sql.base import Executable

_HOT: dict[int, Executable] = {}


_ATOMIC: set[int] = set()


def hot(stmt: Any, *, atomic_write: bool = False) -> Any:
    """Mark a statement (one built once, at import) as the hot path's: run on the driver.
    `atomic_write`: a SELECT that writes (data-modifying CTEs), the whole of a write: run
    outside a transaction it commits by itself (`HotConnection.may_have_committed`)."""
    _HOT[id(stmt)] = stmt
    if atomic_write:
        _ATOMIC.add(id(stmt))
    return stmt


@dataclass(frozen=True)
class _Plan:
    sql: str
    procs: tuple[tuple[str, Any], ...]  # (bind name, SQLAlchemy's bind processor)
    select: bool
    insert: bool


def plan(stmt: Executable, dialect: Any, keys: tuple[str, ...] | None) -> _Plan | None:
    """The SQL SQLAlchemy would send for `stmt` (an INSERT: with the columns `keys`), or None
    when sending it as is would skip something SQLAlchemy does at execution time."""
    compiled = stmt.compile(dialect=dialect, column_keys=list(keys) if keys else None)
    if getattr(compiled, "escaped_bind_names", None) or compiled.positional:
        return None
    names = set(compiled.bind_names.values())
    for bp in compiled.binds.values():
        if bp.callable is not None or (bp.value is not None and keys is None):
            return None  # a bound literal: SQLAlchemy would supply its value
    if keys is not None and names != set(keys):
        return None  # a column default, or a key that is no column
    if isinstance(stmt, Select):
        for col in stmt.selected_columns:
            if col.type._cached_result_processor(dialect, None) is not None:
                return None
    elif getattr(stmt, "_returning", ()) or getattr(stmt, "_post_values_clause", None):
        return None
    procs = []
    for bp in compiled.binds.values():
        proc = bp.type._cached_bind_processor(dialect)
        if proc is not None:
            procs.append((compiled.bind_names[bp], proc))
    return _Plan(compiled.string, tuple(procs), isinstance(stmt, Select),
                 isinstance(stmt, Insert))


class _Result:
    """What the hot path reads of a result: `first()`, iteration, `scalar()`, `rowcount`."""

    __slots__ = ("_cur", "_rows", "_conn", "_count")

    def __init__(self, cur: Any, rows: list[Any] | None, conn: HotConnection | None = None):
        self._cur = cur
        self._rows = rows
        self._conn = conn  # set while the result waits in a pipeline
        # read now unless it waits (the connection's one cursor runs the next statement)
        self._count = None if conn is not None else cur.rowcount

    def _ready(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.sync()

    @property
    def rowcount(self) -> int:
        self._ready()
        return int(self._cur.rowcount if self._count is None else self._count)

    def _all(self) -> list[Any]:
        self._ready()
        if self._rows is None:
            self._rows = self._cur.fetchall() if self._cur.description else []
        return self._rows

    def first(self) -> Any:
        rows = self._all()
        return rows[0] if rows else None

    def scalar(self) -> Any:
        row = self.first()
        return None if row is None else row[0]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())


class HotConnection:
    """One command's connection for the hot path (see the module's docstring)."""

    def __init__(self, conn: Connection, plans: dict[tuple[int, Any], _Plan | None]) -> None:
        # psycopg is imported here, not with the module: bot/service.py imports this module,
        # and a SQLite deployment need not import the driver (some 50 ms of its start-up)
        from psycopg import Error
        from psycopg.rows import namedtuple_row

        self._error = Error
        self._row_factory = namedtuple_row
        self.sa = conn
        self.raw = conn.connection.driver_connection
        self._plans = plans
        # Two cursors kept with the DBAPI connection (its pool record's `info`, gone with it),
        # for all its transactions: making one costs more than a round trip. `_cur` runs a
        # statement at a time (its results are read before the next); `_sink` a pipeline's
        # INSERTs, whose results nobody reads.
        self._info = conn.connection.info
        self._cur: Any = self._info.get("hot_cursor")
        self._sink: Any = self._info.get("hot_sink")
        self._pipeline: Any = None
        # Autocommit: a SELECT before the first write (the command's read) runs as its own
        # statement, no BEGIN sent for it (one round trip less); so does a SELECT whose
        # data-modifying CTEs are the whole write (bot/service.py `_refusal`: atomic by
        # itself). Any other write first sends the BEGIN (in the pipeline, when one is open),
        # and the transaction holds every later statement, committed or rolled back as a
        # whole when the block ends (psycopg's commit and rollback act on what the server has
        # open, and do nothing when nothing is). Under READ COMMITTED a read inside the
        # transaction would see no other snapshot than the same read just before it.
        if not self.raw.autocommit:
            self.raw.autocommit = True  # idle when checked out; the hot pool's only
        self._in_tx = False
        # Set once a statement that commits by itself was sent (an `atomic_write` outside a
        # transaction): from then on, like after a COMMIT sent, a lost connection leaves it
        # unknown whether the write was made, so the command must not be tried again.
        self.may_have_committed = False

    def _plan(self, stmt: Any, params: Any) -> _Plan | None:
        if _HOT.get(id(stmt)) is not stmt:
            return None
        keys: tuple[str, ...] | None = None
        if isinstance(stmt, Insert):
            first = params[0] if isinstance(params, list) else params
            keys = tuple(first)
        key = (id(stmt), keys)
        try:
            return self._plans[key]
        except KeyError:
            found = self._plans[key] = plan(stmt, self.sa.dialect, keys)
            return found

    def _begin(self) -> None:
        """The transaction starts: BEGIN, queued in the pipeline if one is open."""
        self._in_tx = True
        try:
            self._sink_cursor().execute("BEGIN")
        except self._error as exc:
            self._failed(exc, "BEGIN", None)

    def _sink_cursor(self) -> Any:
        cur = self._sink
        if cur is None:
            cur = self._sink = self._info["hot_sink"] = self.raw.cursor()
        return cur

    def execute(self, stmt: Any, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]
                | None = None) -> Any:
        p = self._plan(stmt, params)
        if p is None:
            if self._pipeline is not None:
                self.sync()
            if not self._in_tx and not isinstance(stmt, Select):
                self._begin()
            return self.sa.execute(stmt, params)
        if not self._in_tx:
            if not p.select:
                self._begin()
            elif id(stmt) in _ATOMIC:
                self.may_have_committed = True
        many = isinstance(params, list)
        if many and len(params) == 1:  # type: ignore[arg-type]
            params, many = params[0], False  # type: ignore[index]  # one row: execute it
        args: Any = params or {}
        if p.procs:
            rows = [dict(r) for r in args] if many else [dict(args)]
            for row in rows:
                for name, proc in p.procs:
                    row[name] = proc(row[name])
            args = rows if many else rows[0]
        try:
            if self._pipeline is not None:
                if p.insert:  # one cursor for them all (its row count is not theirs: -1)
                    cur = self._sink_cursor()
                    if many:
                        cur.executemany(p.sql, args)
                    else:
                        cur.execute(p.sql, args)
                    return _Result(cur, [])
                cur = self.raw.cursor(row_factory=self._row_factory)
                if many:
                    cur.executemany(p.sql, args)
                else:
                    cur.execute(p.sql, args)
                return _Result(cur, None, self)
            cur = self._cur
            if cur is None:
                cur = self._cur = self._info["hot_cursor"] = self.raw.cursor(
                    row_factory=self._row_factory)
            if many:
                cur.executemany(p.sql, args)
                return _Result(cur, [])
            cur.execute(p.sql, args)
            return _Result(cur, cur.fetchall() if p.select else [])
        except self._error as exc:
            self._failed(exc, p.sql, args)
            raise  # not reached: _failed raises SQLAlchemy's exception

    def scalar(self, stmt: Any, params: Mapping[str, Any] | None = None) -> Any:
        return self.execute(stmt, params).scalar()

    def scalars(self, stmt: Any, params: Mapping[str, Any] | None = None) -> Any:
        return [r[0] for r in self.execute(stmt, params)]

    def _failed(self, exc: BaseException, sql: Any, params: Any) -> None:
        # SQLAlchemy's own handling: the same wrapped exception, and a dead connection
        # invalidated (its pool then replaces it)
        self.sa._handle_dbapi_exception(exc, sql, params, self._cur, None)  # type: ignore[arg-type]

    def sync(self) -> None:
        """Send what the pipeline holds and read its results (its errors raise here)."""
        if self._pipeline is not None:
            try:
                self._pipeline.sync()
            except self._error as exc:
                self._failed(exc, None, None)

    @contextmanager
    def batch(self) -> Iterator[HotConnection]:
        """The statements executed in the block go in one pipeline: one round trip, synced
        when the block ends (or when a result of one is read)."""
        if self._pipeline is not None:
            yield self
            return
        try:
            with self.raw.pipeline() as pipeline:
                self._pipeline = pipeline
                try:
                    yield self
                finally:
                    self._pipeline = None
        except self._error as exc:
            self._failed(exc, None, None)

    def close(self) -> None:
        """The transaction ends: what a kept cursor holds (the last result) is let go."""
        if self._cur is not None and self._cur.closed:
            self._info.pop("hot_cursor", None)
        if self._sink is not None and self._sink.closed:
            self._info.pop("hot_sink", None)
        self._cur = self._sink = None
