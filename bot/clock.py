"""The bot's own clock reading: naive UTC, as the database stores its bookkeeping times."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)
