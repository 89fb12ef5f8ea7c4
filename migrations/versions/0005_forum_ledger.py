"""The forum vote thread: forum_threads, forum_ledger.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-10 20:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'forum_threads',
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('day', sa.Integer(), nullable=False),
        sa.Column('tid', sa.BigInteger(), nullable=False),
        sa.Column('bound_at', sa.DateTime(), nullable=False),
        sa.Column('last_read_at', sa.DateTime(), nullable=True),
        sa.Column('last_ok_at', sa.DateTime(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('closed_day', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'],
                                name=op.f('fk_forum_threads_game_id_games'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('game_id', 'day', name=op.f('pk_forum_threads')))
    op.create_table(
        'forum_ledger',
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('pid', sa.BigInteger(), nullable=False),
        sa.Column('tid', sa.BigInteger(), nullable=False),
        sa.Column('day', sa.Integer(), nullable=False),
        sa.Column('floor', sa.Integer(), nullable=False),
        sa.Column('sub', sa.Integer(), nullable=False),
        sa.Column('parent_pid', sa.BigInteger(), nullable=True),
        sa.Column('author_id', sa.BigInteger(), nullable=False),
        sa.Column('author', sa.String(length=128), nullable=False),
        sa.Column('seat', sa.Integer(), nullable=True),
        sa.Column('posted_at', sa.DateTime(), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('parsed', sa.JSON(), nullable=False),
        sa.Column('verdict', sa.String(length=32), nullable=False),
        sa.Column('reason', sa.String(length=64), nullable=True),
        sa.Column('needs_judge', sa.Boolean(), nullable=False),
        sa.Column('decision', sa.String(length=16), nullable=True),
        sa.Column('applied', sa.Boolean(), nullable=False),
        sa.Column('outcome', sa.String(length=64), nullable=True),
        sa.Column('seen_at', sa.DateTime(), nullable=False),
        sa.Column('gone', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'],
                                name=op.f('fk_forum_ledger_game_id_games'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('game_id', 'pid', name=op.f('pk_forum_ledger')))
    with op.batch_alter_table('forum_ledger', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_forum_ledger_day'), ['day'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('forum_ledger', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_forum_ledger_day'))
    op.drop_table('forum_ledger')
    op.drop_table('forum_threads')
