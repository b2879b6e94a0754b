"""SSEResponse: a starlette ``StreamingResponse`` for ``text/event-stream`` with keep-alives.

What it adds to ``StreamingResponse`` (which races the body against the client's
``http.disconnect``, starlette 1.x ``responses.py``; under ASGI spec < 2.4, what uvicorn
reports, this class does the race itself with one watcher task instead of starlette's anyio
task group: :meth:`SSEResponse._stream_until_disconnect`):

* a ``: keep-alive`` comment after every ``keepalive_seconds`` without output (WHATWG HTML
  "event stream interpretation": a line starting with ``:`` is ignored by every client; both
  ``@ag-ui/client`` and the AI SDK's eventsource-parser skip it; see ``docs/protocols.md`` §1.2);
* anti-buffering headers: ``cache-control: no-cache``, ``x-accel-buffering: no`` (nginx), and
  no compression (no ``content-encoding``; starlette's GZipMiddleware skips
  ``text/event-stream``);
* one write per wake-up: chunks the source produced while the previous write was under way
  are joined into one ASGI message (one socket send), in order, up to :data:`MAX_WRITE_BYTES`
  (so a client that stops reading holds at most the transport's high-water mark plus one such
  write, ``gateway/http_protocol.py``); the keep-alive is one timer
  re-armed at most once per ``keepalive_seconds`` (no timeout task per chunk);
* body chunks past the app's per-message wrappers: when the scope carries a
  :data:`BODY_WRITER` (the access log's, :class:`gateway.routes._access.AccessLog`), the
  ``http.response.start`` message goes through the wrapped ``send`` and the body messages
  through that writer, which sends them to the server side of the access log and counts
  their bytes (issue 13);
* deterministic cleanup: the body source runs in a producer task feeding a small queue; when
  the response ends for any reason (done, client gone, error) the producer is cancelled and its
  source closed (``aclose``) before ``__call__`` returns, so an upstream HTTP stream behind it
  is closed at once rather than when garbage-collected.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from agui_codecs.sse import KEEP_ALIVE

from . import metrics
from .lean_event import LeanQueue

MAX_WRITE_BYTES = 16 * 1024
"""Chunks joined into one write stop growing past this many bytes (the last chunk joined may
cross it): batching pays for small events; a bound keeps one write from being a whole backlog."""

BODY_WRITER: Final = "gateway.body_writer"
"""Scope key of a body writer: ``write(body: bytes, more_body: bool) -> Awaitable[None]``
sends one ``http.response.body`` message past the per-message ``send`` wrappers between its
owner and the response (every one of which looks at ``http.response.start`` only). Put there
by :class:`gateway.routes._access.AccessLog`; without it the body goes through ``send``."""

BodyWriter = Callable[[bytes, bool], Awaitable[None]]
"""The type of a :data:`BODY_WRITER`."""

__all__ = [
    "BODY_WRITER",
    "KEEPALIVE",
    "MAX_WRITE_BYTES",
    "SSE_HEADERS",
    "BodyWriter",
    "SSEResponse",
]

KEEPALIVE = KEEP_ALIVE
"""The keep-alive comment (:data:`agui_codecs.sse.KEEP_ALIVE`: a comment line plus the blank
line; never carries an ``id:``)."""

SSE_HEADERS: dict[str, str] = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Headers every SSE response carries (the caller's headers override them)."""

_CLEANUP_SECONDS = 5.0


_KEEPALIVE = object()  # queue item: send a keep-alive comment now


@dataclass(frozen=True, slots=True)
class _End:
    error: BaseException | None = None


@dataclass(slots=True)
class _Watch:
    streaming: bool = True  # the response is still being sent: a disconnect cancels it
    gone: bool = False  # the client disconnected and the watcher cancelled the response


def _spec_version(scope: Scope) -> tuple[int, ...]:
    return tuple(map(int, scope.get("asgi", {}).get("spec_version", "2.0").split(".")))


