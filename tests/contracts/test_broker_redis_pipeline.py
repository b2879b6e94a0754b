"""The Redis broker sends the ``publish_many`` calls of all runs queued meanwhile in one
pipeline (:mod:`gateway.broker.redis_streams`): each call gets what it would get alone (each
cursor fenced on its own against its run's stream) and each stream holds what one ``publish``
per event, run after run, would have left in it."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import example, given, settings
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


# Local delivery: steps of a local producer ("here") and another replica's ("there") on one run.
steps = st.lists(
    st.tuples(st.sampled_from(["here", "there"]), st.lists(cursors, min_size=1, max_size=4)),
    min_size=1,
    max_size=6,
)


async def drained(subscription: Any) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    while batch := await subscription.receive(0.05):
        out += [(m.cursor.epoch, m.cursor.seq) for m in batch]
    return out


@settings(max_examples=60, deadline=None)
@example(  # another replica's entry between two of ours: never delivered past it
    plan=[("here", [(1, 1)]), ("there", [(2, 2)]), ("here", [(2, 5)])],
    after=None,
    read_count=4,
    early=False,
)
@example(  # more entries at once than a reader holds
    plan=[("here", [(1, 1), (1, 2), (1, 3)])], after=None, read_count=2, early=False
)
@given(
    plan=steps,
    after=st.one_of(st.none(), cursors),
    read_count=st.integers(1, 4),
    early=st.booleans(),
)
async def test_local_delivery_equals_xread(
    plan: list[tuple[str, list[tuple[int, int]]]],
    after: tuple[int, int] | None,
    read_count: int,
    early: bool,
) -> None:
    """A subscription of the producing replica delivers what one that only ``XREAD``s
    delivers: the same entries in the same order, whoever published them and whether the
    reader drains as they come (``early``) or after everything was published."""
    start = Cursor(*after) if after is not None else None
    async with (
        make_broker("redis", reader_maxlen=read_count) as here,
        make_broker("redis", prefix=here.prefix, reader_maxlen=read_count) as there,  # type: ignore[attr-defined]
        make_broker("redis", prefix=here.prefix, reader_maxlen=read_count) as observer,  # type: ignore[attr-defined]
    ):
        async with (
            here.subscribe("r", after=start) as local,
            observer.subscribe("r", after=start) as remote,
        ):
            got_local: list[tuple[int, int]] = []
            for who, call in plan:
                events = [RunEvent(Cursor(*c), wire(c)) for c in call]
                await (here if who == "here" else there).publish_many("r", events)
                if early:
                    got_local += await drained(local)
                assert len(local._local) <= read_count  # type: ignore[attr-defined]  # bounded
            got_local += await drained(local)
            assert got_local == await drained(remote)
