"""Retention of the SQL run store (:meth:`SqlRunStore.purge`, split out of
:mod:`gateway.store.sql`): ended runs with their events, then idle threads with their history,
then replicas gone for the whole retention period. Same SQL for SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .models import TERMINAL_STATUSES, PurgeResult
from .schema import events as events_t
from .schema import (
    interrupt_answers,
    message_aliases,
    messages,
    replicas,
    runs,
    threads,
    upstream_ids,
)

__all__ = ["purge_in"]


async def purge_in(conn: AsyncConnection, before: datetime) -> PurgeResult:
    """Delete, in ``conn``'s transaction, the runs that ended before ``before`` with their
    events, then the threads with no run left and no activity since ``before`` with their
    history, aliases, answers and kept upstream ids; returns the counts deleted."""
    ended = sa.select(runs.c.id).where(
        runs.c.status.in_(TERMINAL_STATUSES), runs.c.finished_at < before
    )
    n_events = (
        await conn.execute(sa.delete(events_t).where(events_t.c.run_id.in_(ended)))
    ).rowcount
    n_runs = (await conn.execute(sa.delete(runs).where(runs.c.id.in_(ended)))).rowcount
    idle = sa.select(threads.c.id).where(
        threads.c.updated_at < before,
        ~sa.exists().where(runs.c.thread_id == threads.c.id),
    )
    await conn.execute(sa.delete(message_aliases).where(message_aliases.c.thread_id.in_(idle)))
    await conn.execute(sa.delete(interrupt_answers).where(interrupt_answers.c.thread_id.in_(idle)))
    await conn.execute(sa.delete(upstream_ids).where(upstream_ids.c.thread_id.in_(idle)))
    n_messages = (
        await conn.execute(sa.delete(messages).where(messages.c.thread_id.in_(idle)))
    ).rowcount
    n_threads = (await conn.execute(sa.delete(threads).where(threads.c.id.in_(idle)))).rowcount
    # replicas gone for the whole retention period (their runs fall back on their own
    # heartbeat, long expired too)
    await conn.execute(sa.delete(replicas).where(replicas.c.heartbeat_at < before))
    return PurgeResult(
        runs=max(n_runs, 0),
        events=max(n_events, 0),
        threads=max(n_threads, 0),
        messages=max(n_messages, 0),
    )
