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
* one write per chunk of the source, in the response's own task: the source is read only when
  the previous write is out, so what it has meanwhile comes as one chunk (the run readers'
  batches, a store page or a broker batch, joined by :mod:`gateway.encoding` into chunks of
  about :data:`~gateway.encoding.MAX_CHUNK_BYTES`), and a client that stops reading holds at
  most the transport's high-water mark plus one chunk (``gateway/http_protocol.py``); the
  keep-alive is one timer re-armed at most once per ``keepalive_seconds`` (no timeout task
  per chunk), whose write (in a task of its own, only when due) never overlaps the body's;
* body chunks past the app's per-message wrappers: when the scope carries a
  :data:`BODY_WRITER` (the access log's, :class:`gateway.routes._access.AccessLog`), the
  ``http.response.start`` message goes through the wrapped ``send`` and the body messages
  through that writer, which sends them to the server side of the access log and counts
  their bytes (issue 13);
* deterministic cleanup: when the response ends for any reason (done, client gone, error)
  its source is closed (``aclose``) before ``__call__`` returns, so an upstream HTTP stream
  behind it is closed at once rather than when garbage-collected.

Issue 13 (per-event cost, memory per open stream): the source used to run in a producer task
feeding a queue that the response's task drained; reading it in the response's task takes a
task, a queue and a task switch per chunk off every stream (Python calls per content delta,
``bench/calls_per_delta.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from agui_codecs.sse import KEEP_ALIVE

from . import metrics

MAX_WRITE_BYTES = 16 * 1024
"""The most bytes of one write, give or take its last frame: the encoders' chunks
(:data:`gateway.encoding.MAX_CHUNK_BYTES`, the same bound) are written as they come."""

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

_SHARED_HEADERS: dict[tuple[bytes, bytes], tuple[bytes, bytes]] = {}
"""One ``(name, value)`` tuple per distinct response header line, shared by every response
that sends it (issue 13 item 5: each open stream kept its own copies, about 0.9 KiB). Only
lines of :func:`_shareable` names, whose values are the same for every stream: a line naming
its run (``x-agui-run-id``, ``x-workflow-run-id``, ...) would fill the cache after a hundred
streams and leave the later constant lines unshared. Bounded by :data:`_SHARED_MAX`: past it a
header is kept per response, as before."""

_SHARED_MAX = 256

_SHAREABLE: frozenset[bytes] | None = None


def _shareable() -> frozenset[bytes]:
    """The header names whose values are constants: :data:`SSE_HEADERS` and every registered
    encoder's own headers (``Encoder.headers``, e.g. ``x-vercel-ai-ui-message-stream``),
    lower case as starlette sends them. Read once, at the first response."""
    global _SHAREABLE
    if _SHAREABLE is None:
        from agui_codecs import ENCODERS

        names = {*SSE_HEADERS}
        for encoder in ENCODERS.values():
            names.update(getattr(encoder, "headers", {}))
        _SHAREABLE = frozenset(name.lower().encode("latin-1") for name in names)
    return _SHAREABLE


def _shared(pair: tuple[bytes, bytes]) -> tuple[bytes, bytes]:
    """``pair``, or the equal one already shared (only lines of :func:`_shareable` names)."""
    if pair[0] not in _shareable():
        return pair
    shared = _SHARED_HEADERS.get(pair)
    if shared is not None:
        return shared
    if len(_SHARED_HEADERS) < _SHARED_MAX:
        _SHARED_HEADERS[pair] = pair
    return pair


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
        buffer: ignored (kept for callers of earlier releases): the source is read in the
            response's task, one chunk ahead of the client at most.

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
        self._writer: BodyWriter | None = None
        self._closed = False
        super().__init__(
            content,
            status_code=status_code,
            headers={**SSE_HEADERS, **(headers or {})},
            media_type=self.media_type,
        )

    def init_headers(self, headers: Mapping[str, str] | None = None) -> None:
        """starlette's ``raw_headers`` (the same lines in the same order), each line a tuple
        shared with the other responses that send it (:data:`_SHARED_HEADERS`)."""
        super().init_headers(headers)
        self.raw_headers = [_shared(pair) for pair in self.raw_headers]

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
            # A response that ended before its body began (an error in its start message)
            # closes its source too, now, not at GC.
            await self._close_source()

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
        cancelling = task.cancelling()
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            # the watcher's cancel taken back; one from elsewhere too still propagates
            if not state.gone or task.uncancel() > cancelling:
                raise
        finally:
            state.streaming = False
            watcher.cancel()
        if self.background is not None:
            await self.background()

    async def stream_response(self, send: Send) -> None:
        """Send the start message through ``send``, then the body (the source's chunks with
        the keep-alives, then the final empty body) through the scope's :data:`BODY_WRITER`,
        or through ``send`` when it has none, each chunk as one ``http.response.body``
        message (starlette's ``stream_response``, in this task)."""
        write = self._writer
        if write is None:
            write = _SendBody(send).write
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        await self._send_body(write)
        await write(b"", False)

    async def _send_body(self, write: BodyWriter) -> None:
        """Every chunk of the source through ``write``, in this task, with the keep-alives of
        a :class:`_KeepAlive` in the silences; the source closed at the end, whatever ends it.

        Raises:
            what the source or ``write`` raised; a keep-alive's failed ``write``, in place of
            the cancellation it caused (the source may have been waiting for its next chunk).
        """
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        keepalive = _KeepAlive(loop, self._keepalive, write, task)
        cancelling = task.cancelling()
        try:
            redelivered = await _first_turn(task)
            async for chunk in self._source:
                if keepalive.sending is not None:
                    await keepalive.sending  # a keep-alive is going out: this chunk after it
                keepalive.busy = True
                await write(chunk, True)
                keepalive.busy = False
                keepalive.last = loop.time()
            if keepalive.sending is not None:
                await keepalive.sending
            if redelivered:  # the source never waited: the cancellation is still pending
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            if keepalive.error is None:
                raise
            # The keep-alive's cancel taken back; one from elsewhere too (server shutdown, a
            # timeout, the client gone) is still requested: that one propagates.
            if task.uncancel() > cancelling:
                raise
            raise keepalive.error from None
        finally:
            keepalive.stop()
            await self._close_source()

    async def _close_source(self) -> None:
        """Close the source (``aclose``), once, shielded from a cancellation of this task
        (starlette cancels the response when the client goes) and bounded in time."""
        aclose = getattr(self._source, "aclose", None)
        if aclose is None or self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True) as scope:
            scope.deadline = anyio.current_time() + _CLEANUP_SECONDS
            await aclose()


async def _first_turn(task: asyncio.Task[Any]) -> bool:
    """One loop turn before the source's first step, as when the source ran in a task of its
    own: tasks the endpoint started take their first step first (a durable run's pump
    publishes RUN_STARTED before the run's reader subscribes, so the reader takes the broker's
    tail and skips its store replay: ``gateway/runs/reader.py``, ``_tail_follows``). A
    cancellation in that turn (the client left at once) is delivered again at the source's
    first wait, so the source starts and cleans up as it would have (a durable stream's
    ``on_abandon``, ``gateway/encoding.py``); True then (the caller takes it at its end if the
    source never waited)."""
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        task.uncancel()
        task.cancel()
        return True
    return False


class _SendBody:
    """A :data:`BodyWriter` over the ASGI ``send`` (a scope without the access log's)."""

    __slots__ = ("send",)

    def __init__(self, send: Send) -> None:
        self.send = send

    def write(self, body: bytes, more_body: bool = True) -> Awaitable[None]:
        return self.send({"type": "http.response.body", "body": body, "more_body": more_body})


class _KeepAlive:
    """The keep-alives of one response: one loop timer, re-armed at most once per
    ``interval``, that sends :data:`KEEPALIVE` (in a task of its own, since the response's
    task may be waiting for its source) when nothing went out for a whole interval and no
    write is under way. The response's task waits for a keep-alive being sent before its next
    write (``sending``), so two writes never overlap; a keep-alive whose write fails records
    the error and cancels the response's task."""

    __slots__ = ("busy", "error", "interval", "last", "loop", "sending", "task", "timer", "write")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        interval: float,
        write: BodyWriter,
        task: asyncio.Task[Any],
    ) -> None:
        self.loop = loop
        self.interval = interval
        self.write = write
        self.task = task
        self.busy = False  # a write is under way (the response's or a keep-alive)
        self.sending: asyncio.Task[None] | None = None  # the keep-alive being sent
        self.error: BaseException | None = None  # a keep-alive's failed write
        self.last = loop.time()  # when bytes were last handed to the server
        self.timer: asyncio.TimerHandle | None = loop.call_at(self.last + interval, self.tick)

    def tick(self) -> None:
        """The timer: a keep-alive when one is due; re-armed for the next moment one can be."""
        now = self.loop.time()
        due = self.last + self.interval
        if now >= due:
            if not self.busy and self.sending is None:
                self.sending = self.loop.create_task(self._send())
            due = now + self.interval
        self.timer = self.loop.call_at(due, self.tick)

    async def _send(self) -> None:
        self.busy = True
        try:
            await self.write(KEEPALIVE, True)
            self.last = self.loop.time()
        except Exception as exc:
            self.error = exc
            self.task.cancel()
        finally:
            self.busy = False
            self.sending = None

    def stop(self) -> None:
        """No more keep-alives: the timer cancelled, a keep-alive still being sent too."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.sending is not None:
            self.sending.cancel()
