"""Row mapping and the prebuilt statements of the SQL run store's hot paths.

Shared by :mod:`gateway.store.sql` (reads, rare writes) and :mod:`gateway.store.sql_writes`
(appends and heartbeats, also run inside a group transaction by
:mod:`gateway.store.group_commit`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa

from .models import ACTIVE_STATUSES, RunRecord
from .schema import events as events_t
from .schema import runs, threads

__all__ = [
    "APPEND_FINAL",
    "APPEND_UPDATE",
    "CREATE_RUN",
    "GET_RUN",
    "GET_RUNS",
    "HEARTBEAT",
    "INSERT_EVENTS",
    "TOUCH_THREAD",
    "is_active",
    "json_size",
    "padded_count",
    "run_from_row",
]


def padded_count(count: int, most: int) -> int:
    """The number of value rows a statement built per row count takes for ``count`` rows
    (``1 <= count <= most``): the next power of two, at most ``most``; the rows past
    ``count`` are padding whose key is NULL, which matches no row.

    The batched statements (``UPDATE ... FROM (SELECT :i0 ... UNION ALL ...)``:
    :func:`gateway.store.sql_writes.update_runs`, the thread locks of
    :func:`gateway.store.history_sql.add_own_items`) are built and compiled once per row
    count: compiling one costs 1-9 ms of Python (SQLAlchemy's compiler, on the database
    thread, holding the GIL), and a new group size used to compile a new statement, up to
    ``most`` of them per kind, each a stall of the event loop while a replica warms up
    (issue 13). Padded, at most ``log2(most) + 1`` statements per kind exist.
    """
    return min(1 << (count - 1).bit_length(), most)


def run_from_row(row: Any) -> RunRecord:
    m = row._mapping
    return RunRecord(
        id=m["id"],
        thread_id=m["thread_id"],
        status=m["status"],
        route=m["route"],
        upstream=m["upstream"],
        model=m["model"],
        message_id=m["message_id"],
        usage=m["usage"],
        error=m["error"],
        epoch=int(m["epoch"]),
        last_seq=int(m["last_seq"]),
        last_epoch=int(m["last_epoch"]),
        lease_owner=m["lease_owner"],
        heartbeat_at=m["heartbeat_at"],
        cancel_requested=bool(m["cancel_requested"]),
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        finished_at=m["finished_at"],
        tenant=m["tenant"],
        stored_bytes=int(m["stored_bytes"] or 0),
        continues=tuple(str(t) for t in m["continues"] or ()),
    )


def json_size(values: Sequence[Any]) -> int:
    """Bytes of ``values`` as stored JSON (what counts against a tenant's storage quota)."""
    return sum(len(orjson.dumps(value)) for value in values)


# -- prebuilt statements of the hot paths ---------------------------------------------------
# Built once with bound parameters: SQLAlchemy memoizes a statement object's cache key, so a
# reused statement skips building the expression and its cache key on every call (~0.15 ms
# per UPDATE on a small machine); the SQL sent is the same.

_ACTIVE = sorted(ACTIVE_STATUSES)


def is_active() -> sa.ColumnElement[bool]:
    """``runs.status IN ('queued', 'running')`` (:data:`~gateway.store.models.ACTIVE_STATUSES`)
    with the statuses inline: ``status.in_(list)`` is an expanding parameter, whose SQL
    SQLAlchemy renders again on every execution (~0.05 ms of CPU per statement on a small
    machine); the rows it matches are the same."""
    assert all(status.isalpha() for status in _ACTIVE)  # safe to inline
    return runs.c.status.in_([sa.literal_column(f"'{s}'", runs.c.status.type) for s in _ACTIVE])


def _param(name: str, column: sa.Column[Any]) -> sa.BindParameter[Any]:
    return sa.bindparam(name, type_=column.type)


def _append_update(*, final: bool) -> Any:
    values: dict[str, Any] = {
        "last_seq": _param("p_last_seq", runs.c.last_seq),
        "last_epoch": _param("p_epoch", runs.c.last_epoch),
        "updated_at": _param("p_now", runs.c.updated_at),
        "heartbeat_at": _param("p_now", runs.c.heartbeat_at),
        "status": _param("p_status", runs.c.status),
        "stored_bytes": runs.c.stored_bytes + _param("p_bytes", runs.c.stored_bytes),
    }
    if final:
        values.update(
            usage=_param("p_usage", runs.c.usage),
            error=_param("p_error", runs.c.error),
            finished_at=_param("p_now", runs.c.finished_at),
            cancel_requested=sa.false(),
            model=sa.func.coalesce(_param("p_model", runs.c.model), runs.c.model),
        )
    return (
        sa.update(runs)
        .where(
            runs.c.id == _param("p_run_id", runs.c.id),
            runs.c.epoch == _param("p_epoch", runs.c.epoch),
            is_active(),
            runs.c.last_seq == _param("p_prev_seq", runs.c.last_seq),
        )
        .values(**values)
        .returning(*runs.c)
    )


CREATE_RUN = sa.insert(runs).returning(*runs.c)
APPEND_UPDATE = _append_update(final=False)
APPEND_FINAL = _append_update(final=True)
INSERT_EVENTS = sa.insert(events_t)
TOUCH_THREAD = (
    sa.update(threads)
    .where(threads.c.id == _param("p_thread_id", threads.c.id))
    .values(updated_at=_param("p_now", threads.c.updated_at))
)
GET_RUNS = sa.select(runs).where(runs.c.id.in_(sa.bindparam("p_run_ids", expanding=True)))
GET_RUN = sa.select(runs).where(runs.c.id == _param("p_run_id", runs.c.id))
"""One run by id: :data:`GET_RUNS` without its expanding ``IN`` parameter, whose SQL is
rendered again on every execution (``construct_expanded_state``: about half of a point read's
CPU on the loop's thread, :mod:`gateway.store.sqlite_loop_read`)."""
HEARTBEAT = (
    sa.update(runs)
    .where(
        runs.c.id == _param("p_run_id", runs.c.id),
        runs.c.epoch == _param("p_epoch", runs.c.epoch),
        is_active(),
    )
    .values(heartbeat_at=_param("p_now", runs.c.heartbeat_at))
    .returning(runs.c.cancel_requested)
)
