"""The :class:`Broker` protocol: live fan-out of a run's events between replicas.

The broker is the *latency* path, never the source of truth (``docs/runs.md`` §2, §3):

* ``publish`` is called by the run's single producer, in cursor order. A broker refuses a
  cursor that is not after the last one it accepted for the run (returns False): that is how a
  slow producer whose lease was taken over stops reaching readers once the new epoch has
  published. ``publish_many`` does the same for several events at once (one round trip for
  Redis): exactly as if ``publish`` were called for each in order, each fenced on its own.
* ``subscribe(run_id, after)`` retains a bounded tail per run, so a subscription delivers the
  retained events after ``after`` and then the live ones: a reader that subscribes, then
  replays the store, then drains the subscription sees no gap for events published but not
  yet durable.
* Delivery is at-most-once and bounded: the retained tail has a stated maximum per run, and
  a subscriber that falls behind past its bound (in-process: its queue; Redis: the trimmed
  stream) misses messages; readers detect the gap by cursor and refill from the store, and
  nothing depends on one message arriving (readers re-check the store when idle). Once a
  run's terminal event is published everything is durable, so a broker may release its tail.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from ..types import Cursor, JsonObject, RunEvent

__all__ = [
    "DEFAULT_ENDED_TTL",
    "DEFAULT_MAXLEN",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_READER_MAXLEN",
    "DEFAULT_READER_MAX_BYTES",
    "DEFAULT_TTL",
    "Broker",
    "BrokerUnavailableError",
    "Subscription",
]


class BrokerUnavailableError(Exception):
    """The broker cannot be reached (from ``check()``; readiness and start-up).

    Attributes:
        code: ``BROKER_UNAVAILABLE``.
        message: one line, safe to show.
    """

    code = "BROKER_UNAVAILABLE"
    status = 503

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


DEFAULT_MAXLEN = 2048
"""Events retained per run (Redis ``MAXLEN ~``, ``GATEWAY_BROKER_MAX_EVENTS``); far above what
is published but not durable yet (one write batch, ``batch_max_events``)."""

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
"""Bytes retained per run by the in-process broker (``GATEWAY_BROKER_MAX_BYTES``)."""

DEFAULT_READER_MAXLEN = 1024
"""Events queued per subscription before its reader reads the store instead
(``GATEWAY_BROKER_READER_MAX_EVENTS``; Redis: entries per ``XREAD``)."""

DEFAULT_READER_MAX_BYTES = 1024 * 1024
"""Bytes queued per in-process subscription, likewise (``GATEWAY_BROKER_READER_MAX_BYTES``)."""

DEFAULT_TTL = 3600.0
"""Seconds a run's retained tail lives after its last publish (``GATEWAY_BROKER_TTL_SECONDS``)."""

DEFAULT_ENDED_TTL = 60.0
"""Seconds a run's stream lives once its terminal event was published
(``GATEWAY_BROKER_ENDED_TTL_SECONDS``): everything is durable by then, readers use the store."""


@runtime_checkable
class Subscription(Protocol):
    """A reader's position in one run's live stream; an async context manager.

    Entering registers it (before that, nothing is delivered); leaving releases it.
    """

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def receive(self, timeout: float) -> list[RunEvent]:
        """Wait up to ``timeout`` seconds; return the next messages in cursor order, or ``[]``."""
        ...

    def skip_to(self, cursor: Cursor) -> None:
        """Hint: messages at or before ``cursor`` are not needed (the reader has them)."""
        ...


@runtime_checkable
class Broker(Protocol):
    """Publish/subscribe of run events keyed by run id."""

    async def publish(self, run_id: str, cursor: Cursor, event: JsonObject) -> bool:
        """Fan ``event`` out to the run's subscribers.

        Returns False when the cursor is not after the last accepted one (a fenced producer)
        or the broker is unreachable; never raises for delivery problems.
        """
        ...

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        """Publish ``events`` (in cursor order) as ``publish`` would one after the other, in one
        round trip; returns how many were accepted. Never raises for delivery problems (0 when
        the broker is unreachable)."""
        ...

    def subscribe(self, run_id: str, after: Cursor | None = None) -> Subscription:
        """A subscription delivering the retained and live events strictly after ``after``."""
        ...

    async def check(self) -> None:
        """Return when the broker answers (readiness, start-up).

        Raises:
            BrokerUnavailableError: it cannot be reached.
        """
        ...

    async def healthy(self) -> bool:
        """True when :meth:`check` passes; never raises."""
        ...

    async def close(self) -> None:
        """Release connections; subscriptions stop delivering."""
        ...
