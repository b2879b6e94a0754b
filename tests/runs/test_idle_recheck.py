"""The batched idle re-check (issue 13 item 5, ``gateway/runs/recheck.py``, ``docs/runs.md``
§3): idle readers cost one store read per interval together, and still deliver every event
once, in order, ending after the terminal event, whatever the broker loses."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.broker import InProcessBroker
from gateway.runs import RunManager, read_run
from gateway.runs.recheck import IdleRechecker
from gateway.store import Cursor, NewEvent, RunEvent, RunFinal, SqlRunStore

from .helpers import FAST, Gate, Stack, collect, wait_until

pytestmark = pytest.mark.timeout(300)

IDS = itertools.count()


class CountingStore:
    """``inner`` recording the name and run ids of every run-row read."""

    def __init__(self, inner: SqlRunStore) -> None:
        self.inner = inner
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def get_run(self, run_id: str) -> Any:
        self.calls.append(("get_run", run_id))
        return await self.inner.get_run(run_id)

    async def get_runs(self, run_ids: Any) -> Any:
        self.calls.append(("get_runs", sorted(run_ids)))
        return await self.inner.get_runs(run_ids)

    async def get_run_marks(self, run_ids: Any) -> Any:
        self.calls.append(("get_run_marks", sorted(run_ids)))
        return await self.inner.get_run_marks(run_ids)


def started(run_id: str) -> dict[str, Any]:
    return {"type": "RUN_STARTED", "threadId": "thread-1", "runId": run_id}


def finished(run_id: str) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": run_id}


def delta(n: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{n}"}


async def test_idle_readers_share_one_batched_read_per_interval(stack: Stack) -> None:
    """N idle readers: one ``get_run_marks`` naming all of them per interval, no ``get_run``; a
    run that moved in the store wakes its readers only (they replay and end), the others stay
    watched. (Per reader, as before issue 13 item 5, it was N ``get_run`` per interval.)"""
    n = 12
    store = CountingStore(stack.store)
    rechecker = IdleRechecker(store, interval=FAST.reader_idle_recheck, tick=3600.0)  # type: ignore[arg-type]
    ids = [f"run-{next(IDS)}" for _ in range(n)]
    readers = []
    for run_id in ids:
        await stack.store.create_run(run_id=run_id, thread_id="thread-1", owner="a")
        await stack.store.append_events(run_id, 1, [NewEvent(1, started(run_id))])
        reader = read_run(store, stack.broker, run_id, settings=FAST, rechecker=rechecker)  # type: ignore[arg-type]
        assert (await anext(reader)).cursor == Cursor(1, 1)
        readers.append(asyncio.ensure_future(collect(reader)))
    try:
        await wait_until(lambda: rechecker.watching == n)
        store.calls.clear()
        assert await rechecker.check_due() == 0  # nothing moved
        assert store.calls == [("get_run_marks", sorted(ids))]
        assert await rechecker.check_due() == 0  # checked within the interval: no read
        assert store.calls == [("get_run_marks", sorted(ids))]
        await asyncio.sleep(FAST.reader_idle_recheck)
        ended = ids[:3]
        for run_id in ended:  # ends in the store only: no broker message
            await stack.store.append_events(
                run_id, 1, [NewEvent(2, finished(run_id))], final=RunFinal(status="completed")
            )
        store.calls.clear()
        assert await rechecker.check_due() == len(ended)
        assert store.calls == [("get_run_marks", sorted(ids))]
        for index in range(len(ended)):
            assert [e.event for e in await readers[index]] == [finished(ids[index])]
        assert rechecker.watching == n - len(ended)
        assert not any(reader.done() for reader in readers[len(ended) :])
        assert not [call for call in store.calls if call[0] == "get_run"]
    finally:
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        await rechecker.aclose()
    assert rechecker.watching == 0


async def consume(reader: Any, into: list[RunEvent]) -> None:
    """Read ``reader`` to its end, keeping each event in ``into`` as it comes."""
    async with aclosing(reader) as events:
        async for event in events:
            into.append(event)


# A run's plan: batches of (events in the batch, published before stored, kept by the broker
# per event), and whether it ends (RUN_FINISHED, itself kept or lost).
batches = st.lists(
    st.tuples(st.integers(1, 4), st.booleans(), st.lists(st.booleans(), min_size=4, max_size=4)),
    max_size=4,
)
plans = st.lists(
    st.tuples(batches, st.booleans(), st.booleans(), st.integers(1, 3)), min_size=1, max_size=6
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans)
async def test_watched_readers_deliver_everything_once_whatever_the_broker_loses(
    stack: Stack, plan: Sequence[tuple[Any, bool, bool, int]]
) -> None:
    """Many readers of many runs on one re-checker; the broker drops random messages (the
    terminal one included), events are stored before or after they are published, some runs
    end and some stay open: every reader delivers exactly the stored events, in order, once,
    and a reader of an ended run ends right after its terminal event (``docs/runs.md`` §3)."""
    store, broker = stack.store, stack.broker
    rechecker = IdleRechecker(store, interval=FAST.reader_idle_recheck)
    runs: list[tuple[str, Any, bool, bool]] = []
    readers: list[tuple[str, list[RunEvent], asyncio.Future[None]]] = []
    for steps, ends, terminal_kept, n_readers in plan:
        run_id = f"run-{next(IDS)}"
        await store.create_run(run_id=run_id, thread_id="thread-1", owner="a")
        runs.append((run_id, steps, ends, terminal_kept))
        for _ in range(n_readers):
            got: list[RunEvent] = []
            reader = read_run(store, broker, run_id, settings=FAST, rechecker=rechecker)
            readers.append((run_id, got, asyncio.ensure_future(consume(reader, got))))

    async def produce(run_id: str, steps: Any, ends: bool, terminal_kept: bool) -> None:
        todo: list[tuple[list[NewEvent], list[bool], bool, RunFinal | None]] = []
        todo.append(([NewEvent(1, started(run_id))], [True], False, None))
        seq = 1
        for size, publish_first, kept in steps:
            events = [NewEvent(seq + i + 1, delta(seq + i + 1)) for i in range(size)]
            seq += size
            todo.append((events, kept[:size], publish_first, None))
        if ends:
            final = RunFinal(status="completed")
            todo.append(([NewEvent(seq + 1, finished(run_id))], [terminal_kept], False, final))
        for events, kept, publish_first, final in todo:
            if not publish_first:
                await store.append_events(run_id, 1, events, final=final)
            for event, keep in zip(events, kept, strict=True):
                if keep:  # else lost by the broker: only the store has it
                    await broker.publish(run_id, Cursor(1, event.seq), event.event)
            if publish_first:
                await store.append_events(run_id, 1, events, final=final)
            await asyncio.sleep(FAST.reader_idle_recheck / 4)  # readers go idle now and then

    try:
        await asyncio.wait_for(asyncio.gather(*(produce(*run) for run in runs)), 120)
        stored = {
            run_id: [(e.cursor, e.event) for e in await store.read_wire(run_id, limit=1000)]
            for run_id, *_ in runs
        }
        ended = {run_id for run_id, _steps, ends, _kept in runs if ends}
        for run_id, got, task in readers:
            if run_id in ended:  # ends right after its terminal event
                await asyncio.wait_for(task, 10)
                assert [(e.cursor, e.event) for e in got] == stored[run_id]
                assert got[-1].event["type"] == "RUN_FINISHED"
        for run_id, got, task in readers:
            if run_id not in ended:  # everything stored reaches it, then it waits for more
                await wait_until(lambda got=got, run_id=run_id: len(got) >= len(stored[run_id]))
                assert [(e.cursor, e.event) for e in got] == stored[run_id]
                assert not task.done()
    finally:
        for _run_id, _got, task in readers:
            task.cancel()
        await asyncio.gather(*(task for *_, task in readers), return_exceptions=True)
        await rechecker.aclose()
    assert rechecker.watching == 0


async def test_an_idle_in_process_reader_waits_on_one_receive(memory_stack: Stack) -> None:
    """Over the in-process broker (``waits_free``), a watched idle reader keeps one broker
    receive (``IDLE_RECEIVE``) instead of one per ``reader_idle_recheck``; it is re-checked
    about once per interval, and still gets the next event from the broker at once and the
    run's end from the store (``docs/runs.md`` §3)."""
    store, broker = memory_stack.store, memory_stack.broker
    interval = FAST.reader_idle_recheck
    counting = CountingStore(store)
    rechecker = IdleRechecker(counting, interval=interval)  # type: ignore[arg-type]
    run_id = f"run-{next(IDS)}"
    await store.create_run(run_id=run_id, thread_id="thread-1", owner="a")
    await store.append_events(run_id, 1, [NewEvent(1, started(run_id))])
    receives = 0
    subscribe = broker.subscribe

    def counted_subscribe(*args: Any, **kwargs: Any) -> Any:
        subscription = subscribe(*args, **kwargs)
        receive = subscription.receive

        async def counted(timeout: float) -> Any:
            nonlocal receives
            receives += 1
            return await receive(timeout)

        subscription.receive = counted  # type: ignore[method-assign]
        return subscription

    broker.subscribe = counted_subscribe  # type: ignore[method-assign]
    reader = read_run(store, broker, run_id, settings=FAST, rechecker=rechecker)
    got: list[RunEvent] = []
    task = asyncio.ensure_future(consume(reader, got))
    try:
        await wait_until(lambda: rechecker.watching == 1)
        await asyncio.sleep(interval / 5)  # its receive has started
        before, checks = receives, len(counting.calls)
        await asyncio.sleep(10 * interval)
        assert receives == before  # no wake-up for the receive's timeout
        assert 5 <= len(counting.calls) - checks <= 12  # about one re-check per interval
        await store.append_events(run_id, 1, [NewEvent(2, delta(2))])
        await broker.publish(run_id, Cursor(1, 2), delta(2))
        await wait_until(lambda: len(got) == 2)  # from the broker, not a re-check
        await store.append_events(
            run_id, 1, [NewEvent(3, finished(run_id))], final=RunFinal(status="completed")
        )  # the terminal event lost by the broker: the re-check finds it
        await asyncio.wait_for(task, 10)
        assert [e.event for e in got] == [started(run_id), delta(2), finished(run_id)]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await rechecker.aclose()


