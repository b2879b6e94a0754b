"""Issue 13, CPU per durable stream: the run core's per-event and per-write work.

* every pump flushes its pending deltas at the process-wide flush ticks
  (:func:`gateway.runs.pump.next_flush_tick`), so the flushes of concurrent runs commit as one
  group (one transaction) and a delta still waits at most ``batch_interval``;
* a waiting in-process subscription costs no task (``asyncio.wait_for`` made one per wait on
  Python 3.11) and still gets every event once, in order;
* a reader whose broker tail starts right after its cursor does not replay the store, and gets
  exactly the stored run either way (``docs/runs.md`` §3).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.broker import InProcessBroker
from gateway.runs import RunPump, RunSettings, read_run
from gateway.runs.pump import next_flush_tick
from gateway.store import Cursor, NewEvent, RunEvent, SqlRunStore, open_store

from .helpers import Gate, Stack, collect, wait_until

pytestmark = pytest.mark.timeout(120)


def delta(n: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{n} "}


# -- flush ticks ---------------------------------------------------------------------------


@given(
    k=st.integers(0, 10**7),
    interval=st.floats(0.001, 10.0, allow_nan=False, allow_infinity=False),
    fractions=st.lists(st.floats(0.001, 0.999), min_size=2, max_size=8),
)
def test_every_moment_of_one_interval_flushes_at_the_same_next_tick(
    k: int, interval: float, fractions: list[float]
) -> None:
    nows = [(k + f) * interval for f in fractions]
    ticks = {next_flush_tick(now, interval) for now in nows}
    assert len(ticks) == 1  # all pumps of the process flush together
    (tick,) = ticks
    assert math.isclose(tick / interval, k + 1, rel_tol=1e-9)
    for now in nows:
        assert now < tick <= now + interval * (1 + 1e-9)  # a delta waits at most one interval


@given(
    now=st.floats(0.0, 1e7, allow_nan=False, allow_infinity=False),
    interval=st.floats(0.001, 10.0, allow_nan=False, allow_infinity=False),
)
def test_the_next_tick_is_always_ahead_and_within_one_interval(now: float, interval: float) -> None:
    tick = next_flush_tick(now, interval)
    assert now < tick <= now + interval * (1 + 1e-9) + 1e-9


class GroupSpy:
    """Records, per committed group of the store's group committer, the runs whose append in
    it held only deltas (a flush: ``durable=False`` events and no terminal update)."""

    def __init__(self, store: SqlRunStore) -> None:
        assert store.group is not None
        self.groups: list[set[str]] = []
        group = store.group
        inner = group._commit

        async def commit(requests: list[Any]) -> None:
            flushes = {
                r.append.run_id
                for r in requests
                if r.append is not None
                and r.append.final is None
                and not any(e.durable for e in r.append.events)
            }
            if flushes:
                self.groups.append(flushes)
            await inner(requests)

        group._commit = commit  # type: ignore[method-assign]


@pytest.mark.parametrize("runs", [3, 6])
async def test_the_flushes_of_concurrent_runs_commit_as_one_group(
    memory_stack: Stack, runs: int
) -> None:
    store, broker = memory_stack.store, memory_stack.broker
    interval = 1.0  # long: the runs below all stage their deltas within its first quarter
    run_settings = RunSettings(
        batch_interval=interval, batch_max_events=1000, heartbeat_interval=5, lease_timeout=30
    )
    spy = GroupSpy(store)
    records = [
        await store.create_run(run_id=f"r{i}", thread_id=f"t{i}", owner="test") for i in range(runs)
    ]
    opening = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    opening.append({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
    gates = [Gate([*opening, delta(1), delta(2)]) for _ in records]
    pumps = [RunPump(store, broker, r, settings=run_settings) for r in records]
    loop = asyncio.get_running_loop()
    await asyncio.sleep(next_flush_tick(loop.time(), interval) - loop.time() + 0.01)
    tasks = []
    for pump, gate in zip(pumps, gates, strict=True):  # each run starts a little later
        tasks.append(asyncio.create_task(pump.run(gate.stream())))
        await gate.release(4)
        await asyncio.sleep(0.02)

    async def all_durable() -> bool:
        for record in records:
            if len(await store.read_events(record.id)) < 4:
                return False
        return True

    await wait_until(all_durable)
    # before: each pump flushed batch_interval after its own first delta, one group per run
    assert spy.groups == [{r.id for r in records}]
    for pump, task in zip(pumps, tasks, strict=True):
        pump.cancel()
        assert (await task).status == "cancelled"


def _flush_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("flush:")]


async def test_a_run_holds_a_flush_task_only_once_it_has_deltas_to_flush(
    memory_stack: Stack,
) -> None:
    """The flush loop's task starts at the first booked tick: a run with no delta staged (an
    idle stream) holds none; its deltas, once they come, are still written by the tick, in
    order, and the task ends with the run."""
    store, broker = memory_stack.store, memory_stack.broker
    interval = 0.05
    run_settings = RunSettings(
        batch_interval=interval, batch_max_events=1000, heartbeat_interval=5, lease_timeout=30
    )
    record = await store.create_run(run_id="r", thread_id="t", owner="test")
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        delta(1),
        delta(2),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "STEP_FINISHED", "stepName": "s"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    gate = Gate(events)
    pump = RunPump(store, broker, record, settings=run_settings)
    task = asyncio.create_task(pump.run(gate.stream()))
    await gate.release(2)  # control events only: written before they are published
    await wait_until(lambda: pump.cursor is not None and pump.cursor.seq == 2)
    await asyncio.sleep(3 * interval)
    assert _flush_tasks() == []
    await gate.release(3)  # an opening and two deltas (batched): the tick writes them

    async def deltas_durable() -> bool:
        return len(await store.read_events(record.id)) == 5

    await wait_until(deltas_durable)
    assert len(_flush_tasks()) == 1
    await gate.release(3)
    assert (await task).status == "completed"
    stored = [e.event for e in await store.read_events(record.id)]
    assert [(e["type"], e.get("delta")) for e in stored] == [
        (e["type"], e.get("delta")) for e in events
    ]
    assert _flush_tasks() == []


# -- the in-process subscription's wait ----------------------------------------------------


@settings(deadline=None)
@given(bursts=st.lists(st.integers(0, 5), min_size=1, max_size=12))
async def test_a_waiting_subscription_costs_no_task_and_gets_each_event_once(
    bursts: list[int],
) -> None:
    broker = InProcessBroker()
    published: list[RunEvent] = []
    got: list[RunEvent] = []
    async with broker.subscribe("r") as sub:
        for burst in bursts:
            before = len(asyncio.all_tasks())
            waiting = asyncio.create_task(sub.receive(0.01 if burst == 0 else 30.0))
            await asyncio.sleep(0)  # it is waiting now
            assert len(asyncio.all_tasks()) == before + 1  # the waiting task alone
            for _ in range(burst):
                cursor = Cursor(1, len(published) + 1)
                message = RunEvent(cursor, delta(cursor.seq))
                assert await broker.publish("r", cursor, message.event)
                published.append(message)
            batch = await waiting
            assert len(batch) == burst  # woken by the burst, or timed out with nothing
            got += batch
    assert got == published


async def test_a_cancelled_wait_leaves_the_subscription_usable() -> None:
    broker = InProcessBroker()
    async with broker.subscribe("r") as sub:
        waiting = asyncio.create_task(sub.receive(30.0))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert await broker.publish("r", Cursor(1, 1), delta(1))
        assert [m.cursor for m in await sub.receive(30.0)] == [Cursor(1, 1)]


@settings(deadline=None, max_examples=30)
@given(
    waits=st.lists(
        st.tuples(st.sampled_from([0.01, 0.03, 0.6]), st.booleans()), min_size=1, max_size=8
    )
)
async def test_each_wait_times_out_at_its_own_deadline_with_one_timer_per_subscription(
    waits: list[tuple[float, bool]],
) -> None:
    """The subscription keeps one timer across waits (armed for an earlier deadline, it
    re-arms for the current one): a wait with nothing published still returns ``[]`` no
    sooner than its own timeout and not at an older wait's (longer or shorter) deadline; a
    wait that gets a message returns it; and no timer is made per wait that a message ends."""
    broker = InProcessBroker()
    seq = 0
    loop = asyncio.get_running_loop()
    async with broker.subscribe("r") as sub:
        for timeout, publish in waits:
            waiting = asyncio.create_task(sub.receive(timeout))
            await asyncio.sleep(0)
            started = loop.time()
            if publish:
                seq += 1
                assert await broker.publish("r", Cursor(1, seq), delta(seq))
                assert [m.cursor.seq for m in await waiting] == [seq]
            else:
                assert await waiting == []
                assert loop.time() - started >= timeout * 0.9  # its own deadline, not sooner
                assert loop.time() - started < timeout + 0.3  # nor at an older, later one
        made = 0
        call_at = loop.call_at

        def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal made
            made += 1
            return call_at(*args, **kwargs)

        loop.call_at = counted  # type: ignore[method-assign]
        try:
            for _ in range(20):  # a reader woken by every event: the armed timer stays
                waiting = asyncio.create_task(sub.receive(30.0))
                await asyncio.sleep(0)
                seq += 1
                assert await broker.publish("r", Cursor(1, seq), delta(seq))
                assert len(await waiting) == 1
        finally:
            del loop.call_at
        assert made <= 1


# -- the reader's replay -------------------------------------------------------------------


class ReadSpy:
    """Counts the store's event reads (``read_wire``)."""

    def __init__(self, store: SqlRunStore) -> None:
        self.reads = 0
        inner = store.read_wire

        async def read_wire(*args: Any, **kwargs: Any) -> list[RunEvent]:
            self.reads += 1
            return await inner(*args, **kwargs)

        store.read_wire = read_wire  # type: ignore[method-assign]

    @staticmethod
    def subscribed(broker: InProcessBroker) -> bool:
        return broker.usage().readers > 0 or broker.usage().lagging > 0


