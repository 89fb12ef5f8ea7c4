"""The judge's hands (issue 25): the judge's last undoable chat-layer action of a game (a kick
before the start, a room bound), for `撤销 踢出` / `撤销 绑定`.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 05:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('undo', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.drop_column('undo')
