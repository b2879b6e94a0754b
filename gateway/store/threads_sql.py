"""The SQL side of listing a tenant's threads (the run inspector's thread list, issue 16 §6).

Used by :meth:`gateway.store.sql.SqlRunStore.list_threads`. A thread is listed by its runs:
one row per thread key with its number of runs and the start of its newest one, newest first.
The tenant is the runs' own ``tenant`` column (None: the runs recorded without tenancy), so a
tenant lists only threads it ran something on; ``routes`` (a key's allowlist) keeps only runs
of those routes.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .models import ThreadSummary
from .schema import runs

__all__ = ["thread_summaries"]


async def thread_summaries(
    conn: AsyncConnection,
    *,
    tenant: str | None,
    routes: Collection[str] | None,
    limit: int,
) -> list[ThreadSummary]:
    """Up to ``limit`` thread summaries of ``tenant``, the most recently run first."""
    last = sa.func.max(runs.c.created_at).label("last_run_at")
    query = sa.select(runs.c.thread_id, sa.func.count().label("run_count"), last)
    query = query.where(runs.c.tenant.is_(None) if tenant is None else runs.c.tenant == tenant)
    if routes is not None:
        query = query.where(runs.c.route.in_(sorted(routes)))
    query = query.group_by(runs.c.thread_id).order_by(last.desc(), runs.c.thread_id).limit(limit)
    rows = (await conn.execute(query)).all()
    return [
        ThreadSummary(thread_id=row.thread_id, runs=int(row.run_count), last_run_at=row.last_run_at)
        for row in rows
    ]
