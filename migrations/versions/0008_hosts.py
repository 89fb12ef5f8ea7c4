"""More than one WeChat account (issue 21): the account that hosts a lobby, and the account
that sends a message outside any game (a game's messages go from the game's own host).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 03:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('host', sa.String(length=128), nullable=True))
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('host', sa.String(length=128), nullable=True))
        batch_op.create_index(batch_op.f('ix_lobbies_host'), ['host'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_lobbies_host'))
        batch_op.drop_column('host')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('host')
