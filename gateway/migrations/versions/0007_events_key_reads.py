"""Drop the ``events`` index ``(run_id, epoch, seq)``: reads after a cursor use the primary key.

Issue 13 ("durability must be nearly free"): a group commit appends the events of many runs,
and every index keyed by run puts one more B-tree page per run into the transaction, so one
more WAL frame per run on SQLite (4 KiB written and checksummed for a ~200-byte row). With 16
runs of two deltas each in a group, the primary key's index and this one made ~40 frames per
commit; without this one, ~23, and the group's SQLite CPU fell by about 40 % (statements and
``COMMIT``; README "Performance"). The index served one query shape, the rows after a cursor
``(epoch, seq) > (e, s)``; a run's seqs increase through its epochs (``docs/runs.md`` §1, §2),
so that is a range of the primary key ``(run_id, seq)`` (:mod:`gateway.store.wire_read`).

Rolling upgrades: a replica of the previous release still reads after a cursor with the tuple
comparison, which without this index is a scan of ``events`` on PostgreSQL for each page; such
a replica reports not ready once the database is at 0007 (``/readyz``), and should be replaced
soon after (README, Deployment).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-07
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_events_run_epoch_seq", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_run_epoch_seq", "events", ["run_id", "epoch", "seq"])
