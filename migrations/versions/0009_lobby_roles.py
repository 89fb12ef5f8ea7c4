"""The judge's hands (issue 25): a lobby's own role set (`角色`), when the judge chose one.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 04:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('roles', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.drop_column('roles')
