"""Outbox rows outside a game: the chat layer's replies go through the outbox too (issue 9).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 21:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.alter_column('game_id', existing_type=sa.String(length=64), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM outbox WHERE game_id IS NULL")
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.alter_column('game_id', existing_type=sa.String(length=64), nullable=False)
