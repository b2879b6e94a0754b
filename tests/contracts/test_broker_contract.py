"""Broker contract, run over the in-process broker and Redis Streams (issue 3 §5; docs/runs.md
§3-§4)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from run_backends import make_broker

from gateway.broker import Broker
from gateway.store import Cursor, RunEvent

pytestmark = pytest.mark.timeout(60)

IDLE = 0.05  # receive() timeout used when nothing is expected


def wire(n: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{n}", "ü": [n, None]}


async def publish_range(broker: Broker, run_id: str, seqs: range, epoch: int = 1) -> None:
    for n in seqs:
        assert await broker.publish(run_id, Cursor(epoch, n), wire(n))


async def drain(sub: Any, want: int, *, rounds: int = 50) -> list[RunEvent]:
    """Receive until ``want`` messages arrived (bounded number of rounds, no timing asserted)."""
    got: list[RunEvent] = []
    for _ in range(rounds):
        got += await sub.receive(0.2)
        if len(got) >= want:
            break
    return got


async def test_subscription_replays_the_retained_tail_in_order(broker: Broker) -> None:
    await publish_range(broker, "r", range(1, 6))
    async with broker.subscribe("r") as sub:
        got = await drain(sub, 5)
    assert [m.cursor for m in got] == [Cursor(1, n) for n in range(1, 6)]
    assert [m.event for m in got] == [wire(n) for n in range(1, 6)]


async def test_subscription_starts_strictly_after_its_cursor(broker: Broker) -> None:
    await publish_range(broker, "r", range(1, 6))
    async with broker.subscribe("r", after=Cursor(1, 3)) as sub:
        got = await drain(sub, 2)
        assert [m.cursor.seq for m in got] == [4, 5]
        assert await sub.receive(IDLE) == []


async def test_live_messages_follow_the_tail(broker: Broker) -> None:
    await publish_range(broker, "r", range(1, 3))
    async with broker.subscribe("r", after=Cursor(1, 1)) as sub:
        await publish_range(broker, "r", range(3, 5))
        got = await drain(sub, 3)
    assert [m.cursor.seq for m in got] == [2, 3, 4]


async def test_waiting_subscriber_is_woken_by_publish(broker: Broker) -> None:
    async with broker.subscribe("r") as sub:
        waiter = asyncio.create_task(drain(sub, 1))
        await asyncio.sleep(0)
        await publish_range(broker, "r", range(1, 2))
        got = await waiter
    assert [m.cursor for m in got] == [Cursor(1, 1)]


async def test_every_subscriber_gets_every_message(broker: Broker) -> None:
    async with broker.subscribe("r") as a, broker.subscribe("r") as b:
        await publish_range(broker, "r", range(1, 21))
        got_a, got_b = await drain(a, 20), await drain(b, 20)
    assert [m.cursor.seq for m in got_a] == [m.cursor.seq for m in got_b] == list(range(1, 21))


async def test_runs_are_isolated(broker: Broker) -> None:
    async with broker.subscribe("run-a") as a:
        await publish_range(broker, "run-b", range(1, 4))
        await publish_range(broker, "run-a", range(1, 2))
        got = await drain(a, 1)
        assert await a.receive(IDLE) == []
    assert [m.event for m in got] == [wire(1)]


async def test_cursor_not_after_the_last_is_refused(broker: Broker) -> None:
    await publish_range(broker, "r", range(1, 4))
    assert not await broker.publish("r", Cursor(1, 3), wire(99))
    assert not await broker.publish("r", Cursor(1, 2), wire(99))
    async with broker.subscribe("r") as sub:
        got = await drain(sub, 3)
        assert await sub.receive(IDLE) == []
    assert [m.event for m in got] == [wire(1), wire(2), wire(3)]


async def test_new_epoch_fences_the_old_producer(broker: Broker) -> None:
    """A reaper's 2.4 sorts after the dead producer's 1.7; the old producer is then refused."""
    await publish_range(broker, "r", range(1, 8))
    assert await broker.publish("r", Cursor(2, 4), wire(40))
    assert not await broker.publish("r", Cursor(1, 8), wire(8))
    async with broker.subscribe("r", after=Cursor(1, 6)) as sub:
        got = await drain(sub, 2)
    assert [m.cursor for m in got] == [Cursor(1, 7), Cursor(2, 4)]


async def test_skip_to_drops_what_the_reader_already_has(broker: Broker) -> None:
    await publish_range(broker, "r", range(1, 6))
    async with broker.subscribe("r") as sub:
        sub.skip_to(Cursor(1, 4))
        got = await drain(sub, 1)
    assert [m.cursor.seq for m in got] == [5]


async def test_idle_receive_returns_nothing(broker: Broker) -> None:
    async with broker.subscribe("never-published") as sub:
        assert await sub.receive(IDLE) == []


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_retained_tail_is_bounded(kind: str) -> None:
    async with make_broker(kind, maxlen=10) as broker:
        await publish_range(broker, "r", range(1, 1001))
        async with broker.subscribe("r") as sub:
            got = await drain(sub, 1000, rounds=5)
    seqs = [m.cursor.seq for m in got]
    assert 10 <= len(seqs) < 1000  # Redis trims approximately (whole stream nodes)
    assert seqs == list(range(1001 - len(seqs), 1001))


async def test_two_redis_brokers_share_runs() -> None:
    """Replicas: what one replica publishes, another replica's subscription receives."""
    async with make_broker("redis") as first:
        prefix = first.prefix  # type: ignore[attr-defined]
        async with make_broker("redis", prefix=prefix) as second:
            async with second.subscribe("r") as sub:
                await publish_range(first, "r", range(1, 4))
                got = await drain(sub, 3)
            assert not await second.publish("r", Cursor(1, 2), wire(2))
    assert [m.cursor.seq for m in got] == [1, 2, 3]


