"""Requests queued behind a full upstream pool that leave before they get a connection (their
caller cancelled, or their pool timeout passed) take nothing with them: the others queued
get the connection in turn, each response whole, and the pool ends empty (no request left in
httpcore's queue, no slot in flight), ready for the next request.

The pool drops a request's wait event once it has its connection (``gateway/upstream_pool.py``,
as httpcore's ``clear_connection`` does); these are the waits that end otherwise. Hypothesis
draws how many wait and which of them leave, and how.
"""

from __future__ import annotations

import asyncio

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.upstream_pool import ShardedTransport

from .test_upstream_pool import _server


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fates=st.lists(st.sampled_from(["wait", "cancel", "timeout"]), min_size=1, max_size=5))
def test_queued_requests_that_leave_take_nothing_with_them(fates: list[str]) -> None:
    async def scenario() -> None:
        server, base = await _server()
        transport = ShardedTransport(httpx.Limits(max_connections=1), shard_connections=1)
        client = httpx.AsyncClient(transport=transport, base_url=base, timeout=30)
        try:
            held = await client.send(client.build_request("GET", "/held"), stream=True)
            tasks = []
            for i, fate in enumerate(fates):
                timeout = httpx.Timeout(30, pool=0.01 if fate == "timeout" else 30)
                tasks.append(asyncio.create_task(client.get(f"/q{i}", timeout=timeout)))
            pool = transport.shards[0].transport._pool
            for _ in range(1000):  # every request queued in httpcore's pool, behind the held one
                if len(pool._requests) == 1 + len(fates):
                    break
                await asyncio.sleep(0)
            assert len(pool._requests) == 1 + len(fates)
            for task, fate in zip(tasks, fates, strict=True):
                if fate == "cancel":
                    task.cancel()
            for task, fate in zip(tasks, fates, strict=True):
                if fate == "timeout":  # the pool stays full until the held body closes
                    assert isinstance(
                        (await asyncio.gather(task, return_exceptions=True))[0], httpx.PoolTimeout
                    )
                elif fate == "cancel":
                    outcome = (await asyncio.gather(task, return_exceptions=True))[0]
                    assert isinstance(outcome, asyncio.CancelledError)
            assert await held.aread() == b"/held" * 50
            await held.aclose()
            for i, (task, fate) in enumerate(zip(tasks, fates, strict=True)):
                if fate == "wait":
                    assert (await task).content == f"/q{i}".encode() * 50
                else:
                    assert task.done()
            assert (await client.get("/after")).content == b"/after" * 50
            assert [s.in_flight for s in transport.shards] == [0]
            assert [len(s.transport._pool._requests) for s in transport.shards] == [0]
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
