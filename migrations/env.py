"""Alembic environment: the same settings (WOLFJUDGE_DATABASE_URL) and engine setup as the bot."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context

from bot.store.db import make_engine
from bot.store.models import Base
from bot.store.settings import database_url

config = context.config
if config.config_file_name is not None and not config.attributes.get("engine"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def _url() -> str:
    return config.attributes.get("url") or database_url()


def run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = config.attributes.get("engine")
    own = engine is None
    engine = engine or make_engine(_url())
    try:
        with engine.connect() as connection:
            # batch mode lets later migrations ALTER tables on SQLite too
            context.configure(connection=connection, target_metadata=target_metadata,
                              render_as_batch=True, compare_type=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        if own:
            engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
