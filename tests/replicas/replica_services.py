"""The shared services of the replica tests and of ``bench/fault_trials.py``: a private
PostgreSQL schema (migrated before any replica starts, dropped afterwards) and a private Redis
key prefix (its keys deleted afterwards), on the machine's servers (``PG_URL`` / ``REDIS_URL``
of ``replica_processes``). Nothing here stops, flushes or reconfigures a server.
"""

from __future__ import annotations

import asyncio
import uuid

import redis
import sqlalchemy as sa
from replica_processes import PG_URL, REDIS_URL

from gateway.store import RunStoreError, open_store

__all__ = [
    "ServiceMissing",
    "create_schema",
    "delete_prefix",
    "drop_schema",
    "new_prefix",
    "new_schema",
]


class ServiceMissing(Exception):
    """PostgreSQL or Redis cannot be reached (the message says which, and why)."""


async def _create_schema(schema: str) -> None:
    store = await open_store(PG_URL, schema=schema)  # migrated once, before any replica
    await store.close()


async def _drop_schema(schema: str) -> None:
    store = await open_store(PG_URL, schema=schema, migrate=False)
    for attempt in range(5):  # a deadlock victim changed nothing: retry (see run_backends)
        try:
            async with store.engine.begin() as conn:
                await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            break
        except sa.exc.DBAPIError as exc:
            if "deadlock detected" not in str(exc) or attempt == 4:
                raise
            await asyncio.sleep(0.1 * (attempt + 1))
    await store.close()


def create_schema(schema: str) -> None:
    """Create and migrate ``schema``. Raises :class:`ServiceMissing` without PostgreSQL."""
    try:
        asyncio.run(_create_schema(schema))
    except (RunStoreError, OSError) as exc:
        raise ServiceMissing(f"PostgreSQL unreachable at {PG_URL}: {exc}") from exc


def drop_schema(schema: str) -> None:
    """``DROP SCHEMA ... CASCADE`` of a schema :func:`create_schema` made."""
    asyncio.run(_drop_schema(schema))


def new_schema(stem: str) -> str:
    """A fresh, created and migrated schema ``<stem>_<12 hex>``."""
    name = f"{stem}_{uuid.uuid4().hex[:12]}"
    create_schema(name)
    return name


def new_prefix(stem: str) -> str:
    """A fresh Redis key prefix ``<stem>:<12 hex>:`` once Redis answers PING. Raises
    :class:`ServiceMissing` without Redis."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except (OSError, redis.RedisError) as exc:
        raise ServiceMissing(f"Redis unreachable at {REDIS_URL}: {exc}") from exc
    finally:
        client.close()
    return f"{stem}:{uuid.uuid4().hex[:12]}:"


def delete_prefix(prefix: str) -> None:
    """Delete the keys under ``prefix`` (never anything else)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
