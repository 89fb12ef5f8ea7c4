"""Fewer, clearer messages (issue 20): the outbox's priority and turn, the judge's feed setting
per game and the judges' own defaults.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04 00:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('priority', sa.Integer(), server_default='1',
                                      nullable=False))
        batch_op.add_column(sa.Column('turn', sa.String(length=160), nullable=True))
        batch_op.create_index('ix_outbox_turn', ['turn'], unique=False)
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judge_feed', sa.String(length=8),
                                      server_default='summary', nullable=False))
        batch_op.add_column(sa.Column('dm_out', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))
    op.create_table(
        'judge_settings',
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.Column('judge_feed', sa.String(length=8), nullable=False),
        sa.PrimaryKeyConstraint('contact_id'),
    )


def downgrade() -> None:
    op.drop_table('judge_settings')
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('dm_out')
        batch_op.drop_column('judge_feed')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_turn')
        batch_op.drop_column('turn')
        batch_op.drop_column('priority')
