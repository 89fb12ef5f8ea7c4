"""Migrations are the only way the schema is made, and they agree with the models."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from bot.cli import main
from bot.service import Service
from bot.store import Database, SchemaError, database_url, head_revision, migrate
from bot.store.db import alembic_config, current_revision, make_engine
from bot.store.models import Base


def test_single_head() -> None:
    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    assert heads == [head_revision()]


def test_models_and_migrations_agree(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn, opts={
                "compare_type": True, "compare_server_default": True}), Base.metadata)
        assert diff == [], diff
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_refuses_an_old_schema_then_migrates(empty_db_url: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SchemaError, match="wolfjudge migrate"):
        Service(empty_db_url)
    assert main(["rebuild", "nothing", "--db", empty_db_url]) == 2
    assert "wolfjudge migrate" in capsys.readouterr().err
    assert main(["migrate", "--db", empty_db_url]) == 0
    assert "(head)" in capsys.readouterr().out
    Database(empty_db_url).dispose()  # now it starts
    engine = make_engine(empty_db_url)
    try:
        assert set(inspect(engine).get_table_names()) >= set(Base.metadata.tables)
        with engine.begin() as conn:  # a database from another (older or newer) wolfjudge
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0000_older'")
    finally:
        engine.dispose()
    with pytest.raises(SchemaError, match="0000_older"):
        Database(empty_db_url)


def test_down_and_up_again(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        command.downgrade(alembic_config(engine=engine), "base")
        assert not set(inspect(engine).get_table_names()) & set(Base.metadata.tables)
        migrate(engine=engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_default_is_a_wal_sqlite_file_in_the_working_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WOLFJUDGE_DATABASE_URL", raising=False)
    assert database_url() == "sqlite:///wolfjudge.db"
    migrate()
    assert (tmp_path / "wolfjudge.db").exists()
    db = Database()
    try:
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        db.dispose()
    monkeypatch.setenv("WOLFJUDGE_DATABASE_URL", "postgresql://u:p@127.0.0.1:5/w")
    assert database_url() == "postgresql+psycopg://u:p@127.0.0.1:5/w"


def test_the_fast_schema_check_reads_the_head_alembic_reads() -> None:
    # check_schema accepts a database without importing Alembic when its stored revision is
    # the head read from the scripts' headers: that reading must be Alembic's own.
    from bot.store.db import _script_head

    assert _script_head() == head_revision()
