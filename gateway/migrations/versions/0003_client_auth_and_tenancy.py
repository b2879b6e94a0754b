"""Client auth and tenancy: the ``api_keys`` table; ``runs.tenant`` and ``runs.stored_bytes``
(per-tenant quotas) with an index on ``(tenant, status)``.

Self-contained: it only adds a table, two columns and an index, so it re-chains after any
other revision (the lead re-chains parallel revisions at merge). Existing runs get no tenant
and 0 stored bytes.

Revision ID: 0003
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from gateway.store.schema import UTCDateTime

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("secret_sha256", sa.String(64), nullable=False),
        sa.Column("routes", sa.JSON),
        sa.Column("name", sa.String(255)),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime),
        sa.Column("revoked_at", UTCDateTime),
    )
    op.create_index("ix_api_keys_tenant", "api_keys", ["tenant"])
    op.add_column("runs", sa.Column("tenant", sa.String(64)))
    op.add_column(
        "runs", sa.Column("stored_bytes", sa.BigInteger, nullable=False, server_default="0")
    )
    op.create_index("ix_runs_tenant_status", "runs", ["tenant", "status"])


def downgrade() -> None:
    op.drop_index("ix_runs_tenant_status", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("stored_bytes")
        batch.drop_column("tenant")
    op.drop_index("ix_api_keys_tenant", table_name="api_keys")
    op.drop_table("api_keys")
