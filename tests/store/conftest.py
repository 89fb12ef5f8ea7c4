"""Every store test runs on SQLite and on PostgreSQL (a throwaway server, see pgserver.py).

Each test gets a database of its own, already migrated: a copy of a migrated SQLite file, or a
PostgreSQL database made from a migrated template. Without PostgreSQL binaries the PostgreSQL
half is skipped, unless WOLFJUDGE_REQUIRE_PG is set (CI sets it): then it fails.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgserver import PostgresServer, throwaway_server

from bot.service import Service
from bot.store import migrate

BACKENDS = ["sqlite", "postgresql"]
_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    with throwaway_server() as server:
        server.admin("CREATE DATABASE wolfjudge_template")
        migrate(server.url("wolfjudge_template"))
        yield server


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "wolfjudge.db"
    migrate(f"sqlite:///{path}")
    return path


def _fresh(request: pytest.FixtureRequest, tmp_path: Path, backend: str,
           migrated: bool) -> Iterator[str]:
    if backend == "sqlite":
        path = tmp_path / "wolfjudge.db"
        if migrated:
            shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    server: PostgresServer = request.getfixturevalue("pg_server")
    name = f"test_{next(_names)}"
    template = " TEMPLATE wolfjudge_template" if migrated else ""
    server.admin(f"CREATE DATABASE {name}{template}")
    yield server.url(name)
    server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty database of its own."""
    yield from _fresh(request, tmp_path, request.param, True)


@pytest.fixture
def pg_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty PostgreSQL database of its own (a PostgreSQL-only behaviour)."""
    yield from _fresh(request, tmp_path, "postgresql", True)


@pytest.fixture(params=BACKENDS)
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no schema at all."""
    yield from _fresh(request, tmp_path, request.param, False)


@pytest.fixture
def service(db_url: str) -> Iterator[Service]:
    svc = Service(db_url)
    yield svc
    svc.close()
