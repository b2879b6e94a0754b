"""The batched run-row reads of the idle re-check (issue 13 item 5): whole rows
(:meth:`SqlRunStore.get_runs`) and the light marks (:meth:`SqlRunStore.get_run_marks`).

Both read the given ids in ``IN (...)`` lists of :data:`GET_RUNS_CHUNK` ids on one connection;
the marks select four columns (id, status, last epoch and seq) instead of the row's twenty-one,
and skip building a :class:`~gateway.store.models.RunRecord` (times, JSON columns) for each:
what the re-checker compares (:mod:`gateway.runs.recheck`), read for every idle stream of the
process every ``reader_idle_recheck`` seconds. Same SQL for SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .models import RunMark, RunRecord
from .schema import runs
from .sql_statements import GET_RUNS, run_from_row

__all__ = ["GET_RUNS_CHUNK", "GET_RUN_MARKS", "fetch_marks", "fetch_runs"]

GET_RUNS_CHUNK = 500
"""Run ids per ``IN (...)`` list (well under SQLite's 32,766 and PostgreSQL's 32,767 bound
parameters per statement)."""

GET_RUN_MARKS = sa.select(runs.c.id, runs.c.status, runs.c.last_epoch, runs.c.last_seq).where(
    runs.c.id.in_(sa.bindparam("p_run_ids", expanding=True))
)
"""The marks of the ids in ``p_run_ids`` (prebuilt: its cache key is computed once)."""


def _chunks(run_ids: Collection[str]) -> list[list[str]]:
    ids = list(dict.fromkeys(run_ids))  # repeated ids once, in order
    return [ids[start : start + GET_RUNS_CHUNK] for start in range(0, len(ids), GET_RUNS_CHUNK)]


async def fetch_runs(conn: AsyncConnection, run_ids: Collection[str]) -> dict[str, RunRecord]:
    """``{run id: record}`` of the known ``run_ids`` (unknown ids left out)."""
    found: dict[str, RunRecord] = {}
    for chunk in _chunks(run_ids):
        for row in (await conn.execute(GET_RUNS, {"p_run_ids": chunk})).all():
            record = run_from_row(row)
            found[record.id] = record
    return found


async def fetch_marks(conn: AsyncConnection, run_ids: Collection[str]) -> dict[str, RunMark]:
    """``{run id: mark}`` of the known ``run_ids`` (unknown ids left out): the same status and
    durable end as :func:`fetch_runs`' records."""
    found: dict[str, RunMark] = {}
    for chunk in _chunks(run_ids):
        rows: Any = (await conn.execute(GET_RUN_MARKS, {"p_run_ids": chunk})).all()
        for run_id, status, last_epoch, last_seq in rows:
            found[run_id] = RunMark(run_id, status, int(last_epoch), int(last_seq))
    return found
