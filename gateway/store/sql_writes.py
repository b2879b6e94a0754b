"""The run store's hot writes (appends, heartbeats) as steps on an open transaction.

:meth:`gateway.store.sql.SqlRunStore.append_events` and ``heartbeat`` run them through the
store's :class:`~gateway.store.group_commit.GroupCommitter`, which runs the steps of many runs
in one transaction (``docs/runs.md`` §2, issue 13 item 1). Each append is split so a group can
share the expensive part:

1. :func:`prepare_append` (no I/O): checks the batch, builds the parameters and event rows;
2. :func:`update_run`: the conditional ``UPDATE runs`` that fences the epoch and checks seq
   continuity (``docs/runs.md`` §1, §4); when it matches no row nothing was written and the
   reason is raised (:class:`~gateway.store.errors.WriteRejectedError` subclasses), so one
   run's rejection never spoils the others of its group. :func:`update_runs` is the same
   conditional update for the non-terminal appends of several runs in **one** statement
   (``UPDATE runs ... FROM (SELECT ... UNION ALL ...) AS v``: each run's row matches only on
   its own epoch and previous seq), so a group of flushes costs one UPDATE, not one per run
   (issue 13: on SQLite every statement is a round trip to the driver's thread), and the
   same for a group's terminal appends (their status, usage, error and model in ``v`` too);
3. :func:`insert_events`: the event rows, of one run or of a whole group (one multi-row
   ``INSERT``: SQLAlchemy's "insertmanyvalues" on both SQLite and asyncpg);
4. :func:`finish_run`: with a terminal update, the run's history item (or the thread's
   ``updated_at``); :func:`finish_runs` for a group's terminal updates, the single items of
   runs of distinct threads batched (three statements for all of them).
"""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .errors import (
    RunClosedError,
    RunNotFoundError,
    SequenceError,
    StaleEpochError,
    WriteRejectedError,
)
from .history_sql import add_items, add_own_items
from .models import TERMINAL_STATUSES, LeaseState, NewEvent, RunFinal, RunRecord
from .schema import events as events_t
from .schema import runs
from .sql_statements import (
    APPEND_FINAL,
    APPEND_UPDATE,
    HEARTBEAT,
    INSERT_EVENTS,
    TOUCH_THREAD,
    is_active,
    json_size,
    padded_count,
    run_from_row,
)

__all__ = [
    "PreparedAppend",
    "append_in",
    "event_rows",
    "finish_run",
    "finish_runs",
    "heartbeat_in",
    "insert_events",
    "prepare_append",
    "sqlite_event_rows",
    "update_run",
    "update_runs",
]


@dataclass(slots=True)
class PreparedAppend:
    """One run's batch, checked and turned into parameters (see :func:`prepare_append`).

    Attributes:
        run_id, epoch, events, final: the arguments of ``append_events``.
        bytes: JSON size of the events and of ``final.messages`` (``stored_bytes``).
        rows: the ``events`` rows, filled by :func:`update_run` with its ``now``.
    """

    run_id: str
    epoch: int
    events: Sequence[NewEvent]
    final: RunFinal | None
    bytes: int
    rows: list[dict[str, Any]] = field(default_factory=list)


def prepare_append(
    run_id: str, epoch: int, events: Sequence[NewEvent], final: RunFinal | None
) -> PreparedAppend:
    """Check a batch before it is queued or written.

    Raises:
        ValueError: no events, or a ``final`` status that is not terminal.
        SequenceError: the batch's seqs are not contiguous.
    """
    if not events:
        raise ValueError("append_events needs at least one event")
    first = events[0].seq
    for offset, new in enumerate(events):
        if new.seq != first + offset:
            raise SequenceError(f"batch seqs are not contiguous at seq {new.seq}")
    if final is not None and final.status not in TERMINAL_STATUSES:
        raise ValueError(f"final status must be terminal, not {final.status!r}")
    size = sum(len(new.json) if new.json is not None else json_size((new.event,)) for new in events)
    if final is not None:
        size += json_size(final.messages)
    return PreparedAppend(run_id, epoch, events, final, size)


async def update_run(conn: AsyncConnection, append: PreparedAppend, now: datetime) -> RunRecord:
    """The conditional ``UPDATE runs`` of an append (fence, continuity, heartbeat, status);
    fills ``append.rows``. Returns the updated run.

    Raises:
        RunNotFoundError, StaleEpochError, RunClosedError, SequenceError: nothing matched
            (nothing was written).
    """
    events = append.events
    first = events[0].seq
    final = append.final
    params: dict[str, Any] = {
        "p_run_id": append.run_id,
        "p_epoch": append.epoch,
        "p_prev_seq": first - 1,
        "p_last_seq": events[-1].seq,
        "p_now": now,
        "p_status": "running",
        "p_bytes": append.bytes,
    }
    if final is not None:
        params.update(
            p_status=final.status, p_usage=final.usage, p_error=final.error, p_model=final.model
        )
    statement = APPEND_FINAL if final is not None else APPEND_UPDATE
    row = (await conn.execute(statement, params)).first()
    if row is None:
        await _reject(conn, append.run_id, append.epoch, first)
    append.rows = event_rows(append, now)
    return run_from_row(row)