async def test_publish_many_is_publish_in_order(broker: Broker) -> None:
    """One call (one Redis round trip) delivers exactly what one ``publish`` per event would."""
    batch = [RunEvent(Cursor(1, n), wire(n)) for n in range(1, 6)]
    async with broker.subscribe("r") as sub:
        assert await broker.publish_many("r", batch) == 5
        assert await broker.publish_many("r", []) == 0
        got = await drain(sub, 5)
    assert [(m.cursor, m.event) for m in got] == [(m.cursor, m.event) for m in batch]
    async with broker.subscribe("r", after=Cursor(1, 2)) as sub:
        assert [m.cursor.seq for m in await drain(sub, 3)] == [3, 4, 5]


async def test_publish_many_fences_each_event(broker: Broker) -> None:
    """Cursors not after the last accepted are refused one by one, also inside a batch: a new
    epoch's events fence the rest of an old producer's batch."""
    await publish_range(broker, "r", range(1, 4))
    assert await broker.publish("r", Cursor(2, 4), wire(40))
    stale = [RunEvent(Cursor(1, n), wire(n)) for n in range(4, 7)]
    assert await broker.publish_many("r", stale) == 0
    mixed = [
        RunEvent(Cursor(2, 3), wire(3)),  # not after 2.4: refused
        RunEvent(Cursor(2, 5), wire(50)),
        RunEvent(Cursor(2, 5), wire(51)),  # duplicate: refused
        RunEvent(Cursor(2, 6), wire(60)),
    ]
    assert await broker.publish_many("r", mixed) == 2
    async with broker.subscribe("r", after=Cursor(1, 3)) as sub:
        got = await drain(sub, 3)
        assert await sub.receive(IDLE) == []
    assert [(m.cursor, m.event) for m in got] == [
        (Cursor(2, 4), wire(40)),
        (Cursor(2, 5), wire(50)),
        (Cursor(2, 6), wire(60)),
    ]
