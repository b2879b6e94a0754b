"""Interrupt answers: the ``interrupt_answers`` table (issue 11 kind 7, claimed once).

One row per answered AG-UI interrupt of a thread (``RunAgentInput.resume[]`` entry), primary
key ``(thread_id, interrupt_id)``: the insert is the compare-and-set that lets one run, and only
one, continue from an interrupt (``docs/runs.md`` §7).

Self-contained: it only adds a table, so it chains after the newest revision present when it
was written (0003; number 0002 was reserved for it) and re-chains after any other.

Revision ID: 0002
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from gateway.store.schema import UTCDateTime

revision = "0002"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "interrupt_answers",
        sa.Column(
            "thread_id",
            sa.String(255),
            sa.ForeignKey("threads.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("interrupt_id", sa.String(255), primary_key=True),
        sa.Column("run_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("interrupt_answers")
