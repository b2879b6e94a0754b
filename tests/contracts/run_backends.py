"""Store and broker backends for the contract and run tests (real services, unique names).

PostgreSQL and Redis come from ``GATEWAY_TEST_DATABASE_URL`` / ``GATEWAY_TEST_REDIS_URL``
(defaults: the services on 127.0.0.1). When one is unreachable its tests are skipped locally
and fail when ``CI=true``. Each PostgreSQL store lives in its own schema and each Redis broker
under its own key prefix, dropped afterwards, so parallel runs never collide.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn

import redis.asyncio as aioredis
import sqlalchemy as sa
from corpus import require_service

from gateway.broker import Broker, InProcessBroker, RedisStreamsBroker
from gateway.store import RunStoreError, SqlRunStore, open_store

PG_URL = os.environ.get(
    "GATEWAY_TEST_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("GATEWAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
STORES = ("sqlite", "postgresql")
BROKERS = ("memory", "redis")


def unavailable(service: str, reason: object) -> NoReturn:
    """Skip (locally) or fail (``CI=true``) a test whose service cannot be reached."""
    require_service(False, f"{service} unreachable: {reason}")
    raise AssertionError("unreachable")  # require_service(False, ...) always raises


class ManualClock:
    """A store clock the test moves by hand (leases and retention without sleeping)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@asynccontextmanager
async def make_store(kind: str, tmp_path: Path, clock: ManualClock) -> AsyncIterator[SqlRunStore]:
    """A migrated store of ``kind`` (``sqlite`` file or ``postgresql`` private schema)."""
    if kind == "sqlite":
        store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/runs.db", clock=clock)
        try:
            yield store
        finally:
            await store.close()
        return
    schema = f"test_{uuid.uuid4().hex[:16]}"
    try:
        store = await open_store(PG_URL, schema=schema, clock=clock)
    except (RunStoreError, OSError) as exc:
        unavailable("PostgreSQL", exc)
    try:
        yield store
    finally:
        await drop_schema(store.engine, schema)
        await store.close()


def looped_store(kind: str, tmp_path: Path) -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    """For a module-scoped fixture (``yield from``): an event loop of its own and a store of
    ``kind`` (:func:`make_store`, on a :class:`ManualClock`) open on it, closed after."""
    loop = asyncio.new_event_loop()
    manager = make_store(kind, tmp_path, ManualClock())
    store = loop.run_until_complete(manager.__aenter__())
    try:
        yield loop, store
    finally:
        loop.run_until_complete(manager.__aexit__(None, None, None))
        loop.close()


async def drop_schema(engine: Any, schema: str, *, attempts: int = 5) -> None:
    """``DROP SCHEMA ... CASCADE`` of a test's own schema. PostgreSQL may pick the DROP as the
    victim of a deadlock with the catalog locks of other sessions' DDL on the same server (seen
    with several suites sharing it: ``DeadlockDetectedError``); the aborted DROP changed nothing,
    so it is tried again (PostgreSQL 15 docs, 13.3.4 "Deadlocks": retry the transaction)."""
    for attempt in range(attempts):
        try:
            async with engine.begin() as conn:
                await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            return
        except sa.exc.DBAPIError as exc:
            if "deadlock detected" not in str(exc) or attempt == attempts - 1:
                raise
            await asyncio.sleep(0.1 * (attempt + 1))


@asynccontextmanager
async def make_broker(
    kind: str,
    *,
    prefix: str | None = None,
    maxlen: int = 10_000,
    reader_maxlen: int | None = None,
    **memory_bounds: Any,
) -> AsyncIterator[Broker]:
    """A broker of ``kind`` (``memory`` or ``redis`` under a unique or given key prefix);
    ``reader_maxlen`` is the in-process queue bound or Redis's ``XREAD COUNT``,
    ``memory_bounds`` other :class:`InProcessBroker` arguments."""
    if kind == "memory":
        broker = InProcessBroker(maxlen=maxlen, reader_maxlen=reader_maxlen, **memory_bounds)
        yield broker
        await broker.close()
        return
    own_prefix = prefix is None
    prefix = prefix or f"test:{uuid.uuid4().hex[:16]}:"
    client = aioredis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (OSError, aioredis.RedisError) as exc:
        await client.aclose()
        unavailable("Redis", exc)
    broker = RedisStreamsBroker(
        client, prefix=prefix, maxlen=maxlen, read_count=reader_maxlen or 500
    )
    try:
        yield broker
    finally:
        if own_prefix:
            keys = [key async for key in client.scan_iter(match=f"{prefix}*")]
            if keys:
                await client.delete(*keys)
        await broker.close()
