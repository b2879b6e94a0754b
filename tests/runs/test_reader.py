"""Readers: exact continuation from any cursor, live tails, replicas, isolation, lost messages."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from gateway.broker import InProcessBroker
from gateway.runs import RunManager, RunPump, read_run
from gateway.store import (
    Cursor,
    CursorMismatchError,
    InvalidCursorError,
    NewEvent,
    RunEvent,
    RunFinal,
    RunNotFoundError,
)

from .agui_rules import verify
from .helpers import (
    FAST,
    Gate,
    LossyBroker,
    Stack,
    collect,
    corpus_events,
    from_list,
    rich_run,
    wait_until,
)

pytestmark = pytest.mark.timeout(120)


async def pump_all(
    stack: Stack, events: list[Any], run_id: str = "run-1", thread_id: str = "thread-1"
) -> None:
    run = await stack.store.create_run(run_id=run_id, thread_id=thread_id, owner="replica-a")
    await RunPump(stack.store, stack.broker, run, settings=FAST).run(from_list(events))


async def test_resume_from_every_cursor_gives_the_exact_continuation(stack: Stack) -> None:
    await pump_all(stack, corpus_events("compat-deepseek-reasoner-tool-call.jsonl"))
    stored = await stack.store.read_events("run-1", limit=10_000)
    for i in range(len(stored)):
        after = stored[i - 1].cursor if i else None
        got = await collect(
            read_run(stack.store, stack.broker, "run-1", after=after, settings=FAST)
        )
        assert got == [RunEvent(s.cursor, s.event) for s in stored[i:]], f"after {after}"


async def test_live_reader_sees_every_event_once(stack: Stack) -> None:
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    reader = asyncio.create_task(
        collect(read_run(stack.store, stack.broker, run.id, settings=FAST))
    )
    await asyncio.sleep(0)
    events = corpus_events("gpt41nano-long-text.jsonl")
    await RunPump(stack.store, stack.broker, run, settings=FAST).run(from_list(events))
    got = await reader
    stored = await stack.store.read_events(run.id, limit=10_000)
    assert got == [RunEvent(s.cursor, s.event) for s in stored]
    assert len(got) == len(events)


async def test_dropped_connections_resume_on_alternating_replicas(stack: Stack) -> None:
    """A run pumped on replica A, read alternately through A's and B's broker; the reader
    drops at random points and resumes with its last cursor: none lost, none repeated."""
    rng = random.Random(3)
    events = rich_run()
    gate = Gate(events)
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    pump_task = asyncio.create_task(
        RunPump(stack.store, stack.broker, run, settings=FAST).run(gate.stream())
    )
    received: list[RunEvent] = []
    turn = 0
    async with stack.replica_broker() as other:
        brokers = [stack.broker, other]
        while not received or not received[-1].terminal:
            await gate.release(rng.randint(0, 3))
            await wait_until(lambda: gate.sent == min(gate.allowed, len(events)))
            available = gate.sent - len(received)
            if not available:
                continue
            after = received[-1].cursor if received else None
            reader = read_run(stack.store, brokers[turn % 2], "run-1", after=after, settings=FAST)
            received += await collect(reader, limit=rng.randint(1, available))
            turn += 1
    await pump_task
    stored = await stack.store.read_events("run-1", limit=10_000)
    assert received == [RunEvent(s.cursor, s.event) for s in stored]
    assert turn >= 8
    verify(e.event for e in received)


async def test_two_interleaved_runs_of_one_thread_are_isolated(stack: Stack) -> None:
    gates = {rid: Gate(rich_run(run_id=rid)) for rid in ("run-a", "run-b")}
    tasks, readers = {}, {}
    for rid, gate in gates.items():
        run = await stack.store.create_run(run_id=rid, thread_id="thread-1", owner="a")
        readers[rid] = asyncio.create_task(
            collect(read_run(stack.store, stack.broker, rid, settings=FAST))
        )
        tasks[rid] = asyncio.create_task(
            RunPump(stack.store, stack.broker, run, settings=FAST).run(gate.stream())
        )
    for n in range(len(rich_run())):  # interleave: b gets its first 10 events between a's
        await gates["run-a"].release(1)
        await wait_until(lambda n=n: gates["run-a"].sent == n + 1)
        if n < 10:
            await gates["run-b"].release(1)
            await wait_until(lambda n=n: gates["run-b"].sent == n + 1)
    got_a = await readers["run-a"]  # ends on run-a's RUN_FINISHED while run-b is live
    assert not readers["run-b"].done()
    assert [e.event for e in got_a] == rich_run(run_id="run-a")
    await gates["run-b"].release(100)
    got_b = await readers["run-b"]
    assert [e.event for e in got_b] == rich_run(run_id="run-b")
    await asyncio.gather(*tasks.values())


async def test_resume_after_the_end_replays_the_rest_and_closes(stack: Stack) -> None:
    await pump_all(stack, rich_run())
    stored = await stack.store.read_events("run-1", limit=1000)
    tail = await collect(
        read_run(stack.store, stack.broker, "run-1", after=stored[-3].cursor, settings=FAST)
    )
    assert [e.cursor for e in tail] == [stored[-2].cursor, stored[-1].cursor]
    assert (
        await collect(
            read_run(stack.store, stack.broker, "run-1", after=stored[-1].cursor, settings=FAST)
        )
        == []
    )


async def test_cursors_not_of_the_run_are_refused(stack: Stack) -> None:
    await pump_all(stack, rich_run())
    manager = RunManager(stack.store, stack.broker, settings=FAST)
    last = (await stack.store.get_run("run-1")).last_cursor
    assert last is not None
    for bad in ("2.1", f"1.{last.seq + 1}"):
        with pytest.raises(CursorMismatchError):
            await manager.reader("run-1", after=bad)
    for garbage in ("", "1", "1.0", "0.1", "01.2", "1.2.3", "-1.2", "1.2x", "abc", "1." + "9" * 20):
        with pytest.raises(InvalidCursorError):
            await manager.reader("run-1", after=garbage)
    with pytest.raises(RunNotFoundError):
        await manager.reader("nope")
    assert len(await collect(await manager.reader("run-1", after=" 1.3 "))) == len(rich_run()) - 3


async def test_reader_ends_on_durable_state_when_broker_loses_everything(stack: Stack) -> None:
    lossy = LossyBroker(stack.broker, stack.store, keep=lambda n: False)
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    reader = asyncio.create_task(collect(read_run(stack.store, lossy, run.id, settings=FAST)))
    await RunPump(stack.store, lossy, run, settings=FAST).run(from_list(rich_run()))
    assert [e.event for e in await reader] == rich_run()


async def test_reader_fills_gaps_when_broker_loses_messages(stack: Stack) -> None:
    lossy = LossyBroker(stack.broker, stack.store, keep=lambda n: n % 3 != 0)
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    reader = asyncio.create_task(collect(read_run(stack.store, lossy, run.id, settings=FAST)))
    events = corpus_events("compat-deepseek-reasoner-tool-call.jsonl")
    await RunPump(stack.store, lossy, run, settings=FAST).run(from_list(events))
    got = await reader
    assert [e.cursor for e in got] == [Cursor(1, n) for n in range(1, len(events) + 1)]


async def test_slow_reader_overflowing_the_broker_queue_loses_nothing(memory_stack: Stack) -> None:
    small = InProcessBroker(maxlen=4)
    run = await memory_stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    events = corpus_events("gpt41nano-long-text.jsonl")
    reader = read_run(memory_stack.store, small, run.id, settings=FAST)
    waiting = asyncio.create_task(reader.__anext__())
    await wait_until(lambda: small._topics.get(run.id) and small._topics[run.id].subscribers)
    pump = asyncio.create_task(
        RunPump(memory_stack.store, small, run, settings=FAST).run(from_list(events))
    )
    first = await waiting
    await pump  # the reader stalls while the whole run goes by its 4-message queue
    rest = await collect(reader)
    got = [first, *rest]
    assert [e.cursor.seq for e in got] == list(range(1, len(events) + 1))


async def test_reader_waits_for_a_gap_that_is_not_durable_yet(memory_stack: Stack) -> None:
    """Broker messages past a hole the producer has not written yet are held, not skipped."""
    store, broker = memory_stack.store, memory_stack.broker
    run = await store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    from gateway.runs import RunWriter

    writer = RunWriter(store, broker, run)
    await writer.control([rich_run()[0]])
    hidden = InProcessBroker()  # deltas 2..3 reach no reader: only the store will have them
    writer.broker = hidden
    await writer.delta({"type": "TEXT_MESSAGE_START", "messageId": "m"})
    await writer.delta({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"})
    writer.broker = broker
    await writer.delta({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"})
    reader = read_run(store, broker, run.id, after=Cursor(1, 1), settings=FAST)
    pending = asyncio.create_task(reader.__anext__())
    await asyncio.sleep(0.05)
    assert not pending.done()  # 1.4 is known, but 1.2 and 1.3 are not durable yet
    await writer.flush()
    assert (await pending).cursor == Cursor(1, 2)
    assert [(await reader.__anext__()).cursor.seq for _ in range(2)] == [3, 4]
    await reader.aclose()


async def test_reader_started_before_the_run_has_events(stack: Stack) -> None:
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    gate = Gate(rich_run())
    reader = asyncio.create_task(
        collect(read_run(stack.store, stack.broker, run.id, settings=FAST))
    )
    await asyncio.sleep(0.1)  # idle rechecks happen; the run is queued
    pump = asyncio.create_task(
        RunPump(stack.store, stack.broker, run, settings=FAST).run(gate.stream())
    )
    await gate.release(100)
    assert [e.event for e in await reader] == rich_run()
    await pump
    await wait_until(lambda: True)


async def test_an_idle_reader_rechecks_with_one_run_read_and_no_replay(stack: Stack) -> None:
    """Issue 13: an idle stream costs the store one row read per re-check (a batched
    ``get_run_marks``, gateway/runs/recheck.py); the events are read only when the run's
    durable end moved past the reader's cursor (docs/runs.md §3)."""
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    await stack.store.append_events(
        run.id, 1, [NewEvent(1, {"type": "RUN_STARTED", "threadId": "t", "runId": "r"})]
    )
    calls: list[str] = []

    class Counting:
        def __getattr__(self, name: str) -> Any:
            calls.append(name)
            return getattr(stack.store, name)

    reader = read_run(Counting(), stack.broker, run.id, settings=FAST)  # type: ignore[arg-type]
    first = await anext(reader)
    assert first.cursor == Cursor(1, 1)
    calls.clear()
    pending = asyncio.ensure_future(anext(reader))
    await asyncio.sleep(FAST.reader_idle_recheck * 5)
    assert not pending.done()
    assert calls and set(calls) == {"get_run_marks"}
    # the run ends with nothing published: the next re-check replays the terminal event
    finished = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    await stack.store.append_events(
        run.id, 1, [NewEvent(2, finished)], final=RunFinal(status="completed")
    )
    got = await asyncio.wait_for(pending, 10)
    assert got == RunEvent(Cursor(1, 2), finished)
    await reader.aclose()
