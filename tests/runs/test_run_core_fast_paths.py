"""Issue 13, loop callbacks per durable run: the flush ticks of a manager's pumps are one loop
timer per tick (:class:`gateway.runs.flush_ticks.FlushTicks`), and an in-process
subscription's receive returns what a filter of its queue by the reader's cursor returns.

* every booking is called once, at the first flush tick after it was made (``docs/runs.md``
  §2: a delta waits at most one ``batch_interval``), from one timer for all bookings of that
  tick;
* the in-process receive, which compares only the head of its queue with the cursor, gives
  exactly the reference (every queued message after the cursor, in order), whatever
  ``skip_to`` calls come between publishes (``docs/runs.md`` §3: each event once, in order).
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.broker import InProcessBroker
from gateway.runs.flush_ticks import FlushTicks, next_flush_tick
from gateway.store import Cursor, RunEvent

pytestmark = pytest.mark.timeout(60)


async def test_the_bookings_of_one_tick_share_one_timer_and_each_is_called_once() -> None:
    loop = asyncio.get_running_loop()
    interval = 0.05
    ticks = FlushTicks()
    timers: list[float] = []
    call_at = loop.call_at

    def counting_call_at(when: float, *args: object) -> asyncio.TimerHandle:
        timers.append(when)
        return call_at(when, *args)  # type: ignore[arg-type]

    await asyncio.sleep(next_flush_tick(loop.time(), interval) - loop.time() + 0.001)
    called: list[tuple[int, float]] = []

    def note(k: int) -> None:
        called.append((k, loop.time()))

    loop.call_at = counting_call_at  # type: ignore[method-assign]
    try:
        booked = [
            (k, loop.time(), ticks.book(loop, interval, lambda k=k: note(k))) for k in range(20)
        ]
    finally:
        loop.call_at = call_at  # type: ignore[method-assign]
    assert len(timers) == 1  # one timer for the twenty bookings of this tick
    await asyncio.sleep(interval * 1.5)
    assert sorted(k for k, _ in called) == list(range(20))  # each once
    for k, when, tick in booked:
        assert when < tick <= when + interval * (1 + 1e-9)
        assert dict(called)[k] >= tick  # not before its tick
    assert len(ticks) == 0  # nothing left booked


async def test_a_booking_after_the_tick_waits_for_the_next_one() -> None:
    loop = asyncio.get_running_loop()
    interval = 0.03
    ticks = FlushTicks()
    called: list[int] = []
    first = ticks.book(loop, interval, lambda: called.append(1))
    await asyncio.sleep(first - loop.time() + 0.005)
    assert called == [1]
    second = ticks.book(loop, interval, lambda: called.append(2))
    assert second > first
    await asyncio.sleep(second - loop.time() + 0.005)
    assert called == [1, 2]


def _event(seq: int) -> RunEvent:
    wire = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{seq}"}
    return RunEvent(Cursor(1, seq), wire)


@settings(deadline=None, max_examples=60)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 4), st.one_of(st.none(), st.integers(0, 6))),
        min_size=1,
        max_size=12,
    )
)
async def test_a_receive_gives_what_the_reference_filter_of_its_queue_gives(
    steps: list[tuple[int, int | None]],
) -> None:
    """Each step publishes ``n`` events, then (maybe) skips to ``last + k`` (possibly past
    what was published), then receives; the reference is the published events after the
    highest cursor received or skipped to, in order."""
    broker = InProcessBroker()
    seq = 0
    after: Cursor | None = None
    got: list[int] = []
    expected: list[int] = []
    async with broker.subscribe("r") as subscription:
        for n, skip in steps:
            published = [_event(seq + i + 1) for i in range(n)]
            seq += n
            broker.publish_nowait("r", published)
            if skip is not None:
                target = Cursor(1, max(1, (after.seq if after else 0) + skip))
                subscription.skip_to(target)
                if after is None or target > after:
                    after = target
            pending = [m for m in published if after is None or m.cursor > after]
            # the reference: what was queued since the last receive, after the cursor
            expected += [m.cursor.seq for m in pending]
            received = await subscription.receive(0.001) if n or pending else []
            got += [m.cursor.seq for m in received]
            if received:
                after = received[-1].cursor
    assert got == expected
    assert got == sorted(set(got))  # once each, in order