BATCH_UPDATE_MAX = 64
"""Most runs in one :func:`update_runs` statement (5 parameters each, 9 terminal: SQLite
allows 32,766 since 3.32, PostgreSQL 32,767); a bigger group takes several."""

_SQLITE_UPDATE_FROM = sqlite3.sqlite_version_info >= (3, 35)
"""SQLite runs ``UPDATE ... FROM`` (3.33) with ``RETURNING`` (3.35); older: one per run."""

_PADDING = ("i", "e", "p", "l", "b")
_PADDING_FINAL = (*_PADDING, "s", "u", "x", "m")
"""The parameters of one :func:`update_runs` value row (non-terminal, terminal)."""

_BATCH_UPDATES: dict[tuple[int, bool], Any] = {}
""":func:`update_runs` statements by number of value rows (:func:`padded_count` of the runs)
and terminal or not, built once each (cache key memoized)."""


def _batch_update(count: int, final: bool = False) -> Any:
    statement = _BATCH_UPDATES.get((count, final))
    if statement is None:
        # the runs' parameters as ``(SELECT :i0 AS v_id, ... UNION ALL SELECT ...) AS v``: an
        # ``UPDATE`` first (Python's sqlite3 opens its implicit transaction only before a
        # statement starting with INSERT / UPDATE / DELETE / REPLACE, never ``WITH``), and no
        # ``AS v (columns)`` alias list (which SQLite does not parse)
        seq = runs.c.last_seq.type
        v = sa.union_all(
            *(
                sa.select(
                    sa.bindparam(f"i{k}", type_=runs.c.id.type).label("v_id"),
                    sa.bindparam(f"e{k}", type_=runs.c.epoch.type).label("v_epoch"),
                    sa.bindparam(f"p{k}", type_=seq).label("v_prev"),
                    sa.bindparam(f"l{k}", type_=seq).label("v_last"),
                    sa.bindparam(f"b{k}", type_=runs.c.stored_bytes.type).label("v_bytes"),
                    *(
                        (
                            sa.bindparam(f"s{k}", type_=runs.c.status.type).label("v_status"),
                            sa.bindparam(f"u{k}", type_=runs.c.usage.type).label("v_usage"),
                            sa.bindparam(f"x{k}", type_=runs.c.error.type).label("v_error"),
                            sa.bindparam(f"m{k}", type_=runs.c.model.type).label("v_model"),
                        )
                        if final
                        else ()
                    ),
                )
                for k in range(count)
            )
        ).subquery("v")
        now = sa.bindparam("p_now", type_=runs.c.updated_at.type)
        values: dict[str, Any] = {"status": "running"}
        if final:  # as APPEND_FINAL's
            values = {
                "status": v.c.v_status,
                "usage": v.c.v_usage,
                "error": v.c.v_error,
                "finished_at": now,
                "cancel_requested": sa.false(),
                "model": sa.func.coalesce(v.c.v_model, runs.c.model),
            }
        statement = _BATCH_UPDATES[count, final] = (
            sa.update(runs)
            .where(
                runs.c.id == v.c.v_id,
                runs.c.epoch == v.c.v_epoch,
                is_active(),
                runs.c.last_seq == v.c.v_prev,
            )
            .values(
                last_seq=v.c.v_last,
                last_epoch=v.c.v_epoch,
                updated_at=now,
                heartbeat_at=now,
                stored_bytes=runs.c.stored_bytes + v.c.v_bytes,
                **values,
            )
            .returning(*runs.c)
        )
    return statement


def batches_updates(conn: AsyncConnection) -> bool:
    """Whether :func:`update_runs` can run on ``conn``'s database (PostgreSQL; SQLite 3.35+)."""
    name = conn.dialect.name
    return name == "postgresql" or (name == "sqlite" and _SQLITE_UPDATE_FROM)


