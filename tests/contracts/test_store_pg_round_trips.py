"""PostgreSQL's cheaper round trips (:mod:`gateway.store.engine`): the one-statement pre-ping
(at checkout after :data:`~gateway.store.engine.PING_AFTER_IDLE` idle) still replaces a pooled
connection that died while idle, and reads in autocommit see what the
writes committed."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa
from run_backends import PG_URL, unavailable
from tcp_proxy import TcpProxy

from gateway.store import NewEvent, RunStoreError, SqlRunStore, open_store
from gateway.store.engine import PING_AFTER_IDLE

pytestmark = pytest.mark.timeout(120)


@contextlib.asynccontextmanager
async def proxied_store() -> AsyncIterator[tuple[SqlRunStore, TcpProxy]]:
    parsed = sa.make_url(PG_URL)
    async with TcpProxy(parsed.host or "127.0.0.1", parsed.port or 5432) as proxy:
        url = parsed.set(host="127.0.0.1", port=proxy.port)
        schema = f"test_{uuid.uuid4().hex[:16]}"
        try:
            store = await open_store(url.render_as_string(hide_password=False), schema=schema)
        except (RunStoreError, OSError) as exc:
            unavailable("PostgreSQL", exc)
        try:
            yield store, proxy
        finally:
            proxy.restore()
            with contextlib.suppress(Exception):
                async with store.engine.begin() as conn:
                    await conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            await store.close()


def delta(seq: int) -> dict[str, str]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{seq}"}


async def test_a_connection_that_died_idle_is_replaced_at_checkout() -> None:
    async with proxied_store() as (store, proxy):
        await store.create_run(run_id="r", thread_id="t", owner="a", status="running")
        await store.append_events("r", 1, [NewEvent(1, delta(1))])
        assert (await store.get_run("r")).last_seq == 1
        await proxy.cut()  # every pooled connection dies while idle
        proxy.restore()
        await asyncio.sleep(PING_AFTER_IDLE + 0.2)  # idle long enough to be pinged at checkout
        assert (await store.get_run("r")).last_seq == 1  # read: the ping replaced it
        await store.append_events("r", 1, [NewEvent(2, delta(2))])  # and the group writer's
        assert [e.cursor.seq for e in await store.read_events("r")] == [1, 2]
        await store.check()


async def test_reads_see_each_committed_write() -> None:
    async with proxied_store() as (store, _proxy):
        await store.create_run(run_id="r", thread_id="t", owner="a", status="running")
        for seq in range(1, 6):
            await store.append_events("r", 1, [NewEvent(seq, delta(seq))])
            assert (await store.get_run("r")).last_seq == seq
            wire = await store.read_wire("r", after=None, limit=100)
            assert [e.cursor.seq for e in wire] == list(range(1, seq + 1))
