"""The replica lease (issue 13 item 5, ``docs/runs.md`` §4): a manager heartbeats once for
all its runs; its pumps keep no heartbeat of their own; the replica heartbeat cancels and
fences them; a run is reaped only once its replica stopped beating.

And the announced start (issue 13 item 2): a run created with its RUN_STARTED stores it in
the creating commit, and its pump publishes it once, with cursor 1.1, without writing it again.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from gateway.runs import Reaper, RunManager
from gateway.store import Cursor, SqlRunStore

from .agui_rules import verify
from .helpers import FAST, Gate, Stack, collect, wait_until

pytestmark = pytest.mark.timeout(120)

QUIET = replace(FAST, heartbeat_interval=3600.0, lease_timeout=7200.0)
"""A replica that beats once at start, then only when the test calls ``beat()``."""


def text(run_id: str) -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": run_id},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": run_id},
    ]


class CountingStore:
    """``inner`` counting per-run heartbeats and replica heartbeats."""

    def __init__(self, inner: SqlRunStore) -> None:
        self.inner = inner
        self.run_beats = 0
        self.replica_beats = 0
        self.answers: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def heartbeat(self, *args: Any, **kwargs: Any) -> Any:
        self.run_beats += 1
        return await self.inner.heartbeat(*args, **kwargs)

    async def heartbeat_replica(self, *args: Any, **kwargs: Any) -> Any:
        self.replica_beats += 1
        return await self.inner.heartbeat_replica(*args, **kwargs)

    async def beat_replica(self, *args: Any, **kwargs: Any) -> Any:
        self.replica_beats += 1
        answer = await self.inner.beat_replica(*args, **kwargs)
        self.answers.append(answer)
        return answer


async def test_one_heartbeat_per_replica_not_per_run(stack: Stack) -> None:
    store = CountingStore(stack.store)
    manager = RunManager(store, stack.broker, settings=FAST, owner="rep-a")  # type: ignore[arg-type]
    gates = [Gate(text(f"run-{i}")) for i in range(12)]
    try:
        for i, gate in enumerate(gates):
            run = await manager.create_run(thread_id="thread-1", run_id=f"run-{i}", announce=True)
            manager.start(run, gate.stream(), announce=True)
        await wait_until(lambda: store.replica_beats >= 3)
        assert store.run_beats == 0
        owned = await stack.store.heartbeat_replica("rep-a")
        assert {o.run_id for o in owned} == {f"run-{i}" for i in range(12)}
    finally:
        await manager.aclose()
    assert await stack.store.heartbeat_replica("rep-b") == []


async def test_announced_start_is_stored_with_the_run_and_published_once(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=FAST, owner="rep-a")
    gate = Gate(text("run-1"))
    try:
        run = await manager.create_run(thread_id="thread-1", run_id="run-1", announce=True)
        assert (run.status, run.last_cursor) == ("running", Cursor(1, 1))
        first = await stack.store.read_wire(run.id)
        assert [e.event["type"] for e in first] == ["RUN_STARTED"]
        reader = await manager.reader(run.id, run=run)
        task = manager.start(run, gate.stream(), announce=True)
        await gate.release(len(gate.events))
        got = await collect(reader)
        outcome = await task
    finally:
        await manager.aclose()
    assert outcome.status == "completed"
    assert [e.cursor for e in got] == [Cursor(1, n) for n in range(1, 6)]
    assert [e.event["type"] for e in got].count("RUN_STARTED") == 1
    assert got[0].event == first[0].event  # the upstream's own RUN_STARTED was absorbed
    verify(e.event for e in got)
    stored = await stack.store.read_wire(run.id)
    assert [e.cursor for e in stored] == [e.cursor for e in got]


async def test_replica_heartbeat_cancels_and_fences_local_pumps(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=QUIET, owner="rep-a")
    cancelled, taken = Gate(text("run-c")), Gate(text("run-f"))
    try:
        run_c = await manager.create_run(thread_id="thread-1", run_id="run-c", announce=True)
        run_f = await manager.create_run(thread_id="thread-1", run_id="run-f", announce=True)
        task_c = manager.start(run_c, cancelled.stream(), announce=True)
        task_f = manager.start(run_f, taken.stream(), announce=True)
        await wait_until(lambda: manager.lease_beats >= 1)
        await stack.store.request_cancel(run_c.id)  # as another replica does
        future = stack.clock.now + timedelta(days=1)  # both heartbeats are older than this
        assert await stack.store.take_over(
            run_f.id, owner="rep-b", expected_epoch=1, stale_before=future
        )
        await manager.beat()
        outcome_c, outcome_f = await task_c, await task_f
    finally:
        await manager.aclose()
    assert outcome_c.status == "cancelled"
    assert outcome_f.status == "fenced"
    assert [e.event["type"] for e in await stack.store.read_wire(run_f.id)] == ["RUN_STARTED"]


async def test_a_beat_that_only_sees_a_cancel_fences_nothing_else(stack: Stack) -> None:
    """Issue 13 item 5.5: the replica knows its runs, so the store answers only the cancelled
    one (``complete=False``); the runs missing from that answer are still its own and go on."""
    store = CountingStore(stack.store)
    manager = RunManager(store, stack.broker, settings=QUIET, owner="rep-a")  # type: ignore[arg-type]
    gates = {name: Gate(text(name)) for name in ("run-c", "run-1", "run-2")}
    try:
        tasks = {}
        for name, gate in gates.items():
            run = await manager.create_run(thread_id="thread-1", run_id=name, announce=True)
            tasks[name] = manager.start(run, gate.stream(), announce=True)
        await manager.beat()
        await stack.store.request_cancel("run-c")  # as another replica does
        await manager.beat()
        assert store.answers[-1].complete is False
        assert [o.run_id for o in store.answers[-1].runs] == ["run-c"]
        outcome_c = await tasks["run-c"]
        for name in ("run-1", "run-2"):
            assert not tasks[name].done()
            await gates[name].release(len(gates[name].events))
        outcomes = [await tasks[name] for name in ("run-1", "run-2")]
    finally:
        await manager.aclose()
    assert outcome_c.status == "cancelled"
    assert [o.status for o in outcomes] == ["completed", "completed"]


async def test_a_run_is_reaped_only_after_its_replica_stopped_beating(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=QUIET, owner="rep-a")
    reaper = Reaper(stack.store, stack.broker, owner="rep-b", settings=FAST)
    gate = Gate(text("run-1"))
    try:
        run = await manager.create_run(thread_id="thread-1", run_id="run-1", announce=True)
        task = manager.start(run, gate.stream(), announce=True)
        await wait_until(lambda: manager.lease_beats >= 1)
        # a long silent upstream: the run's own heartbeat is old, its replica's is fresh
        stack.clock.advance(FAST.lease_timeout * 3)
        await manager.beat()
        assert await reaper.reap_once() == []
        # the replica stops beating (a crash): the run is taken over and closed
        stack.clock.advance(FAST.lease_timeout * 3)
        assert await reaper.reap_once() == [run.id]
        await manager.beat()  # the old producer learns it lost the run
        outcome = await task
    finally:
        await manager.aclose()
    assert outcome.status == "fenced"
    stored = await stack.store.read_wire(run.id)
    assert [(e.cursor, e.event.get("code")) for e in stored] == [
        (Cursor(1, 1), None),
        (Cursor(2, 2), "RUN_INTERRUPTED"),
    ]
    verify(e.event for e in stored)
    assert not await asyncio.wait_for(stack.store.heartbeat_replica("rep-a"), 10)


class DownStore(CountingStore):
    """``inner`` whose event writes fail with StoreUnavailableError while ``down``."""

    def __init__(self, inner: SqlRunStore) -> None:
        super().__init__(inner)
        self.down = False

    async def append_events(self, *args: Any, **kwargs: Any) -> Any:
        if self.down:
            from gateway.store import StoreUnavailableError

            raise StoreUnavailableError("the store is away (test)")
        return await self.inner.append_events(*args, **kwargs)


async def test_a_run_whose_pump_gave_up_on_the_store_is_closed_by_its_replica(
    stack: Stack,
) -> None:
    """A pump that gave up on an outage (``store_error``) leaves its run ``running`` in the
    store, owned by a replica that still beats, so no reaper finds it stale (the fault trial's
    pg-long case ended ``running`` whenever no reaper ran between the store's return and the
    replica's next beat). The replica's next beat that reaches the store closes it: a new epoch,
    what is open closed, RUN_ERROR RUN_INTERRUPTED."""
    store = DownStore(stack.store)  # type: ignore[arg-type]
    settings = replace(QUIET, store_outage_grace=0.0, write_retries=1)
    manager = RunManager(store, stack.broker, settings=settings, owner="rep-a")  # type: ignore[arg-type]
    gate = Gate(text("run-1"))
    try:
        run = await manager.create_run(thread_id="thread-1", run_id="run-1", announce=True)
        task = manager.start(run, gate.stream(), announce=True)
        await gate.release(2)  # RUN_STARTED, TEXT_MESSAGE_START
        await wait_until(lambda: gate.sent == 2)
        store.down = True
        await gate.release(len(text("run-1")))  # the END cannot be written
        outcome = await task
        assert outcome.status == "store_error"
        assert (await stack.store.get_run(run.id)).status == "running"
        store.down = False
        await manager.beat()  # this beat or the lease loop's closes it
        for _ in range(500):
            if (await stack.store.get_run(run.id)).status != "running":
                break
            await asyncio.sleep(0.01)
    finally:
        await manager.aclose()
    record = await stack.store.get_run(run.id)
    assert record.status != "running" and record.epoch == 2, record
    stored = [e.event for e in await stack.store.read_wire(run.id)]
    assert stored[-1]["type"] == "RUN_ERROR" and stored[-1]["code"] == "RUN_INTERRUPTED"
    verify(stored)