async def update_runs(
    conn: AsyncConnection, appends: Sequence[PreparedAppend], now: datetime
) -> list[RunRecord | WriteRejectedError | RunNotFoundError]:
    """:func:`update_run` for appends of distinct runs, all non-terminal or all terminal, in
    one statement per :data:`BATCH_UPDATE_MAX` runs: for each append (in order) the updated
    run (its ``rows`` filled), or the error :func:`update_run` would have raised (that run
    wrote nothing; the others are not affected).

    Raises:
        ValueError: terminal and non-terminal appends mixed, or a run twice.
    """
    final = bool(appends) and appends[0].final is not None
    if len({a.run_id for a in appends}) != len(appends) or any(
        (a.final is not None) != final for a in appends
    ):
        raise ValueError("update_runs takes appends of distinct runs, all terminal or none")
    updated: dict[str, Any] = {}
    for start in range(0, len(appends), BATCH_UPDATE_MAX):
        chunk = appends[start : start + BATCH_UPDATE_MAX]
        params: dict[str, Any] = {"p_now": now}
        for k, append in enumerate(chunk):
            first = append.events[0].seq
            params[f"i{k}"] = append.run_id
            params[f"e{k}"] = append.epoch
            params[f"p{k}"] = first - 1
            params[f"l{k}"] = append.events[-1].seq
            params[f"b{k}"] = append.bytes
            if append.final is not None:
                params[f"s{k}"] = append.final.status
                params[f"u{k}"] = append.final.usage
                params[f"x{k}"] = append.final.error
                params[f"m{k}"] = append.final.model
        size = padded_count(len(chunk), BATCH_UPDATE_MAX)
        for k in range(len(chunk), size):  # padding rows: a NULL id updates no run
            for name in _PADDING_FINAL if final else _PADDING:
                params[f"{name}{k}"] = None
        statement = _batch_update(size, final)
        for returned in (await conn.execute(statement, params)).all():
            updated[returned._mapping["id"]] = returned
    out: list[RunRecord | WriteRejectedError | RunNotFoundError] = []
    for append in appends:
        row = updated.get(append.run_id)
        if row is None:
            try:
                await _reject(conn, append.run_id, append.epoch, append.events[0].seq)
            except (WriteRejectedError, RunNotFoundError) as exc:
                out.append(exc)
            continue
        append.rows = event_rows(append, now)
        out.append(run_from_row(row))
    return out


def event_rows(append: PreparedAppend, now: datetime) -> list[dict[str, Any]]:
    """The ``events`` rows of ``append``, created at ``now``."""
    return [
        {
            "run_id": append.run_id,
            "seq": new.seq,
            "epoch": append.epoch,
            "type": str(new.event.get("type", "")),
            # The writer's one serialization of the event, inserted as is: the store's JSON
            # serializer is orjson (gateway/store/engine.py), which copies a Fragment verbatim.
            "payload": new.event if new.json is None else orjson.Fragment(new.json),
            "durable": new.durable,
            "created_at": now,
        }
        for new in append.events
    ]


