"""Per-replica leases (issue 13 item 5): the ``replicas`` table and an index on
``runs (lease_owner, status)``.

A replica heartbeats its own row once for all its runs instead of one UPDATE per run; a run is
stale when its own ``heartbeat_at`` and its owner replica's are both older than the lease
timeout (``docs/runs.md`` §4). Self-contained: it only adds a table and an index, so it
chains after 0002 (interrupt answers), the newest revision when the two were merged. Existing
runs have no replica row: their own heartbeat decides, as before.

Revision ID: 0004
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from gateway.store.schema import UTCDateTime

revision = "0004"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "replicas",
        sa.Column("replica_id", sa.String(255), primary_key=True),
        sa.Column("heartbeat_at", UTCDateTime, nullable=False),
        sa.Column("started_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_runs_owner_status", "runs", ["lease_owner", "status"])


def downgrade() -> None:
    op.drop_index("ix_runs_owner_status", table_name="runs")
    op.drop_table("replicas")