# A run's row: events stored in epoch 1, then (None: no takeover) events stored after a
# takeover in epoch 2, and the terminal status it ends with (None: still running).
rows = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.none() | st.integers(0, 2),
        st.none() | st.sampled_from(["completed", "failed", "cancelled", "interrupted"]),
    ),
    min_size=1,
    max_size=5,
)
afters = st.none() | st.builds(Cursor, st.integers(1, 3), st.integers(0, 6))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=rows, cursors=st.lists(afters, min_size=1, max_size=6))
async def test_the_marks_make_the_wake_up_decisions_the_rows_made(
    stack: Stack, plan: Sequence[tuple[int, int | None, str | None]], cursors: list[Any]
) -> None:
    """``get_run_marks`` (the light re-check read) against ``get_runs`` (the whole rows the
    re-check read before): the same runs, each mark equal to its record's status and durable
    end, and a re-check over the marks wakes exactly the watches the rows' rule
    (``run.is_terminal`` or its ``last_cursor`` past the watch's cursor, or the run missing)
    woke, with that mark, whatever the epochs, seqs and terminal status."""
    store = stack.store
    ids: list[str] = []
    for in_first, in_second, status in plan:
        run_id = f"run-{next(IDS)}"
        ids.append(run_id)
        await store.create_run(run_id=run_id, thread_id="thread-1", owner="a")
        seq = 0
        for epoch, count in ((1, in_first), (2, in_second)):
            if count is None:
                continue
            if epoch == 2:
                await store.take_over(
                    run_id,
                    owner="b",
                    expected_epoch=1,
                    stale_before=store.now() + timedelta(hours=1),
                )
            events = [NewEvent(seq + i + 1, delta(seq + i + 1)) for i in range(count)]
            seq += count
            if events:
                await store.append_events(run_id, epoch, events)
        if status is not None:
            end = [NewEvent(seq + 1, finished(run_id))]
            last_epoch = 1 if in_second is None else 2
            final = RunFinal(status=status)  # type: ignore[arg-type]
            await store.append_events(run_id, last_epoch, end, final=final)
    missing = f"run-{next(IDS)}"
    records = await store.get_runs([*ids, missing])
    marks = await store.get_run_marks([*ids, missing, ids[0]])
    assert set(marks) == set(records) == set(ids)
    for run_id, record in records.items():
        mark = marks[run_id]
        assert (mark.status, mark.last_epoch, mark.last_seq) == (
            record.status,
            record.last_epoch,
            record.last_seq,
        )
        assert (mark.is_terminal, mark.last_cursor) == (record.is_terminal, record.last_cursor)

    def woke_before(run_id: str, after: Cursor | None) -> bool:  # the rows' rule
        run = records.get(run_id)
        if run is None or run.is_terminal:
            return True
        end = run.last_cursor
        return end is not None and (after is None or end > after)

    rechecker = IdleRechecker(store, interval=60.0, tick=3600.0)
    try:
        watches = [
            rechecker.watch(run_id, after) for run_id in [*ids, missing] for after in cursors
        ]
        woken = await rechecker.check_due()
        expected = [woke_before(w.run_id, w.after) for w in watches]
        assert [w.due for w in watches] == expected
        assert [w.woken.is_set() for w in watches] == expected
        assert woken == sum(expected)
        for watch in watches:
            assert watch.run == (marks.get(watch.run_id) if watch.due else None)
        assert rechecker.watching == len(watches) - woken
    finally:
        await rechecker.aclose()


