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
  non-transactional pipeline; Redis runs them in order and checks each ``XADD``'s ID on its
  own, so the fencing is exactly that of one ``publish`` per event. The calls of all runs that
  are queued while a pipeline is in flight go out together in the next one (one task per
  event loop sends them: at C streams publishing a delta each, one round trip instead of C;
  issue 13 item 1). Each call's commands stay contiguous and in order, and a caller returns
  when its own replies are in, so what a run publishes is ordered and fenced as before.
* Readers ``XREAD BLOCK`` from their last cursor, so a subscription replays the retained tail
  by itself (https://redis.io/docs/latest/commands/xread/). One ``BLOCK`` lasts at most
  :func:`max_block` of the client's socket timeout (redis-py 8 reads with a 5 s timeout by
  default, blocking commands included: a 5 s ``BLOCK`` raced it, dropped the connection and
  paused the reader 1 s); a longer wait is several of them.
* A run produced in this process is read without ``XREAD`` (issue 13 item 1: one round trip
  per event and reader): the entries this broker's publishes added to a run's stream are also
  handed to the run's subscriptions here (bounded by ``read_count``), in stream order. A
  subscription delivers them only while they directly follow its position (same epoch, next
  seq: no other entry of the stream can lie between), and waits for them instead of blocking
  in ``XREAD`` only while the run is produced here (a publish accepted within
  :data:`LOCAL_WINDOW` seconds, none refused since, not ended). Otherwise (a gap, an overflow,
  another replica's producer, an idle or fenced one) it reads the stream as above, which holds
  the same entries, so what a subscription delivers is what ``XREAD`` alone would deliver.

Redis errors never propagate: ``publish`` returns False and ``receive`` returns ``[]`` after a
short pause, and readers fall back to the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
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

__all__ = ["DEFAULT_PREFIX", "LOCAL_WINDOW", "RedisStreamsBroker", "max_block"]

DEFAULT_PREFIX = "agui:"
"""Key prefix of the run streams."""

_log = logging.getLogger(__name__)

LOCAL_WINDOW = 1.0
"""Seconds after its last accepted publish here that a run counts as produced here: its local
subscriptions wait for the entries this broker hands them instead of blocking in ``XREAD``."""

_PRUNE_EVERY = 256
"""Pipelines between two sweeps of the runs no longer produced here."""


def _stream_id(cursor: Cursor) -> str:
    return f"{cursor.epoch}-{cursor.seq}"


def _cursor(stream_id: bytes | str) -> Cursor:
    text = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    epoch, _, seq = text.partition("-")
    return Cursor(int(epoch), int(seq))


@dataclass(slots=True)
class _Publish:
    """One ``publish_many`` call waiting for the next pipeline: its key, entries and TTL."""

    run_id: str
    key: str
    events: Sequence[RunEvent]
    entries: list[tuple[str, bytes]]
    ttl: int
    terminal: bool
    future: asyncio.Future[int]


@dataclass(slots=True)
class _Sender:
    """The queued publishes and the sending task of one event loop."""

    loop: asyncio.AbstractEventLoop
    queue: list[_Publish] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


def max_block(client: aioredis.Redis) -> float | None:
    """Seconds one ``XREAD BLOCK`` may last on ``client``: below its connections' socket
    timeout (``socket_timeout``, else redis-py's default: None before redis-py 8, 5 s since),
    by 1 s or half of it, whichever is longer; None when reads have no timeout."""
    pool = client.connection_pool
    # a connection as the pool would make one (no I/O: it connects on its first command)
    timeout = pool.connection_class(**pool.connection_kwargs).socket_timeout
    if timeout is None:
        return None
    return max(float(timeout) / 2, float(timeout) - 1.0)


class _RedisSubscription:
    """Subscription of :class:`RedisStreamsBroker` (see :class:`.protocol.Subscription`)."""

    def __init__(self, broker: RedisStreamsBroker, run_id: str, after: Cursor | None) -> None:
        self._broker = broker
        self._run_id = run_id
        self._key = broker.key(run_id)
        self._position: Cursor | None = after
        self._local: deque[RunEvent] = deque(maxlen=broker.read_count)
        """Entries this broker added to the stream since entering, in stream order."""
        self._waiter: asyncio.Future[None] | None = None

    async def __aenter__(self) -> Self:
        self._broker._listeners.setdefault(self._run_id, set()).add(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        listeners = self._broker._listeners.get(self._run_id)
        if listeners is not None:
            listeners.discard(self)
            if not listeners:
                del self._broker._listeners[self._run_id]
        self._local.clear()

    def _offer(self, events: Sequence[RunEvent]) -> None:
        """Entries just added to the stream by this broker (in order). At most ``read_count``
        are kept: past it the oldest go, and the gap they leave sends the reader to the
        stream."""
        self._local.extend(events)
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _take_local(self) -> list[RunEvent] | None:
        """The handed entries that directly follow the position (None: none, or a gap)."""
        local, last = self._local, self._position
        while local and last is not None and local[0].cursor <= last:
            local.popleft()
        out: list[RunEvent] = []
        while local and len(out) < self._broker.read_count:
            cursor = local[0].cursor
            follows = (
                cursor == Cursor(1, 1)
                if last is None
                else cursor.epoch == last.epoch and cursor.seq == last.seq + 1
            )
            if not follows:
                break
            out.append(local.popleft())
            last = cursor
        if not out:
            return None
        self._position = last
        return out

    async def receive(self, timeout: float) -> list[RunEvent]:
        """The entries after the position, waiting up to ``timeout`` seconds: the handed ones
        while the run is produced here, else ``XREAD BLOCK`` (see the module docstring)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            taken = self._take_local()
            if taken:
                return taken
            if self._local:  # a gap before the handed entries: the stream has what lies in it
                break
            now = loop.time()
            wait = min(deadline - now, self._broker._produced_left(self._run_id, now))
            if wait <= 0:
                break
            self._waiter = loop.create_future()
            timer = loop.call_later(wait, self._wake)
            try:
                await self._waiter
            finally:
                timer.cancel()
                self._waiter = None
        return await self._xread(max(0.001, deadline - loop.time()))

    async def _xread(self, timeout: float) -> list[RunEvent]:
        """``XREAD BLOCK`` up to ``timeout`` seconds from the last position (in blocks of at
        most the broker's :func:`max_block`)."""
        start = _stream_id(self._position) if self._position is not None else "0-0"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        longest = self._broker.max_block
        while True:
            block = deadline - loop.time()
            if longest is not None:
                block = min(block, longest)
            try:
                reply: Any = await self._broker.client.xread(
                    {self._key: start},
                    count=self._broker.read_count,
                    block=max(1, int(block * 1000)),
                )
            except (RedisError, OSError) as exc:
                metrics.BROKER_ERRORS.labels("read").inc()
                _log.warning("redis XREAD failed on %s: %s", self._key, exc)
                await asyncio.sleep(min(timeout, 1.0))
                return []
            if reply or deadline - loop.time() <= 0.001:
                break
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
        self.max_block = max_block(client)
        """Seconds one ``XREAD BLOCK`` lasts at most (:func:`max_block`; None: no bound)."""
        self.prefix = prefix
        self.maxlen = maxlen
        self.ttl = max(1, int(ttl))
        self.ended_ttl = max(1, min(self.ttl, int(ended_ttl)))
        self.read_count = read_count
        self._sender: _Sender | None = None
        self._listeners: dict[str, set[_RedisSubscription]] = {}
        self._produced: dict[str, float] = {}
        """Run id -> loop time of its last publish accepted here (while produced here)."""
        self.pipelines = 0
        """Publish pipelines sent (a figure for tests and benches)."""

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
        """``XADD`` with the cursor as entry ID (+ ``EXPIRE``): :meth:`publish_many` of one."""
        return await self.publish_many(run_id, [RunEvent(cursor, event)]) == 1

    async def publish_many(self, run_id: str, events: Sequence[RunEvent]) -> int:
        """One ``XADD`` per event (cursor as entry ID) and one ``EXPIRE``, in the next pipeline
        (shared with the other runs' calls queued meanwhile, see the module docstring).

        Returns how many ``XADD`` were accepted (an ID not greater than the stream's last is
        refused, as in :meth:`publish`); 0 when Redis cannot be reached.
        """
        if not events:
            return 0
        sender = self._current_sender()
        entries = [
            (_stream_id(message.cursor), message.json or orjson.dumps(message.event))
            for message in events
        ]
        last = events[-1].event
        request = _Publish(
            run_id,
            self.key(run_id),
            events,
            entries,
            self._ttl_after(last),
            last.get("type") in TERMINAL_EVENT_TYPES,
            sender.loop.create_future(),
        )
        sender.queue.append(request)
        sender.wake.set()
        return await request.future

    def _current_sender(self) -> _Sender:
        loop = asyncio.get_running_loop()
        sender = self._sender
        if sender is None or sender.loop is not loop or (sender.task and sender.task.done()):
            sender = _Sender(loop)
            self._sender = sender
        if sender.task is None:
            sender.task = loop.create_task(self._send_forever(sender), name="redis-publish")
        return sender

    async def _send_forever(self, sender: _Sender) -> None:
        while True:
            await sender.wake.wait()
            sender.wake.clear()
            while sender.queue:
                group, sender.queue = sender.queue, []
                try:
                    await self._send(group)
                except asyncio.CancelledError:
                    for request in group + sender.queue:
                        if not request.future.done():
                            request.future.set_result(0)
                    raise
                except Exception:  # a bug of ours: its callers get "not published"
                    _log.exception("redis publish pipeline failed")
                    for request in group:
                        if not request.future.done():
                            request.future.set_result(0)

    async def _send(self, group: list[_Publish]) -> None:
        """One pipeline for ``group``: each request's ``XADD``s then its ``EXPIRE``."""
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for request in group:
                    for entry_id, data in request.entries:
                        pipe.xadd(
                            request.key,
                            {"e": data},
                            id=entry_id,
                            maxlen=self.maxlen,
                            approximate=True,
                        )
                    pipe.expire(request.key, request.ttl)
                replies = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as exc:
            metrics.BROKER_ERRORS.labels("publish").inc()
            _log.warning("redis XADD failed on %d streams: %s", len(group), exc)
            for request in group:
                if not request.future.done():
                    request.future.set_result(0)
            return
        self.pipelines += 1
        now = asyncio.get_running_loop().time()
        at = 0
        for request in group:
            added: list[RunEvent] = []
            refused = False
            for message, reply in zip(
                request.events, replies[at : at + len(request.entries)], strict=True
            ):
                if not isinstance(reply, Exception):
                    added.append(message)
                elif isinstance(reply, ResponseError):
                    refused = True
                else:
                    metrics.BROKER_ERRORS.labels("publish").inc()
                    _log.warning("redis XADD failed on %s: %s", request.key, reply)
            at += len(request.entries) + 1
            self._hand_over(request.run_id, added, refused or request.terminal, now)
            if not request.future.done():  # its caller was cancelled
                request.future.set_result(len(added))
        if self.pipelines % _PRUNE_EVERY == 0:
            for run_id in [r for r, t in self._produced.items() if now - t >= LOCAL_WINDOW]:
                del self._produced[run_id]

    def _hand_over(self, run_id: str, added: list[RunEvent], done: bool, now: float) -> None:
        """Hand ``added`` (entries just added to the run's stream) to its local subscriptions;
        ``done``: a publish was refused (a newer producer) or the run ended, so it is no
        longer produced here."""
        if done:
            self._produced.pop(run_id, None)
        elif added:
            self._produced[run_id] = now
        for subscription in self._listeners.get(run_id, ()):
            if added:
                subscription._offer(added)
            else:
                subscription._wake()

    def _produced_left(self, run_id: str, now: float) -> float:
        """Seconds the run still counts as produced here (0: not produced here)."""
        since = self._produced.get(run_id)
        return 0.0 if since is None else max(0.0, since + LOCAL_WINDOW - now)

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
        """Stop the publish task (queued publishes get 0), then close the client's pool."""
        sender, self._sender = self._sender, None
        if sender is not None and sender.task is not None and not sender.task.done():
            if sender.loop is asyncio.get_running_loop():
                sender.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sender.task
        await self.client.aclose()
