"""Initial schema: games, the log (events), snapshots, inbox, players, rooms, cards,
deadlines and the outbox.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 13:27:10.912678
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('games',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('ruleset', sa.String(length=32), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('commitment', sa.String(length=64), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('winner', sa.String(length=32), nullable=True),
    sa.Column('host', sa.String(length=128), nullable=True),
    sa.Column('judge_contact', sa.String(length=128), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_games'))
    )
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_games_host'), ['host'], unique=False)

    op.create_table('cards',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('seat', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('yellow', sa.Integer(), nullable=False),
    sa.Column('red', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_cards_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', 'seat', name=op.f('pk_cards'))
    )
    op.create_table('deadlines',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('deadline_id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('due', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_deadlines_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', 'deadline_id', name=op.f('pk_deadlines'))
    )
    with op.batch_alter_table('deadlines', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_deadlines_due'), ['due'], unique=False)

    op.create_table('events',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('type', sa.String(length=64), nullable=False),
    sa.Column('at', sa.DateTime(), nullable=False),
    sa.Column('phase', sa.String(length=16), nullable=False),
    sa.Column('audience', sa.JSON(), nullable=False),
    sa.Column('body', sa.JSON(), nullable=False),
    sa.Column('msg_id', sa.String(length=128), nullable=True),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_events_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', 'seq', name=op.f('pk_events'))
    )
    op.create_table('inbox',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('msg_id', sa.String(length=128), nullable=False),
    sa.Column('sender', sa.String(length=128), nullable=True),
    sa.Column('received_at', sa.DateTime(), nullable=False),
    sa.Column('command', sa.JSON(), nullable=False),
    sa.Column('outcome', sa.String(length=8), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('first_seq', sa.Integer(), nullable=True),
    sa.Column('last_seq', sa.Integer(), nullable=True),
    sa.Column('rejection', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_inbox_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', 'msg_id', name=op.f('pk_inbox'))
    )
    op.create_table('outbox',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dedupe_key', sa.String(length=255), nullable=False),
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=True),
    sa.Column('channel', sa.String(length=8), nullable=False),
    sa.Column('target', sa.String(length=160), nullable=False),
    sa.Column('address', sa.String(length=128), nullable=True),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(), nullable=False),
    sa.Column('sent_at', sa.DateTime(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_outbox_game_id_games')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox')),
    sa.UniqueConstraint('dedupe_key', name=op.f('uq_outbox_dedupe_key'))
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_outbox_game_id'), ['game_id'], unique=False)
        batch_op.create_index('ix_outbox_pending', ['sent_at', 'next_attempt_at'], unique=False)

    op.create_table('players',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('seat', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('contact_id', sa.String(length=128), nullable=True),
    sa.Column('forum_name', sa.String(length=128), nullable=True),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_players_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', 'seat', name=op.f('pk_players')),
    sa.UniqueConstraint('game_id', 'contact_id', name=op.f('uq_players_game_id_contact_id'))
    )
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_players_contact_id'), ['contact_id'], unique=False)

    op.create_table('rooms',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('room_id', sa.String(length=128), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_rooms_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', 'name', name=op.f('pk_rooms'))
    )
    op.create_table('snapshots',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('last_seq', sa.Integer(), nullable=False),
    sa.Column('clock', sa.DateTime(), nullable=False),
    sa.Column('state', sa.JSON(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ondelete='CASCADE',
                            name=op.f('fk_snapshots_game_id_games')),
    sa.PrimaryKeyConstraint('game_id', name=op.f('pk_snapshots'))
    )


def downgrade() -> None:
    op.drop_table('snapshots')
    op.drop_table('rooms')
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_players_contact_id'))

    op.drop_table('players')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_pending')
        batch_op.drop_index(batch_op.f('ix_outbox_game_id'))

    op.drop_table('outbox')
    op.drop_table('inbox')
    op.drop_table('events')
    with op.batch_alter_table('deadlines', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_deadlines_due'))

    op.drop_table('deadlines')
    op.drop_table('cards')
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_games_host'))

    op.drop_table('games')
