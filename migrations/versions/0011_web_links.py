"""The game on a page (issue 24): each contact's link generation (`网页 重置` revokes the links
given before) and the server's own secrets (the key the page links are signed with).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'web_links',
        sa.Column('contact_id', sa.String(length=128), nullable=False),
        sa.Column('epoch', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('contact_id'))
    op.create_table(
        'secrets',
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('value', sa.String(length=256), nullable=False),
        sa.PrimaryKeyConstraint('name'))


def downgrade() -> None:
    op.drop_table('secrets')
    op.drop_table('web_links')
