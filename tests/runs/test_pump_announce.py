"""RunPump ``announce`` (issue 16 item 7: the client's first event does not wait for the
upstream): RUN_STARTED is stored and published before the upstream is read, and nothing else
changes: for any upstream event sequence, the stored run with and without ``announce`` is the
same once its leading RUN_STARTED is set aside, and the announced RUN_STARTED is the run's."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from event_strategies import event_sequences
from hypothesis import HealthCheck, given, settings

from agui_codecs.events import event_to_wire
from gateway.runs import RunPump

from .helpers import FAST, Stack, corpus_events, from_list, wires

pytestmark = pytest.mark.timeout(300)

ANNOUNCED = {
    "type": "RUN_STARTED",
    "threadId": "thread-1",
    "runId": "run-1",
    "protocolVersion": "1.0",
}


async def pumped(stack: Stack, events: list[Any], *, announce: bool) -> list[dict[str, Any]]:
    run_id = f"run-{uuid.uuid4().hex}"
    run = await stack.store.create_run(
        run_id=run_id, thread_id=f"thread-{uuid.uuid4().hex}", owner="replica-a"
    )
    pump = RunPump(stack.store, stack.broker, run, settings=FAST, announce=announce)
    await pump.run(from_list(events))
    own = {run.public_thread_id: "thread-1", run.public_run_id: "run-1"}  # the pump's ids
    return [
        {k: own.get(v, v) if k in ("threadId", "runId") else v for k, v in s.event.items()}
        for s in await stack.store.read_events(run_id, limit=100_000)
    ]


def without_start(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return stored[1:] if stored and stored[0]["type"] == "RUN_STARTED" else stored


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=event_sequences())
async def test_announce_changes_nothing_but_the_first_run_started(
    memory_stack: Stack, events: list[Any]
) -> None:
    wire = [event_to_wire(e) for e in events]
    plain = await pumped(memory_stack, wire, announce=False)
    announced = await pumped(memory_stack, wire, announce=True)
    assert announced[0] == ANNOUNCED
    assert without_start(announced) == without_start(plain)


@pytest.mark.parametrize(
    "recording", ["gpt41nano-long-text.jsonl", "gpt4o-parallel-tool-calls.sse"]
)
async def test_a_decoded_run_is_stored_the_same_with_announce(stack: Stack, recording: str) -> None:
    events = corpus_events(recording)
    assert await pumped(stack, events, announce=True) == await pumped(stack, events, announce=False)


async def test_run_started_is_published_before_the_upstream_is_read(stack: Stack) -> None:
    gate = asyncio.Event()
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="replica-a")

    async def upstream() -> Any:
        await gate.wait()
        for event in wires(corpus_events("gpt41nano-long-text.jsonl")):
            yield event

    pump = RunPump(stack.store, stack.broker, run, settings=FAST, announce=True)
    task = asyncio.create_task(pump.run(upstream()))
    async with stack.broker.subscribe("run-1") as subscription:
        first = await subscription.receive(5.0)
    assert [m.event for m in first[:1]] == [ANNOUNCED]
    stored = await stack.store.read_events("run-1", limit=10)
    assert [s.event for s in stored] == [ANNOUNCED]  # durable before it was published
    gate.set()
    outcome = await task
    assert outcome.status == "completed"
