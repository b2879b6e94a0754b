"""SQLAlchemy 2 (async) implementation of :class:`~gateway.store.protocol.RunStore`.

One implementation for SQLite (``sqlite+aiosqlite``, the embedded default: a file, WAL mode)
and PostgreSQL (``postgresql+asyncpg``). :func:`open_store` creates the engine and applies the
alembic migrations (:mod:`gateway.migrations`) before returning.

Concurrency: every write that must be exclusive starts with a conditional ``UPDATE runs``
(or ``UPDATE threads``) on the row it depends on, so PostgreSQL serialises competing writers on
the row lock and SQLite on its write lock; fencing, seq continuity and lease takeover are all
single conditional UPDATEs, never read-then-write. Driver errors are translated into
:class:`~gateway.store.errors.RunStoreError` here, chained with ``from``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .. import migrations
from .cursor import Cursor
from .engine import DEFAULT_DATABASE_URL, create_engine
from .errors import (
    RunClosedError,
    RunExistsError,
    RunNotFoundError,
    RunStoreError,
    SequenceError,
    StaleEpochError,
    StoreUnavailableError,
)
from .history_sql import add_items, ensure_thread, history_page
from .keys_sql import get_key, insert_key, list_keys, revoke_key, tenant_usage
from .models import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    ApiKey,
    HistoryPage,
    JsonObject,
    LeaseState,
    NewEvent,
    PurgeResult,
    RunEvent,
    RunFinal,
    RunRecord,
    RunStatus,
    StoredEvent,
    TenantUsage,
    ThreadSummary,
)
from .protocol import HISTORY_DEFAULT_LIMIT
from .schema import events as events_t
from .schema import message_aliases, messages, runs, threads
from .threads_sql import thread_summaries

__all__ = ["SqlRunStore", "open_store"]


async def open_store(
    url: str = DEFAULT_DATABASE_URL,
    *,
    schema: str | None = None,
    clock: Callable[[], datetime] | None = None,
    migrate: bool = True,
    echo: bool = False,
    pre_ping: bool = True,
) -> SqlRunStore:
    """Create the engine, apply migrations (unless ``migrate=False``) and return the store.

    ``pre_ping``: see :func:`~gateway.store.engine.create_engine` (PostgreSQL only).

    Raises:
        ValueError: unsupported URL or schema name.
        RunStoreError: the database cannot be reached or migrated.
    """
    engine = create_engine(url, schema=schema, echo=echo, pre_ping=pre_ping)
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
    return SqlRunStore(engine, clock=clock)


def _disconnect(exc: BaseException) -> bool:
    """True for the errors that mean "the database cannot be reached", wherever they come from:
    the driver's socket errors (asyncpg raises ``OSError`` / ``ConnectionRefusedError`` /
    ``TimeoutError`` untranslated while connecting), asyncpg's connection errors, and
    SQLAlchemy's disconnect flag or pool timeout."""
    if isinstance(exc, OSError | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, sa.exc.DisconnectionError | sa.exc.TimeoutError):
        return True
    if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None:
        return _disconnect(exc.orig) or _disconnect_name(exc.orig)
    return _disconnect_name(exc)


def _disconnect_name(exc: BaseException) -> bool:
    # asyncpg's ConnectionDoesNotExistError, ConnectionFailureError, ... (no import: the
    # driver is optional) and the interface errors SQLAlchemy's adapter wraps them in.
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names
        & {
            "PostgresConnectionError",
            "ConnectionDoesNotExistError",
            "ConnectionFailureError",
            "InterfaceError",
            "InternalClientError",
        }
    ) or (exc.__cause__ is not None and exc.__cause__ is not exc and _disconnect(exc.__cause__))


def is_database_error(exc: BaseException) -> bool:
    """True for what the database or its driver raises (SQLAlchemy, asyncpg, aiosqlite,
    sockets), False for anything else (a bug of ours, which must not pass for a store fault)."""
    if isinstance(exc, sa.exc.SQLAlchemyError) or _disconnect(exc):
        return True
    module = type(exc).__module__.split(".")[0]
    return module in {"asyncpg", "aiosqlite", "sqlite3"}