class SSEResponse(StreamingResponse):
    """Stream ``content`` (already SSE-encoded bytes) with keep-alive comments.

    Args:
        content: the SSE bytes, as an async iterable (typically an async generator).
        keepalive_seconds: idle time before a ``: keep-alive`` comment (> 0).
        headers: extra/overriding response headers (e.g. the encoder's).
        status_code: HTTP status (default 200).
        buffer: chunks the producer may run ahead of the client (backpressure bound).

    An exception raised by ``content`` is re-raised in the response task after the chunks
    before it were sent (the connection then ends without a terminal chunk: sources should turn
    their failures into terminal events themselves, as :mod:`gateway.upstream` does).
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        keepalive_seconds: float = 15.0,
        headers: Mapping[str, str] | None = None,
        status_code: int = 200,
        buffer: int = 16,
    ) -> None:
        if keepalive_seconds <= 0:
            raise ValueError("keepalive_seconds must be > 0")
        self._source = content
        self._keepalive = keepalive_seconds
        self._buffer = buffer
        self._producer: asyncio.Task[None] | None = None
        self._writer: BodyWriter | None = None
        self._stream = self._with_keepalive()
        super().__init__(
            self._stream,
            status_code=status_code,
            headers={**SSE_HEADERS, **(headers or {})},
            media_type=self.media_type,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        metrics.ACTIVE_STREAMS.inc()
        try:
            self._writer = scope.get(BODY_WRITER)
            if scope["type"] == "http" and _spec_version(scope) < (2, 4):
                await self._stream_until_disconnect(receive, send)
            else:
                await super().__call__(scope, receive, send)
        finally:
            metrics.ACTIVE_STREAMS.dec()
            # Under ASGI spec >= 2.4 a disconnect surfaces as OSError from send(), leaving the
            # generator suspended; close it (and so the producer) now, not at GC.
            await self._stream.aclose()
            await self._stop_producer()

    async def _stream_until_disconnect(self, receive: Receive, send: Send) -> None:
        """Send the response in this task while one small task awaits ``http.disconnect``.

        What starlette 1.x's ``StreamingResponse.__call__`` does under ASGI spec < 2.4, without
        its anyio task group (a task group, a cancel scope and a second task per open stream,
        about 4 KiB): the watcher cancels this task when the client goes, and this task takes
        the cancellation back (``Task.uncancel``) and returns normally, as starlette's
        collapsing task group does. A cancellation from elsewhere (server shutdown) still
        propagates. Source: starlette 1.10 ``responses.py`` ``StreamingResponse.__call__``.
        """
        task = asyncio.current_task()
        assert task is not None
        state = _Watch()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if state.streaming:
                state.gone = True
                task.cancel()

        watcher = asyncio.create_task(watch())
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            if not state.gone:
                raise
            task.uncancel()
        finally:
            state.streaming = False
            watcher.cancel()
        if self.background is not None:
            await self.background()

    async def stream_response(self, send: Send) -> None:
        """Send the start message through ``send``, then the body (the chunks with their
        keep-alives, then the final empty body) through the scope's :data:`BODY_WRITER`, or
        through ``send`` when it has none (starlette's ``stream_response``)."""
        write = self._writer
        if write is None:
            await super().stream_response(send)
            return
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        async for chunk in self._stream:
            await write(chunk, True)
        await write(b"", False)

    async def _produce(self, queue: asyncio.Queue[Any]) -> None:
        error: BaseException | None = None
        try:
            async for chunk in self._source:
                await queue.put(chunk)
        except Exception as exc:
            error = exc
        finally:
            aclose = getattr(self._source, "aclose", None)
            if aclose is not None:
                await aclose()
        await queue.put(_End(error))

    async def _with_keepalive(self) -> AsyncGenerator[bytes, None]:
        queue: asyncio.Queue[Any] = LeanQueue(self._buffer)
        self._producer = asyncio.create_task(self._produce(queue))
        loop = asyncio.get_running_loop()
        interval = self._keepalive
        last = loop.time()  # when the last bytes were handed to the server
        timer: asyncio.TimerHandle | None = None

        def tick() -> None:
            # One timer re-armed at most once per interval, not one per chunk: it enqueues a
            # keep-alive only when nothing went out for a whole interval and nothing waits.
            nonlocal timer
            due = last + interval
            now = loop.time()
            if now >= due:
                if queue.empty():
                    queue.put_nowait(_KEEPALIVE)
                due = now + interval
            timer = loop.call_at(due, tick)

        timer = loop.call_at(last + interval, tick)
        pending: Any = None
        try:
            while True:
                item = await queue.get() if pending is None else pending
                pending = None
                if item is _KEEPALIVE:
                    yield KEEPALIVE
                    last = loop.time()
                    continue
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    return
                # Whatever the source already produced goes out in one write (one ASGI
                # message, one socket send), in order.
                parts = [item]
                size = len(item)
                while size < MAX_WRITE_BYTES and not queue.empty():
                    more = queue.get_nowait()
                    if isinstance(more, bytes):
                        parts.append(more)
                        size += len(more)
                    elif more is not _KEEPALIVE:  # a keep-alive after data is not needed
                        pending = more
                        break
                yield parts[0] if len(parts) == 1 else b"".join(parts)
                last = loop.time()
        finally:
            if timer is not None:
                timer.cancel()
            await self._stop_producer()

    async def _stop_producer(self) -> None:
        producer = self._producer
        if producer is None or producer.done():
            return
        producer.cancel()
        # Wait for the source to be closed even when this task is being cancelled (starlette
        # cancels the body on disconnect): shielded, and bounded in time.
        with anyio.CancelScope(shield=True):
            await asyncio.wait({producer}, timeout=_CLEANUP_SECONDS)
        if producer.done() and not producer.cancelled():
            producer.exception()  # retrieved: errors were already delivered through the queue
