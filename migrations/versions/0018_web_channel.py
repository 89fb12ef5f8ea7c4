"""A game with no chat account (issue 30): the contacts the pages know by a lasting link (a
judge granted by `wolfjudge judge-link`, a player who joined by a join link) and each lobby's
join-link generation.

Revision ID: 0018
Revises: 0015
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0018'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'web_contacts',
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('creates_games', sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('contact_id', name=op.f('pk_web_contacts')),
        sa.UniqueConstraint('digest', name=op.f('uq_web_contacts_digest')))
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('join_epoch', sa.Integer(), server_default='0',
                                      nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('lobbies', schema=None) as batch_op:
        batch_op.drop_column('join_epoch')
    op.drop_table('web_contacts')
