"""Pooled PostgreSQL connections are pinged at checkout only after they sat idle
(``gateway.store.engine.ping_when_idle``): a replay's pages, read back to back, pay no ping,
and a connection that died while idle is still replaced before the operation runs on it.

The dead connection is made for real: the server ends its backend (``pg_terminate_backend``,
PostgreSQL docs 9.28.2, "Server Signaling Functions") from a second connection.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa
from corpus import require_service
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.store.engine import create_engine, ping_when_idle

PG_URL = os.environ.get(
    "GATEWAY_TEST_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
IDLE = 0.3


@pytest.fixture
async def engine() -> AsyncIterator[tuple[AsyncEngine, list[Any]]]:
    """An engine pinging after :data:`IDLE` seconds, and the list of connections pinged."""
    engine = create_engine(PG_URL, pre_ping=False, pool_size=2)
    ping_when_idle(engine, idle=IDLE)
    dialect: Any = engine.sync_engine.dialect
    pinged: list[Any] = []
    ping = dialect.do_ping

    def counted(dbapi: Any) -> bool:
        pinged.append(dbapi)
        return bool(ping(dbapi))

    dialect.do_ping = counted
    try:
        async with engine.connect() as conn:
            await conn.execute(sa.text("SELECT 1"))
    except (OSError, sa.exc.DBAPIError) as exc:
        await engine.dispose()
        require_service(False, f"PostgreSQL unreachable: {exc}")
    try:
        yield engine, pinged
    finally:
        await engine.dispose()


async def _pid(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(sa.text("SELECT pg_backend_pid()"))).scalar_one())


async def test_a_connection_used_just_now_is_not_pinged(
    engine: tuple[AsyncEngine, list[Any]],
) -> None:
    eng, pinged = engine
    first = await _pid(eng)
    assert [await _pid(eng) for _ in range(5)] == [first] * 5  # last in, first out
    assert pinged == []
    await asyncio.sleep(IDLE + 0.1)
    assert await _pid(eng) == first
    assert len(pinged) == 1  # idle past IDLE: pinged once, then busy again
    assert await _pid(eng) == first
    assert len(pinged) == 1


async def test_a_connection_that_died_while_idle_is_replaced_before_use(
    engine: tuple[AsyncEngine, list[Any]],
) -> None:
    eng, pinged = engine
    dead = await _pid(eng)
    other = create_engine(PG_URL, pre_ping=False, pool_size=1)
    try:
        async with other.connect() as conn:
            await conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": dead})
    finally:
        await other.dispose()
    await asyncio.sleep(IDLE + 0.1)
    fresh = await _pid(eng)  # the ping found it gone: the operation ran on a new connection
    assert fresh != dead
    assert len(pinged) == 1
