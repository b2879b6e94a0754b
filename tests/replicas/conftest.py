"""Fixtures of the replica tests: PostgreSQL (a private schema per test, migrated before the
replicas start and dropped afterwards), Redis (a private key prefix, deleted afterwards), the
slow upstream, and two ``agui-gateway serve`` replicas sharing them.

The services come from ``GATEWAY_TEST_DATABASE_URL`` / ``GATEWAY_TEST_REDIS_URL`` (default: the
ones on 127.0.0.1). Missing services skip these tests locally and fail them under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa
from corpus import require_service

sys.path.insert(0, str(Path(__file__).resolve().parent))  # durable_support, replica_processes

from replica_processes import (
    LEASE,
    PG_URL,
    REDIS_URL,
    Pair,
    Process,
    start_gateway,
    start_upstream,
)

from gateway.store import RunStoreError, open_store


async def _create_schema(schema: str) -> None:
    store = await open_store(PG_URL, schema=schema)  # migrated once, before any replica
    await store.close()


async def _drop_schema(schema: str) -> None:
    store = await open_store(PG_URL, schema=schema, migrate=False)
    async with store.engine.begin() as conn:
        await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    await store.close()


@pytest.fixture
def schema() -> Iterator[str]:
    """A migrated private PostgreSQL schema."""
    name = f"replicas_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(_create_schema(name))
    except (RunStoreError, OSError) as exc:
        require_service(False, f"PostgreSQL unreachable at {PG_URL}: {exc}")
    yield name
    asyncio.run(_drop_schema(name))


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A private Redis key prefix (its keys are deleted afterwards)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except (OSError, redis.RedisError) as exc:
        client.close()
        require_service(False, f"Redis unreachable at {REDIS_URL}: {exc}")
    prefix = f"replicas:{uuid.uuid4().hex[:12]}:"
    yield prefix
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    process = start_upstream(tmp_path_factory.mktemp("upstream"))
    yield process
    process.stop()


@pytest.fixture
def pair(tmp_path: Path, upstream: Process, schema: str, redis_prefix: str) -> Iterator[Pair]:
    routes = tmp_path / "routes.toml"
    routes.write_text(
        "[[routes]]\n"
        'name = "slow"\n'
        f'upstream_url = "{upstream.url}/v1"\n'
        'protocol = "openai-chat"\n'
        'model = "slow-1"\n',
        encoding="utf-8",
    )
    env = {
        **LEASE,
        "GATEWAY_DATABASE_URL": PG_URL,
        "GATEWAY_DATABASE_SCHEMA": schema,
        "GATEWAY_REDIS_URL": REDIS_URL,
        "GATEWAY_REDIS_PREFIX": redis_prefix,
    }
    with ThreadPoolExecutor(2) as pool:
        started = [pool.submit(start_gateway, n, tmp_path, routes, env) for n in ("a", "b")]
        wait(started)
    replicas = [f.result() for f in started if f.exception() is None]
    if len(replicas) < 2:
        for replica in replicas:
            replica.stop()
        raise next(e for f in started if (e := f.exception()) is not None)
    yield Pair(replicas[0], replicas[1], schema, redis_prefix)
    for replica in replicas:
        replica.stop()
