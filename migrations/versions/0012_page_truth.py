"""The pages show what was delivered (issue 33): who was in each of a game's rooms, and when,
so that a seat's page holds a room's post only if its contact was in the room when it went.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'room_stays',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('room', sa.String(length=32), nullable=False),
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.Column('since', sa.DateTime(), nullable=False),
        sa.Column('until', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'],
                                name=op.f('fk_room_stays_game_id_games'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_room_stays')))
    with op.batch_alter_table('room_stays', schema=None) as batch_op:
        batch_op.create_index('ix_room_stays_game_contact', ['game_id', 'contact_id'],
                              unique=False)
    # Who is in a room now has been there, as far as the record goes, from the start.
    members = sa.table('room_members', sa.column('game_id', sa.String),
                       sa.column('room', sa.String), sa.column('contact_id', sa.String))
    stays = sa.table('room_stays', sa.column('game_id', sa.String), sa.column('room', sa.String),
                     sa.column('contact_id', sa.String), sa.column('since', sa.DateTime))
    op.execute(stays.insert().from_select(
        ['game_id', 'room', 'contact_id', 'since'],
        sa.select(members.c.game_id, members.c.room, members.c.contact_id,
                  sa.literal(datetime(2000, 1, 1), sa.DateTime))))


def downgrade() -> None:
    with op.batch_alter_table('room_stays', schema=None) as batch_op:
        batch_op.drop_index('ix_room_stays_game_contact')
    op.drop_table('room_stays')