async def insert_events(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    """Insert event rows (one multi-row statement).

    On SQLite the rows go to the driver as tuples of its own values (:func:`sqlite_event_rows`,
    one ``executemany`` of ``INSERT_EVENTS`` compiled once): SQLAlchemy's per-row
    parameter building and bind processing cost ~5 µs of the event loop's thread per event
    (issue 13: per-event cost of a durable run); PostgreSQL keeps the statement as is.

    Raises:
        sqlalchemy.exc.IntegrityError: a seq is already stored (the transaction is then lost).
    """
    if not rows:
        return
    if conn.dialect.name == "sqlite":
        text, _processors = _sqlite_insert(conn.dialect)
        await conn.exec_driver_sql(text, sqlite_event_rows(conn.dialect, rows))
    else:
        await conn.execute(INSERT_EVENTS, rows)


_SQLITE_INSERT: weakref.WeakKeyDictionary[sa.Dialect, tuple[str, list[Any]]] = (
    weakref.WeakKeyDictionary()
)


def _sqlite_insert(dialect: sa.Dialect) -> tuple[str, list[Any]]:
    """:data:`INSERT_EVENTS` compiled for ``dialect`` and the bind processors of its
    positional parameters (each None or a callable), once per dialect.

    Raises:
        RuntimeError: the compiled statement's parameters are not the ``events`` columns.
    """
    found = _SQLITE_INSERT.get(dialect)
    if found is None:
        compiled = INSERT_EVENTS.compile(dialect=dialect)
        names = list(compiled.positiontup or ())
        if names != [column.name for column in events_t.columns]:
            raise RuntimeError(f"unexpected INSERT_EVENTS parameters {names}")
        types = [events_t.c[name].type.dialect_impl(dialect) for name in names]
        processors = [type_.bind_processor(dialect) for type_ in types]
        found = _SQLITE_INSERT[dialect] = (compiled.string, processors)
    return found


def sqlite_event_rows(dialect: sa.Dialect, rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """``rows`` (:func:`event_rows`' dicts) as the SQLite driver's parameter tuples, in the
    ``events`` columns' order: each value through its column's bind processor for ``dialect``
    (what ``conn.execute(INSERT_EVENTS, rows)`` does per row), ``created_at`` once per distinct
    value (a group's rows share one). Proven equal to the statement path by
    ``tests/contracts/test_sqlite_event_rows.py``."""
    _text, processors = _sqlite_insert(dialect)
    run_id, seq, epoch, type_, payload, durable, created_at = processors
    columns = (
        ("run_id", run_id),
        ("seq", seq),
        ("epoch", epoch),
        ("type", type_),
        ("payload", payload),
        ("durable", durable),
    )
    stamps: dict[Any, Any] = {}
    out = []
    for row in rows:
        created = row["created_at"]
        if created in stamps:
            stamp = stamps[created]
        else:
            stamp = stamps[created] = created if created_at is None else created_at(created)
        values = [row[name] if process is None else process(row[name]) for name, process in columns]
        values.append(stamp)
        out.append(tuple(values))
    return out


async def finish_run(
    conn: AsyncConnection, record: RunRecord, final: RunFinal | None, now: datetime
) -> None:
    """The terminal part of an append: the history item (``add_items`` also moves the
    thread's ``updated_at``), or the thread's ``updated_at`` alone. No-op without ``final``."""
    if final is None:
        return
    if final.messages:
        await add_items(
            conn, record.thread_id, final.messages, run_id=record.id, now=now, replace=True
        )
    else:
        await conn.execute(TOUCH_THREAD, {"p_thread_id": record.thread_id, "p_now": now})


async def finish_runs(
    conn: AsyncConnection, finished: Sequence[tuple[RunRecord, RunFinal | None]], now: datetime
) -> None:
    """:func:`finish_run` for each ``(record, final)``, in order, as a group commits them:
    the single history items of runs of distinct threads in one batch
    (:func:`~gateway.store.history_sql.add_own_items`: three statements, not three per run)
    when there are several and the database runs it, the rest one by one. Threads share no
    row, so only the order within a thread matters, and a thread of several runs keeps it."""
    ended = [(record, final) for record, final in finished if final is not None]
    per_thread: dict[str, int] = {}
    for record, _ in ended:
        per_thread[record.thread_id] = per_thread.get(record.thread_id, 0) + 1
    batch = [
        (record.thread_id, final.messages[0], record.id)
        for record, final in ended
        if len(final.messages) == 1 and per_thread[record.thread_id] == 1
    ]
    if len(batch) < 2 or not batches_updates(conn):
        batch = []
    batched = {thread_id for thread_id, _, _ in batch}
    if batch:
        await add_own_items(conn, batch, now)
    for record, final in ended:
        if record.thread_id not in batched:
            await finish_run(conn, record, final, now)


async def append_in(conn: AsyncConnection, append: PreparedAppend, now: datetime) -> RunRecord:
    """One append alone in ``conn``'s transaction (update, insert, finish).

    Raises:
        WriteRejectedError subclasses: see :func:`update_run`; SequenceError also when a seq
            is already stored.
    """
    record = await update_run(conn, append, now)
    try:
        await insert_events(conn, append.rows)
    except sa.exc.IntegrityError as exc:
        raise SequenceError(
            f"run {append.run_id!r}: seq {append.events[0].seq} is already stored"
        ) from exc
    await finish_run(conn, record, append.final, now)
    return record


async def heartbeat_in(conn: AsyncConnection, run_id: str, epoch: int, now: datetime) -> LeaseState:
    """Refresh the lease of ``epoch`` (``alive=False``: fenced, ended or unknown)."""
    params = {"p_run_id": run_id, "p_epoch": epoch, "p_now": now}
    row = (await conn.execute(HEARTBEAT, params)).first()
    if row is None:
        return LeaseState(alive=False)
    return LeaseState(alive=True, cancel_requested=bool(row.cancel_requested))


async def _reject(conn: AsyncConnection, run_id: str, epoch: int, first: int) -> None:
    row = (await conn.execute(sa.select(runs).where(runs.c.id == run_id))).first()
    if row is None:
        raise RunNotFoundError(f"unknown run {run_id!r}")
    run = run_from_row(row)
    if run.epoch != epoch:
        raise StaleEpochError(
            f"run {run_id!r} is at epoch {run.epoch}; writes of epoch {epoch} are fenced"
        )
    if run.is_terminal:
        raise RunClosedError(f"run {run_id!r} already ended ({run.status})")
    raise SequenceError(f"run {run_id!r}: batch starts at seq {first}, expected {run.last_seq + 1}")
