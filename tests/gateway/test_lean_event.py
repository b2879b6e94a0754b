"""``LeanEvent`` / ``LeanQueue`` behave as ``asyncio.Event`` / ``asyncio.Queue`` (the oracle is
the stdlib's own class, CPython ``Lib/asyncio/locks.py`` / ``queues.py``), with less memory
(issue 13 item 5.4).

The generator drives the two events side by side with the same random script (set, clear,
waiters started, waiters cancelled, loop turns) and compares what every waiter saw and when.
"""

from __future__ import annotations

import asyncio
import sys
import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.lean_event import LeanEvent, LeanQueue

OPS = st.lists(
    st.one_of(
        st.just(("set",)),
        st.just(("clear",)),
        st.just(("wait",)),
        st.tuples(st.just("cancel"), st.integers(0, 20)),
        st.tuples(st.just("turn"), st.integers(1, 3)),
    ),
    max_size=40,
)


async def _play(event: asyncio.Event, ops: list[tuple[Any, ...]]) -> list[Any]:
    seen: list[Any] = []
    waiters: list[asyncio.Task[bool]] = []

    async def waiter(index: int) -> bool:
        result = await event.wait()
        seen.append(("woke", index, event.is_set()))
        return result

    for op in ops:
        if op[0] == "set":
            event.set()
        elif op[0] == "clear":
            event.clear()
        elif op[0] == "wait":
            waiters.append(asyncio.create_task(waiter(len(waiters))))
        elif op[0] == "cancel" and waiters:
            waiters[op[1] % len(waiters)].cancel()
        elif op[0] == "turn":
            for _ in range(op[1]):
                await asyncio.sleep(0)
        seen.append(("state", event.is_set(), sum(not w.done() for w in waiters)))
    event.set()
    for task in waiters:
        try:
            seen.append(("result", await task))
        except asyncio.CancelledError:
            seen.append(("result", "cancelled"))
    seen.append(("left", len(event._waiters)))  # type: ignore[attr-defined]
    return seen


@settings(max_examples=200, deadline=None)
@given(ops=OPS)
def test_lean_event_matches_asyncio_event(ops: list[tuple[Any, ...]]) -> None:
    expected = asyncio.run(_play(asyncio.Event(), ops))
    assert asyncio.run(_play(LeanEvent(), ops)) == expected


QUEUE_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 99)),
        st.just(("get",)),
        st.tuples(st.just("turn"), st.integers(1, 3)),
    ),
    max_size=40,
)


async def _play_queue(queue: asyncio.Queue[int], ops: list[tuple[Any, ...]]) -> list[Any]:
    seen: list[Any] = []
    tasks: list[asyncio.Task[Any]] = []
    for op in ops:
        if op[0] == "put":
            tasks.append(asyncio.create_task(queue.put(op[1])))
        elif op[0] == "get":
            tasks.append(asyncio.create_task(queue.get()))
        else:
            for _ in range(op[1]):
                await asyncio.sleep(0)
        seen.append((queue.qsize(), queue.full(), queue.empty()))
    for task in tasks:
        task.cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    seen.append([d if not isinstance(d, BaseException) else type(d).__name__ for d in done])
    return seen


@settings(max_examples=100, deadline=None)
@given(ops=QUEUE_OPS, maxsize=st.integers(0, 3))
def test_lean_queue_matches_asyncio_queue(ops: list[tuple[Any, ...]], maxsize: int) -> None:
    expected = asyncio.run(_play_queue(asyncio.Queue(maxsize), ops))
    assert asyncio.run(_play_queue(LeanQueue(maxsize), ops)) == expected


def _traced_bytes(factory: Any, n: int) -> int:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        keep = [factory() for _ in range(n)]
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(keep) == n
    return after - before


def test_a_lean_event_is_smaller() -> None:
    n = 1000
    plain, lean = _traced_bytes(asyncio.Event, n), _traced_bytes(LeanEvent, n)
    # the deque a stdlib event holds is sys.getsizeof(deque()) (760 bytes on 64-bit CPython)
    assert plain - lean >= n * (sys.getsizeof(__import__("collections").deque()) // 2)
    # a stdlib queue holds four deques (items, getters, putters, its event's waiters); a lean
    # one holds none
    deque_size = sys.getsizeof(__import__("collections").deque())
    assert _traced_bytes(asyncio.Queue, n) - _traced_bytes(LeanQueue, n) >= n * 3 * deque_size
