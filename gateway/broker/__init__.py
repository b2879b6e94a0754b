"""Live fan-out of run events: the :class:`Broker` protocol, in-process and Redis Streams.

Public API::

    broker = open_broker(None)                          # InProcessBroker (default)
    broker = open_broker("redis://127.0.0.1:6379/0")    # RedisStreamsBroker
    await broker.publish(run_id, cursor, wire_event)
    async with broker.subscribe(run_id, after=cursor) as sub:
        messages = await sub.receive(timeout=1.0)        # list[RunEvent], [] when idle
"""

from __future__ import annotations

from typing import Any

from .memory import BrokerUsage, InProcessBroker, wire_size
from .protocol import (
    DEFAULT_ENDED_TTL,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAXLEN,
    DEFAULT_READER_MAX_BYTES,
    DEFAULT_READER_MAXLEN,
    DEFAULT_TTL,
    Broker,
    BrokerUnavailableError,
    Subscription,
)
from .redis_streams import DEFAULT_PREFIX, RedisStreamsBroker

__all__ = [
    "DEFAULT_ENDED_TTL",
    "DEFAULT_MAXLEN",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PREFIX",
    "DEFAULT_READER_MAXLEN",
    "DEFAULT_READER_MAX_BYTES",
    "DEFAULT_TTL",
    "Broker",
    "BrokerUnavailableError",
    "BrokerUsage",
    "InProcessBroker",
    "RedisStreamsBroker",
    "Subscription",
    "open_broker",
    "wire_size",
]


def open_broker(
    redis_url: str | None = None,
    *,
    prefix: str = DEFAULT_PREFIX,
    maxlen: int = DEFAULT_MAXLEN,
    max_bytes: int = DEFAULT_MAX_BYTES,
    reader_maxlen: int = DEFAULT_READER_MAXLEN,
    reader_max_bytes: int = DEFAULT_READER_MAX_BYTES,
    ttl: float = DEFAULT_TTL,
    ended_ttl: float = DEFAULT_ENDED_TTL,
    **kwargs: Any,
) -> Broker:
    """The broker for a ``GATEWAY_REDIS_URL`` value: Redis Streams when set, else in-process.

    The bounds (``GATEWAY_BROKER_*``, :mod:`gateway.bounds_settings`): ``maxlen`` events
    retained per run (Redis ``MAXLEN ~``), ``max_bytes`` per run (in-process), ``reader_maxlen``
    events per reader (in-process queue; Redis ``XREAD COUNT``), ``reader_max_bytes`` per reader
    (in-process); ``ttl`` / ``ended_ttl`` seconds a run's tail lives after its last publish /
    its terminal event. ``kwargs`` go to :meth:`RedisStreamsBroker.from_url`.

    Raises:
        ValueError: ``redis_url`` is not a redis:// / rediss:// / unix:// URL; a bound below 1.
    """
    if not redis_url:
        return InProcessBroker(
            maxlen=maxlen,
            max_bytes=max_bytes,
            reader_maxlen=reader_maxlen,
            reader_max_bytes=reader_max_bytes,
            ttl=ttl,
            ended_ttl=ended_ttl,
        )
    if not redis_url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"unsupported broker URL {redis_url!r} (redis://, rediss://, unix://)")
    return RedisStreamsBroker.from_url(
        redis_url,
        prefix=prefix,
        maxlen=maxlen,
        ttl=ttl,
        ended_ttl=ended_ttl,
        read_count=reader_maxlen,
        **kwargs,
    )
