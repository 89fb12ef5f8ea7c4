"""Settings from the environment (WOLFJUDGE_*)."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WOLFJUDGE_", extra="ignore")

    # SQLite file in the working folder by default (WAL mode); a PostgreSQL URL in production,
    # e.g. postgresql+psycopg://wolfjudge:secret@127.0.0.1:5432/wolfjudge
    database_url: str = "sqlite:///wolfjudge.db"


def database_url(url: str | None = None) -> str:
    """The URL to use: the one given, else WOLFJUDGE_DATABASE_URL, else the SQLite default.

    `postgresql://` and `postgres://` mean psycopg 3 (SQLAlchemy would pick psycopg2).
    """
    url = url or Settings().database_url
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url
