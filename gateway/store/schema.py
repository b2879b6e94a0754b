"""SQL schema of the run store (SQLAlchemy Core tables), shared by SQLite and PostgreSQL.

The migrations in :mod:`gateway.migrations` create exactly these tables; a contract test
compares the migrated database with this metadata. Tables:

* ``threads``: one row per AG-UI threadId; ``next_position`` allocates message positions.
* ``runs``: one row per run: status, what served it, usage/error, the durable end
  (``last_epoch``/``last_seq``), the lease (``epoch``, ``lease_owner``, ``heartbeat_at``) and a
  cross-replica cancel flag.
* ``events``: the run's AG-UI events; primary key ``(run_id, seq)`` (the per-run sequence is
  unique), ``epoch`` of the producer that wrote it, ``type``, ``payload`` (wire dict, stored as
  ``json`` not ``jsonb`` so key order survives), ``durable`` (written before being published).
  No other index (migration 0007 dropped ``(run_id, epoch, seq)``): every index keyed by run
  puts one more page per run into each group commit's WAL frames, and the reads after a cursor
  are ranges of the key (:mod:`gateway.store.wire_read`).
* ``messages``: history items of a thread, ``position`` = the history ``sequence``.
* ``message_aliases``: every AG-UI message id a history item covers (text, reasoning and tool
  result ids), so messages a client echoes back in a later RunAgentInput are not recorded
  twice.
* ``api_keys`` (migration 0003): client API keys, the SHA-256 of the secret only, their tenant,
  route allowlist, expiry and revocation time.
* ``interrupt_answers`` (migration 0002): one row per answered interrupt of a thread (its
  ``RunAgentInput.resume[]`` entry), primary key ``(thread_id, interrupt_id)``, the run that
  carries the answer and the entry's ``status``; inserting it is the claim (claimed once).
* ``upstream_ids`` (migration 0006): ids an upstream chose that the store refuses, per thread
  (``gateway_id`` = the ``up-<32 hex>`` the client saw, ``original`` = the provider's id as an
  ASCII JSON string literal), so the next request sends each provider its own id back
  (:mod:`gateway.store.upstream_ids_sql`).
* ``replicas`` (migration 0004): one lease row per gateway replica (``replica_id``, the runs'
  ``lease_owner``; ``heartbeat_at``): a replica heartbeats once for all its runs (issue 13
  item 5), and a run is stale when neither it nor its owner replica heartbeat recently.

Thread and run ids are store keys scoped by tenant and thread (:mod:`gateway.tenancy`); a run's
``tenant`` (None without tenancy) and ``stored_bytes`` (its events and the history items it
added, as stored JSON) serve the per-tenant quotas (migration 0003).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator

__all__ = [
    "UTCDateTime",
    "api_keys",
    "events",
    "interrupt_answers",
    "message_aliases",
    "messages",
    "metadata",
    "replicas",
    "runs",
    "threads",
    "upstream_ids",
]


class UTCDateTime(TypeDecorator[Any]):
    """``DateTime(timezone=True)`` that always hands back aware UTC datetimes.

    SQLite stores datetimes as naive ISO text; values are converted to UTC before being
    written and marked UTC when read, so comparisons work the same on both dialects.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
            if dialect.name == "sqlite":
                value = value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


metadata = sa.MetaData()

threads = sa.Table(
    "threads",
    metadata,
    sa.Column("id", sa.String(255), primary_key=True),
    sa.Column("next_position", sa.BigInteger, nullable=False, server_default="1"),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

runs = sa.Table(
    "runs",
    metadata,
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
    sa.Column("tenant", sa.String(64)),
    sa.Column("stored_bytes", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("continues", sa.JSON),  # 0005: tool call ids an AI SDK continuation continues
    sa.Index("ix_runs_thread_created", "thread_id", "created_at"),
    sa.Index("ix_runs_status_heartbeat", "status", "heartbeat_at"),
    sa.Index("ix_runs_tenant_status", "tenant", "status"),
    sa.Index("ix_runs_owner_status", "lease_owner", "status"),
)

events = sa.Table(
    "events",
    metadata,
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

messages = sa.Table(
    "messages",
    metadata,
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

message_aliases = sa.Table(
    "message_aliases",
    metadata,
    sa.Column(
        "thread_id",
        sa.String(255),
        sa.ForeignKey("threads.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("alias", sa.String(255), primary_key=True),
    sa.Column("message_id", sa.String(255), nullable=False),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("tenant", sa.String(64), nullable=False),
    sa.Column("secret_sha256", sa.String(64), nullable=False),
    sa.Column("routes", sa.JSON),
    sa.Column("name", sa.String(255)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("expires_at", UTCDateTime),
    sa.Column("revoked_at", UTCDateTime),
    sa.Index("ix_api_keys_tenant", "tenant"),
)

interrupt_answers = sa.Table(
    "interrupt_answers",
    metadata,
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

upstream_ids = sa.Table(
    "upstream_ids",
    metadata,
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

replicas = sa.Table(
    "replicas",
    metadata,
    sa.Column("replica_id", sa.String(255), primary_key=True),
    sa.Column("heartbeat_at", UTCDateTime, nullable=False),
    sa.Column("started_at", UTCDateTime, nullable=False),
)
