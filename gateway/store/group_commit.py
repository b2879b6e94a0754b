"""Group commit: one writer per store commits the pending writes of all runs together.

Issue 13 item 1 ("durability must be nearly free"): with one transaction per run per batch,
concurrent pumps wait on each other for SQLite's write lock and churn the connection pool.
Here every append and heartbeat of the process goes into one queue; one task takes whatever
is queued (at most ``max_requests``, after waiting ``window`` seconds for more) and commits it
in **one transaction on one connection**: the runs' conditional ``UPDATE runs`` (fence and
continuity, :mod:`gateway.store.sql_writes`; the non-terminal appends of the group's runs in
one statement, ``update_runs``, and its terminal ones in another), then all their event rows
in one multi-row ``INSERT``, then the terminal parts (the history items of runs of distinct
threads together, ``finish_runs``). While a group commits, the next one fills, so under load
a write waits for about one group, and alone it waits for nothing but its own transaction.

What ``docs/runs.md`` needs holds unchanged, because a caller's ``append_events`` returns only
when its group is committed: a control event is published after its group is durable (§2);
seqs continue the durable end and epochs fence (§1, §4: per run, inside the group, the same
conditional UPDATE); a run's writes stay in order (its writer awaits each before the next).

Failures: a run the UPDATE refuses (fenced, closed, out of sequence, unknown) gets its own
:class:`~gateway.store.errors.WriteRejectedError` (or ``RunNotFoundError``) and wrote nothing;
the rest of its group commits. A failing group (database error) fails every request in it with
the translated error (callers retry as before). A seq already stored (``IntegrityError``, which
aborts the transaction) makes the group rerun one request per transaction, so only the guilty
one fails.

On SQLite (aiosqlite) a group's whole transaction is one call on the driver's worker thread,
its statements run on the raw ``sqlite3`` connection (:mod:`gateway.store.sqlite_raw`: the
same statements, rows, errors and engine events, ``BEGIN IMMEDIATE`` to ``COMMIT``), instead
of one worker call per statement and SQLAlchemy's execution of each on the event loop's
thread (issue 13: about 10 aiosqlite calls per durable run became 2). The writer checks that
connection out of the pool once and holds it until it stops (:mod:`gateway.store.sqlite_held`)
instead of a checkout and return per group. PostgreSQL keeps SQLAlchemy (asyncpg), and so does
a group the raw path cannot run.

Heartbeats are not latency-bound: one waits up to ``heartbeat_hold`` seconds for a group to
ride in, and the heartbeats of a group are one statement each in its transaction (issue 13
item 3: a replica's runs cost about one heartbeat transaction per hold, not one per run).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from . import sql_writes
from .errors import RunNotFoundError, RunStoreError, StoreUnavailableError, WriteRejectedError
from .models import LeaseState, RunRecord
from .sql_errors import transaction
from .sqlite_held import CommittedCancel, HeldConnection
from .sqlite_raw import RawConnection, RawUnsupported

__all__ = ["GroupCommitter", "Step", "StepRows", "insert_step_rows"]

_log = logging.getLogger(__name__)

_STOP: Final = object()

Step = Callable[[AsyncConnection, datetime], Awaitable[Any]]
"""A write of its own in a group's transaction (``create_run``): ``step(conn, now)``. A step
that returns :class:`StepRows` has its event rows inserted with the group's."""


@dataclass(frozen=True, slots=True)
class StepRows:
    """What a step returns when it also has event rows to insert (``create_run`` with its
    first events): ``result`` goes to its caller; ``rows`` join the group's one multi-row
    ``INSERT`` (alone, :func:`insert_step_rows` inserts them), after every step and update of
    the transaction, so the run rows they belong to exist by then."""

    result: Any
    rows: list[dict[str, Any]]


async def insert_step_rows(conn: AsyncConnection, out: Any) -> Any:
    """The result of a step run on its own: its :class:`StepRows` rows inserted in ``conn``."""
    if isinstance(out, StepRows):
        await sql_writes.insert_events(conn, out.rows)
        return out.result
    return out


@dataclass(slots=True)
class _Request:
    append: sql_writes.PreparedAppend | None
    heartbeat: tuple[str, int] | None
    future: asyncio.Future[Any]
    result: Any = None
    error: BaseException | None = None
    step: Step | None = None


@dataclass(slots=True)
class _State:
    """Queue, writer task and held SQLite connection of one event loop (a store may outlive a
    test's loop)."""

    loop: asyncio.AbstractEventLoop
    held: HeldConnection
    urgent: list[_Request] = field(default_factory=list)
    lazy: list[_Request] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    lazy_timer: asyncio.TimerHandle | None = None
    orphan: HeldConnection | None = None
    """The connection a writer of a closed loop held, returned by this loop's writer."""


