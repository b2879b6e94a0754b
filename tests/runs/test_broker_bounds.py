"""Bounded broker memory (issue 15): the retained tail per run and the queue per reader stay
within their stated maximum, and a reader that falls behind past it still gets every event
once, in order, from the store (docs/runs.md §3)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_backends import make_broker

from gateway.broker import InProcessBroker, open_broker, wire_size
from gateway.config import Settings
from gateway.runs import RunPump, read_run
from gateway.store import Cursor, RunEvent

from .helpers import FAST, Stack, corpus_events, from_list, wait_until

pytestmark = pytest.mark.timeout(120)


def delta(n: int, size: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x" * size + str(n)}


bounds = st.fixed_dictionaries(
    {
        "maxlen": st.integers(1, 40),
        "max_bytes": st.integers(64, 4000),
        "reader_maxlen": st.integers(1, 40),
        "reader_max_bytes": st.integers(64, 4000),
    }
)
plans = st.lists(
    st.tuples(st.integers(0, 900), st.booleans()), min_size=1, max_size=120
)  # (delta size, does the reader take its queue after this publish)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(limits=bounds, plan=plans)
async def test_tail_and_reader_queue_never_exceed_their_bounds(
    limits: dict[str, int], plan: list[tuple[int, bool]]
) -> None:
    broker = InProcessBroker(**limits)
    published: list[RunEvent] = []
    got: list[RunEvent] = []
    lagged = False
    async with broker.subscribe("r") as sub:
        for n, (size, take) in enumerate(plan, start=1):
            message = RunEvent(Cursor(1, n), delta(n, size))
            assert await broker.publish("r", message.cursor, message.event)
            published.append(message)
            usage = broker.usage()
            assert usage.retained_events <= limits["maxlen"]
            assert usage.retained_bytes <= limits["max_bytes"]
            assert usage.queued_events <= limits["reader_maxlen"]
            assert usage.queued_bytes <= limits["reader_max_bytes"]
            tail = broker._topics["r"].buffer
            assert [m for m, _ in tail] == published[len(published) - len(tail) :]  # newest
            lagged = lagged or usage.lagging > 0
            if take:
                got += await sub.receive(0)
        lagged = lagged or broker.usage().lagging > 0
        got += await sub.receive(0)
    # What the reader got is in order, without duplicates, and misses events only when it
    # fell behind its bound (the reader then reads them from the store).
    cursors = [m.cursor.seq for m in got]
    assert cursors == sorted(set(cursors))
    assert all(published[m.cursor.seq - 1] == m for m in got)
    if not lagged:
        assert got == published


async def test_a_reader_behind_its_bound_is_sent_to_the_store_and_comes_back_live() -> None:
    broker = InProcessBroker(maxlen=100, reader_maxlen=3)
    async with broker.subscribe("r") as sub:
        for n in range(1, 5):  # the 4th does not fit: the queue is released
            await broker.publish("r", Cursor(1, n), delta(n, 1))
        assert broker.usage().queued_events == 0 and broker.usage().lagging == 1
        assert await sub.receive(5.0) == []  # at once: "read the store"
        assert broker.usage().lagging == 0
        await broker.publish("r", Cursor(1, 5), delta(5, 1))
        assert [m.cursor for m in await sub.receive(5.0)] == [Cursor(1, 5)]


async def test_a_new_subscriber_gets_only_the_newest_tail_that_fits_its_bound() -> None:
    broker = InProcessBroker(maxlen=100, reader_maxlen=3)
    for n in range(1, 11):
        await broker.publish("r", Cursor(1, n), delta(n, 1))
    async with broker.subscribe("r") as sub:
        assert [m.cursor.seq for m in await sub.receive(0)] == [8, 9, 10]


@settings(deadline=None)
@given(count=st.integers(0, 60), maxlen=st.integers(1, 40), after=st.integers(0, 60))
async def test_a_late_subscriber_gets_the_newest_retained_tail_in_order_before_and_after_a_trim(
    count: int, maxlen: int, after: int
) -> None:
    """The tail is a list until it first reaches its bound, then a deque: either way a new
    subscriber gets the retained events after its cursor, oldest first, each once."""
    broker = InProcessBroker(maxlen=maxlen, reader_maxlen=100)
    published = [RunEvent(Cursor(1, n), delta(n, 1)) for n in range(1, count + 1)]
    for message in published:
        assert await broker.publish("r", message.cursor, message.event)
    retained = published[max(0, count - maxlen) :]
    async with broker.subscribe("r", Cursor(1, after) if after else None) as sub:
        got = await sub.receive(0)
    assert got == [m for m in retained if m.cursor.seq > after]


async def test_the_tail_is_released_when_the_run_ends() -> None:
    broker = InProcessBroker()
    for n in range(1, 50):
        await broker.publish("r", Cursor(1, n), delta(n, 100))
    assert broker.usage().retained_events == 49
    assert await broker.publish("r", Cursor(1, 50), {"type": "RUN_FINISHED"})
    assert broker.usage().retained_events == broker.usage().retained_bytes == 0
    assert not await broker.publish("r", Cursor(1, 50), delta(50, 1))  # still fenced


async def test_ended_runs_are_forgotten_after_ended_ttl() -> None:
    now = [0.0]
    broker = InProcessBroker(ttl=3600, ended_ttl=60, clock=lambda: now[0])
    await broker.publish("ended", Cursor(1, 1), {"type": "RUN_ERROR", "message": "x"})
    await broker.publish("live", Cursor(1, 1), delta(1, 1))
    now[0] = 61.0
    await broker.publish("other", Cursor(1, 1), delta(1, 1))  # a publish sweeps
    assert set(broker._topics) == {"live", "other"}


def test_bounds_come_from_the_settings() -> None:
    settings = Settings(
        broker_max_events=7,
        broker_max_bytes=700,
        broker_reader_max_events=5,
        broker_reader_max_bytes=500,
        broker_ttl_seconds=30,
        broker_ended_ttl_seconds=3,
    )
    broker = open_broker(None, **settings.broker_bounds())
    assert isinstance(broker, InProcessBroker)
    assert (broker.maxlen, broker.max_bytes, broker.reader_maxlen, broker.reader_max_bytes) == (
        7,
        700,
        5,
        500,
    )
    assert (broker.ttl, broker.ended_ttl) == (30, 3)


def test_wire_size_counts_strings_and_nested_values() -> None:
    small = wire_size({"type": "TEXT_MESSAGE_CONTENT", "delta": "a"})
    assert wire_size({"type": "TEXT_MESSAGE_CONTENT", "delta": "a" * 1001}) == small + 1000
    nested = {"type": "MESSAGES_SNAPSHOT", "messages": [{"content": "y" * 5000}]}
    assert wire_size(nested) > 5000


@pytest.mark.parametrize(
    "kind", [("sqlite", "memory"), ("postgresql", "redis")], ids=["sqlite+memory", "pg+redis"]
)
async def test_a_stalled_reader_past_tiny_bounds_still_gets_every_event(
    kind: tuple[str, str], tmp_path: Any
) -> None:
    from run_backends import ManualClock, make_store

    store_kind, broker_kind = kind
    extra = {"max_bytes": 300, "reader_max_bytes": 200} if broker_kind == "memory" else {}
    async with (
        make_store(store_kind, tmp_path, ManualClock()) as store,
        make_broker(broker_kind, maxlen=4, reader_maxlen=3, **extra) as broker,
    ):
        stack = Stack(kind[0], store, broker, ManualClock())
        run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
        events = corpus_events("gpt41nano-long-text.jsonl")
        reader = read_run(stack.store, broker, run.id, settings=FAST)
        first = await asyncio.wait_for(_first_after_start(stack, reader, run.id, events), 60)
        rest: list[RunEvent] = []
        async for event in reader:  # slow: a pause every few events while the run goes on
            rest.append(event)
            if len(rest) % 5 == 0:
                await asyncio.sleep(0.01)
            got = [first, *rest]
        stored = await store.read_events(run.id, limit=10_000)
    assert [e.cursor.seq for e in got] == list(range(1, len(events) + 1))
    assert [e.event for e in got] == [s.event for s in stored]


async def _first_after_start(stack: Stack, reader: Any, run_id: str, events: list[Any]) -> Any:
    waiting = asyncio.create_task(reader.__anext__())
    if isinstance(stack.broker, InProcessBroker):
        broker = stack.broker
        await wait_until(lambda: broker._topics.get(run_id) and broker._topics[run_id].subscribers)
    pump = asyncio.create_task(
        RunPump(stack.store, stack.broker, await stack.store.get_run(run_id), settings=FAST).run(
            from_list(events)
        )
    )
    first = await waiting
    await pump  # the reader stalled while the whole run went by its bounds
    return first
