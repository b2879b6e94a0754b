"""The store or the broker lost mid-run (issue 12, item 5), for real: the machine's PostgreSQL
and Redis behind a TCP forwarder on loopback (``tests/support/tcp_proxy.py``) that the test
cuts and restores; the servers themselves are never touched.

* the store translates the driver's socket errors (asyncpg's ``OSError`` /
  ``ConnectionRefusedError``) into ``StoreUnavailableError`` (503 ``STORE_UNAVAILABLE``), and
  ``check()`` / ``healthy()`` report it;
* an outage shorter than ``store_outage_grace``: the pump's writes retry with backoff and the
  run completes with every event stored once, in order;
* a longer one: the pump gives up, its live reader ends with what was open closed and RUN_ERROR
  ``STORE_UNAVAILABLE`` (never a cut stream), and once the store is back everything written
  before the cut is still readable;
* Redis lost: ``check()`` raises ``BrokerUnavailableError``, ``healthy()`` is False, and the
  run still completes (readers fall back to the store).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
import sqlalchemy as sa
from run_backends import PG_URL, REDIS_URL, unavailable
from tcp_proxy import TcpProxy

from agui_codecs.encoders.agui import AguiEncoder
from gateway.broker import BrokerUnavailableError, InProcessBroker, RedisStreamsBroker
from gateway.encoding import encode_run_events
from gateway.runs import RunPump
from gateway.runs.reader import read_run
from gateway.store import RunStoreError, SqlRunStore, StoreUnavailableError, open_store

from .agui_rules import verify
from .helpers import FAST, Gate, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

pytestmark = pytest.mark.timeout(120)

TEXT = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    *({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"w{i} "} for i in range(20)),
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def _target(url: str, default_port: int) -> tuple[str, int]:
    parsed = sa.make_url(url)
    return parsed.host or "127.0.0.1", parsed.port or default_port


@contextlib.asynccontextmanager
async def proxied_store() -> AsyncIterator[tuple[SqlRunStore, TcpProxy, str]]:
    host, port = _target(PG_URL, 5432)
    async with TcpProxy(host, port) as proxy:
        url = sa.make_url(PG_URL).set(host="127.0.0.1", port=proxy.port)
        schema = f"test_{uuid.uuid4().hex[:16]}"
        try:
            store = await open_store(url.render_as_string(hide_password=False), schema=schema)
        except (RunStoreError, OSError) as exc:
            unavailable("PostgreSQL", exc)
        try:
            yield store, proxy, schema
        finally:
            proxy.restore()
            with contextlib.suppress(Exception):
                async with store.engine.begin() as conn:
                    await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            await store.close()


async def test_a_lost_database_is_store_unavailable_and_reported_by_check() -> None:
    async with proxied_store() as (store, proxy, _):
        assert await store.healthy()
        await store.check()
        await proxy.cut()
        await store.engine.dispose()  # pooled connections were reset: new ones are refused
        with pytest.raises(StoreUnavailableError) as info:
            await store.get_run("nope")
        assert (info.value.code, info.value.status) == ("STORE_UNAVAILABLE", 503)
        assert "Error" not in info.value.message  # no exception class for the client
        assert not await store.healthy()
        with pytest.raises(StoreUnavailableError):
            await store.check()
        proxy.restore()
        assert await store.healthy()


async def test_an_outage_shorter_than_the_grace_loses_nothing() -> None:
    async with proxied_store() as (store, proxy, _):
        broker = InProcessBroker()
        run = await store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
        gate = Gate(TEXT)
        settings = replace(FAST, store_outage_grace=30.0)
        pump = asyncio.create_task(
            RunPump(store, broker, run, settings=settings).run(gate.stream())
        )
        await gate.release(5)
        await wait_until(lambda: gate.sent == 5)
        await proxy.cut()
        await gate.release(len(TEXT))  # the rest arrives while the database is away
        await asyncio.sleep(0.3)
        proxy.restore()
        await gate.finish()
        outcome = await pump
        assert outcome.status == "completed"
        stored = [s.event["type"] for s in await store.read_events(run.id, limit=1000)]
        assert stored == [e["type"] for e in TEXT]
        verify(s.event for s in await store.read_events(run.id, limit=1000))


async def test_a_long_outage_ends_the_live_reader_typed_and_keeps_what_was_stored() -> None:
    async with proxied_store() as (store, proxy, _):
        broker = InProcessBroker()
        run = await store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
        gate = Gate(TEXT)
        settings = replace(FAST, store_outage_grace=0.3, write_retries=2)
        pump = asyncio.create_task(
            RunPump(store, broker, run, settings=settings).run(gate.stream())
        )
        await gate.release(3)  # RUN_STARTED (control: durable), TEXT_MESSAGE_START, one delta
        await wait_until(lambda: gate.sent == 3)
        reader = encode_run_events(
            read_run(store, broker, run.id, settings=settings), AguiEncoder()
        )
        received: list[bytes] = []

        async def read() -> None:
            async for chunk in reader:
                received.append(chunk)

        reading = asyncio.create_task(read())
        await wait_until(lambda: sum(c.count(b"\n\n") for c in received) >= 3)  # frames
        await proxy.cut()
        await gate.release(len(TEXT) - 1)  # up to RUN_FINISHED's write, which cannot happen
        outcome = await pump
        assert outcome.status == "store_error"
        await asyncio.wait_for(reading, 30)
        body = b"".join(received).decode()
        events = [_json(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "STORE_UNAVAILABLE"
        assert "TEXT_MESSAGE_END" in [e["type"] for e in events]  # closed before the error
        verify(events)
        proxy.restore()
        stored = [s.event for s in await store.read_events(run.id, limit=1000)]
        assert stored and stored[0]["type"] == "RUN_STARTED"
        assert stored == events[: len(stored)]  # what was written is readable, as it was sent


def _json(text: str) -> Any:
    import json

    return json.loads(text)


async def test_a_lost_redis_is_reported_and_the_run_still_completes() -> None:
    host, port = _target(REDIS_URL, 6379)
    async with TcpProxy(host, port) as proxy:
        client = aioredis.from_url(f"redis://127.0.0.1:{proxy.port}/0")
        broker = RedisStreamsBroker(client, prefix=f"test:{uuid.uuid4().hex[:16]}:")
        try:
            if not await broker.healthy():
                unavailable("Redis", "no PING answer through the proxy")
            await proxy.cut()
            with pytest.raises(BrokerUnavailableError) as info:
                await broker.check()
            assert info.value.code == "BROKER_UNAVAILABLE"
            assert not await broker.healthy()
            async with proxied_store() as (store, _, _schema):
                run = await store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
                outcome = await RunPump(store, broker, run, settings=FAST).run(_aiter(TEXT))
                assert outcome.status == "completed"
                stored = await store.read_events(run.id, limit=1000)
                assert [s.event["type"] for s in stored] == [e["type"] for e in TEXT]
        finally:
            proxy.restore()
            await broker.close()


async def _aiter(events: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for event in events:
        yield event


async def test_http_answers_the_json_error_shape_while_the_database_is_lost() -> None:
    from durable_support import call, running

    from gateway.app import create_app
    from gateway.config import Settings

    async with proxied_store() as (store, proxy, _):
        app = create_app(Settings(), store=store, broker=InProcessBroker())
        async with running(app):
            await proxy.cut()
            await store.engine.dispose()
            reply = await call(app, "GET", "/api/v1/agent/history?threadId=t1")
            assert reply.status == 503, reply.body
            assert _json(reply.body.decode()) == {
                "error": {"code": "STORE_UNAVAILABLE", "message": "the run store is unavailable"}
            }
            proxy.restore()


async def test_an_unreachable_redis_at_start_up_is_a_clear_error() -> None:
    from gateway.app import create_app
    from gateway.config import Settings

    async with TcpProxy("127.0.0.1", 9) as proxy, proxied_store() as (store, _, _schema):
        await proxy.cut()  # nothing answers on the proxy's port
        app = create_app(Settings(redis_url=f"redis://127.0.0.1:{proxy.port}/0"), store=store)
        with pytest.raises(BrokerUnavailableError, match="broker is unavailable"):
            async with app.router.lifespan_context(app):
                pass
