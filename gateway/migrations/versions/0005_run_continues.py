"""AI SDK continuations on the durable path (issue 11 kind 4): ``runs.continues``.

The ``toolCallId`` of every tool part of the assistant message an AI SDK continuation run
continues (``continued_tool_call_ids`` of its chat request, a JSON list; NULL for a fresh
message): the resume and replay endpoints build the run's AI SDK encoder with it, so the
results of those earlier calls reach a resumed client as they reached the POST's. It cannot be
derived from the stored events (a result of a call the run did not start is forwarded only when
the call belongs to the continued message) nor reliably from the thread's history (a UI message
is split into AG-UI messages per step, provider-executed parts are not sent on).

Self-contained: it only adds a nullable column, so it re-chains after any other revision.
Existing runs continue nothing, as they were replayed before.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("continues", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("continues")
