"""Issue 13, per-event cost: the pump takes a chunk's events as one list (what one upstream
chunk decoded to, the pipeline's batches) instead of one ``anext`` each, and its feeder stages
and publishes them in one call. Proven equal to the reference path, the same events fed one by
one: the same events stored (with their ``durable`` flags), the same events read by a live
reader, in the same order, the same outcome; nothing lost or duplicated (``docs/runs.md``
§2, §3)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.broker import InProcessBroker
from gateway.runs import RunPump, read_run
from gateway.store import RunEvent, open_store

from .helpers import FAST, collect

pytestmark = pytest.mark.timeout(300)


class _Counted(InProcessBroker):
    """The in-process broker, counting broker calls (the feeder's and the pump's)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def publish_nowait(self, run_id: str, events: Sequence[RunEvent]) -> int:
        self.calls += 1
        return super().publish_nowait(run_id, events)

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        self.calls += 1
        return super().publish_nowait(run_id, events)


def _kinds(n: int) -> list[dict[str, Any]]:
    """Event ``n`` of each kind the plans draw from (deltas numbered, so order shows)."""
    return [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{n} "},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": f"a{n}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "CUSTOM", "name": "x", "value": n},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        {"type": "RUN_ERROR", "message": "upstream failed", "code": "X"},
    ]


# a plan: chunks of event kinds (a chunk arrives at once), each with the wait before it: 0-2
# loop turns, or 3: 2 ms (the pump waits for its inbox by then); an empty chunk is legal
_chunk = st.tuples(st.integers(0, 3), st.lists(st.integers(0, 8), min_size=0, max_size=5))
_plans = st.lists(_chunk, min_size=1, max_size=14)


def _chunks(plan: list[tuple[int, list[int]]]) -> list[tuple[int, list[dict[str, Any]]]]:
    n = 0
    out = [(0, [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}])]
    for turns, kinds in plan:
        chunk = []
        for kind in kinds:
            n += 1
            chunk.append(_kinds(n)[kind])
        out.append((turns, chunk))
    return out


async def _source(plan: list[tuple[int, list[int]]], *, as_chunks: bool) -> AsyncIterator[Any]:
    for turns, chunk in _chunks(plan):
        if turns == 3:
            await asyncio.sleep(0.002)
        for _ in range(turns if turns < 3 else 0):
            await asyncio.sleep(0)
        if as_chunks:
            yield chunk
        else:
            for event in chunk:
                yield event


async def _play(plan: list[tuple[int, list[int]]], *, as_chunks: bool) -> tuple[Any, ...]:
    broker = _Counted()
    with tempfile.TemporaryDirectory(prefix="agui-chunks-") as tmp:
        store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
        try:
            record = await store.create_run(run_id="r", thread_id="t", owner="test")
            reading = asyncio.create_task(collect(read_run(store, broker, "r", settings=FAST)))
            await asyncio.sleep(0.005)  # the reader subscribed: it reads the live tail
            source = _source(plan, as_chunks=as_chunks)
            outcome = await RunPump(store, broker, record, settings=FAST).run(source)
            got = await reading
            stored = await store.read_events("r", limit=10_000)
        finally:
            await store.close()
    read = [(m.cursor, m.event) for m in got]
    assert read == [(e.cursor, e.event) for e in stored]  # the live reader got the stored run
    assert len({m.cursor for m in got}) == len(got)  # nothing twice
    result = (outcome.status, outcome.cursor, outcome.error, read, [e.durable for e in stored])
    return result, broker.calls


@settings(max_examples=40, deadline=None)
@given(plan=_plans)
@example(plan=[(0, [1]), (3, [0, 0, 0]), (3, [0, 2, 0]), (3, [4, 7, 0]), (3, [0])])
@example(plan=[(3, [1, 0, 0]), (3, [8, 0]), (3, [0])])
@example(plan=[(3, []), (0, [1]), (3, [0, 0]), (1, [])])
async def test_a_pumped_chunk_equals_its_events_one_by_one(
    plan: list[tuple[int, list[int]]],
) -> None:
    chunked, _ = await _play(plan, as_chunks=True)
    one_by_one, _ = await _play(plan, as_chunks=False)
    assert chunked == one_by_one


async def test_a_chunk_of_deltas_is_published_in_one_broker_call() -> None:
    # RUN_STARTED, TEXT_MESSAGE_START (control: written, then published: two calls), then
    # five chunks of three deltas each 2 ms apart: the waiting pump's feeder publishes each
    # chunk at once, in one call; the end (control events): one call
    plan = [(0, [1]), *[(3, [0, 0, 0])] * 5, (3, [2, 7])]
    (status, _cursor, _error, read, _durable), calls = await _play(plan, as_chunks=True)
    assert status == "completed"
    assert [e["delta"] for _c, e in read if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        f"d{n} " for n in range(2, 17)
    ]
    assert calls <= 2 + 5 + 1
    (_s, _c, _e, read_one_by_one, _d), calls_one_by_one = await _play(plan, as_chunks=False)
    assert read_one_by_one == read
    assert calls_one_by_one > calls  # one by one: a call per lone delta the feeder took
