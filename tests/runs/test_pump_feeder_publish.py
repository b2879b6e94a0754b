"""Issue 13, per-event cost: the pump's feeder publishes a lone delta itself while the pump
waits (``RunPump._stage_now``, ``RunWriter.commit_now``: the in-process broker publishes
without I/O), instead of waking the pump task for it. Proven equal to the pump's own path (a
broker without ``publish_nowait``): the same events stored (with their ``durable`` flags), the
same events read by a live reader, in the same order, the same outcome; nothing lost or
duplicated (``docs/runs.md`` §2, §3)."""

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
    """The in-process broker, counting the feeder's synchronous publishes."""

    nowait = 0

    def publish_nowait(self, run_id: str, events: Sequence[RunEvent]) -> int:
        self.nowait += 1
        return super().publish_nowait(run_id, events)

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        return super().publish_nowait(run_id, events)  # the pump's own: not counted


class _Awaited:
    """The in-process broker without ``publish_nowait``: every commit is the pump's own."""

    def __init__(self) -> None:
        self._inner = InProcessBroker()

    def __getattr__(self, name: str) -> Any:
        if name == "publish_nowait":
            raise AttributeError(name)
        return getattr(self._inner, name)


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
    ]


# a plan: chunks of event kinds (a chunk arrives at once), each with the wait before it: 0-2
# loop turns, or 3: 2 ms (the pump waits for its inbox by then)
_chunk = st.tuples(st.integers(0, 3), st.lists(st.integers(0, 7), min_size=1, max_size=4))
_plans = st.lists(_chunk, min_size=1, max_size=14)


async def _source(plan: list[tuple[int, list[int]]]) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    n = 0
    for turns, kinds in plan:
        if turns == 3:
            await asyncio.sleep(0.002)
        for _ in range(turns if turns < 3 else 0):
            await asyncio.sleep(0)
        for kind in kinds:
            n += 1
            yield _kinds(n)[kind]


async def _play(broker: Any, plan: list[tuple[int, list[int]]]) -> tuple[Any, ...]:
    with tempfile.TemporaryDirectory(prefix="agui-feeder-") as tmp:
        store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
        try:
            record = await store.create_run(run_id="r", thread_id="t", owner="test")
            reading = asyncio.create_task(collect(read_run(store, broker, "r", settings=FAST)))
            await asyncio.sleep(0.005)  # the reader subscribed: it reads the live tail
            outcome = await RunPump(store, broker, record, settings=FAST).run(_source(plan))
            got = await reading
            stored = await store.read_events("r", limit=10_000)
        finally:
            await store.close()
    read = [(m.cursor, m.event) for m in got]
    assert read == [(e.cursor, e.event) for e in stored]  # the live reader got the stored run
    return outcome.status, outcome.cursor, read, [e.durable for e in stored]


@settings(max_examples=40, deadline=None)
@given(plan=_plans)
@example(plan=[(0, [1]), (3, [0]), (3, [0]), (1, [0]), (3, [0, 0]), (3, [4]), (2, [2, 7])])
async def test_the_feeders_publishes_equal_the_pumps(plan: list[tuple[int, list[int]]]) -> None:
    fast = await _play(_Counted(), plan)
    slow = await _play(_Awaited(), plan)
    assert fast == slow


async def test_lone_deltas_are_published_by_the_feeder() -> None:
    broker = _Counted()
    plan = [(0, [1]), *[(3, [0])] * 5, (3, [2, 7])]
    status, _cursor, read, _durable = await _play(broker, plan)
    assert status == "completed"
    assert [e["delta"] for _c, e in read if e["type"] == "TEXT_MESSAGE_CONTENT"] == [
        f"d{n} " for n in range(2, 7)
    ]
    assert broker.nowait >= 3  # most lone deltas cost no wake-up of the pump
