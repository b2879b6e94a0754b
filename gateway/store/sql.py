"""SQLAlchemy 2 (async) implementation of :class:`~gateway.store.protocol.RunStore`.

One implementation for SQLite (``sqlite+aiosqlite``, the embedded default: a file, WAL mode)
and PostgreSQL (``postgresql+asyncpg``). :func:`open_store` creates the engine and applies the
alembic migrations (:mod:`gateway.migrations`) before returning.

Concurrency: every write that must be exclusive starts with a conditional ``UPDATE runs``
(or ``UPDATE threads``) on the row it depends on, so PostgreSQL serialises competing writers on
the row lock and SQLite on its write lock; fencing, seq continuity and lease takeover are all
single conditional UPDATEs, never read-then-write. Driver errors are translated into
:class:`~gateway.store.errors.RunStoreError` (:mod:`gateway.store.sql_errors`), chained with
``from``.

Layout: this module holds the store class (reads and the rare writes); the hot writes
(appends, heartbeats) are steps in :mod:`gateway.store.sql_writes`, committed for all runs
together by :mod:`gateway.store.group_commit` (issue 13 item 1); the prebuilt statements are
in :mod:`gateway.store.sql_statements`; the batched row reads of the idle re-check in
:mod:`gateway.store.run_marks_sql`, retention in :mod:`gateway.store.purge_sql`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .. import migrations
from .answers_sql import Answer, answered
from .create_sql import NewRun
from .cursor import Cursor
from .engine import DEFAULT_DATABASE_URL, create_engine, reads_engine
from .errors import (
    InterruptAnsweredError,
    RunExistsError,
    RunNotFoundError,
    RunStoreError,
    SequenceError,
)
from .group_commit import GroupCommitter, insert_step_rows
from .history_sql import add_input, history_page
from .keys_sql import get_key, insert_key, list_keys, revoke_key, tenant_usage
from .models import (
    ACTIVE_STATUSES,
    ApiKey,
    HistoryPage,
    JsonObject,
    LeaseState,
    NewEvent,
    OwnedRun,
    PurgeResult,
    ReplicaBeat,
    ReplicaDigest,
    RunEvent,
    RunFinal,
    RunMark,
    RunRecord,
    RunStatus,
    StoredEvent,
    TenantUsage,
    ThreadSummary,
)
from .protocol import HISTORY_DEFAULT_LIMIT
from .purge_sql import purge_in
from .replicas_sql import drop_replica_in, replica_beat_in, stale_clause
from .run_lookup import RunLookups
from .run_marks_sql import GET_RUNS_CHUNK, fetch_marks, fetch_runs
from .schema import events as events_t
from .schema import runs
from .sql_errors import connection, is_database_error, transaction, translate_error
from .sql_statements import (
    json_size,
    run_from_row,
)
from .sql_writes import append_in, heartbeat_in, prepare_append
from .sqlite_loop_read import loop_reads_for
from .threads_sql import thread_summaries
from .upstream_ids_sql import keep_originals, originals_of
from .wire_read import fetch_wire

__all__ = ["GET_RUNS_CHUNK", "SqlRunStore", "open_store"]


async def open_store(
    url: str = DEFAULT_DATABASE_URL,
    *,
    schema: str | None = None,
    clock: Callable[[], datetime] | None = None,
    migrate: bool = True,
    echo: bool = False,
    pre_ping: bool = True,
    max_readers: int = 8,
) -> SqlRunStore:
    """Create the engine, apply migrations (unless ``migrate=False``) and return the store.

    ``pre_ping``: see :func:`~gateway.store.engine.create_engine` (PostgreSQL only).
    ``max_readers``: see :class:`SqlRunStore`; the pool is sized from it (``max_readers + 4``
    connections, 8 more on overflow).

    Raises:
        ValueError: unsupported URL or schema name.
        RunStoreError: the database cannot be reached or migrated.
    """
    engine = create_engine(
        url, schema=schema, echo=echo, pre_ping=pre_ping, pool_size=max(1, max_readers) + 4
    )
    try:
        if schema is not None:
            async with engine.begin() as conn:
                await conn.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
        if migrate:
            await migrations.upgrade(engine)
    except Exception as exc:
        await engine.dispose()
        if not is_database_error(exc):
            raise
        error = translate_error(exc)
        raise type(error)(f"cannot open the run store: {exc}") from exc
    return SqlRunStore(engine, clock=clock, max_readers=max_readers)


def _utcnow() -> datetime:
    return datetime.now(UTC)


class SqlRunStore:
    """:class:`~gateway.store.protocol.RunStore` over an async SQLAlchemy engine.

    Args:
        engine: an engine from :func:`create_engine` whose database is migrated.
        clock: returns the current aware UTC time (default :func:`datetime.now`); leases
            compare heartbeats written by different replicas, so their clocks must agree to
            well under the lease timeout (NTP).
        group_commit: appends and heartbeats of all runs go through one
            :class:`~gateway.store.group_commit.GroupCommitter` (one transaction per group on
            one connection); False: one transaction per call (the pre-issue-13 path).
        group_window: seconds the group writer waits for more requests after the first (0:
            groups form only while the previous one commits).
        heartbeat_hold: most seconds a heartbeat waits to join a group (keep it well under the
            heartbeat interval).
        max_readers: reads holding a connection at once; more wait in order (the pool keeps
            the rest for the group writer and the rare single writes).
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Callable[[], datetime] | None = None,
        group_commit: bool = True,
        group_window: float = 0.0,
        heartbeat_hold: float = 0.05,
        max_readers: int = 8,
    ) -> None:
        self.engine = engine
        self._reads = reads_engine(engine)
        self._readers = asyncio.Semaphore(max(1, max_readers))
        self._lookups = RunLookups(self._fetch_runs)
        self._loop_reads = loop_reads_for(engine.url, engine.dialect)
        self._clock = clock or _utcnow
        self.group: GroupCommitter | None = (
            GroupCommitter(engine, self.now, window=group_window, heartbeat_hold=heartbeat_hold)
            if group_commit
            else None
        )

    def now(self) -> datetime:
        """The store's clock (aware UTC)."""
        return self._clock()

    async def close(self) -> None:
        """Commit the queued writes, then dispose of the engine's connections."""
        if self.group is not None:
            await self.group.aclose()
        if self._loop_reads is not None:
            self._loop_reads.close()
        await self.engine.dispose()

    # -- plumbing -------------------------------------------------------------------------
    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[AsyncConnection]:
        async with transaction(self.engine) as conn:
            yield conn

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection]:
        # Reads queue here rather than in the pool: a burst of readers (1,000 streams opening)
        # waits its turn instead of failing with the pool's 30 s checkout timeout (issue 13).
        async with self._readers, connection(self._reads) as conn:
            yield conn

    async def check(self) -> None:
        """Answer when the database answers ``SELECT 1`` (readiness, start-up).

        Raises:
            StoreUnavailableError: it cannot be reached; RunStoreError: it failed otherwise.
        """
        async with self._read() as conn:
            await conn.execute(sa.text("SELECT 1"))

    async def healthy(self) -> bool:
        """True when :meth:`check` passes (never raises)."""
        try:
            await self.check()
        except RunStoreError:
            return False
        return True

    # -- runs -----------------------------------------------------------------------------
    async def create_run(
        self,
        *,
        run_id: str,
        thread_id: str,
        owner: str,
        route: str | None = None,
        upstream: str | None = None,
        model: str | None = None,
        message_id: str | None = None,
        status: RunStatus = "queued",
        input_messages: Sequence[JsonObject] = (),
        tenant: str | None = None,
        answers: Sequence[Answer] = (),
        events: Sequence[NewEvent] = (),
        continues: Sequence[str] = (),
    ) -> RunRecord:
        """See :meth:`RunStore.create_run`. The answers are claimed in the run's own
        transaction (:mod:`gateway.store.answers_sql`)."""
        if status not in ACTIVE_STATUSES:
            raise ValueError(f"a new run is queued or running, not {status!r}")
        size = json_size(input_messages)
        first = prepare_append(run_id, 1, events, None) if events else None
        if first is not None:
            if events[0].seq != 1:
                raise SequenceError(f"a new run's events start at seq 1, not {events[0].seq}")
            size += first.bytes
            status = "running"

        values = {
            "id": run_id,
            "thread_id": thread_id,
            "status": status,
            "route": route,
            "upstream": upstream,
            "model": model,
            "message_id": message_id,
            "epoch": 1,
            "last_seq": len(events),
            "last_epoch": 1 if events else 0,
            "lease_owner": owner,
            "cancel_requested": False,
            "tenant": tenant,
            "stored_bytes": size,
            "continues": list(continues) or None,
        }
        create = NewRun(thread_id, values, input_messages, answers, first)

        try:
            if self.group is not None:  # one writer: the create joins the next group
                created: RunRecord = await self.group.call(create)
                return created
            async with self._tx() as conn:
                out: RunRecord = await insert_step_rows(conn, await create(conn, self.now()))
                return out
        except RunStoreError as exc:
            if isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise await self._conflict(run_id, thread_id, answers) from exc.__cause__
            raise

    async def _conflict(
        self, run_id: str, thread_id: str, answers: Sequence[Answer]
    ) -> RunStoreError:
        """Which key refused a ``create_run``: the run id (a retry of the same run, answered
        as such) before the interrupt answers (claimed by another run)."""
        try:
            await self.get_run(run_id)
        except RunNotFoundError:
            pass
        else:
            return RunExistsError(f"run {run_id!r} already exists")
        ids = [interrupt_id for interrupt_id, _ in answers]
        async with self._read() as conn:
            taken = await answered(conn, thread_id, ids)
        repeated = {i for i in ids if ids.count(i) > 1}
        refused = tuple(dict.fromkeys(i for i in ids if i in taken or i in repeated))
        if not refused:
            return RunExistsError(f"run {run_id!r} already exists")
        return InterruptAnsweredError(
            f"interrupt {', '.join(map(repr, refused))} already answered; an interrupt is "
            "answered once",
            interrupt_ids=refused,
        )

    async def answered_interrupts(
        self, thread_id: str, interrupt_ids: Sequence[str]
    ) -> dict[str, str]:
        """See :meth:`RunStore.answered_interrupts`."""
        async with self._read() as conn:
            return await answered(conn, thread_id, interrupt_ids)

    async def keep_upstream_ids(self, thread_id: str, mapping: Mapping[str, str]) -> None:
        """See :meth:`RunStore.keep_upstream_ids`."""
        if not mapping:
            return
        async with self._tx() as conn:
            await keep_originals(conn, thread_id, mapping, self.now())

    async def upstream_ids(self, thread_id: str, gateway_ids: Collection[str]) -> dict[str, str]:
        """See :meth:`RunStore.upstream_ids`."""
        if not gateway_ids:
            return {}
        async with self._read() as conn:
            return await originals_of(conn, thread_id, gateway_ids)

    async def get_run(self, run_id: str) -> RunRecord:
        """See :meth:`RunStore.get_run`. On a SQLite file, on the loop's thread
        (:mod:`gateway.store.sqlite_loop_read`); else, or when that cannot answer at once,
        concurrent calls share one read (:class:`~gateway.store.run_lookup.RunLookups`)."""
        record: RunRecord | None
        if self._loop_reads is None:  # not a SQLite file
            record = await self._lookups.get(run_id)
        else:
            try:
                record = self._loop_reads.get_run(run_id)
            except sqlite3.Error:  # could not answer at once: the usual way
                record = await self._lookups.get(run_id)
        if record is None:
            raise RunNotFoundError(f"unknown run {run_id!r}")
        return record

    async def _fetch_runs(self, take: Callable[[], Collection[str]]) -> dict[str, RunRecord]:
        """:meth:`get_runs` of the ids ``take()`` returns once a reader slot is held (what
        :class:`~gateway.store.run_lookup.RunLookups` needs)."""
        async with self._read() as conn:
            return await fetch_runs(conn, list(take()))

    async def get_runs(self, run_ids: Collection[str]) -> dict[str, RunRecord]:
        """See :meth:`RunStore.get_runs`: one ``SELECT ... WHERE id IN (...)`` per
        :data:`GET_RUNS_CHUNK` ids, on one read connection."""
        if not run_ids:
            return {}
        async with self._read() as conn:
            return await fetch_runs(conn, run_ids)

    async def get_run_marks(self, run_ids: Collection[str]) -> dict[str, RunMark]:
        """See :meth:`RunStore.get_run_marks` (:mod:`gateway.store.run_marks_sql`)."""
        if not run_ids:
            return {}
        async with self._read() as conn:
            return await fetch_marks(conn, run_ids)

    async def list_runs(
        self, thread_id: str, *, active_only: bool = False, limit: int = 100
    ) -> list[RunRecord]:
        """See :meth:`RunStore.list_runs`."""
        query = sa.select(runs).where(runs.c.thread_id == thread_id)
        if active_only:
            query = query.where(runs.c.status.in_(ACTIVE_STATUSES))
        query = query.order_by(runs.c.created_at.desc(), runs.c.id.desc()).limit(limit)
        async with self._read() as conn:
            rows = (await conn.execute(query)).all()
        return [run_from_row(row) for row in rows]

    async def list_threads(
        self, *, tenant: str | None, routes: Collection[str] | None = None, limit: int = 100
    ) -> list[ThreadSummary]:
        """See :meth:`RunStore.list_threads`."""
        async with self._read() as conn:
            return await thread_summaries(conn, tenant=tenant, routes=routes, limit=limit)

    async def append_events(
        self,
        run_id: str,
        epoch: int,
        events: Sequence[NewEvent],
        *,
        final: RunFinal | None = None,
    ) -> RunRecord:
        """See :meth:`RunStore.append_events`. Committed in a group with the other runs'
        pending writes (:class:`~gateway.store.group_commit.GroupCommitter`) unless the store
        was built with ``group_commit=False``."""
        append = prepare_append(run_id, epoch, events, final)
        if self.group is not None:
            return await self.group.append(append)
        async with self._tx() as conn:
            return await append_in(conn, append, self.now())

    async def read_events(
        self, run_id: str, *, after: Cursor | None = None, limit: int = 500
    ) -> list[StoredEvent]:
        """See :meth:`RunStore.read_events`."""
        query = sa.select(
            events_t.c.seq,
            events_t.c.epoch,
            events_t.c.payload,
            events_t.c.durable,
            events_t.c.created_at,
        ).where(events_t.c.run_id == run_id)
        if after is not None:
            # (epoch, seq) > (e, s) as a range of the primary key (gateway/store/wire_read.py)
            prior = events_t.alias("prior")
            start = (
                sa.select(prior.c.seq)
                .where(
                    prior.c.run_id == run_id,
                    prior.c.seq <= after.seq,
                    prior.c.epoch <= after.epoch,
                )
                .order_by(prior.c.seq.desc())
                .limit(1)
                .scalar_subquery()
            )
            query = query.where(
                events_t.c.seq > sa.func.coalesce(start, -1), events_t.c.epoch >= after.epoch
            )
        query = query.order_by(events_t.c.seq).limit(max(1, limit))
        async with self._read() as conn:
            rows = (await conn.execute(query)).all()
        return [
            StoredEvent(
                cursor=Cursor(int(r.epoch), int(r.seq)),
                event=r.payload,
                durable=bool(r.durable),
                created_at=r.created_at,
            )
            for r in rows
        ]

    async def read_wire(
        self, run_id: str, *, after: Cursor | None = None, limit: int = 500
    ) -> list[RunEvent]:
        """See :meth:`RunStore.read_wire`."""
        async with self._read() as conn:
            return await fetch_wire(conn, run_id, after, max(1, limit))

    async def heartbeat(self, run_id: str, epoch: int) -> LeaseState:
        """See :meth:`RunStore.heartbeat`. Rides in a group within ``heartbeat_hold`` seconds
        (see :class:`~gateway.store.group_commit.GroupCommitter`)."""
        if self.group is not None:
            return await self.group.heartbeat(run_id, epoch)
        async with self._tx() as conn:
            return await heartbeat_in(conn, run_id, epoch, self.now())

    async def heartbeat_replica(self, replica_id: str) -> list[OwnedRun]:
        """See :meth:`RunStore.heartbeat_replica`."""
        return (await self.beat_replica(replica_id)).runs

    async def beat_replica(
        self, replica_id: str, *, known: ReplicaDigest | None = None
    ) -> ReplicaBeat:
        """See :meth:`RunStore.beat_replica`. Rides in a group within ``heartbeat_hold``
        seconds, like a run's heartbeat (:class:`~gateway.store.group_commit.GroupCommitter`)."""

        async def beat(conn: AsyncConnection, now: datetime) -> ReplicaBeat:
            return await replica_beat_in(conn, replica_id, now, known)

        if self.group is not None:
            answer: ReplicaBeat = await self.group.call(beat, lazy=True)
            return answer
        async with self._tx() as conn:
            return await beat(conn, self.now())

    async def drop_replica(self, replica_id: str) -> None:
        """See :meth:`RunStore.drop_replica`."""
        async with self._tx() as conn:
            await drop_replica_in(conn, replica_id)

    async def request_cancel(self, run_id: str) -> RunRecord:
        """See :meth:`RunStore.request_cancel`."""
        async with self._tx() as conn:
            row = (
                await conn.execute(
                    sa.update(runs)
                    .where(runs.c.id == run_id, runs.c.status.in_(ACTIVE_STATUSES))
                    .values(cancel_requested=True, updated_at=self.now())
                    .returning(*runs.c)
                )
            ).first()
        if row is not None:
            return run_from_row(row)
        return await self.get_run(run_id)

    async def list_stale_runs(self, stale_before: datetime, *, limit: int = 100) -> list[RunRecord]:
        """See :meth:`RunStore.list_stale_runs`."""
        query = (
            sa.select(runs)
            .where(stale_clause(stale_before))
            .order_by(runs.c.heartbeat_at)
            .limit(limit)
        )
        async with self._read() as conn:
            rows = (await conn.execute(query)).all()
        return [run_from_row(row) for row in rows]

    async def take_over(
        self, run_id: str, *, owner: str, expected_epoch: int, stale_before: datetime
    ) -> RunRecord | None:
        """See :meth:`RunStore.take_over`."""
        now = self.now()
        async with self._tx() as conn:
            row = (
                await conn.execute(
                    sa.update(runs)
                    .where(
                        runs.c.id == run_id,
                        runs.c.epoch == expected_epoch,
                        stale_clause(stale_before),
                    )
                    .values(
                        epoch=expected_epoch + 1,
                        lease_owner=owner,
                        heartbeat_at=now,
                        updated_at=now,
                    )
                    .returning(*runs.c)
                )
            ).first()
        return run_from_row(row) if row is not None else None

    # -- history --------------------------------------------------------------------------
    async def add_messages(
        self, thread_id: str, items: Sequence[JsonObject], *, run_id: str | None = None
    ) -> int:
        """See :meth:`RunStore.add_messages`."""
        if not items:
            return 0
        now = self.now()
        async with self._tx() as conn:
            return await add_input(conn, thread_id, items, now, run_id=run_id)

    async def history(
        self,
        thread_id: str,
        *,
        limit: int = HISTORY_DEFAULT_LIMIT,
        before_sequence: int | None = None,
    ) -> HistoryPage:
        """See :meth:`RunStore.history`."""
        async with self._read() as conn:
            return await history_page(conn, thread_id, limit=limit, before_sequence=before_sequence)

    # -- API keys and tenants -------------------------------------------------------------
    async def create_api_key(self, key: ApiKey) -> None:
        """See :meth:`RunStore.create_api_key`."""
        try:
            async with self._tx() as conn:
                await insert_key(conn, key)
        except RunStoreError as exc:
            if isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise RunStoreError(f"API key id {key.id!r} is taken") from exc.__cause__
            raise

    async def get_api_key(self, key_id: str) -> ApiKey | None:
        """See :meth:`RunStore.get_api_key`."""
        async with self._read() as conn:
            return await get_key(conn, key_id)

    async def list_api_keys(self, *, tenant: str | None = None) -> list[ApiKey]:
        """See :meth:`RunStore.list_api_keys`."""
        async with self._read() as conn:
            return await list_keys(conn, tenant)

    async def revoke_api_key(self, key_id: str) -> ApiKey | None:
        """See :meth:`RunStore.revoke_api_key`."""
        async with self._tx() as conn:
            return await revoke_key(conn, key_id, self.now())

    async def tenant_usage(self, tenant: str | None) -> TenantUsage:
        """See :meth:`RunStore.tenant_usage`."""
        async with self._read() as conn:
            return await tenant_usage(conn, tenant)

    # -- retention ------------------------------------------------------------------------
    async def purge(self, before: datetime) -> PurgeResult:
        """See :meth:`RunStore.purge` (:func:`gateway.store.purge_sql.purge_in`)."""
        async with self._tx() as conn:
            return await purge_in(conn, before)
