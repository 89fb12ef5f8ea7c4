"""The chat layer: lobbies, lobby_players, chat_messages, seat_tokens, room_members.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 20:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'lobbies',
        sa.Column('code', sa.String(length=16), nullable=False),
        sa.Column('ruleset', sa.String(length=32), nullable=False),
        sa.Column('players', sa.Integer(), nullable=False),
        sa.Column('options', sa.JSON(), nullable=False),
        sa.Column('chat_options', sa.JSON(), nullable=False),
        sa.Column('judge', sa.String(length=128), nullable=False),
        sa.Column('time_zone', sa.String(length=64), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('end_requested_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('code', name=op.f('pk_lobbies')))
    op.create_table(
        'lobby_players',
        sa.Column('code', sa.String(length=16), nullable=False),
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.Column('forum_name', sa.String(length=128), nullable=False),
        sa.Column('joined', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['code'], ['lobbies.code'],
                                name=op.f('fk_lobby_players_code_lobbies'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('code', 'contact_id', name=op.f('pk_lobby_players')),
        sa.UniqueConstraint('code', 'forum_name', name=op.f('uq_lobby_players_code_forum_name')))
    op.create_table(
        'chat_messages',
        sa.Column('msg_id', sa.String(length=128), nullable=False),
        sa.Column('sender', sa.String(length=128), nullable=False),
        sa.Column('received_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('msg_id', name=op.f('pk_chat_messages')))
    op.create_table(
        'seat_tokens',
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('seat', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('used_by', sa.String(length=128), nullable=True),
        sa.Column('used_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'],
                                name=op.f('fk_seat_tokens_game_id_games'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('token_hash', name=op.f('pk_seat_tokens')))
    with op.batch_alter_table('seat_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_seat_tokens_game_id'), ['game_id'], unique=False)
    op.create_table(
        'room_members',
        sa.Column('game_id', sa.String(length=64), nullable=False),
        sa.Column('room', sa.String(length=32), nullable=False),
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.ForeignKeyConstraint(['game_id'], ['games.id'],
                                name=op.f('fk_room_members_game_id_games'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('game_id', 'room', 'contact_id', name=op.f('pk_room_members')))


def downgrade() -> None:
    op.drop_table('room_members')
    with op.batch_alter_table('seat_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_seat_tokens_game_id'))
    op.drop_table('seat_tokens')
    op.drop_table('chat_messages')
    op.drop_table('lobby_players')
    op.drop_table('lobbies')
