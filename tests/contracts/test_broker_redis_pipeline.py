"""The Redis broker sends the ``publish_many`` calls of all runs queued meanwhile in one
pipeline (:mod:`gateway.broker.redis_streams`): each call gets what it would get alone (each
cursor fenced on its own against its run's stream) and each stream holds what one ``publish``
per event, run after run, would have left in it."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from run_backends import make_broker

from gateway.broker.redis_streams import RedisStreamsBroker
from gateway.types import Cursor, RunEvent

# Per run, a list of calls; each call a list of (epoch, seq) cursors, in any order (some not
# after the stream's last: refused).
cursors = st.tuples(st.integers(1, 2), st.integers(1, 6))
calls = st.lists(st.lists(cursors, min_size=1, max_size=4), min_size=1, max_size=4)


def wire(cursor: tuple[int, int]) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{cursor}"}


def model(plan: list[list[tuple[int, int]]]) -> tuple[list[int], list[tuple[int, int]]]:
    """Accepted count per call and the stream left, with one publish per event."""
    last: tuple[int, int] | None = None
    counts, stream = [], []
    for call in plan:
        accepted = 0
        for cursor in call:
            if last is None or cursor > last:
                last = cursor
                stream.append(cursor)
                accepted += 1
        counts.append(accepted)
    return counts, stream


async def stream_of(broker: RedisStreamsBroker, run_id: str) -> list[tuple[int, int]]:
    entries = await broker.client.xrange(broker.key(run_id))
    return [tuple(int(part) for part in entry_id.decode().split("-")) for entry_id, _ in entries]


@settings(max_examples=30, deadline=None)
@given(plans=st.lists(calls, min_size=1, max_size=5))
async def test_shared_pipelines_equal_one_publish_per_event(
    plans: list[list[list[tuple[int, int]]]],
) -> None:
    async with make_broker("redis") as broker:
        assert isinstance(broker, RedisStreamsBroker)

        async def writer(index: int, plan: list[list[tuple[int, int]]]) -> list[int]:
            counts = []
            for call in plan:  # awaited one after the other, as a run's writer does
                events = [RunEvent(Cursor(*c), wire(c)) for c in call]
                counts.append(await broker.publish_many(f"r{index}", events))
            return counts

        results = await asyncio.gather(*(writer(i, plan) for i, plan in enumerate(plans)))
        for index, plan in enumerate(plans):
            counts, stream = model(plan)
            assert results[index] == counts
            assert await stream_of(broker, f"r{index}") == stream


async def test_concurrent_runs_share_a_pipeline() -> None:
    async with make_broker("redis") as broker:
        assert isinstance(broker, RedisStreamsBroker)
        await broker.publish_many("warm", [RunEvent(Cursor(1, 1), wire((1, 1)))])
        before = broker.pipelines
        counts = await asyncio.gather(
            *(
                broker.publish_many(f"r{i}", [RunEvent(Cursor(1, 1), wire((1, 1)))])
                for i in range(8)
            )
        )
        assert counts == [1] * 8
        assert broker.pipelines == before + 1
        ttl = await broker.client.ttl(broker.key("r3"))
        assert 0 < ttl <= broker.ttl


async def test_redis_down_publishes_nothing_and_recovers() -> None:
    """An unreachable Redis fails the pipeline's calls with 0; the sender keeps serving."""
    async with make_broker("redis") as broker:
        assert isinstance(broker, RedisStreamsBroker)
        real = broker.client
        broker.client = type(real).from_url("redis://127.0.0.1:1/0")  # nothing listens there
        try:
            assert await broker.publish_many("r", [RunEvent(Cursor(1, 1), wire((1, 1)))]) == 0
        finally:
            await broker.client.aclose()
            broker.client = real
        assert await broker.publish_many("r", [RunEvent(Cursor(1, 1), wire((1, 1)))]) == 1