def run_error(code: str) -> dict[str, Any]:
    return {"type": "RUN_ERROR", "message": code, "code": code}


async def test_a_run_pumped_here_is_read_only_once_its_producer_is_gone(stack: Stack) -> None:
    """Issue 13 (idle CPU): a watch of a run whose producer runs here over the in-process
    broker is not read, even when the store moved (its end comes through the broker); once the
    producer is gone (``producer_gone``) it is read at the next check, due or not, and a run
    the store ended wakes its reader, which delivers the terminal event and ends."""
    if not isinstance(stack.broker, InProcessBroker):
        pytest.skip("pumped runs are left alone over the in-process broker only")
    store = CountingStore(stack.store)
    run_id = f"run-{next(IDS)}"
    pumped = {run_id}
    rechecker = IdleRechecker(
        store,  # type: ignore[arg-type]
        interval=FAST.reader_idle_recheck,
        tick=3600.0,
        pumped=pumped,
    )
    await stack.store.create_run(run_id=run_id, thread_id="thread-1", owner="a")
    await stack.store.append_events(run_id, 1, [NewEvent(1, started(run_id))])
    reader = read_run(store, stack.broker, run_id, settings=FAST, rechecker=rechecker)  # type: ignore[arg-type]
    assert (await anext(reader)).cursor == Cursor(1, 1)
    rest = asyncio.ensure_future(collect(reader))
    try:
        await wait_until(lambda: rechecker.watching == 1)
        await stack.store.append_events(  # ends in the store only: no broker message
            run_id, 1, [NewEvent(2, finished(run_id))], final=RunFinal(status="completed")
        )
        store.calls.clear()
        assert await rechecker.check_due() == 0
        await asyncio.sleep(FAST.reader_idle_recheck)
        assert await rechecker.check_due() == 0
        assert store.calls == []
        assert not rest.done()
        pumped.discard(run_id)
        rechecker.producer_gone(run_id)
        assert await rechecker.check_due() == 1  # at once: not due by its time yet
        assert store.calls == [("get_run_marks", [run_id])]
        assert [e.event for e in await rest] == [finished(run_id)]
    finally:
        rest.cancel()
        await asyncio.gather(rest, return_exceptions=True)
        await rechecker.aclose()