def translate_error(exc: BaseException) -> RunStoreError:
    """The :class:`RunStoreError` for a database or driver exception (issue 12: the store let
    the driver's ``OSError`` through, which reached HTTP clients as a plain-text 500).

    A lost or unreachable database is :class:`StoreUnavailableError` (503, transient);
    another one ``STORE_ERROR`` "database error" (the cause is chained for the log; a client
    never sees the SQL, its values or an exception's class).
    """
    if _disconnect(exc):
        return StoreUnavailableError("the run store is unavailable")
    return RunStoreError("database error")


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _run_from_row(row: Any) -> RunRecord:
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
    )


def _json_size(values: Sequence[Any]) -> int:
    """Bytes of ``values`` as stored JSON (what counts against a tenant's storage quota)."""
    return sum(len(orjson.dumps(value)) for value in values)


# -- prebuilt statements of the hot paths ---------------------------------------------------
# Built once with bound parameters: SQLAlchemy memoizes a statement object's cache key, so a
# reused statement skips building the expression and its cache key on every call (~0.15 ms
# per UPDATE on a small machine); the SQL sent is the same.

_ACTIVE = sorted(ACTIVE_STATUSES)


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
            runs.c.status.in_(_ACTIVE),
            runs.c.last_seq == _param("p_prev_seq", runs.c.last_seq),
        )
        .values(**values)
        .returning(*runs.c)
    )


_CREATE_RUN = sa.insert(runs).returning(*runs.c)
_APPEND_UPDATE = _append_update(final=False)
_APPEND_FINAL = _append_update(final=True)
_INSERT_EVENTS = sa.insert(events_t)
_TOUCH_THREAD = (
    sa.update(threads)
    .where(threads.c.id == _param("p_thread_id", threads.c.id))
    .values(updated_at=_param("p_now", threads.c.updated_at))
)
_GET_RUN = sa.select(runs).where(runs.c.id == _param("p_run_id", runs.c.id))
_HEARTBEAT = (
    sa.update(runs)
    .where(
        runs.c.id == _param("p_run_id", runs.c.id),
        runs.c.epoch == _param("p_epoch", runs.c.epoch),
        runs.c.status.in_(_ACTIVE),
    )
    .values(heartbeat_at=_param("p_now", runs.c.heartbeat_at))
    .returning(runs.c.cancel_requested)
)
_WIRE = sa.select(events_t.c.epoch, events_t.c.seq, events_t.c.payload).where(
    events_t.c.run_id == _param("p_run_id", events_t.c.run_id)
)
_LIMIT = sa.bindparam("p_limit", type_=sa.Integer)
_READ_WIRE_ALL = _WIRE.order_by(events_t.c.seq).limit(_LIMIT)
_READ_WIRE_AFTER = (
    _WIRE.where(
        sa.or_(
            sa.and_(
                events_t.c.epoch == _param("p_after_epoch", events_t.c.epoch),
                events_t.c.seq > _param("p_after_seq", events_t.c.seq),
            ),
            events_t.c.epoch > _param("p_after_epoch", events_t.c.epoch),
        )
    )
    .order_by(events_t.c.seq)
    .limit(_LIMIT)
)


