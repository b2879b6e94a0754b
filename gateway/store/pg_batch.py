"""PostgreSQL only: the conditional ``UPDATE runs`` of many appends as one statement.

A group (:mod:`gateway.store.group_commit`) of N appends ran N ``UPDATE runs`` one after the
other, each a round trip to the server; on a local PostgreSQL a round trip costs the gateway
about 0.3 ms of CPU (the loopback send) plus SQLAlchemy's per-statement work, so a group of 16
cost ~6 ms of CPU, the largest part of a durable stream's CPU (issue 13 item 1). Here the
appends without a terminal update (the hot case: one per delta batch) are one
``UPDATE runs ... FROM unnest(...) AS p(...) ... RETURNING runs.*``: one round trip per group.

The statement is :data:`gateway.store.sql_statements.APPEND_UPDATE` per row of ``p``: the same
fence (``epoch``), continuity (``last_seq`` is the batch's previous seq), active status and
the same new values, so each run's row changes exactly as its own UPDATE would change it
(``docs/runs.md`` §1, §4). A run the statement does not return wrote nothing; its own
:func:`~gateway.store.sql_writes.update_run` then runs in the same transaction, does not
match either (nothing changed that row) and raises the reason. A run that appears twice in
one batch (never, from one writer per run) is batched once; its later appends run one by one
after the batch, in order, as they would alone. Proven equal to the one-by-one path by
``tests/contracts/test_store_pg_batch.py`` (hypothesis).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.ext.asyncio import AsyncConnection

from .errors import RunNotFoundError, WriteRejectedError
from .models import ACTIVE_STATUSES, RunRecord
from .schema import runs
from .sql_statements import run_from_row
from .sql_writes import PreparedAppend, event_rows, update_run

__all__ = ["APPEND_UPDATE_MANY", "Outcome", "update_runs"]

Outcome = RunRecord | WriteRejectedError | RunNotFoundError
"""What one append of a batch got: the run as updated, or why nothing was written."""

_P = (
    sa.func.unnest(
        sa.bindparam("b_run_id", type_=pg.ARRAY(runs.c.id.type)),
        sa.bindparam("b_epoch", type_=pg.ARRAY(runs.c.epoch.type)),
        sa.bindparam("b_prev_seq", type_=pg.ARRAY(runs.c.last_seq.type)),
        sa.bindparam("b_last_seq", type_=pg.ARRAY(runs.c.last_seq.type)),
        sa.bindparam("b_bytes", type_=pg.ARRAY(runs.c.stored_bytes.type)),
    )
    .table_valued(
        sa.column("run_id", runs.c.id.type),
        sa.column("epoch", runs.c.epoch.type),
        sa.column("prev_seq", runs.c.last_seq.type),
        sa.column("last_seq", runs.c.last_seq.type),
        sa.column("bytes", runs.c.stored_bytes.type),
    )
    .render_derived("p")
)
_NOW = sa.bindparam("p_now", type_=runs.c.updated_at.type)
_ACTIVE = sa.bindparam("p_active", sorted(ACTIVE_STATUSES), type_=pg.ARRAY(runs.c.status.type))

APPEND_UPDATE_MANY = (
    sa.update(runs)
    .where(
        runs.c.id == _P.c.run_id,
        runs.c.epoch == _P.c.epoch,
        runs.c.status == sa.any_(_ACTIVE),
        runs.c.last_seq == _P.c.prev_seq,
    )
    .values(
        last_seq=_P.c.last_seq,
        last_epoch=_P.c.epoch,
        updated_at=_NOW,
        heartbeat_at=_NOW,
        status="running",
        stored_bytes=runs.c.stored_bytes + _P.c.bytes,
    )
    .returning(*runs.c)
)
"""``APPEND_UPDATE`` for every row of the arrays ``b_run_id``, ``b_epoch``, ``b_prev_seq``,
``b_last_seq``, ``b_bytes`` (one row per append; run ids distinct), at ``p_now``."""


async def update_runs(
    conn: AsyncConnection, appends: Sequence[PreparedAppend], now: datetime
) -> list[Outcome]:
    """:func:`~gateway.store.sql_writes.update_run` for every append of ``appends`` (none with
    a ``final``), in one statement; fills each accepted append's ``rows``.

    Returns one outcome per append, in order: the updated run, or the
    :class:`~gateway.store.errors.WriteRejectedError` / ``RunNotFoundError`` its own
    ``update_run`` raises (nothing of it was written). Database errors propagate.
    """
    first: dict[str, int] = {}
    later: list[int] = []
    for index, append in enumerate(appends):
        assert append.final is None, "a terminal append takes its own UPDATE"
        if append.run_id in first:
            later.append(index)
        else:
            first[append.run_id] = index
    batch = [appends[i] for i in first.values()]
    params: dict[str, Any] = {
        "b_run_id": [a.run_id for a in batch],
        "b_epoch": [a.epoch for a in batch],
        "b_prev_seq": [a.events[0].seq - 1 for a in batch],
        "b_last_seq": [a.events[-1].seq for a in batch],
        "b_bytes": [a.bytes for a in batch],
        "p_now": now,
    }
    updated = {row.id: row for row in await conn.execute(APPEND_UPDATE_MANY, params)}
    outcomes: list[Outcome | None] = [None] * len(appends)
    for run_id, index in first.items():
        row = updated.get(run_id)
        if row is not None:
            appends[index].rows = event_rows(appends[index], now)
            outcomes[index] = run_from_row(row)
        else:  # refused: its own UPDATE matches nothing either and says why
            outcomes[index] = await _alone(conn, appends[index], now)
    for index in later:
        outcomes[index] = await _alone(conn, appends[index], now)
    return [outcome for outcome in outcomes if outcome is not None]


async def _alone(conn: AsyncConnection, append: PreparedAppend, now: datetime) -> Outcome:
    try:
        return await update_run(conn, append, now)
    except (WriteRejectedError, RunNotFoundError) as exc:
        return exc
