"""In-process broker (the default): one replica, no server; same contract as Redis Streams.

Memory is bounded, per run and per reader (``docs/runs.md`` §3, issue 15):

* each run has a topic holding its retained tail, the last events published, at most
  ``maxlen`` events and ``max_bytes`` bytes (whichever bound is reached first; the oldest go
  first). Once the run's terminal event is published everything is durable (control events are
  written before they are published, ``docs/runs.md`` §2), so the tail is released at once and
  later readers read the store; the topic itself (its last cursor, for fencing) goes
  ``ended_ttl`` seconds later, a topic nobody published to or subscribed to for ``ttl`` seconds
  too;
* each subscription queues what its reader has not taken yet, at most ``reader_maxlen`` events
  and ``reader_max_bytes`` bytes. A reader that falls behind past that bound is moved to the
  store path: its queue is released, it receives nothing more, and its next ``receive`` returns
  ``[]`` at once after subscribing it again from the live end, so the reader re-reads the store
  after its last cursor (and fills any later gap from the store, :mod:`gateway.runs.reader`).
  Nothing is lost; the reader only leaves the latency path until it has caught up.

Sizes are the events' JSON size: the length of the serialized form the writer made
(:attr:`~gateway.types.RunEvent.json`), else an approximation (the length of their top-level
strings plus serialized nested values plus a small per-field overhead, :func:`wire_size`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import orjson

from ..types import TERMINAL_EVENT_TYPES, Cursor, JsonObject, RunEvent
from .protocol import (
    DEFAULT_ENDED_TTL,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAXLEN,
    DEFAULT_READER_MAX_BYTES,
    DEFAULT_READER_MAXLEN,
    DEFAULT_TTL,
)

__all__ = ["BrokerUsage", "InProcessBroker", "wire_size"]

_EVENT_OVERHEAD = 16
_FIELD_OVERHEAD = 8


def wire_size(event: JsonObject) -> int:
    """Approximate size in bytes of ``event``'s compact JSON: top-level strings count their
    length (characters), nested objects and arrays their serialized length, other values 8,
    plus a few bytes per field. Cheap for the common case, a delta (one short string)."""
    size = _EVENT_OVERHEAD
    for key, value in event.items():
        if type(value) is str:
            size += len(key) + _FIELD_OVERHEAD + len(value)
        elif isinstance(value, dict | list):
            size += len(key) + _FIELD_OVERHEAD + len(orjson.dumps(value, default=str))
        else:
            size += len(key) + _FIELD_OVERHEAD + 8
    return size


@dataclass(frozen=True, slots=True)
class BrokerUsage:
    """What an :class:`InProcessBroker` holds now (:meth:`InProcessBroker.usage`).

    Attributes:
        runs: topics (runs published to or subscribed to recently).
        retained_events, retained_bytes: the retained tails, summed over the runs.
        readers: live subscriptions (not counting those moved to the store path).
        queued_events, queued_bytes: what subscriptions hold for their readers, summed.
        lagging: subscriptions moved to the store path and not yet back.
    """

    runs: int
    retained_events: int
    retained_bytes: int
    readers: int
    queued_events: int
    queued_bytes: int
    lagging: int


class _Topic:
    __slots__ = ("buffer", "bytes", "ended", "last", "subscribers", "touched")

    def __init__(self, now: float) -> None:
        # a list until the run's tail first reaches its bound, then a deque (trimmed from
        # the left once per event): an empty deque is about 760 bytes, a list 56, and most
        # runs never reach the bound (a list's ``append``, ``clear``, ``len``, ``reversed``
        # are the deque's)
        self.buffer: list[tuple[RunEvent, int]] | deque[tuple[RunEvent, int]] = []
        self.bytes = 0
        self.ended = False
        self.last: Cursor | None = None
        self.subscribers: set[_MemorySubscription] = set()
        self.touched = now


class _MemorySubscription:
    """Subscription of :class:`InProcessBroker` (see :class:`.protocol.Subscription`).

    ``waits_free``: a :meth:`receive` costs one future and one timer whatever its timeout, so
    an idle reader, watched by the store re-check meanwhile, waits with a long one instead of
    waking every ``reader_idle_recheck`` (:mod:`gateway.runs.reader`, issue 13 item 5)."""

    waits_free = True

    def __init__(self, broker: InProcessBroker, run_id: str, after: Cursor | None) -> None:
        self._broker = broker
        self.run_id = run_id
        self._after = after
        # a list, not a deque: only appended to and taken whole (a deque is 760 bytes empty,
        # and its clear() allocates a fresh block: 1.3 KiB per open stream, issue 13 item 5)
        self._queue: list[RunEvent] = []
        self._queued_bytes = 0
        self._waiter: asyncio.Future[None] | None = None  # set while receive() waits
        self._deadline = 0.0  # loop time the current (or last) wait times out at
        self._timer: asyncio.TimerHandle | None = None  # armed at or before the deadline
        self._attached = False
        self.lagging = False

    async def __aenter__(self) -> Self:
        self._broker._attach(self, self._after, tail=True)
        self._attached = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._attached:
            self._broker._detach(self)
            self._attached = False
            self._broker._lagging.discard(self)
            self._drop_queue()

    def _drop_queue(self) -> None:
        if self._queue:
            self._queue = []
        self._queued_bytes = 0

    def _deliver(self, message: RunEvent, size: int) -> bool:
        """Queue ``message``; False (queue released, lagging) when it does not fit the bound:
        behind past it, the reader re-reads the store (docs/runs.md §3). The caller detaches
        a lagging subscription."""
        queued = self._queued_bytes + size
        if (
            len(self._queue) < self._broker.reader_maxlen
            and queued <= self._broker.reader_max_bytes
        ):
            self._queue.append(message)
            self._queued_bytes = queued
            waiter = self._waiter  # _wake(), inline: once per delivered event
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            return True
        self._drop_queue()
        self.lagging = True
        self._broker._lagging.add(self)
        self._wake()
        return False

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self, timeout: float) -> list[RunEvent]:
        """Wait up to ``timeout`` seconds; return the queued messages (``[]`` on timeout, and
        at once after the reader fell behind past the bound: it re-reads the store)."""
        if not self._attached:
            raise RuntimeError("subscription used outside 'async with'")
        if self.lagging:
            self.lagging = False
            self._broker._lagging.discard(self)
            self._broker._attach(self, self._after, tail=False)
            return []
        if not self._queue:
            # One future per wait, woken by _deliver: no task per call (asyncio.wait_for
            # wraps its awaitable in a task on Python 3.11), the reader's one wake-up per
            # published batch (issue 13). The timeout is one timer per subscription, not per
            # wait: a timer armed for an earlier deadline stays and, when it fires before the
            # current one, re-arms for it (_expire), so a reader woken every few ms makes a
            # timer about once per ``timeout`` instead of one (and one cancelled) per event.
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            deadline = self._deadline = loop.time() + timeout
            timer = self._timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(deadline, self._expire, deadline)
            try:
                await waiter
            finally:
                self._waiter = None
            if self.lagging:
                return await self.receive(timeout)
            if not self._queue:
                return []  # timed out
        out = self._queue
        self._queue = []
        self._queued_bytes = 0
        after = self._after
        # queued in cursor order (the topic accepts only rising cursors): only a prefix can
        # be at or before ``after`` (a skip_to past what was queued), so one comparison (of
        # tuples, as _accept's) settles the usual case, nothing to drop
        head = out[0].cursor
        if after is not None and (head.epoch, head.seq) <= (after.epoch, after.seq):
            out = [m for m in out if m.cursor > after]
            if not out:
                return out
        self._after = out[-1].cursor
        return out

    def _expire(self, when: float) -> None:
        """The timer armed for ``when`` fired: the wait times out if its deadline is ``when``
        (or earlier); one that began later gets the timer again, at its own deadline."""
        self._timer = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return  # no wait now: the next one arms its own
        if self._deadline <= when:
            waiter.set_result(None)
        else:
            self._timer = waiter.get_loop().call_at(self._deadline, self._expire, self._deadline)

    def queued_head(self) -> Cursor | None:
        """The cursor of the oldest message queued for the reader and not received yet (the
        retained tail it got on entering included), None when none is.

        A reader whose cursor this directly follows (:meth:`Cursor.follows`) has no gap before
        the queue: it need not replay the store first (:mod:`gateway.runs.reader`)."""
        after = self._after
        for message in self._queue:
            if after is None or message.cursor > after:
                return message.cursor
        return None

    def skip_to(self, cursor: Cursor) -> None:
        """Drop queued messages at or before ``cursor`` from now on."""
        if self._after is None or cursor > self._after:
            self._after = cursor


class InProcessBroker:
    """:class:`~gateway.broker.protocol.Broker` inside one process (asyncio, one loop).

    Args:
        maxlen: events retained per run (>= 1).
        max_bytes: bytes retained per run (approximate JSON size, :func:`wire_size`).
        reader_maxlen: events queued per subscription before its reader is moved to the store
            path (default: ``min(maxlen, DEFAULT_READER_MAXLEN)``).
        reader_max_bytes: bytes queued per subscription, likewise.
        ttl: seconds an idle topic (no publish, no subscriber) is kept.
        ended_ttl: seconds a topic is kept once its run's terminal event was published and
            nobody subscribes (its tail is released at once).
        clock: monotonic clock in seconds (for tests).

    Raises:
        ValueError: a bound below 1.
    """

    def __init__(
        self,
        *,
        maxlen: int = DEFAULT_MAXLEN,
        max_bytes: int = DEFAULT_MAX_BYTES,
        reader_maxlen: int | None = None,
        reader_max_bytes: int = DEFAULT_READER_MAX_BYTES,
        ttl: float = DEFAULT_TTL,
        ended_ttl: float = DEFAULT_ENDED_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if reader_maxlen is None:
            reader_maxlen = min(maxlen, DEFAULT_READER_MAXLEN)
        if min(maxlen, max_bytes, reader_maxlen, reader_max_bytes) < 1:
            raise ValueError("maxlen, max_bytes, reader_maxlen and reader_max_bytes must be >= 1")
        self.maxlen = maxlen
        self.max_bytes = max_bytes
        self.reader_maxlen = reader_maxlen
        self.reader_max_bytes = reader_max_bytes
        self.ttl = ttl
        self.ended_ttl = min(ended_ttl, ttl)
        self._clock = clock
        self._topics: dict[str, _Topic] = {}
        self._lagging: set[_MemorySubscription] = set()
        self._next_sweep = clock() + self.ended_ttl

    def _topic(self, run_id: str) -> _Topic:
        now = self._clock()
        if now >= self._next_sweep:
            self._sweep(now)
        topic = self._topics.get(run_id)
        if topic is None:
            topic = self._topics[run_id] = _Topic(now)
        topic.touched = now
        return topic

    def _sweep(self, now: float) -> None:
        self._next_sweep = now + self.ended_ttl
        for run_id, topic in list(self._topics.items()):
            keep = self.ended_ttl if topic.ended else self.ttl
            if not topic.subscribers and now - topic.touched >= keep:
                del self._topics[run_id]

    def _accept(self, topic: _Topic, message: RunEvent) -> bool:
        cursor, last = message.cursor, topic.last
        if last is not None and (cursor.epoch, cursor.seq) <= (last.epoch, last.seq):
            return False
        topic.last = cursor
        if message.type in TERMINAL_EVENT_TYPES:
            topic.ended = True  # all durable now: readers come from the store
            topic.buffer.clear()
            topic.bytes = 0
        subscribers = topic.subscribers
        if topic.ended and not subscribers:
            return True
        size = wire_size(message.event) if message.json is None else len(message.json)
        if not topic.ended:
            buffer = topic.buffer
            buffer.append((message, size))
            topic.bytes += size
            maxlen, max_bytes = self.maxlen, self.max_bytes
            if len(buffer) > maxlen or topic.bytes > max_bytes:
                trimmed = buffer if isinstance(buffer, deque) else deque(buffer)
                topic.buffer = trimmed
                while len(trimmed) > maxlen or topic.bytes > max_bytes:
                    topic.bytes -= trimmed.popleft()[1]
        behind = None
        for subscription in subscribers:
            if not subscription._deliver(message, size):
                behind = [*(behind or ()), subscription]
        if behind:
            for subscription in behind:
                subscribers.discard(subscription)
        return True

    async def publish(self, run_id: str, cursor: Cursor, event: JsonObject) -> bool:
        """Retain and fan out ``event``; False when ``cursor`` is not after the last one."""
        return self._accept(self._topic(run_id), RunEvent(cursor, event))

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        """:meth:`publish` each of ``events`` in order; returns how many were accepted."""
        return self.publish_nowait(run_id, events)

    def publish_nowait(self, run_id: str, events: Sequence[RunEvent]) -> int:
        """:meth:`publish_many` without awaiting (it does no I/O): a producer may publish from
        a callback or a task that must not suspend (the pump's feeder, ``gateway/runs/
        pump.py``). Returns how many were accepted."""
        topic = self._topic(run_id)
        accepted = 0
        for message in events:
            if self._accept(topic, message):
                accepted += 1
        return accepted

    def subscribe(self, run_id: str, after: Cursor | None = None) -> _MemorySubscription:
        """A subscription to ``run_id`` from ``after`` (use ``async with``)."""
        return _MemorySubscription(self, run_id, after)

    def _attach(
        self, subscription: _MemorySubscription, after: Cursor | None, *, tail: bool
    ) -> None:
        topic = self._topic(subscription.run_id)
        if tail:
            # The newest retained events after ``after`` that fit the reader's bound (the
            # part not durable yet is the newest; anything older is in the store).
            chosen: list[tuple[RunEvent, int]] = []
            count = size = 0
            for message, message_size in reversed(topic.buffer):
                if after is not None and message.cursor <= after:
                    break
                if count + 1 > self.reader_maxlen or size + message_size > self.reader_max_bytes:
                    break
                chosen.append((message, message_size))
                count += 1
                size += message_size
            for message, message_size in reversed(chosen):
                subscription._deliver(message, message_size)
        topic.subscribers.add(subscription)

    def _detach(self, subscription: _MemorySubscription) -> None:
        topic = self._topics.get(subscription.run_id)
        if topic is not None:
            topic.subscribers.discard(subscription)
            topic.touched = self._clock()

    async def check(self) -> None:
        """In-process: always available."""

    async def healthy(self) -> bool:
        """Always True (in-process)."""
        return True

    def usage(self) -> BrokerUsage:
        """What the broker holds now, summed over runs and subscriptions."""
        readers = {s for topic in self._topics.values() for s in topic.subscribers}
        return BrokerUsage(
            runs=len(self._topics),
            retained_events=sum(len(t.buffer) for t in self._topics.values()),
            retained_bytes=sum(t.bytes for t in self._topics.values()),
            readers=len(readers),
            queued_events=sum(len(s._queue) for s in readers),
            queued_bytes=sum(s._queued_bytes for s in readers),
            lagging=len(self._lagging),
        )

    async def close(self) -> None:
        """Forget every topic (live subscriptions receive nothing more)."""
        for topic in self._topics.values():
            topic.subscribers.clear()
        self._topics.clear()
        self._lagging.clear()
