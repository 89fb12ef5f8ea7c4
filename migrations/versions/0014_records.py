"""A community's memory (issue 31): one summary row a finished game (written once, when its
export verifies), its seats, the seasons, who hides their records, and the simulator's numbers
for a board, computed once.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'game_records',
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('host', sa.String(length=128), nullable=True),
        sa.Column('ruleset', sa.String(length=32), nullable=False),
        sa.Column('players', sa.Integer(), nullable=False),
        sa.Column('board', sa.String(length=512), nullable=False),
        sa.Column('outcome', sa.String(length=8), nullable=False),
        sa.Column('winner', sa.String(length=32), nullable=True),
        sa.Column('day', sa.Integer(), nullable=False),
        sa.Column('ended_at', sa.DateTime(), nullable=False),
        sa.Column('ended_on', sa.Date(), nullable=False),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('last_seq', sa.Integer(), nullable=False),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('recorded_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'],
                                name=op.f('fk_game_records_game_id_games'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('game_id', name=op.f('pk_game_records')))
    op.create_index('ix_game_records_host_ended', 'game_records', ['host', 'ended_at'])
    op.create_table(
        'record_seats',
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('seat', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('host', sa.String(length=128), nullable=True),
        sa.Column('outcome', sa.String(length=8), nullable=False),
        sa.Column('ended_at', sa.DateTime(), nullable=False),
        sa.Column('contact_id', sa.String(length=128), nullable=True),
        sa.Column('forum_name', sa.String(length=128), nullable=True),
        sa.Column('role', sa.String(length=32), nullable=True),
        sa.Column('camp', sa.String(length=32), nullable=True),
        sa.Column('result', sa.String(length=8), nullable=True),
        sa.Column('out_cause', sa.String(length=32), nullable=True),
        sa.Column('out_phase', sa.String(length=16), nullable=True),
        sa.Column('yellow', sa.Integer(), nullable=False),
        sa.Column('red', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['game_records.game_id'],
                                name=op.f('fk_record_seats_game_id_game_records'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('game_id', 'seat', name=op.f('pk_record_seats')))
    op.create_index(op.f('ix_record_seats_contact_id'), 'record_seats', ['contact_id'])
    op.create_index('ix_record_seats_community', 'record_seats',
                    ['host', 'contact_id', 'ended_at', 'outcome', 'result'])
    op.create_index(op.f('ix_record_seats_forum_name'), 'record_seats', ['forum_name'])
    op.create_table(
        'seasons',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('host', sa.String(length=128), nullable=True),
        sa.Column('name', sa.String(length=32), nullable=False),
        sa.Column('started_at', sa.DateTime(), nullable=False),
        sa.Column('ended_at', sa.DateTime(), nullable=True),
        sa.Column('started_by', sa.String(length=128), nullable=False),
        sa.Column('ended_by', sa.String(length=128), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_seasons')))
    op.create_index(op.f('ix_seasons_host'), 'seasons', ['host'])
    op.create_table(
        'record_privacy',
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.Column('hidden', sa.Boolean(), nullable=False),
        sa.Column('changed_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('contact_id', name=op.f('pk_record_privacy')))
    op.create_table(
        'simulations',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('board', sa.String(length=512), nullable=False),
        sa.Column('agent', sa.String(length=16), nullable=False),
        sa.Column('games', sa.Integer(), nullable=False),
        sa.Column('seed', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=8), nullable=False),
        sa.Column('result', sa.JSON(), nullable=True),
        sa.Column('computed_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('key', name=op.f('pk_simulations')))


def downgrade() -> None:
    op.drop_table('simulations')
    op.drop_table('record_privacy')
    op.drop_index(op.f('ix_seasons_host'), table_name='seasons')
    op.drop_table('seasons')
    op.drop_index('ix_record_seats_community', table_name='record_seats')
    op.drop_index(op.f('ix_record_seats_forum_name'), table_name='record_seats')
    op.drop_index(op.f('ix_record_seats_contact_id'), table_name='record_seats')
    op.drop_table('record_seats')
    op.drop_index('ix_game_records_host_ended', table_name='game_records')
    op.drop_table('game_records')
