"""Reaper: runs of dead producers end with RUN_INTERRUPTED in a new epoch; readers end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.runs import Reaper, RunManager, RunWriter, read_run
from gateway.store import Cursor, RunEvent, StaleEpochError

from .agui_rules import verify
from .helpers import FAST, Stack, collect, rich_run, wait_until

pytestmark = pytest.mark.timeout(120)

INTERRUPTED = {
    "type": "RUN_ERROR",
    "message": "run interrupted: the gateway replica running it stopped",
    "code": "RUN_INTERRUPTED",
}


async def dead_producer(stack: Stack, run_id: str = "run-1") -> RunWriter:
    """A producer that wrote 1.1-1.10, published 1.11-1.13 without writing them, and died."""
    run = await stack.store.create_run(run_id=run_id, thread_id="thread-1", owner="replica-a")
    writer = RunWriter(stack.store, stack.broker, run)
    events = rich_run(run_id=run_id)
    await writer.control(events[:2])
    for event in events[2:6]:
        await writer.delta(event)
    await writer.control(events[6:8])  # REASONING_MESSAGE_END, REASONING_END: written with 3-6
    await writer.delta(events[8])  # TEXT_MESSAGE_START m1
    await writer.delta(events[9])
    await writer.flush()  # durable end: 1.10
    await writer.delta(events[10])  # 1.11: published, never written
    return writer


async def test_reaper_closes_a_dead_producers_run_and_readers_end(stack: Stack) -> None:
    writer = await dead_producer(stack)
    live = asyncio.create_task(collect(read_run(stack.store, stack.broker, "run-1", settings=FAST)))
    await wait_until(lambda: writer.last_published == Cursor(1, 11))
    stack.clock.advance(FAST.lease_timeout + 1)
    assert await Reaper(
        stack.store, stack.broker, owner="replica-b", settings=FAST
    ).reap_once() == ["run-1"]
    got = await live
    closing = [
        RunEvent(Cursor(2, 11), {"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
        RunEvent(Cursor(2, 12), {"type": "STEP_FINISHED", "stepName": "plan"}),
        RunEvent(Cursor(2, 13), INTERRUPTED),
    ]
    assert got[-3:] == closing
    verify(e.event for e in got)
    stored = await stack.store.read_events("run-1", limit=1000)
    assert [s.cursor for s in stored] == [Cursor(1, n) for n in range(1, 11)] + [
        c.cursor for c in closing
    ]
    run = await stack.store.get_run("run-1")
    assert (run.status, run.epoch, run.lease_owner) == ("interrupted", 2, "replica-b")
    assert run.error == {"code": "RUN_INTERRUPTED", "message": INTERRUPTED["message"]}


async def test_resume_from_an_unwritten_cursor_continues_with_the_next_epoch(stack: Stack) -> None:
    await dead_producer(stack)
    stack.clock.advance(FAST.lease_timeout + 1)
    await Reaper(stack.store, stack.broker, owner="replica-b", settings=FAST).reap_once()
    # 1.11 reached a client before the producer died; it was never written.
    tail = await collect(
        read_run(stack.store, stack.broker, "run-1", after=Cursor(1, 11), settings=FAST)
    )
    assert [e.cursor for e in tail] == [Cursor(2, 11), Cursor(2, 12), Cursor(2, 13)]
    durable = await collect(
        read_run(stack.store, stack.broker, "run-1", after=Cursor(1, 9), settings=FAST)
    )
    assert [e.cursor for e in durable] == [
        Cursor(1, 10),
        Cursor(2, 11),
        Cursor(2, 12),
        Cursor(2, 13),
    ]


async def test_stale_producer_can_neither_write_nor_publish_after_takeover(stack: Stack) -> None:
    writer = await dead_producer(stack)
    stack.clock.advance(FAST.lease_timeout + 1)
    await Reaper(stack.store, stack.broker, owner="replica-b", settings=FAST).reap_once()
    with pytest.raises(StaleEpochError):
        await writer.control([{"type": "TEXT_MESSAGE_END", "messageId": "m1"}])
    assert not await stack.broker.publish("run-1", Cursor(1, 14), {"type": "TEXT_MESSAGE_END"})


async def test_a_fresh_heartbeat_keeps_the_run(stack: Stack) -> None:
    await dead_producer(stack)
    stack.clock.advance(FAST.lease_timeout - 1)
    assert await Reaper(stack.store, stack.broker, owner="b", settings=FAST).reap_once() == []
    stack.clock.advance(2)
    await stack.store.heartbeat("run-1", 1)
    assert await Reaper(stack.store, stack.broker, owner="b", settings=FAST).reap_once() == []
    assert (await stack.store.get_run("run-1")).status == "running"


async def test_concurrent_reapers_close_a_run_once(stack: Stack) -> None:
    await dead_producer(stack)
    stack.clock.advance(FAST.lease_timeout + 1)
    reapers = [Reaper(stack.store, stack.broker, owner=f"r{i}", settings=FAST) for i in range(3)]
    results = await asyncio.gather(*(r.reap_once() for r in reapers))
    assert sorted(r for result in results for r in result) == ["run-1"]
    stored = await stack.store.read_events("run-1", limit=1000)
    assert [s.event["type"] for s in stored].count("RUN_ERROR") == 1


async def test_reaped_run_with_a_pending_cancel_ends_canceled(stack: Stack) -> None:
    await dead_producer(stack)
    await stack.store.request_cancel("run-1")
    stack.clock.advance(FAST.lease_timeout + 1)
    await Reaper(stack.store, stack.broker, owner="b", settings=FAST).reap_once()
    last = (await stack.store.read_events("run-1", after=Cursor(2, 12)))[-1]
    assert last.event == {
        "type": "RUN_ERROR",
        "message": "run canceled by user",
        "code": "RUN_CANCELED",
    }
    assert (await stack.store.get_run("run-1")).status == "cancelled"


async def test_queued_run_that_never_started_is_closed_with_run_error_only(stack: Stack) -> None:
    await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="gone")
    stack.clock.advance(FAST.lease_timeout + 1)
    await Reaper(stack.store, stack.broker, owner="b", settings=FAST).reap_once()
    stored = await stack.store.read_events("run-1")
    assert [(s.cursor, s.event) for s in stored] == [(Cursor(2, 1), INTERRUPTED)]
    verify(s.event for s in stored)


async def test_background_reaper_ends_readers_of_a_dead_replicas_run(stack: Stack) -> None:
    await dead_producer(stack)
    manager = RunManager(stack.store, stack.broker, settings=FAST, owner="replica-b")
    reader = await manager.reader("run-1", after="1.2")
    pending = asyncio.create_task(collect(reader))
    await manager.start_background()
    try:
        stack.clock.advance(FAST.lease_timeout + 1)
        got: list[Any] = await pending
    finally:
        await manager.aclose()
    assert got[-1].event == INTERRUPTED and got[0].cursor == Cursor(1, 3)
