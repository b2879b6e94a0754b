"""Part (c) of ``bench/resume.py``: live latency of a run pumped from a bursty upstream
while a reader is attached."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from resume_scenarios import Deployment, JsonObject, synthetic_run

# -- (c) live latency --------------------------------------------------------------------------------


BATCHED = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CHUNK",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CHUNK",
        "TOOL_CALL_ARGS",
    }
)
"""The event types a pump publishes before they are durable (gateway.runs.BATCHED_TYPES)."""


@dataclass
class LatencyResult:
    """Upstream-yield -> reader-receive latencies (seconds) of one live run."""

    deltas: list[float]
    controls: list[float]


async def bench_latency(dep: Deployment, n: int, pace: float) -> LatencyResult:
    """Pump an ``n``-event run whose upstream delivers bursts of 1-4 events every ``pace``
    seconds, with a reader attached; the latency of every event from its burst's arrival."""
    manager = dep.manager
    thread_id, run_id = f"bench-{uuid.uuid4().hex[:8]}", f"run-{uuid.uuid4().hex}"
    events = synthetic_run(n, thread_id, run_id)
    yielded: list[float] = []

    async def upstream() -> AsyncIterator[JsonObject]:
        # Burst k "arrives" at start + k * pace whether or not the pump is reading: latency
        # counts from then, so time an event waits because its pump is busy (not reading, or
        # holding it until a write ends) is counted either way.
        i = burst = 0
        start = time.perf_counter()
        while i < len(events):
            arrival = start + burst * pace
            delay = arrival - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            size = 1 + burst % 4
            burst += 1
            for event in events[i : i + size]:
                yielded.append(arrival)
                yield event
            i += size

    run = await manager.create_run(thread_id=thread_id, run_id=run_id)
    reader = await manager.reader(run.id)
    received: list[tuple[float, str]] = []

    async def client() -> None:
        async with contextlib.aclosing(reader) as it:  # type: ignore[type-var]
            async for ev in it:
                received.append((time.perf_counter(), ev.type))

    consumer = asyncio.create_task(client())
    await asyncio.sleep(0)
    outcome = await manager.start(run, upstream())
    await consumer
    assert outcome.status == "completed" and len(received) == len(yielded) == n
    deltas, controls = [], []
    for sent, (got, kind) in zip(yielded, received, strict=True):
        (deltas if kind in BATCHED else controls).append(got - sent)
    return LatencyResult(deltas, controls)


def percentiles(values: list[float]) -> str:
    """``p50 / p99 / max`` in ms."""
    ordered = sorted(values)
    if not ordered:
        return "-"

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return f"{at(0.5):.2f} / {at(0.99):.2f} / {ordered[-1] * 1000:.2f}"
