"""Upstream ids the store refuses, kept per thread (issue 11 kind 1): ``upstream_ids``.

An id an upstream chose that :func:`gateway.ids.id_problem` refuses (over 100 characters, NUL,
a lone surrogate, ...) is remapped to ``up-<32 hex>`` (:mod:`gateway.upstream_ids`) before it is
stored or sent. One row per such id of a thread, primary key ``(thread_id, gateway_id)``, keeps
the provider's original (``original``: its ASCII JSON string literal), so the thread's next
request sends each provider its own id back.

Self-contained: it only adds a table, so it re-chains after any other revision. Ids remapped
before this revision are not recoverable (they were never kept).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from gateway.store.schema import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upstream_ids",
        sa.Column(
            "thread_id",
            sa.String(255),
            sa.ForeignKey("threads.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("gateway_id", sa.String(64), primary_key=True),
        sa.Column("original", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("upstream_ids")
