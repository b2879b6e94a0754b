"""Per-replica leases (issue 13 item 5, migration 0004): one heartbeat per replica, not per run.

A replica (a gateway process, its id the runs' ``lease_owner``) refreshes one ``replicas`` row
for all its runs (:func:`replica_heartbeat_in`) and learns in the same transaction which of its
runs are still its own and which have a cancel requested (:class:`OwnedRun`); a replica that
says what it holds (:func:`replica_beat_in`) learns only what changed. A run's lease is
then alive while its own ``heartbeat_at`` (set by every append, by a per-run heartbeat and at
creation) **or** its owner replica's ``heartbeat_at`` is recent (:func:`stale_clause`); the
reaper takes over only runs for which both are older than the lease timeout
(``docs/runs.md`` §4). A run whose owner has no replica row (written before 0004, or by a
producer without a replica lease) is judged by its own heartbeat alone, as before.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .models import ACTIVE_STATUSES, OwnedRun, ReplicaBeat, ReplicaDigest
from .schema import replicas, runs

__all__ = [
    "drop_replica_in",
    "replica_beat_in",
    "replica_heartbeat_in",
    "stale_clause",
]

_ACTIVE = sorted(ACTIVE_STATUSES)


def stale_clause(stale_before: datetime) -> Any:
    """SQL condition: an active run whose lease expired (its own heartbeat and its owner
    replica's both older than ``stale_before``, or missing)."""
    fresh_replica = (
        sa.select(sa.literal(1))
        .where(replicas.c.replica_id == runs.c.lease_owner, replicas.c.heartbeat_at >= stale_before)
        .exists()
    )
    return sa.and_(
        runs.c.status.in_(_ACTIVE),
        sa.or_(runs.c.heartbeat_at < stale_before, runs.c.heartbeat_at.is_(None)),
        ~fresh_replica,
    )


_TOUCH = (
    sa.update(replicas)
    .where(replicas.c.replica_id == sa.bindparam("p_replica", type_=replicas.c.replica_id.type))
    .values(heartbeat_at=sa.bindparam("p_now", type_=replicas.c.heartbeat_at.type))
)
_OWNED = sa.select(runs.c.id, runs.c.epoch, runs.c.cancel_requested).where(
    runs.c.lease_owner == sa.bindparam("p_replica", type_=runs.c.lease_owner.type),
    runs.c.status.in_(_ACTIVE),
)


_DIGEST = sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(runs.c.epoch), 0)).where(
    runs.c.lease_owner == sa.bindparam("p_replica", type_=runs.c.lease_owner.type),
    runs.c.status.in_(_ACTIVE),
)
_CANCELLED = _OWNED.where(runs.c.cancel_requested.is_(True))


async def replica_beat_in(
    conn: AsyncConnection, replica_id: str, now: datetime, known: ReplicaDigest | None
) -> ReplicaBeat:
    """Refresh (or create) ``replica_id``'s lease row at ``now``; answer what changed.

    With ``known`` equal to the store's digest of the replica's active runs (count, sum of
    epochs: an aggregate, no row leaves the database), only the runs with a cancel requested
    are returned (``complete=False``): a beat of a replica holding 10,000 runs reads a count,
    not 10,000 rows. Otherwise (``known`` is ``None`` or differs: a run was taken over, ended
    elsewhere, or is not yet known locally) every active run is returned (``complete=True``).
    A digest that matches although the sets differ (a run gone and another come with the same
    epoch within one beat) only delays the fence to a later beat; the store fences every write
    by epoch meanwhile (``docs/runs.md`` §4).
    """
    params = {"p_replica": replica_id}
    touched = await conn.execute(_TOUCH, {**params, "p_now": now})
    if not touched.rowcount:
        await conn.execute(
            sa.insert(replicas).values(replica_id=replica_id, heartbeat_at=now, started_at=now)
        )
    query = _OWNED
    if known is not None:
        count, epochs = (await conn.execute(_DIGEST, params)).one()
        if ReplicaDigest(int(count), int(epochs)) == known:
            query = _CANCELLED
    rows = (await conn.execute(query, params)).all()
    owned = [OwnedRun(str(r.id), int(r.epoch), bool(r.cancel_requested)) for r in rows]
    return ReplicaBeat(owned, complete=query is _OWNED)


async def replica_heartbeat_in(
    conn: AsyncConnection, replica_id: str, now: datetime
) -> list[OwnedRun]:
    """Refresh (or create) ``replica_id``'s lease row at ``now`` and return its active runs."""
    return (await replica_beat_in(conn, replica_id, now, None)).runs


async def drop_replica_in(conn: AsyncConnection, replica_id: str) -> None:
    """Remove ``replica_id``'s lease row (a clean shutdown): its runs left active, if any,
    are then judged by their own heartbeat."""
    await conn.execute(sa.delete(replicas).where(replicas.c.replica_id == replica_id))