async def test_a_fenced_pump_leaves_its_readers_to_the_recheck(stack: Stack) -> None:
    """A run pumped here that another replica took over and closed in the store (no message
    on this broker): the heartbeat fences the pump, and its idle reader then reads the store
    and ends with the new epoch's terminal event (``docs/runs.md`` §3, §4); before that the
    re-check read nothing for it over the in-process broker."""
    store = CountingStore(stack.store)
    quiet = replace(FAST, heartbeat_interval=3600.0, lease_timeout=7200.0)
    manager = RunManager(store, stack.broker, settings=quiet, owner="rep-a")  # type: ignore[arg-type]
    run_id = f"run-{next(IDS)}"
    gate = Gate([started(run_id), delta(1)])
    try:
        run = await manager.create_run(thread_id="thread-1", run_id=run_id, announce=True)
        task = manager.start(run, gate.stream(), announce=True)
        reader = await manager.reader(run.id, run=run)
        assert (await anext(reader)).cursor == Cursor(1, 1)
        rest = asyncio.ensure_future(collect(reader))
        await wait_until(lambda: manager.rechecker.watching == 1)
        store.calls.clear()
        await asyncio.sleep(3 * quiet.reader_idle_recheck)
        reads = [call for call in store.calls if call[0] == "get_run_marks"]
        assert bool(reads) is not isinstance(stack.broker, InProcessBroker)
        future = stack.clock.now + timedelta(days=1)
        taken = await stack.store.take_over(
            run.id, owner="rep-b", expected_epoch=1, stale_before=future
        )
        assert taken is not None
        await stack.store.append_events(  # rep-b closes it, publishing nothing here
            run.id,
            taken.epoch,
            [NewEvent(2, run_error("RUN_INTERRUPTED"))],
            final=RunFinal(status="interrupted"),
        )
        await manager.beat()
        assert (await task).status == "fenced"
        got = await asyncio.wait_for(rest, 60)
    finally:
        await manager.aclose()
    assert [(e.cursor, e.event["type"]) for e in got] == [(Cursor(taken.epoch, 2), "RUN_ERROR")]
