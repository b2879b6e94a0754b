"""The replay read: a run's stored events as ``(epoch, seq, type, JSON text)`` rows, on the
driver's own connection (issue 13: a replay of 10,000 events).

:meth:`SqlRunStore.read_wire <gateway.store.sql.SqlRunStore.read_wire>` is what every reader
replays (``docs/runs.md`` §3), so it skips what a page of rows costs in SQLAlchemy's result
layer (a ``Row`` per row, result processors, the statement's execution context): the pooled
connection is SQLAlchemy's (checked out by the store's read door, so the read queue, the pool
and ``search_path`` are the store's), the statement runs on its driver connection (aiosqlite's
``execute_fetchall``: one hop to the database thread; asyncpg's ``fetch``: its own prepared
statement cache), and the rows become :class:`~gateway.types.RunEvent` made from their JSON
(``RunEvent(cursor, None, json, type=...)``): the dict is parsed only if someone reads it
(the AI SDK encoder, the open-items fold of a control event), never for an AG-UI frame, which
is the stored text as it is (``gateway/encoding.py``).

The SQL, in each driver's parameter style: the events strictly after ``(e, s)``, as
:meth:`~gateway.store.sql.SqlRunStore.read_events` (a later epoch continuing after a dead
epoch's durable end, ``docs/runs.md`` §2), in ``seq`` order, read as a range of the primary
key ``(run_id, seq)`` (there is no other index on ``events``: each index keyed by run is one
more page per run in every group commit, :mod:`gateway.store.schema`). A run's stored seqs
increase through its epochs (a new epoch continues from the durable end, §1, §2), so along
``seq`` the epochs never decrease and "``(epoch, seq) > (e, s)``" is false up to some row
and true from it on. The range therefore starts after the last stored row at or before ``s``
of an epoch at most ``e`` (the subquery: a descending probe of the key that stops at its first
row, normally row ``s`` itself). Past that start the comparison is ``epoch >= e``: a row at or
before ``s`` there has a later epoch (or it would have been the start), and a row after ``s``
passes the comparison exactly when its epoch is at least ``e``; the filter drops nothing but
rows of older epochs after a cursor no event of the run could have had. It is written so, not
as the comparison itself, for PostgreSQL's plans made with the cursor's values (the first five
executions of a prepared statement on a connection): ``seq > s`` there looked rare in a long
run and made it read the whole rest of the run with a bitmap scan and a sort for each page (a
20,000-event replay: 390,540 rows read, 254 ms; with ``epoch >= e``, 20,040 rows, key ranges
only; ``tests/contracts/test_store_wire_read_pg_plan.py``).
A plain ``(epoch = ? AND seq > ?) OR epoch > ?`` made SQLite walk the run's rows from its
first on every page (``EXPLAIN QUERY PLAN``: a replay of 10,000 events in pages of 500 cost
19 ms of SQLite's CPU instead of 8); ``tests/gateway/test_store_wire_read.py`` checks the
plan. The payload comes as the bytes of its text, the
writer's one ``orjson.dumps`` of the event (:attr:`RunEvent.json`): no JSON result processing,
no ``str`` made and encoded again per row (SQLite: ``CAST(payload AS BLOB)``, the stored UTF-8
text as it is; PostgreSQL: ``convert_to(payload::text, 'UTF8')``, a ``bytea`` asyncpg hands
over as ``bytes``; the ``json`` type keeps its input text). The statement is timed and its
failures counted like every other (``agui_gateway_store_operation_seconds{operation="SELECT"}``,
:func:`gateway.store.engine.instrument`); a driver error is translated by the read door, and a
lost connection is invalidated so the pool does not hand it out again.

The rows become events with the cyclic garbage collector paused (:func:`_events`: a page of
4,000 rows is 8,000 tracked objects, a :class:`RunEvent` and its :class:`Cursor` each, no
cycle among them). Made with it running, each page let a dozen young collections run over the
page's own events, and the older collections they trigger moved them into the oldest
generation, whose full collections scan the whole process (``bench/resume_http.py``, SQLite:
12 full collections over 30 replays and the recording, 7 with the pause; 54 -> 41 ms of the
gateway's CPU per AG-UI replay); paused, the page is looked at once, by the first young
collection after it, and is usually freed by reference counting before an older one.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncConnection

from .. import metrics
from ..types import Cursor, RunEvent
from .sql_errors import is_disconnect

__all__ = ["fetch_wire"]

_SQLITE: Final = "SELECT epoch, seq, type, CAST(payload AS BLOB) FROM events WHERE run_id = "
_PG: Final = (
    "SELECT epoch, seq, type, convert_to(payload::text, 'UTF8') FROM events WHERE run_id = "
)
_AFTER: Final = (
    "{r} AND seq > coalesce((SELECT prior.seq FROM events AS prior WHERE prior.run_id = {r}"
    " AND prior.seq <= {s} AND prior.epoch <= {e} ORDER BY prior.seq DESC LIMIT 1), -1)"
    " AND epoch >= {e} ORDER BY seq LIMIT {n}"
)
"""The events strictly after the cursor ``(e, s)`` (see the module docstring), parameters
named by position: run id, epoch, seq, limit."""
_SQLITE_ALL: Final = _SQLITE + "? ORDER BY seq LIMIT ?"
_SQLITE_AFTER: Final = _SQLITE + _AFTER.format(r="?1", e="?2", s="?3", n="?4")
_PG_ALL: Final = _PG + "$1 ORDER BY seq LIMIT $2"
_PG_AFTER: Final = _PG + _AFTER.format(r="$1", e="$2", s="$3", n="$4")


async def fetch_wire(
    conn: AsyncConnection, run_id: str, after: Cursor | None, limit: int
) -> list[RunEvent]:
    """At most ``limit`` (>= 1) stored events of ``run_id`` strictly after ``after`` (all
    when None), in order, as :class:`RunEvent` holding their JSON text (UTF-8 bytes) and type.

    ``conn`` is a connection of the store's engine (SQLite through aiosqlite, PostgreSQL
    through asyncpg). Raises what the driver raises (the caller's door translates it into a
    :class:`~gateway.store.errors.RunStoreError`).
    """
    raw = await conn.get_raw_connection()
    driver: Any = raw.driver_connection
    sqlite = conn.dialect.name == "sqlite"
    started = time.perf_counter()
    try:
        if sqlite:
            if after is None:
                rows: Any = await driver.execute_fetchall(_SQLITE_ALL, (run_id, limit))
            else:
                params = (run_id, after.epoch, after.seq, limit)
                rows = await driver.execute_fetchall(_SQLITE_AFTER, params)
        elif after is None:
            rows = await driver.fetch(_PG_ALL, run_id, limit)
        else:
            rows = await driver.fetch(_PG_AFTER, run_id, after.epoch, after.seq, limit)
    except Exception as exc:
        metrics.STORE_ERRORS.labels("SELECT").inc()
        if is_disconnect(exc):
            await conn.invalidate(exc)
        raise
    metrics.STORE_SECONDS.labels("SELECT").observe(time.perf_counter() - started)
    return _events(rows)


def _events(rows: Any) -> list[RunEvent]:
    """``(epoch, seq, type, JSON bytes)`` rows as events, the collector paused meanwhile (see
    the module docstring; no await inside: nothing else runs on the loop meanwhile)."""
    if not gc.isenabled():
        return [RunEvent(Cursor(e, s), None, j, type=t) for e, s, t, j in rows]
    gc.disable()
    try:
        return [RunEvent(Cursor(e, s), None, j, type=t) for e, s, t, j in rows]
    finally:
        gc.enable()
