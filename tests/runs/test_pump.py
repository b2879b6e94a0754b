"""RunPump: numbering, write-before-publish, batching, legal runs, cancel and fencing."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from gateway.runs import BATCHED_TYPES, Reaper, RunManager, RunPump
from gateway.store import Cursor, RunNotFoundError

from .agui_rules import verify
from .helpers import (
    FAST,
    Gate,
    SpyBroker,
    Stack,
    corpus_events,
    from_list,
    rich_run,
    wait_until,
    wires,
)

pytestmark = pytest.mark.timeout(120)


async def stored_events(stack: Stack, run_id: str = "run-1") -> list[dict[str, Any]]:
    return [s.event for s in await stack.store.read_events(run_id, limit=100_000)]


async def new_run(stack: Stack, run_id: str = "run-1", thread_id: str = "thread-1") -> Any:
    return await stack.store.create_run(run_id=run_id, thread_id=thread_id, owner="replica-a")


@pytest.mark.parametrize(
    "recording",
    [
        "compat-deepseek-reasoner-tool-call.jsonl",
        "gpt41nano-long-text.jsonl",
        "gpt4o-parallel-tool-calls.sse",
    ],
)
async def test_pump_stores_every_decoded_event_once_in_order(stack: Stack, recording: str) -> None:
    events = corpus_events(recording)
    run = await new_run(stack)
    outcome = await RunPump(stack.store, stack.broker, run, settings=FAST).run(from_list(events))
    stored = await stack.store.read_events(run.id, limit=100_000)
    assert [s.event for s in stored] == wires(events)
    assert [s.cursor for s in stored] == [Cursor(1, n) for n in range(1, len(events) + 1)]
    assert [s.durable for s in stored] == [s.event["type"] not in BATCHED_TYPES for s in stored]
    assert outcome.status == "completed" and outcome.cursor == stored[-1].cursor
    record = await stack.store.get_run(run.id)
    assert (record.status, record.last_cursor) == ("completed", stored[-1].cursor)
    assert record.usage == stored[-1].event.get("usage")
    verify(s.event for s in stored)


async def test_control_events_are_durable_before_they_are_published(stack: Stack) -> None:
    spy = SpyBroker(stack.broker, stack.store)
    run = await new_run(stack)
    await RunPump(stack.store, spy, run, settings=FAST).run(from_list(rich_run()))
    control = [
        (c, e) for c, e, durable in spy.published if e["type"] not in BATCHED_TYPES and not durable
    ]
    assert control == []
    assert [c for c, _e, _d in spy.published] == [
        Cursor(1, n) for n in range(1, len(rich_run()) + 1)
    ]


async def test_deltas_are_written_in_bounded_batches_exactly_once(stack: Stack) -> None:
    sizes: list[int] = []
    append = stack.store.append_events

    async def spy_append(run_id: str, epoch: int, events: Any, **kw: Any) -> Any:
        sizes.append(len(events))
        return await append(run_id, epoch, events, **kw)

    stack.store.append_events = spy_append  # type: ignore[method-assign]
    deltas = [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": str(i)} for i in range(100)
    ]
    events = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        *deltas,
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
    ]
    run = await new_run(stack)
    await RunPump(stack.store, stack.broker, run, settings=FAST).run(from_list(events))
    assert await stored_events(stack) == events
    assert sum(sizes) == len(events) and len(sizes) < len(events)
    assert max(sizes) <= FAST.batch_max_events + 1


async def test_run_started_is_synthesised_with_the_runs_ids(stack: Stack) -> None:
    """A missing RUN_STARTED is synthesised with the run's public ids and ``protocolVersion``
    (AG-UI 1.0 ``RunStartedEvent``) and a late one carrying nothing new absorbed (the store
    guard, ``agui_codecs.core.guard``); RUN_FINISHED is stored as sent (its ids are the decoder's, fixed before it was built:
    ``tests/gateway/test_runs_streaming.py`` checks them on a renamed run)."""
    run = await new_run(stack)
    upstream = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "RUN_STARTED", "threadId": "other", "runId": "other"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "after-the-end"},
    ]
    await RunPump(stack.store, stack.broker, run, settings=FAST).run(from_list(upstream))
    assert await stored_events(stack) == [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1", "protocolVersion": "1.0"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
    ]


async def test_an_upstream_breaking_the_lifecycle_is_repaired_or_ended_typed(stack: Stack) -> None:
    """Issue 12 item 3: the pump stores what the store guard (``agui_codecs.core.guard``) lets
    out. A repeat TEXT_MESSAGE_START equal to the open one is absorbed (verify.ts would reject
    ``text-start-already-open``) and counted; TOOL_CALL_ARGS of a call never opened (no name to
    open it with: ``tool-args-without-start``) ends the run: the open message closed, then
    RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR`` naming the rule."""
    from gateway import metrics

    run = await new_run(stack)
    absorbed = metrics.REPAIRS.labels(run.route or "", "duplicate-start-absorbed")
    before = absorbed._value.get()
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
    upstream = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        start,
        dict(start),
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "nobody", "delta": "{}"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
    ]
    pump = RunPump(stack.store, stack.broker, run, settings=FAST)
    outcome = await pump.run(from_list(upstream))
    stored = await stored_events(stack)
    assert stored[:4] == [
        upstream[0],
        upstream[1],
        upstream[3],
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    ]
    assert stored[4]["type"] == "RUN_ERROR" and len(stored) == 5
    assert stored[4]["code"] == "UPSTREAM_PROTOCOL_ERROR"
    assert stored[4]["metadata"]["rule"] == "agui/verify/tool-args-without-start"
    assert outcome.error is not None and outcome.error["code"] == "UPSTREAM_PROTOCOL_ERROR"
    assert absorbed._value.get() - before == 1


async def test_upstream_ending_early_is_closed_as_truncated(stack: Stack) -> None:
    events = rich_run()[:17]  # text closed, c1 open with args, c2 open, step open
    run = await new_run(stack)
    outcome = await RunPump(stack.store, stack.broker, run, settings=FAST).run(from_list(events))
    stored = await stored_events(stack)
    assert stored[:17] == events
    assert stored[17:] == [
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_END", "toolCallId": "c2"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {
            "type": "RUN_ERROR",
            "message": "upstream stream ended without a terminal event",
            "code": "UPSTREAM_TRUNCATED",
        },
    ]
    assert outcome.status == "failed" and outcome.error is not None
    assert (await stack.store.get_run(run.id)).error == {
        "code": "UPSTREAM_TRUNCATED",
        "message": "upstream stream ended without a terminal event",
    }
    verify(stored)


async def test_upstream_exception_ends_the_run_with_its_code(stack: Stack) -> None:
    class Overloaded(Exception):
        code = "UPSTREAM_OVERLOADED"

    async def source() -> Any:
        yield {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"}
        yield {"type": "TEXT_MESSAGE_START", "messageId": "m"}
        raise Overloaded("503 from the provider")

    run = await new_run(stack)
    outcome = await RunPump(stack.store, stack.broker, run, settings=FAST).run(source())
    stored = await stored_events(stack)
    assert stored[2:] == [
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {
            "type": "RUN_ERROR",
            "message": "upstream failed",
            "code": "UPSTREAM_OVERLOADED",
        },
    ]
    assert outcome.status == "failed"


async def test_an_untyped_upstream_exception_is_internal_and_never_named(stack: Stack) -> None:
    # issue 12: "upstream failed: AttributeError" leaked a class name to the client.
    async def source() -> Any:
        yield {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"}
        raise AttributeError("'int' object has no attribute 'get'")

    run = await new_run(stack)
    outcome = await RunPump(stack.store, stack.broker, run, settings=FAST).run(source())
    stored = await stored_events(stack)
    assert stored[-1] == {
        "type": "RUN_ERROR",
        "message": "internal gateway error",
        "code": "INTERNAL_ERROR",
    }
    assert "AttributeError" not in str(stored)
    assert outcome.error == {"code": "INTERNAL_ERROR", "message": "internal gateway error"}


async def test_cancel_closes_what_is_open_then_run_canceled(stack: Stack) -> None:
    gate = Gate(rich_run())
    run = await new_run(stack)
    pump = RunPump(stack.store, stack.broker, run, settings=FAST)
    task = asyncio.create_task(pump.run(gate.stream()))
    await gate.release(17)
    await wait_until(lambda: pump.cursor == Cursor(1, 17))
    pump.cancel()
    outcome = await task
    stored = await stored_events(stack)
    assert stored[17:] == [
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_END", "toolCallId": "c2"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {"type": "RUN_ERROR", "message": "run canceled by user", "code": "RUN_CANCELED"},
    ]
    assert gate.cancelled and gate.closed  # the upstream read was cancelled
    assert outcome.status == "cancelled"
    record = await stack.store.get_run(run.id)
    assert record.status == "cancelled" and record.error == {
        "code": "RUN_CANCELED",
        "message": "run canceled by user",
    }
    verify(stored)


async def test_cancel_requested_on_another_replica_reaches_the_pump(stack: Stack) -> None:
    gate = Gate(rich_run())
    run = await new_run(stack)
    pump = RunPump(stack.store, stack.broker, run, settings=FAST)
    task = asyncio.create_task(pump.run(gate.stream()))
    await gate.release(10)
    await wait_until(lambda: pump.cursor == Cursor(1, 10))
    await RunManager(stack.store, stack.broker, settings=FAST, owner="replica-b").cancel(run.id)
    outcome = await task
    stored = await stored_events(stack)
    assert outcome.status == "cancelled"
    assert stored[10:] == [
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {"type": "RUN_ERROR", "message": "run canceled by user", "code": "RUN_CANCELED"},
    ]


async def test_shutdown_ends_local_runs_interrupted(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=FAST)
    gate = Gate(rich_run())
    run = await manager.create_run(thread_id="thread-1", run_id="run-1")
    task = manager.start(run, gate.stream())
    await gate.release(3)
    await wait_until(lambda: manager._pumps["run-1"][0].cursor == Cursor(1, 3))
    await manager.aclose()
    assert (await task).status == "interrupted"
    assert (await stored_events(stack))[-2:] == [
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {
            "type": "RUN_ERROR",
            "message": "run interrupted: the gateway replica running it stopped",
            "code": "RUN_INTERRUPTED",
        },
    ]


async def test_fenced_pump_stops_and_the_new_epoch_closes_the_run(stack: Stack) -> None:
    gate = Gate(rich_run())
    run = await new_run(stack)
    pump = RunPump(stack.store, stack.broker, run, settings=FAST)
    task = asyncio.create_task(pump.run(gate.stream()))
    await gate.release(12)
    await wait_until(lambda: pump.cursor == Cursor(1, 12))
    # Another replica judged the lease expired (say the producer stalled): it takes over.
    later = stack.clock.now + timedelta(seconds=FAST.lease_timeout)
    taken = await stack.store.take_over(
        run.id, owner="replica-b", expected_epoch=1, stale_before=later
    )
    assert taken is not None and taken.epoch == 2
    await Reaper(stack.store, stack.broker, owner="replica-b", settings=FAST).close_run(taken)
    await gate.release(5)  # the old producer keeps receiving upstream events
    outcome = await task
    assert outcome.status == "fenced"
    stored = await stack.store.read_events(run.id, limit=1000)
    assert [s.cursor.epoch for s in stored].count(2) == 2
    assert [s.event["type"] for s in stored if s.cursor.epoch == 2] == [
        "STEP_FINISHED",
        "RUN_ERROR",
    ]
    assert stored[-1].event["code"] == "RUN_INTERRUPTED"
    assert all(s.cursor.seq <= 14 for s in stored)
    verify(s.event for s in stored)


async def test_manager_cancel_is_idempotent_and_unknown_is_not_found(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=FAST)
    run = await manager.create_run(thread_id="thread-1", run_id="run-1")
    await manager.start(run, from_list(rich_run()))
    first = await manager.cancel(run.id)
    again = await manager.cancel(run.id)
    assert first.status == again.status == "completed"
    with pytest.raises(RunNotFoundError):
        await manager.cancel("nope")