class SqlRunStore:
    """:class:`~gateway.store.protocol.RunStore` over an async SQLAlchemy engine.

    Args:
        engine: an engine from :func:`create_engine` whose database is migrated.
        clock: returns the current aware UTC time (default :func:`datetime.now`); leases
            compare heartbeats written by different replicas, so their clocks must agree to
            well under the lease timeout (NTP).
    """

    def __init__(self, engine: AsyncEngine, *, clock: Callable[[], datetime] | None = None) -> None:
        self.engine = engine
        self._clock = clock or _utcnow

    def now(self) -> datetime:
        """The store's clock (aware UTC)."""
        return self._clock()

    async def close(self) -> None:
        """Dispose of the engine's connections."""
        await self.engine.dispose()

    # -- plumbing -------------------------------------------------------------------------
    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[AsyncConnection]:
        try:
            async with self.engine.begin() as conn:
                yield conn
        except RunStoreError:
            raise
        except Exception as exc:
            if not is_database_error(exc):
                raise  # a bug of ours, not the database: keep its traceback
            raise translate_error(exc) from exc

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection]:
        try:
            async with self.engine.connect() as conn:
                yield conn
        except RunStoreError:
            raise
        except Exception as exc:
            if not is_database_error(exc):
                raise  # a bug of ours, not the database: keep its traceback
            raise translate_error(exc) from exc

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
    ) -> RunRecord:
        """See :meth:`RunStore.create_run`."""
        if status not in ACTIVE_STATUSES:
            raise ValueError(f"a new run is queued or running, not {status!r}")
        now = self.now()
        try:
            async with self._tx() as conn:
                await ensure_thread(conn, thread_id, now)
                values = {
                    "id": run_id,
                    "thread_id": thread_id,
                    "status": status,
                    "route": route,
                    "upstream": upstream,
                    "model": model,
                    "message_id": message_id,
                    "epoch": 1,
                    "last_seq": 0,
                    "last_epoch": 0,
                    "lease_owner": owner,
                    "heartbeat_at": now,
                    "cancel_requested": False,
                    "created_at": now,
                    "updated_at": now,
                    "tenant": tenant,
                    "stored_bytes": _json_size(input_messages),
                }
                row = (await conn.execute(_CREATE_RUN, values)).one()
                if input_messages:
                    await add_items(
                        conn, thread_id, input_messages, run_id=None, now=now, replace=False
                    )
        except RunStoreError as exc:
            if isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise RunExistsError(f"run {run_id!r} already exists") from exc.__cause__
            raise
        return _run_from_row(row)

    async def get_run(self, run_id: str) -> RunRecord:
        """See :meth:`RunStore.get_run`."""
        async with self._read() as conn:
            row = (await conn.execute(_GET_RUN, {"p_run_id": run_id})).first()
        if row is None:
            raise RunNotFoundError(f"unknown run {run_id!r}")
        return _run_from_row(row)

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
        return [_run_from_row(row) for row in rows]

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
        """See :meth:`RunStore.append_events`."""
        if not events:
            raise ValueError("append_events needs at least one event")
        first = events[0].seq
        for offset, new in enumerate(events):
            if new.seq != first + offset:
                raise SequenceError(f"batch seqs are not contiguous at seq {new.seq}")
        now = self.now()
        params: dict[str, Any] = {
            "p_run_id": run_id,
            "p_epoch": epoch,
            "p_prev_seq": first - 1,
            "p_last_seq": events[-1].seq,
            "p_now": now,
            "p_status": "running",
            "p_bytes": _json_size([new.event for new in events])
            + (_json_size(final.messages) if final is not None else 0),
        }
        if final is not None:
            if final.status not in TERMINAL_STATUSES:
                raise ValueError(f"final status must be terminal, not {final.status!r}")
            params.update(
                p_status=final.status,
                p_usage=final.usage,
                p_error=final.error,
                p_model=final.model,
            )
        async with self._tx() as conn:
            row = (
                await conn.execute(_APPEND_FINAL if final is not None else _APPEND_UPDATE, params)
            ).first()
            if row is None:
                await self._reject(conn, run_id, epoch, first)
            assert row is not None
            try:
                await conn.execute(
                    _INSERT_EVENTS,
                    [
                        {
                            "run_id": run_id,
                            "seq": new.seq,
                            "epoch": epoch,
                            "type": str(new.event.get("type", "")),
                            "payload": new.event,
                            "durable": new.durable,
                            "created_at": now,
                        }
                        for new in events
                    ],
                )
            except sa.exc.IntegrityError as exc:
                raise SequenceError(f"run {run_id!r}: seq {first} is already stored") from exc
            record = _run_from_row(row)
            if final is not None:
                if final.messages:  # add_items sets the thread's updated_at too
                    await add_items(
                        conn, record.thread_id, final.messages, run_id=run_id, now=now, replace=True
                    )
                else:
                    await conn.execute(
                        _TOUCH_THREAD, {"p_thread_id": record.thread_id, "p_now": now}
                    )
        return record

    async def _reject(self, conn: AsyncConnection, run_id: str, epoch: int, first: int) -> None:
        row = (await conn.execute(sa.select(runs).where(runs.c.id == run_id))).first()
        if row is None:
            raise RunNotFoundError(f"unknown run {run_id!r}")
        run = _run_from_row(row)
        if run.epoch != epoch:
            raise StaleEpochError(
                f"run {run_id!r} is at epoch {run.epoch}; writes of epoch {epoch} are fenced"
            )
        if run.is_terminal:
            raise RunClosedError(f"run {run_id!r} already ended ({run.status})")
        raise SequenceError(
            f"run {run_id!r}: batch starts at seq {first}, expected {run.last_seq + 1}"
        )

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
            query = query.where(
                sa.or_(
                    sa.and_(events_t.c.epoch == after.epoch, events_t.c.seq > after.seq),
                    events_t.c.epoch > after.epoch,
                )
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
        params: dict[str, Any] = {"p_run_id": run_id, "p_limit": max(1, limit)}
        if after is None:
            query = _READ_WIRE_ALL
        else:
            query = _READ_WIRE_AFTER
            params.update(p_after_epoch=after.epoch, p_after_seq=after.seq)
        async with self._read() as conn:
            rows = (await conn.execute(query, params)).all()
        return [RunEvent(Cursor(int(epoch), int(seq)), payload) for epoch, seq, payload in rows]

    async def heartbeat(self, run_id: str, epoch: int) -> LeaseState:
        """See :meth:`RunStore.heartbeat`."""
        params = {"p_run_id": run_id, "p_epoch": epoch, "p_now": self.now()}
        async with self._tx() as conn:
            row = (await conn.execute(_HEARTBEAT, params)).first()
        if row is None:
            return LeaseState(alive=False)
        return LeaseState(alive=True, cancel_requested=bool(row.cancel_requested))

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
            return _run_from_row(row)
        return await self.get_run(run_id)

    async def list_stale_runs(self, stale_before: datetime, *, limit: int = 100) -> list[RunRecord]:
        """See :meth:`RunStore.list_stale_runs`."""
        query = (
            sa.select(runs)
            .where(
                runs.c.status.in_(ACTIVE_STATUSES),
                sa.or_(runs.c.heartbeat_at < stale_before, runs.c.heartbeat_at.is_(None)),
            )
            .order_by(runs.c.heartbeat_at)
            .limit(limit)
        )
        async with self._read() as conn:
            rows = (await conn.execute(query)).all()
        return [_run_from_row(row) for row in rows]

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
                        runs.c.status.in_(ACTIVE_STATUSES),
                        sa.or_(runs.c.heartbeat_at < stale_before, runs.c.heartbeat_at.is_(None)),
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
        return _run_from_row(row) if row is not None else None

    # -- history --------------------------------------------------------------------------
    async def add_messages(
        self, thread_id: str, items: Sequence[JsonObject], *, run_id: str | None = None
    ) -> int:
        """See :meth:`RunStore.add_messages`."""
        if not items:
            return 0
        now = self.now()
        async with self._tx() as conn:
            await ensure_thread(conn, thread_id, now)
            return await add_items(conn, thread_id, items, run_id=run_id, now=now, replace=False)

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
        """See :meth:`RunStore.purge`."""
        ended = sa.select(runs.c.id).where(
            runs.c.status.in_(TERMINAL_STATUSES), runs.c.finished_at < before
        )
        async with self._tx() as conn:
            n_events = (
                await conn.execute(sa.delete(events_t).where(events_t.c.run_id.in_(ended)))
            ).rowcount
            n_runs = (await conn.execute(sa.delete(runs).where(runs.c.id.in_(ended)))).rowcount
            idle = sa.select(threads.c.id).where(
                threads.c.updated_at < before,
                ~sa.exists().where(runs.c.thread_id == threads.c.id),
            )
            await conn.execute(
                sa.delete(message_aliases).where(message_aliases.c.thread_id.in_(idle))
            )
            n_messages = (
                await conn.execute(sa.delete(messages).where(messages.c.thread_id.in_(idle)))
            ).rowcount
            n_threads = (
                await conn.execute(sa.delete(threads).where(threads.c.id.in_(idle)))
            ).rowcount
        return PurgeResult(
            runs=max(n_runs, 0),
            events=max(n_events, 0),
            threads=max(n_threads, 0),
            messages=max(n_messages, 0),
        )
