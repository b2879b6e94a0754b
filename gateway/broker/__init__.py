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

from .memory import InProcessBroker
from .protocol import DEFAULT_MAXLEN, DEFAULT_TTL, Broker, BrokerUnavailableError, Subscription
from .redis_streams import DEFAULT_PREFIX, RedisStreamsBroker

__all__ = [
    "DEFAULT_MAXLEN",
    "DEFAULT_PREFIX",
    "DEFAULT_TTL",
    "Broker",
    "BrokerUnavailableError",
    "InProcessBroker",
    "RedisStreamsBroker",
    "Subscription",
    "open_broker",
]


def open_broker(
    redis_url: str | None = None,
    *,
    prefix: str = DEFAULT_PREFIX,
    maxlen: int = DEFAULT_MAXLEN,
    ttl: float = DEFAULT_TTL,
    **kwargs: Any,
) -> Broker:
    """The broker for a ``GATEWAY_REDIS_URL`` value: Redis Streams when set, else in-process.

    Raises:
        ValueError: ``redis_url`` is not a redis:// / rediss:// / unix:// URL.
    """
    if not redis_url:
        return InProcessBroker(maxlen=maxlen, ttl=ttl)
    if not redis_url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"unsupported broker URL {redis_url!r} (redis://, rediss://, unix://)")
    return RedisStreamsBroker.from_url(redis_url, prefix=prefix, maxlen=maxlen, ttl=ttl, **kwargs)
