"""Initial schema: threads, runs, events, messages, message_aliases.

Revision ID: 0001
Revises:
Create Date: 2026-05-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from gateway.store.schema import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "threads",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("next_position", sa.BigInteger, nullable=False, server_default="1"),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column(
            "thread_id",
            sa.String(255),
            sa.ForeignKey("threads.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("route", sa.String(255)),
        sa.Column("upstream", sa.String(255)),
        sa.Column("model", sa.String(255)),
        sa.Column("message_id", sa.String(255)),
        sa.Column("usage", sa.JSON),
        sa.Column("error", sa.JSON),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("last_seq", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("last_epoch", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lease_owner", sa.String(255)),
        sa.Column("heartbeat_at", UTCDateTime),
        sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
    )
    op.create_index("ix_runs_thread_created", "runs", ["thread_id", "created_at"])
    op.create_index("ix_runs_status_heartbeat", "runs", ["status", "heartbeat_at"])
    op.create_table(
        "events",
        sa.Column(
            "run_id",
            sa.String(255),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("durable", sa.Boolean, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_events_run_epoch_seq", "events", ["run_id", "epoch", "seq"])
    op.create_table(
        "messages",
        sa.Column(
            "thread_id",
            sa.String(255),
            sa.ForeignKey("threads.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("message_id", sa.String(255), primary_key=True),
        sa.Column("position", sa.BigInteger, nullable=False),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("run_id", sa.String(255)),
        sa.Column("visibility", sa.Integer, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("thread_id", "position", name="uq_messages_thread_position"),
    )
    op.create_table(
        "message_aliases",
        sa.Column(
            "thread_id",
            sa.String(255),
            sa.ForeignKey("threads.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("alias", sa.String(255), primary_key=True),
        sa.Column("message_id", sa.String(255), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("message_aliases")
    op.drop_table("messages")
    op.drop_index("ix_events_run_epoch_seq", table_name="events")
    op.drop_table("events")
    op.drop_index("ix_runs_status_heartbeat", table_name="runs")
    op.drop_index("ix_runs_thread_created", table_name="runs")
    op.drop_table("runs")
    op.drop_table("threads")
