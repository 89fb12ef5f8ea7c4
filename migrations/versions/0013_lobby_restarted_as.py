"""`重开` once per game (issue 33, item 10): the lobby a finished game was restarted as, so a
second `重开` points to it instead of making another lobby with everyone joined again.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('restarted_as', sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.drop_column('restarted_as')
