"""The sharded upstream pool (:mod:`gateway.upstream_pool`, issue 13 item 5.1) against a real
HTTP/1.1 server on 127.0.0.1.

What must hold (httpx 0.28 ``Limits`` semantics, over all shards): every response arrives whole,
once; no shard's httpcore pool holds more than its size; the shards together never hold more
than ``max_connections`` requests; a shard is added only when every existing one is full; every
slot comes back when its body is closed, also when the request failed.
"""

from __future__ import annotations

import asyncio
import math

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.app import create_app
from gateway.config import Settings
from gateway.upstream_pool import SHARD_CONNECTIONS, ShardedTransport


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 keep-alive: each request's body is its path, repeated (``Content-Length``)."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1]
            body = path * 50
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _server() -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


def _check(transport: ShardedTransport, total: int, shard_size: int, peak: int) -> None:
    assert sum(s.size for s in transport.shards) <= total
    assert len(transport.shards) <= math.ceil(max(peak, 1) / shard_size)
    for shard in transport.shards:
        assert 0 <= shard.in_flight <= shard.size <= shard_size
        assert len(shard.transport._pool.connections) <= shard.size


@st.composite
def scripts(draw: st.DrawFn) -> tuple[int, int, list[tuple[str, int]]]:
    shard_size = draw(st.integers(1, 4))
    total = draw(st.integers(1, 12))
    steps: list[tuple[str, int]] = []
    for _ in range(draw(st.integers(1, 30))):
        steps.append((draw(st.sampled_from(["open", "open", "close"])), draw(st.integers(0, 99))))
    return shard_size, total, steps


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scripts())
def test_streams_spread_over_shards_and_come_back_whole(
    script: tuple[int, int, list[tuple[str, int]]],
) -> None:
    shard_size, total, steps = script

    async def scenario() -> None:
        server, base = await _server()
        limits = httpx.Limits(max_connections=total, max_keepalive_connections=2)
        transport = ShardedTransport(limits, shard_connections=shard_size)
        client = httpx.AsyncClient(transport=transport, base_url=base, timeout=5)
        open_: list[tuple[httpx.Response, str]] = []
        peak = 0
        n = 0
        try:
            for op, pick in steps:
                if op == "open" and len(open_) < total:  # beyond it a request would wait
                    n += 1
                    path = f"/r{n}"
                    request = client.build_request("GET", path)
                    open_.append((await client.send(request, stream=True), path))
                    peak = max(peak, len(open_))
                elif op == "close" and open_:
                    response, path = open_.pop(pick % len(open_))
                    assert await response.aread() == path.encode() * 50
                    await response.aclose()
                _check(transport, total, shard_size, peak)
                assert sum(s.in_flight for s in transport.shards) == len(open_)
            for response, path in open_:
                assert await response.aread() == path.encode() * 50
            open_.clear()
            assert all(s.in_flight == 0 for s in transport.shards)
            shards = len(transport.shards)
            response = await client.get("/again")  # reuses what exists: no new shard
            assert response.content == b"/again" * 50
            assert len(transport.shards) == max(shards, 1)
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())


def test_a_failed_request_gives_its_slot_back() -> None:
    async def scenario() -> None:
        server, base = await _server()
        server.close()
        await server.wait_closed()  # nothing listens there any more
        transport = ShardedTransport(httpx.Limits(max_connections=2), shard_connections=1)
        async with httpx.AsyncClient(transport=transport, base_url=base) as client:
            for _ in range(3):
                with pytest.raises(httpx.ConnectError):
                    await client.get("/")
        assert [s.in_flight for s in transport.shards] == [0]

    asyncio.run(scenario())


def test_when_every_shard_is_full_a_request_waits_for_a_connection() -> None:
    """Beyond ``max_connections`` a request waits ``timeouts.pool``, then ``PoolTimeout``
    (httpx's own behaviour with one pool, which the gateway maps to ``UPSTREAM_TIMEOUT``)."""

    async def scenario() -> None:
        server, base = await _server()
        transport = ShardedTransport(httpx.Limits(max_connections=3), shard_connections=2)
        client = httpx.AsyncClient(transport=transport, base_url=base)
        held = [
            await client.send(client.build_request("GET", f"/h{i}"), stream=True) for i in "abc"
        ]
        assert [s.size for s in transport.shards] == [2, 1]
        with pytest.raises(httpx.PoolTimeout):
            await client.get("/late", timeout=httpx.Timeout(5, pool=0.05))
        await held[0].aclose()
        assert (await client.get("/late")).content == b"/late" * 50
        for response in held[1:]:
            await response.aclose()
        await client.aclose()
        server.close()
        await server.wait_closed()

    asyncio.run(scenario())


def test_the_app_sends_upstream_requests_through_the_sharded_pool() -> None:
    app = create_app(Settings(config=None, database_url="sqlite://", upstream_max_connections=600))
    client = app.state.services.pipeline.upstream.client
    transport = client._transport
    assert isinstance(transport, ShardedTransport)
    assert transport._max_shards == math.ceil(600 / SHARD_CONNECTIONS)


def test_a_request_waiting_in_a_full_pool_gets_the_connection_given_back() -> None:
    """A request queued behind a full pool is woken by the release of another's connection
    (its wait event is set from that task), and its own connection goes back to the pool in
    turn: the wait event, dropped once the connection is taken, is not needed after it."""

    async def scenario() -> None:
        server, base = await _server()
        transport = ShardedTransport(httpx.Limits(max_connections=1), shard_connections=1)
        client = httpx.AsyncClient(transport=transport, base_url=base, timeout=5)
        try:
            held = await client.send(client.build_request("GET", "/first"), stream=True)
            waiting = [
                asyncio.create_task(client.get(f"/queued{i}", timeout=httpx.Timeout(5)))
                for i in range(3)
            ]
            await asyncio.sleep(0.05)
            assert not any(task.done() for task in waiting)
            assert await held.aread() == b"/first" * 50
            await held.aclose()
            got = [(await task).content for task in waiting]
            assert got == [f"/queued{i}".encode() * 50 for i in range(3)]
            assert (await client.get("/after")).content == b"/after" * 50
            assert [s.in_flight for s in transport.shards] == [0]
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
