"""The pipeline's hot path: its statements run on the DBAPI connection itself (psycopg, sqlite3).

A command costs this process some 1 ms of CPU, and much of it was SQLAlchemy's execution of
each statement (the cache key, the execution context, the result object, and on SQLite the
event dispatch of the engine's `begin` listener around every execute), on top of the
driver's own work (docs/benchmarks/history.md, "The third round", "SQLite on the hot path").
`HotConnection` stands in for the SQLAlchemy `Connection` of one transaction where the
service's hot path asks it to (`execute`, `scalar`, `scalars`): a statement registered with
`hot` (built once at import) is compiled once per database, by SQLAlchemy, for this very
dialect, and then sent as that SQL on the DBAPI connection underneath, its parameters passed
through the same bind processors SQLAlchemy applies (the JSON serializer; on SQLite the
date-times too) and in the dialect's own parameter style (sqlite3's is positional), its rows
through the same result processors (on SQLite: date-times, JSON); any other statement goes to
the SQLAlchemy connection as before. A statement is only taken if compiling it leaves nothing
else to SQLAlchemy at execution time (no bound literal, no default, no RETURNING); else it is
not hot.

A driver error is handed to SQLAlchemy's own handling (`_handle_dbapi_exception`), so the
caller sees the same exceptions (an `IntegrityError` for a duplicate key, an
`OperationalError` for a locked SQLite database) and a dead connection is invalidated as
SQLAlchemy would.

The connection is in autocommit until the first write (see `HotConnection.__init__`): the
command's read is a statement of its own, with no BEGIN and no lock held after it, and so is a
write made of one statement that is atomic by itself (a SELECT whose data-modifying CTEs are
the whole write); any other write opens the transaction itself (PostgreSQL: BEGIN; SQLite:
BEGIN IMMEDIATE, the write lock taken at once), which the block's end commits (or rolls back).

`PipelinedConnection` (psycopg): `batch()`, the statements executed in it sent in one psycopg
pipeline, one round trip for all of them (their results, a row count, are there once it is
synced: reading one syncs).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, cast

from sqlalchemy import Connection, Engine
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


Row = Any  # a named tuple: what the hot path reads of a SQLAlchemy `Row` (index, attribute)


@dataclass(frozen=True)
class _Plan:
    sql: str
    procs: tuple[tuple[str, Any], ...]  # (bind name, SQLAlchemy's bind processor)
    # a positional dialect (sqlite3's `?`): a parameter row's values in the SQL's order
    order: Callable[[Mapping[str, Any]], tuple[Any, ...]] | None
    row: Callable[[Sequence[Any]], Row]  # a driver's row as SQLAlchemy would give it
    select: bool
    insert: bool

    def args(self, row: Mapping[str, Any]) -> Any:
        """One parameter row as SQLAlchemy would send it: processed, in the dialect's style."""
        if self.procs:
            row = dict(row)
            for name, proc in self.procs:
                row[name] = proc(row[name])
        return row if self.order is None else self.order(row)

    def rows(self, raw: list[Any]) -> list[Row]:
        make = self.row
        return [make(r) for r in raw]


