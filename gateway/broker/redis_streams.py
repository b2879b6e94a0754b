"""Redis Streams broker: one stream per run, shared by every replica.

* Key ``<prefix>run:<run_id>``; each entry's ID *is* the cursor (``<epoch>-<seq>``, Redis
  orders stream IDs exactly as cursors order), its one field ``e`` the compact JSON event.
  ``XADD`` refuses an ID not greater than the stream's last, which fences a producer whose
  lease was taken over once the new epoch has published.
* ``XADD ... MAXLEN ~ maxlen`` bounds the stream (approximate trimming: whole stream nodes, so
  a little more than ``maxlen`` may stay); ``EXPIRE`` drops it ``ttl`` seconds after the
  last publish, ``ended_ttl`` after the run's terminal event (then everything is durable).
  A reader whose position was trimmed away gets the oldest entries left, sees the gap by
  cursor and fills it from the store (:mod:`gateway.runs.reader`), so nothing is lost; one
  ``XREAD`` fetches at most ``read_count`` entries, the bound of what a reader holds.
* ``publish_many`` sends one ``XADD`` per event and a single ``EXPIRE`` in one
  non-transactional pipeline (one round trip); Redis runs them in order and checks each ``XADD``'s
  ID on its own, so the fencing is exactly that of one ``publish`` per event.
* Readers ``XREAD BLOCK`` from their last cursor, so a subscription needs no registration and
  replays the retained tail by itself (https://redis.io/docs/latest/commands/xread/).

Redis errors never propagate: ``publish`` returns False and ``receive`` returns ``[]`` after a
short pause, and readers fall back to the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Self

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from .. import metrics
from ..types import TERMINAL_EVENT_TYPES, Cursor, JsonObject, RunEvent
from .protocol import (
    DEFAULT_ENDED_TTL,
    DEFAULT_MAXLEN,
    DEFAULT_READER_MAXLEN,
    DEFAULT_TTL,
    BrokerUnavailableError,
)

__all__ = ["DEFAULT_PREFIX", "RedisStreamsBroker"]

DEFAULT_PREFIX = "agui:"
"""Key prefix of the run streams."""

_log = logging.getLogger(__name__)


def _stream_id(cursor: Cursor) -> str:
    return f"{cursor.epoch}-{cursor.seq}"


def _cursor(stream_id: bytes | str) -> Cursor:
    text = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    epoch, _, seq = text.partition("-")
    return Cursor(int(epoch), int(seq))


class _RedisSubscription:
    """Subscription of :class:`RedisStreamsBroker` (see :class:`.protocol.Subscription`)."""

    def __init__(self, broker: RedisStreamsBroker, run_id: str, after: Cursor | None) -> None:
        self._broker = broker
        self._key = broker.key(run_id)
        self._position: Cursor | None = after

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def receive(self, timeout: float) -> list[RunEvent]:
        """``XREAD BLOCK`` up to ``timeout`` seconds from the last position."""
        start = _stream_id(self._position) if self._position is not None else "0-0"
        try:
            reply: Any = await self._broker.client.xread(
                {self._key: start}, count=self._broker.read_count, block=max(1, int(timeout * 1000))
            )
        except (RedisError, OSError) as exc:
            metrics.BROKER_ERRORS.labels("read").inc()
            _log.warning("redis XREAD failed on %s: %s", self._key, exc)
            await asyncio.sleep(min(timeout, 1.0))
            return []
        out: list[RunEvent] = []
        streams = reply.items() if isinstance(reply, dict) else (reply or [])
        for _key, entries in streams:
            for entry_id, fields in entries:
                data = fields.get(b"e", fields.get("e"))
                if data is None:
                    continue
                raw = data if isinstance(data, bytes) else None
                out.append(RunEvent(_cursor(entry_id), orjson.loads(data), raw))
        if out:
            self._position = out[-1].cursor
        return out

    def skip_to(self, cursor: Cursor) -> None:
        """Move the read position forward to ``cursor`` (never backward)."""
        if self._position is None or cursor > self._position:
            self._position = cursor


class RedisStreamsBroker:
    """:class:`~gateway.broker.protocol.Broker` over Redis Streams.

    Args:
        client: a ``redis.asyncio.Redis`` (``decode_responses`` either way).
        prefix: key prefix (tests use a unique one).
        maxlen: approximate number of entries kept per run stream.
        ttl: seconds a run stream lives after its last publish.
        ended_ttl: seconds it lives after its run's terminal event was published.
        read_count: entries fetched per ``XREAD`` (what one reader holds at most).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        maxlen: int = DEFAULT_MAXLEN,
        ttl: float = DEFAULT_TTL,
        ended_ttl: float = DEFAULT_ENDED_TTL,
        read_count: int = DEFAULT_READER_MAXLEN,
    ) -> None:
        if min(maxlen, read_count) < 1:
            raise ValueError("maxlen and read_count must be >= 1")
        self.client = client
        self.prefix = prefix
        self.maxlen = maxlen
        self.ttl = max(1, int(ttl))
        self.ended_ttl = max(1, min(self.ttl, int(ended_ttl)))
        self.read_count = read_count

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisStreamsBroker:
        """Connect lazily to ``url`` (``redis://host:port/db``); kwargs as for the class."""
        return cls(aioredis.from_url(url), **kwargs)

    def key(self, run_id: str) -> str:
        """The stream key of ``run_id``."""
        return f"{self.prefix}run:{run_id}"

    def _ttl_after(self, event: JsonObject) -> int:
        return self.ended_ttl if event.get("type") in TERMINAL_EVENT_TYPES else self.ttl

    async def publish(self, run_id: str, cursor: Cursor, event: JsonObject) -> bool:
        """``XADD`` with the cursor as entry ID (+ ``EXPIRE``) in one round trip."""
        key = self.key(run_id)
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.xadd(
                    key,
                    {"e": orjson.dumps(event)},
                    id=_stream_id(cursor),
                    maxlen=self.maxlen,
                    approximate=True,
                )
                pipe.expire(key, self._ttl_after(event))
                added, _ = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as exc:
            metrics.BROKER_ERRORS.labels("publish").inc()
            _log.warning("redis XADD failed on %s: %s", key, exc)
            return False
        if isinstance(added, ResponseError):
            return False  # ID not greater than the stream's last: a fenced producer
        if isinstance(added, Exception):
            metrics.BROKER_ERRORS.labels("publish").inc()
            _log.warning("redis XADD failed on %s: %s", key, added)
            return False
        return True

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        """One ``XADD`` per event (cursor as entry ID) and one ``EXPIRE``, in one round trip.

        Returns how many ``XADD`` were accepted (an ID not greater than the stream's last is
        refused, as in :meth:`publish`); 0 when Redis cannot be reached.
        """
        if not events:
            return 0
        key = self.key(run_id)
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for message in events:
                    pipe.xadd(
                        key,
                        {"e": message.json or orjson.dumps(message.event)},
                        id=_stream_id(message.cursor),
                        maxlen=self.maxlen,
                        approximate=True,
                    )
                pipe.expire(key, self._ttl_after(events[-1].event))
                replies = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as exc:
            metrics.BROKER_ERRORS.labels("publish").inc()
            _log.warning("redis XADD failed on %s: %s", key, exc)
            return 0
        accepted = 0
        for reply in replies[:-1]:
            if not isinstance(reply, Exception):
                accepted += 1
            elif not isinstance(reply, ResponseError):
                metrics.BROKER_ERRORS.labels("publish").inc()
                _log.warning("redis XADD failed on %s: %s", key, reply)
        return accepted

    def subscribe(self, run_id: str, after: Cursor | None = None) -> _RedisSubscription:
        """A subscription reading ``run_id``'s stream after ``after`` (use ``async with``)."""
        return _RedisSubscription(self, run_id, after)

    async def check(self) -> None:
        """Answer when Redis answers ``PING`` (readiness, start-up).

        Raises:
            BrokerUnavailableError: Redis cannot be reached or refused the command.
        """
        try:
            await self.client.ping()
        except (RedisError, OSError) as exc:
            raise BrokerUnavailableError(f"the broker is unavailable: {exc}") from exc

    async def healthy(self) -> bool:
        """True when :meth:`check` passes (never raises)."""
        try:
            await self.check()
        except BrokerUnavailableError:
            return False
        return True

    async def close(self) -> None:
        """Close the client's connection pool."""
        await self.client.aclose()