class GroupCommitter:
    """The store's single writer (see the module docstring).

    Args:
        engine: the store's engine.
        clock: the store's clock; read once per group (every row of a group has its ``now``).
        window: seconds the writer waits after the first request of a group for more (0: take
            what is queued; groups still form while the previous one commits).
        max_requests: most requests in one transaction.
        heartbeat_hold: most seconds a heartbeat waits for a group of appends to join.
        raw_sqlite: on SQLite (aiosqlite), run each group's transaction in one call on the
            driver's worker thread with the raw ``sqlite3`` connection
            (:mod:`gateway.store.sqlite_raw`) instead of one call per statement through
            SQLAlchemy; the same statements, rows and errors. False: through SQLAlchemy.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        clock: Callable[[], datetime],
        *,
        window: float = 0.0,
        max_requests: int = 256,
        heartbeat_hold: float = 0.05,
        raw_sqlite: bool = True,
    ) -> None:
        self.engine = engine
        self.raw_sqlite = raw_sqlite
        self.clock = clock
        self.window = max(0.0, window)
        self.max_requests = max(1, max_requests)
        self.heartbeat_hold = max(0.0, heartbeat_hold)
        self._state: _State | None = None
        self._held: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HeldConnection] = (
            weakref.WeakKeyDictionary()
        )  # each writer's connection by its loop (``_commit`` runs on its writer's loop)
        self.groups = 0
        """Transactions committed (a figure for tests and benches)."""

    def _current(self) -> _State:
        loop = asyncio.get_running_loop()
        state = self._state
        stale = state is not None and state.task is not None and state.task.done()
        if state is None or state.loop is not loop or stale:
            previous = state
            state = _State(loop, HeldConnection(self.engine))
            self._state = state
            self._held[loop] = state.held
            if previous is not None and (stale or previous.loop.is_closed()):
                state.orphan = previous.held  # its writer will not run again: return its conn
        if state.task is None:
            state.task = loop.create_task(self._writer(state), name="store-group-commit")
        return state

    async def append(self, append: sql_writes.PreparedAppend) -> RunRecord:
        """Queue ``append`` and return the run as its group committed it.

        Raises:
            WriteRejectedError, RunNotFoundError: the run refused this append.
            RunStoreError: the group failed (StoreUnavailableError: database unreachable).
        """
        state = self._current()
        request = _Request(append, None, state.loop.create_future())
        state.urgent.append(request)
        state.wake.set()
        result: RunRecord = await request.future
        return result

    async def call(self, step: Step, *, lazy: bool = False) -> Any:
        """Run ``step(conn, now)`` in the next group (before the appends queued after it) and
        return its result. A step that hits an ``IntegrityError`` makes the group rerun one
        request per transaction; the error then reaches its caller translated
        (:class:`~gateway.store.errors.RunStoreError` with the ``IntegrityError`` as
        ``__cause__``).

        ``lazy``: not latency-bound (a replica heartbeat): it waits, like a heartbeat, up to
        ``heartbeat_hold`` seconds for a group of appends to ride in, instead of delaying them
        with a transaction of its own.

        Raises:
            RunStoreError: the step or its group failed.
        """
        state = self._current()
        request = _Request(None, None, state.loop.create_future(), step=step)
        if lazy:
            self._queue_lazy(state, request)
        else:
            state.urgent.append(request)
            state.wake.set()
        return await request.future

    def _queue_lazy(self, state: _State, request: _Request) -> None:
        state.lazy.append(request)
        if state.urgent or self.heartbeat_hold == 0:
            state.wake.set()
        elif state.lazy_timer is None:
            state.lazy_timer = state.loop.call_later(self.heartbeat_hold, state.wake.set)

    async def heartbeat(self, run_id: str, epoch: int) -> LeaseState:
        """Refresh a lease in the next group (within ``heartbeat_hold`` seconds).

        Raises:
            RunStoreError: its group failed.
        """
        state = self._current()
        request = _Request(None, (run_id, epoch), state.loop.create_future())
        self._queue_lazy(state, request)
        result: LeaseState = await request.future
        return result

    async def aclose(self) -> None:
        """Commit what is queued, then stop the writer task of the current loop; its held
        connection goes back to the pool (so does one a writer of a closed loop held)."""
        state = self._state
        self._state = None
        if state is None or state.task is None:
            return
        if state.loop is not asyncio.get_running_loop():
            if state.loop.is_closed() or state.task.done():  # its writer will not run again
                await state.held.release()
            return
        state.urgent.append(_Request(None, None, state.loop.create_future(), result=_STOP))
        state.wake.set()
        with contextlib.suppress(asyncio.CancelledError):
            await state.task

    async def _writer(self, state: _State) -> None:
        try:
            if state.orphan is not None:
                orphan, state.orphan = state.orphan, None
                await orphan.release()
            await self._take(state)
        finally:
            await state.held.release()

    async def _take(self, state: _State) -> None:
        while True:
            await state.wake.wait()
            state.wake.clear()
            if self.window and state.urgent:
                await asyncio.sleep(self.window)
            stop = False
            while state.urgent or state.lazy:
                if state.lazy_timer is not None:
                    state.lazy_timer.cancel()
                    state.lazy_timer = None
                group = state.lazy[: self.max_requests]
                del state.lazy[: len(group)]
                room = self.max_requests - len(group)
                taken = state.urgent[:room]
                del state.urgent[: len(taken)]
                stops = [r for r in taken if r.result is _STOP]
                group += [r for r in taken if r.result is not _STOP]
                if group:
                    await self._commit(group)
                if stops:
                    stop = True
                    for request in stops:
                        request.future.set_result(None)
            if stop:
                return

    async def _commit(self, group: list[_Request]) -> None:
        now = self.clock()
        try:
            if not (self.raw_sqlite and await self._commit_raw(group, now)):
                async with transaction(self.engine) as conn:
                    await self._write(conn, group, now)
        except _Conflict:
            await self._one_by_one(group)
            return
        except CommittedCancel:  # cancelled, but the worker committed the group: it is done
            self.groups += 1
            for request in group:
                self._settle(request)
            raise
        except asyncio.CancelledError:
            self._fail(group, StoreUnavailableError("the run store is closing"))
            raise
        except RunStoreError as exc:
            self._fail(group, exc)
            return
        except Exception as exc:  # a bug of ours: every caller sees it (with its traceback)
            _log.exception("group commit failed")
            self._fail(group, exc)
            return
        self.groups += 1
        for request in group:
            self._settle(request)

    async def _commit_raw(self, group: list[_Request], now: datetime) -> bool:
        """The group's transaction in one call on the worker thread of the writer's held
        aiosqlite connection (:mod:`gateway.store.sqlite_held`, :mod:`gateway.store.sqlite_raw`);
        False (nothing written) when the engine is not aiosqlite's or a statement needs
        SQLAlchemy's execution.

        Raises:
            _Conflict, RunStoreError: as :meth:`_write` in a transaction of the engine.
        """
        if self.engine.dialect.name != "sqlite":
            return False
        held = self._held.get(asyncio.get_running_loop())
        once = held is None  # not a writer's loop (a group driven by hand): checked out once
        if held is None:
            held = HeldConnection(self.engine)

        async def body(raw: RawConnection) -> None:
            await self._write(raw, group, now)

        try:
            if not await held.run_transaction(body):
                self.raw_sqlite = False
                return False
        except RawUnsupported:
            _log.debug("a group commit runs through SQLAlchemy", exc_info=True)
            return False
        finally:
            if once:
                await held.release()
        return True

    async def _write(self, conn: Any, group: list[_Request], now: datetime) -> None:
        """The group's writes in ``conn``'s transaction (an ``AsyncConnection``, or a
        :class:`~gateway.store.sqlite_raw.RawConnection` on the worker thread: nothing here
        may touch the event loop). Sets each request's result or error.

        Raises:
            _Conflict: a seq or key is already stored (the transaction is lost).
        """
        rows: list[dict[str, Any]] = []
        finals: list[tuple[RunRecord, sql_writes.PreparedAppend]] = []
        batched: dict[str, _Request] = {}  # non-terminal appends, one per run
        ended: dict[str, _Request] = {}  # terminal ones, one per run
        later: list[_Request] = []
        for request in group:
            request.result = request.error = None
        batched_steps = await self._batch_steps(conn, group, now, rows)
        for request in group:
            if id(request) in batched_steps:
                continue
            if request.heartbeat is not None:
                run_id, epoch = request.heartbeat
                request.result = await sql_writes.heartbeat_in(conn, run_id, epoch, now)
                continue
            if request.step is not None:
                try:
                    out = await request.step(conn, now)
                except sa.exc.IntegrityError:
                    raise _Conflict from None
                if isinstance(out, StepRows):
                    out, rows = out.result, rows + out.rows
                request.result = out
                continue
            assert request.append is not None
            run_id = request.append.run_id
            if run_id in batched or run_id in ended:
                later.append(request)  # after that run's batched update: in order
            elif request.append.final is None:
                batched[run_id] = request
            else:
                ended[run_id] = request
        rows += await self._update_batched(conn, list(batched.values()), now)
        rows += await self._update_batched(conn, list(ended.values()), now)
        finals += [
            (r.result, r.append)
            for r in ended.values()
            if isinstance(r.result, RunRecord) and r.append is not None
        ]
        for request in later:
            await self._update_one(conn, request, now, rows, finals)
        try:
            await sql_writes.insert_events(conn, rows)
        except sa.exc.IntegrityError:
            raise _Conflict from None
        await sql_writes.finish_runs(
            conn, [(record, append.final) for record, append in finals], now
        )

    @staticmethod
    async def _batch_steps(
        conn: Any, group: list[_Request], now: datetime, rows: list[dict[str, Any]]
    ) -> set[int]:
        """The group's steps that can be written together (a step whose class has a
        ``batch(conn, steps, now)``: the run creations, :class:`gateway.store.create_sql.
        NewRun`), one call per class when there are several; each result set as its own
        step's would be (:class:`StepRows` rows joined to ``rows``). Returns the ``id()`` of
        the requests done.

        Raises:
            _Conflict: a key is already stored (the transaction is lost).
        """
        kinds: dict[Any, list[_Request]] = {}
        for request in group:
            batch = getattr(type(request.step), "batch", None)
            if request.step is not None and batch is not None:
                kinds.setdefault(batch, []).append(request)
        done: set[int] = set()
        for batch, requests in kinds.items():
            if len(requests) < 2:
                continue
            try:
                outs = await batch(conn, [r.step for r in requests], now)
            except sa.exc.IntegrityError:
                raise _Conflict from None
            for request, out in zip(requests, outs, strict=True):
                if isinstance(out, StepRows):
                    rows.extend(out.rows)
                    out = out.result
                request.result = out
                done.add(id(request))
        return done

    @staticmethod
    async def _update_one(
        conn: AsyncConnection,
        request: _Request,
        now: datetime,
        rows: list[dict[str, Any]],
        finals: list[tuple[RunRecord, sql_writes.PreparedAppend]],
    ) -> None:
        """One append's conditional run update (a run's second append of the group); its rows
        and terminal part join the group's when it is accepted."""
        assert request.append is not None
        try:
            record = await sql_writes.update_run(conn, request.append, now)
        except (WriteRejectedError, RunNotFoundError) as exc:
            request.error = exc
            return
        request.result = record
        rows += request.append.rows
        finals.append((record, request.append))

    @staticmethod
    async def _update_batched(
        conn: AsyncConnection, requests: list[_Request], now: datetime
    ) -> list[dict[str, Any]]:
        """The conditional run updates of a group's non-terminal appends, or of its terminal
        ones (one run each): one statement (:func:`~gateway.store.sql_writes.update_runs`)
        when there are several and the database runs it, else one each. Sets each request's
        result or error; returns the event rows of the accepted ones, in request order."""
        rows: list[dict[str, Any]] = []
        appends = [r.append for r in requests if r.append is not None]
        if len(appends) > 1 and sql_writes.batches_updates(conn):
            outcomes = await sql_writes.update_runs(conn, appends, now)
        else:
            outcomes = []
            for append in appends:
                try:
                    outcomes.append(await sql_writes.update_run(conn, append, now))
                except (WriteRejectedError, RunNotFoundError) as exc:
                    outcomes.append(exc)
        for request, append, outcome in zip(requests, appends, outcomes, strict=True):
            if isinstance(outcome, RunRecord):
                request.result = outcome
                rows += append.rows
            else:
                request.error = outcome
        return rows

    async def _one_by_one(self, group: Sequence[_Request]) -> None:
        """Rerun a group whose insert conflicted, one request per transaction."""
        for request in group:
            now = self.clock()
            request.result = request.error = None
            try:
                async with transaction(self.engine) as conn:
                    if request.heartbeat is not None:
                        run_id, epoch = request.heartbeat
                        request.result = await sql_writes.heartbeat_in(conn, run_id, epoch, now)
                    elif request.step is not None:
                        request.result = await insert_step_rows(conn, await request.step(conn, now))
                    else:
                        assert request.append is not None
                        request.result = await sql_writes.append_in(conn, request.append, now)
            except Exception as exc:
                request.error = exc
            self.groups += 1
            self._settle(request)

    @staticmethod
    def _settle(request: _Request) -> None:
        if request.future.done():  # its caller was cancelled
            return
        if request.error is not None:
            request.future.set_exception(request.error)
        else:
            request.future.set_result(request.result)

    @staticmethod
    def _fail(group: Sequence[_Request], exc: BaseException) -> None:
        for request in group:
            if not request.future.done():
                request.future.set_exception(exc)


class _Conflict(Exception):
    """A group's insert hit a stored seq: rerun it request by request."""