def _order(names: Sequence[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    if len(names) > 1:
        return itemgetter(*names)  # a tuple, in C
    if names:
        name = names[0]
        return lambda row: (row[name],)
    return lambda row: ()


def _row_maker(keys: Sequence[str], procs: list[tuple[int, Any]]) -> Callable[[Sequence[Any]],
                                                                               Row]:
    make = cast(Any, namedtuple("HotRow", keys, rename=True))._make
    if not procs:
        return make

    def processed(raw: Sequence[Any]) -> Row:
        values = list(raw)
        for i, proc in procs:
            values[i] = proc(values[i])
        return make(values)

    return processed


def plan(stmt: Any, dialect: Any, keys: tuple[str, ...] | None) -> _Plan | None:
    """The SQL SQLAlchemy would send for `stmt` (an INSERT: with the columns `keys`), or None
    when sending it as is would skip something SQLAlchemy does at execution time."""
    compiled = stmt.compile(dialect=dialect, column_keys=list(keys) if keys else None)
    if getattr(compiled, "escaped_bind_names", None) or compiled.literal_execute_params or (
            compiled.post_compile_params):
        return None
    names = set(compiled.bind_names.values())
    for bp in compiled.binds.values():
        if bp.callable is not None or (bp.value is not None and keys is None):
            return None  # a bound literal: SQLAlchemy would supply its value
    if keys is not None and names != set(keys):
        return None  # a column default, or a key that is no column
    row: Callable[[Sequence[Any]], Row] = tuple
    if isinstance(stmt, Select):
        cols = list(stmt.selected_columns)
        results = [(i, c.type._cached_result_processor(dialect, None))
                   for i, c in enumerate(cols)]
        # named by the keys a SQLAlchemy row answers to, each value read by the column type's
        # result processor as SQLAlchemy would (sqlite3 gives date-times and JSON as text)
        row = _row_maker([str(c.key) for c in cols], [(i, p) for i, p in results if p is not None])
    elif getattr(stmt, "_returning", ()) or getattr(stmt, "_post_values_clause", None):
        return None
    procs = []
    for bp in compiled.binds.values():
        proc = bp.type._cached_bind_processor(dialect)
        if proc is not None:
            procs.append((compiled.bind_names[bp], proc))
    order = _order(compiled.positiontup or ()) if compiled.positional else None
    return _Plan(compiled.string, tuple(procs), order, row, isinstance(stmt, Select),
                 isinstance(stmt, Insert))


def _run(cur: Any, p: _Plan, args: Any, many: bool) -> None:
    """Statement `p` on a cursor, with one parameter row or many."""
    if many:
        cur.executemany(p.sql, args)
    else:
        cur.execute(p.sql, args)


class _Result:
    """What the hot path reads of a result: `first()`, iteration, `scalar()`, `rowcount`."""

    __slots__ = ("_cur", "_rows", "_plan", "_conn", "_count")

    def __init__(self, cur: Any, rows: list[Row] | None, plan: _Plan,
                 conn: PipelinedConnection | None = None) -> None:
        self._cur = cur
        self._rows = rows  # None: still to be read from the cursor
        self._plan = plan
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

    def _all(self) -> list[Row]:
        self._ready()
        if self._rows is None:
            self._rows = self._plan.rows(self._cur.fetchall()) if self._cur.description else []
        return self._rows

    def first(self) -> Row:
        rows = self._all()
        return rows[0] if rows else None

    def scalar(self) -> Any:
        row = self.first()
        return None if row is None else row[0]

    def __iter__(self) -> Iterator[Row]:
        return iter(self._all())


class HotConnection:
    """One command's connection for the hot path (see the module's docstring): a statement
    at a time, each result read before the next (sqlite3; psycopg: `PipelinedConnection`).

    `error`: the driver's base exception; `begin`: what opens the transaction at the first
    write. The DBAPI connection must be in autocommit when checked out (sqlite3:
    `isolation_level = None`, bot/store/db.py, so that pysqlite never says a BEGIN of its
    own; psycopg: `PipelinedConnection` sets `autocommit`)."""

    pipelined = False  # `batch()`: statements sent in one round trip

    def __init__(self, engine: Engine, plans: dict[tuple[int, Any], _Plan | None], *,
                 error: type[Exception], begin: str = "BEGIN") -> None:
        # The pool's connection itself: a SQLAlchemy `Connection` on it (with its
        # transaction object, begin and commit) is made only when needed (`sa`), some 20 us
        # a command otherwise (docs/benchmarks/history.md, "SQLite on the hot path").
        self._engine = engine
        self.dialect = engine.dialect
        self._fairy = engine.raw_connection()
        self.raw: Any = self._fairy.driver_connection
        self._sa: Connection | None = None
        self._sa_tx: Any = None
        self._plans = plans
        self._error = error
        self._begin_sql = begin
        # A cursor kept with the DBAPI connection (its pool record's `info`, gone with it),
        # for all its transactions: making a psycopg cursor costs more than a round trip.
        self._info = self._fairy.info
        self._cur: Any = self._info.get("hot_cursor")
        # Autocommit: a SELECT before the first write (the command's read) runs as its own
        # statement, no BEGIN sent for it (PostgreSQL: one round trip less; SQLite: no lock
        # held after it, so another writer is never kept waiting on this one while the
        # engine decides); so does a SELECT whose data-modifying CTEs are the whole write
        # (bot/service.py `_refusal`: atomic by itself). Any other write first sends the
        # BEGIN, and the transaction holds every later statement, committed or rolled back
        # as a whole when the block ends (the drivers' commit and rollback act on what the
        # database has open, and do nothing when nothing is). Under READ COMMITTED a read
        # inside the transaction would see no other snapshot than the same read just before
        # it; on SQLite the version check of the write is what catches another writer either
        # way (as it did after the separate read transaction).
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
            found = self._plans[key] = plan(stmt, self.dialect, keys)
            return found

    def _cursor(self) -> Any:
        cur = self._cur
        if cur is None:
            cur = self._cur = self._info["hot_cursor"] = self.raw.cursor()
        return cur

    def _begin(self) -> None:
        """The transaction starts (psycopg: queued in the pipeline if one is open)."""
        self._in_tx = True
        try:
            self._begin_cursor().execute(self._begin_sql)
        except self._error as exc:
            self._failed(exc, self._begin_sql, None)

    def _begin_cursor(self) -> Any:
        return self._cursor()

    def execute(self, stmt: Any, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]
                | None = None) -> Any:
        p = self._plan(stmt, params)
        if p is None:
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
        if p.procs or p.order is not None:
            args = [p.args(r) for r in args] if many else p.args(args)
        try:
            return self._send(p, args, many)
        except self._error as exc:
            self._failed(exc, p.sql, args)
            raise  # not reached: _failed raises SQLAlchemy's exception

    def _send(self, p: _Plan, args: Any, many: bool) -> _Result:
        cur = self._cursor()
        if many:
            cur.executemany(p.sql, args)
            return _Result(cur, [], p)
        cur.execute(p.sql, args)
        return _Result(cur, p.rows(cur.fetchall()) if p.select else [], p)

    def scalar(self, stmt: Any, params: Mapping[str, Any] | None = None) -> Any:
        return self.execute(stmt, params).scalar()

    def scalars(self, stmt: Any, params: Mapping[str, Any] | None = None) -> Any:
        return [r[0] for r in self.execute(stmt, params)]

    def _failed(self, exc: BaseException, sql: Any, params: Any) -> None:
        # SQLAlchemy's own handling: the same wrapped exception, and a dead connection
        # invalidated (its pool then replaces it). It closes the cursor it is given: the
        # kept ones are let go (a new one is made for the next statement).
        cur = self._cur
        self._forget()
        self.sa._handle_dbapi_exception(exc, sql, params, cur, None)

    def _forget(self) -> None:
        self._info.pop("hot_cursor", None)
        self._cur = None

    @property
    def sa(self) -> Connection:
        """SQLAlchemy's `Connection` on the same DBAPI connection (a statement that is not
        hot, an error to handle), made when first asked for; in a transaction from then on,
        as in `write_core`, so that its error handling never rolls back by itself and the
        block's end commits or rolls back through it."""
        if self._sa is None:
            self._sa = Connection(self._engine, connection=self._fairy)
            self._sa_tx = self._sa.begin()  # no BEGIN sent: the drivers are in autocommit
        return self._sa

    def sync(self) -> None:
        """Send what a pipeline holds and read its results (none here)."""

    def commit(self) -> None:
        """The block ended: what the transaction wrote is committed (nothing is sent when
        no write opened one)."""
        if self._sa_tx is not None:
            self._sa_tx.commit()
            return
        try:
            self.raw.commit()
        except self._error as exc:
            self._failed(exc, "COMMIT", None)

    def rollback(self) -> None:
        """The block raised: what the transaction wrote is rolled back."""
        if self._sa_tx is not None:  # as SQLAlchemy's transaction ends on an error
            if self._sa_tx.is_active:
                self._sa_tx.rollback()
            return
        try:
            self.raw.rollback()
        except self._error as exc:
            self._failed(exc, "ROLLBACK", None)

    def close(self) -> None:
        """The connection goes back to the pool; what a kept cursor holds (the last result)
        is let go."""
        if self._cur is not None and getattr(self._cur, "closed", False):
            self._info.pop("hot_cursor", None)
        self._cur = None
        if self._sa is not None:
            self._sa.close()
        else:
            self._fairy.close()


class PipelinedConnection(HotConnection):
    """psycopg: `batch()` sends the statements executed in it in one pipeline."""

    pipelined = True

    def __init__(self, engine: Engine, plans: dict[tuple[int, Any], _Plan | None]) -> None:
        # psycopg is imported here, not with the module: bot/service.py imports this module,
        # and a SQLite deployment need not import the driver (some 50 ms of its start-up)
        from psycopg import Error

        super().__init__(engine, plans, error=Error)
        # A second kept cursor, `_sink`: a pipeline's INSERTs (and its BEGIN), whose results
        # nobody reads.
        self._sink: Any = self._info.get("hot_sink")
        self._pipeline: Any = None
        if not self.raw.autocommit:
            try:
                self.raw.autocommit = True  # idle when checked out; the hot pool's only
            except BaseException:
                self._fairy.close()
                raise

    def _begin_cursor(self) -> Any:
        return self._sink_cursor()

    def _sink_cursor(self) -> Any:
        cur = self._sink
        if cur is None:
            cur = self._sink = self._info["hot_sink"] = self.raw.cursor()
        return cur

    def _send(self, p: _Plan, args: Any, many: bool) -> _Result:
        if self._pipeline is None:
            return super()._send(p, args, many)
        if p.insert:  # one cursor for them all (its row count is not theirs: -1)
            cur = self._sink_cursor()
            _run(cur, p, args, many)
            return _Result(cur, [], p)
        cur = self.raw.cursor()
        _run(cur, p, args, many)
        return _Result(cur, None, p, self)

    def _forget(self) -> None:
        super()._forget()
        self._info.pop("hot_sink", None)
        self._sink = None

    def sync(self) -> None:
        """Send what the pipeline holds and read its results (its errors raise here)."""
        if self._pipeline is not None:
            try:
                self._pipeline.sync()
            except self._error as exc:
                self._failed(exc, None, None)

    @contextmanager
    def batch(self) -> Iterator[PipelinedConnection]:
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
        if self._sink is not None and self._sink.closed:
            self._info.pop("hot_sink", None)
        self._sink = None
        super().close()
