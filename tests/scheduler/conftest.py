"""The scheduler tests run on SQLite (each test a copy of one migrated file) and a fake clock."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from schedhelp import Bot, start_bot

from bot.store import migrate


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sched-template") / "wolfjudge.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture
def db_url(migrated_sqlite: Path, tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "wolfjudge.db"
    shutil.copy(migrated_sqlite, path)
    yield f"sqlite:///{path}"


@pytest.fixture
def bot(db_url: str) -> Iterator[Bot]:
    b = start_bot(db_url)
    yield b
    b.close()
