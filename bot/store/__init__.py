"""Persistence: SQLAlchemy models, the database and its migrations (see bot/service.py)."""

from bot.store.db import Database, SchemaError, check_schema, head_revision, migrate
from bot.store.settings import Settings, database_url

__all__ = ["Database", "SchemaError", "Settings", "check_schema", "database_url",
           "head_revision", "migrate"]
