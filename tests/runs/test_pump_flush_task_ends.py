"""A run whose deltas never reach a flush tick: the flush loop's task (started by the first
booked tick, not with the run) ends with the run however it ends, and the deltas are durable
all the same (``docs/runs.md`` §2: a control event is written together with every pending delta
before it, and the run's end is a control event).

The batch interval is long (no tick comes during the test), so every delta is written by the
end's write, never by the flush loop: the end is the upstream's terminal event, a truncated
upstream, a cancel or a shutdown of the run; a fence (another replica took the run over) and a
hard cancel of the pump's task write nothing more: only the task's cleanup is checked then.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.runs import RunPump, RunSettings

from .helpers import Gate, Stack, wait_until

pytestmark = pytest.mark.timeout(120)


def _delta(n: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{n} "}


def _flush_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("flush:") and not t.done()]


@pytest.mark.parametrize("deltas", [0, 1, 3])
@pytest.mark.parametrize(
    "end", ["terminal", "truncated", "cancel", "shutdown", "fence", "task_cancel"]
)
async def test_a_run_ending_before_its_first_flush_tick(
    memory_stack: Stack, end: str, deltas: int
) -> None:
    store, broker = memory_stack.store, memory_stack.broker
    settings = RunSettings(
        batch_interval=3600, batch_max_events=1000, heartbeat_interval=5, lease_timeout=30
    )
    record = await store.create_run(run_id="r", thread_id="t", owner="test")
    head = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *[_delta(n) for n in range(deltas)],
    ]
    tail = [
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    gate = Gate(head + tail)
    pump = RunPump(store, broker, record, settings=settings)
    task = asyncio.create_task(pump.run(gate.stream()))
    await gate.release(len(head))
    await wait_until(
        lambda: (
            pump.writer.last_published is not None and pump.writer.last_published.seq == len(head)
        )
    )
    assert len(_flush_tasks()) == 1  # booked, not yet due
    durable = [e.event["type"] for e in await store.read_events(record.id)]
    assert durable == ["RUN_STARTED"]  # the opening and the deltas wait for a tick

    if end == "task_cancel":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _flush_tasks() == []
        return
    if end == "fence":  # taken over elsewhere: nothing more is written here
        pump.fence()
        assert (await task).status == "fenced"
        assert _flush_tasks() == []
        return
    if end == "terminal":
        await gate.release(len(tail))
    elif end == "truncated":
        await gate.finish()
    elif end == "cancel":
        pump.cancel()
    else:
        pump.cancel(reason="shutdown")
    outcome = await task
    assert _flush_tasks() == []
    stored = [e.event for e in await store.read_events(record.id)]
    assert [e.cursor.seq for e in await store.read_events(record.id)] == list(
        range(1, len(stored) + 1)
    )
    assert stored[: len(head)] == head  # every delta durable, in order
    assert stored[len(head)]["type"] == "TEXT_MESSAGE_END"  # closed before the end
    assert stored[-1]["type"] == ("RUN_FINISHED" if end == "terminal" else "RUN_ERROR")
    assert len(stored) == len(head) + 2
    assert outcome.cursor is not None and outcome.cursor.seq == len(stored)