@pytest.mark.parametrize(
    ("stored", "published_from", "reader_maxlen", "after", "replays"),
    [
        (5, 1, 40, 0, False),  # the whole run in the tail: nothing to replay
        (5, 1, 40, 3, False),  # a resume whose cursor the tail follows
        (5, 2, 40, 0, True),  # the tail starts after the first event
        (5, 1, 2, 0, True),  # the reader's bound keeps only the newest two
        (5, 6, 40, 5, True),  # nothing retained after the cursor: replayed, nothing there
        (1, 1, 40, 0, False),
        (8, 4, 3, 5, False),  # the newest three follow the cursor
        (8, 4, 3, 2, True),
    ],
)
async def test_a_reader_gets_exactly_the_stored_run_with_or_without_replaying_it(
    tmp_path: Path,
    stored: int,
    published_from: int,
    reader_maxlen: int,
    after: int,
    replays: bool,
) -> None:
    """The run's events 1..stored are durable; the broker retains those from
    ``published_from`` on (a reader's tail is the newest ``reader_maxlen`` of them); a reader
    from cursor ``after`` gets the events after it and the terminal event published later,
    once, in order, and replays the store only when its tail does not start right after its
    cursor."""
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/runs.db")
    try:
        broker = InProcessBroker(reader_maxlen=reader_maxlen)
        record = await store.create_run(run_id="r", thread_id="t", owner="test")
        events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
        events += [delta(n) for n in range(2, stored + 1)]
        news = [NewEvent(n, e, durable=True) for n, e in enumerate(events, start=1)]
        await store.append_events("r", record.epoch, news)
        messages = [RunEvent(Cursor(1, n.seq), n.event) for n in news]
        for message in messages[published_from - 1 :]:
            await broker.publish("r", message.cursor, message.event)
        spy = ReadSpy(store)
        start = None if after == 0 else Cursor(1, after)
        fast = RunSettings(reader_idle_recheck=5.0, heartbeat_interval=5, lease_timeout=30)
        reader = read_run(store, broker, "r", after=start, settings=fast)
        terminal = RunEvent(Cursor(1, stored + 1), {"type": "RUN_FINISHED"})

        async def finish() -> None:  # the run goes on, and ends while the reader reads
            await wait_until(lambda: spy.subscribed(broker))
            await store.append_events(
                "r", record.epoch, [NewEvent(terminal.cursor.seq, terminal.event, durable=True)]
            )
            await broker.publish("r", terminal.cursor, terminal.event)

        ending = asyncio.create_task(finish())
        got = await collect(reader)
        await ending
        want = [m for m in [*messages, terminal] if m.cursor.seq > after]
        assert [(m.cursor, m.event) for m in got] == [(m.cursor, m.event) for m in want]
        assert (spy.reads > 0) == replays
    finally:
        await store.close()
