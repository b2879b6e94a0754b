"""A store outage shorter than ``store_outage_grace`` loses nothing, however many deltas arrive
while the store is away (issue 12 item 7: found by ``bench/fault_trials.py``, kind
``pg-short``: once ``batch_max_events`` deltas were pending, the pump's inline flush tried the
write once, outside the grace, and the run ended with RUN_ERROR ``STORE_UNAVAILABLE`` after
well under a second of outage).

The store here is SQLite behind a switch that refuses writes and heartbeats with
``StoreUnavailableError`` (what ``SqlRunStore`` raises for a lost database, checked for real by
``test_store_outage.py``); hypothesis picks how many deltas come before and during the outage,
across the batch size. Contract: docs/runs.md §6 ("a short outage loses nothing").
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.broker import InProcessBroker
from gateway.runs import RunPump
from gateway.store import SqlRunStore, StoreUnavailableError

from .agui_rules import verify
from .helpers import FAST, Gate, Stack, wait_until


class SwitchedStore:
    """``inner`` with writes and heartbeats refused while ``down`` (reads pass)."""

    def __init__(self, inner: SqlRunStore) -> None:
        self.inner = inner
        self.down = False
        self.refused = 0
        self.largest_refused = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _refuse(self, events: int = 0) -> None:
        if self.down:
            self.refused += 1
            self.largest_refused = max(self.largest_refused, events)
            raise StoreUnavailableError("the run store is unavailable")

    async def append_events(self, run_id: str, epoch: int, events: Any, **kwargs: Any) -> Any:
        self._refuse(len(events))
        return await self.inner.append_events(run_id, epoch, events, **kwargs)

    async def heartbeat(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse()
        return await self.inner.heartbeat(*args, **kwargs)


def text_run(run_id: str, deltas: int) -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": run_id},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"w{i} "}
            for i in range(deltas)
        ),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": run_id},
    ]


RUNS = iter(range(10**9))


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=st.integers(0, 20),
    during=st.integers(FAST.batch_max_events, 4 * FAST.batch_max_events),
)
async def test_deltas_during_a_short_outage_are_all_stored_once_in_order(
    memory_stack: Stack, before: int, during: int
) -> None:
    run_id = f"run-{next(RUNS)}"
    events = text_run(run_id, before + during)
    store = SwitchedStore(memory_stack.store)
    run = await memory_stack.store.create_run(run_id=run_id, thread_id="thread-1", owner="a")
    gate = Gate(events)
    pump = asyncio.create_task(
        RunPump(
            store,  # type: ignore[arg-type]
            InProcessBroker(),
            run,
            settings=replace(FAST, store_outage_grace=60.0),
        ).run(gate.stream())
    )
    try:
        await gate.release(2 + before)
        await wait_until(lambda: gate.sent == 2 + before)
        store.down = True
        await gate.release(during)  # deltas only: the store is away while they arrive
        # a write of a whole batch refused: the pump must wait it out, not give up
        batch = FAST.batch_max_events
        await wait_until(lambda: pump.done() or store.largest_refused >= batch)
        assert not pump.done(), "the pump gave up inside the grace"
        store.down = False
        await gate.release(2)
        await gate.finish()
        outcome = await pump
        assert outcome.status == "completed"
    finally:
        if not pump.done():  # a failed example leaves no pump writing into the next one
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
    stored = [s.event for s in await memory_stack.store.read_events(run.id, limit=10_000)]
    assert stored == events
    verify(stored)
