"""In-process broker (the default): one replica, no server; same contract as Redis Streams.

Each run has a topic holding the last ``maxlen`` events (a ring buffer) and the set of live
subscriptions. A subscription starts with the retained events after its cursor, then receives
every accepted publish; its own queue is bounded by ``maxlen`` too (a reader that falls that
far behind loses the oldest messages and refills from the store, see :mod:`.protocol`).
Topics nobody published to or subscribed to for ``ttl`` seconds are dropped.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from ..types import Cursor, JsonObject, RunEvent
from .protocol import DEFAULT_MAXLEN, DEFAULT_TTL

__all__ = ["InProcessBroker"]


class _Topic:
    __slots__ = ("buffer", "last", "subscribers", "touched")

    def __init__(self, maxlen: int, now: float) -> None:
        self.buffer: deque[RunEvent] = deque(maxlen=maxlen)
        self.last: Cursor | None = None
        self.subscribers: set[_MemorySubscription] = set()
        self.touched = now


class _MemorySubscription:
    """Subscription of :class:`InProcessBroker` (see :class:`.protocol.Subscription`)."""

    def __init__(self, broker: InProcessBroker, run_id: str, after: Cursor | None) -> None:
        self._broker = broker
        self.run_id = run_id
        self._after = after
        self._queue: deque[RunEvent] = deque(maxlen=broker.maxlen)
        self._wakeup = asyncio.Event()
        self._attached = False

    async def __aenter__(self) -> Self:
        self._broker._attach(self, self._after)
        self._attached = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._attached:
            self._broker._detach(self)
            self._attached = False

    def _deliver(self, message: RunEvent) -> None:
        self._queue.append(message)
        self._wakeup.set()

    async def receive(self, timeout: float) -> list[RunEvent]:
        """Wait up to ``timeout`` seconds; return the queued messages (``[]`` on timeout)."""
        if not self._attached:
            raise RuntimeError("subscription used outside 'async with'")
        if not self._queue:
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout)
            except TimeoutError:
                return []
        out = list(self._queue)
        self._queue.clear()
        after = self._after
        if after is not None:
            out = [m for m in out if m.cursor > after]
        return out

    def skip_to(self, cursor: Cursor) -> None:
        """Drop queued messages at or before ``cursor`` from now on."""
        if self._after is None or cursor > self._after:
            self._after = cursor


class InProcessBroker:
    """:class:`~gateway.broker.protocol.Broker` inside one process (asyncio, one loop).

    Args:
        maxlen: events retained per run and queued per subscription.
        ttl: seconds an idle topic (no publish, no subscriber) is kept.
        clock: monotonic clock in seconds (for tests).
    """

    def __init__(
        self,
        *,
        maxlen: int = DEFAULT_MAXLEN,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if maxlen < 1:
            raise ValueError("maxlen must be >= 1")
        self.maxlen = maxlen
        self.ttl = ttl
        self._clock = clock
        self._topics: dict[str, _Topic] = {}
        self._next_sweep = clock() + ttl

    def _topic(self, run_id: str) -> _Topic:
        now = self._clock()
        if now >= self._next_sweep:
            self._sweep(now)
        topic = self._topics.get(run_id)
        if topic is None:
            topic = self._topics[run_id] = _Topic(self.maxlen, now)
        topic.touched = now
        return topic

    def _sweep(self, now: float) -> None:
        self._next_sweep = now + self.ttl
        for run_id, topic in list(self._topics.items()):
            if not topic.subscribers and now - topic.touched >= self.ttl:
                del self._topics[run_id]

    async def publish(self, run_id: str, cursor: Cursor, event: JsonObject) -> bool:
        """Retain and fan out ``event``; False when ``cursor`` is not after the last one."""
        topic = self._topic(run_id)
        if topic.last is not None and cursor <= topic.last:
            return False
        message = RunEvent(cursor, event)
        topic.last = cursor
        topic.buffer.append(message)
        for subscription in topic.subscribers:
            subscription._deliver(message)
        return True

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        """:meth:`publish` each of ``events`` in order; returns how many were accepted."""
        topic = self._topic(run_id)
        accepted = 0
        subscribers = topic.subscribers
        for message in events:
            if topic.last is not None and message.cursor <= topic.last:
                continue
            topic.last = message.cursor
            topic.buffer.append(message)
            for subscription in subscribers:
                subscription._deliver(message)
            accepted += 1
        return accepted

    def subscribe(self, run_id: str, after: Cursor | None = None) -> _MemorySubscription:
        """A subscription to ``run_id`` from ``after`` (use ``async with``)."""
        return _MemorySubscription(self, run_id, after)

    def _attach(self, subscription: _MemorySubscription, after: Cursor | None) -> None:
        topic = self._topic(subscription.run_id)
        for message in topic.buffer:
            if after is None or message.cursor > after:
                subscription._deliver(message)
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

    async def close(self) -> None:
        """Forget every topic (live subscriptions receive nothing more)."""
        for topic in self._topics.values():
            topic.subscribers.clear()
        self._topics.clear()
