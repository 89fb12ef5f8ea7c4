"""A channel's place in what it has handed over (issue 33's follow-up): QQ's catch-up reads only
the conversations with a message since the newest one the bot had handled everything up to,
kept here across restarts (bot/transport/onebot.py).

Revision ID: 0020
Revises: 0018
Create Date: 2026-12-06 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0020'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'channel_marks',
        sa.Column('name', sa.String(length=128), nullable=False),
        sa.Column('value', sa.BigInteger(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('name', name=op.f('pk_channel_marks')))


def downgrade() -> None:
    op.drop_table('channel_marks')
