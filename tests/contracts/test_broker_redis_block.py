"""A Redis subscription waits longer than its client's socket timeout without an error: one
``XREAD BLOCK`` lasts at most :func:`~gateway.broker.redis_streams.max_block` (redis-py 8 reads
with a 5 s socket timeout by default, blocking commands included, and the readers' idle wait
is ``GATEWAY_READER_RECHECK``, 5 s: a ``BLOCK`` as long as the wait timed out, dropped the
connection, logged a warning and paused the reader 1 s)."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest
import redis.asyncio as aioredis
from run_backends import REDIS_URL, unavailable

from gateway.broker.redis_streams import RedisStreamsBroker, max_block
from gateway.types import Cursor


def test_max_block_stays_below_the_socket_timeout() -> None:
    assert max_block(aioredis.from_url(REDIS_URL, socket_timeout=5)) == 4.0
    assert max_block(aioredis.from_url(REDIS_URL, socket_timeout=1)) == 0.5
    assert max_block(aioredis.from_url(REDIS_URL, socket_timeout=None)) is None
    assert max_block(aioredis.from_url(REDIS_URL + "?socket_timeout=3")) == 2.0
    default = max_block(aioredis.from_url(REDIS_URL))  # the library's default
    assert default is None or default < 5


async def test_a_wait_longer_than_the_socket_timeout_is_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = aioredis.from_url(REDIS_URL, socket_timeout=0.6)
    try:
        await client.ping()
    except (OSError, aioredis.RedisError) as exc:
        await client.aclose()
        unavailable("Redis", exc)
    broker = RedisStreamsBroker(client, prefix=f"test:{uuid.uuid4().hex[:16]}:")
    publisher = RedisStreamsBroker(aioredis.from_url(REDIS_URL), prefix=broker.prefix)
    try:
        assert await publisher.publish("r", Cursor(1, 1), {"type": "RUN_STARTED"})
        caplog.set_level(logging.WARNING, logger="gateway.broker.redis_streams")
        async with broker.subscribe("r", after=Cursor(1, 1)) as sub:
            assert await sub.receive(1.5) == []  # idle for 2.5 socket timeouts

            async def later() -> None:
                await asyncio.sleep(1.0)
                await publisher.publish("r", Cursor(1, 2), {"type": "RUN_FINISHED"})

            task = asyncio.create_task(later())
            got = await sub.receive(3.0)  # the event comes in the wait's second block
            await task
        assert [(e.cursor, e.event["type"]) for e in got] == [(Cursor(1, 2), "RUN_FINISHED")]
        assert not [r for r in caplog.records if "XREAD failed" in r.getMessage()]
    finally:
        await client.delete(broker.key("r"))
        await client.aclose()
        await publisher.client.aclose()
