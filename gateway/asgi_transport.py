"""An httpx transport that calls an ASGI app in process and *streams* its response body.

``httpx.ASGITransport`` (httpx 0.28) runs the app to completion and buffers the whole body
before returning the response, so an SSE upstream served in process would arrive in one piece
at the end. This transport runs the app in its own task and hands each ``http.response.body``
message to the reader as it is sent. Used for ``self:`` upstreams (the embedded demo route).

ASGI 3.0, HTTP scope only (ASGI spec "HTTP connection scope"): the request body is sent in one
``http.request`` message; ``http.disconnect`` is delivered when the response stream is closed
early, and the app task is cancelled then. The body queue is unbounded (no backpressure): meant
for small in-process upstreams such as the demo.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Final
from urllib.parse import unquote

import httpx
from starlette.types import ASGIApp, Message

__all__ = ["StreamingASGITransport"]

_END: Final = object()


def _retrieve(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # mark retrieved; the reader reports it


class _Body(httpx.AsyncByteStream):
    def __init__(
        self, queue: asyncio.Queue[Any], task: asyncio.Task[None], disconnected: asyncio.Event
    ) -> None:
        self._queue = queue
        self._task = task
        self._disconnected = disconnected

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            message = await self._queue.get()
            if message is _END:
                error = None if self._task.cancelled() else self._task.exception()
                if error is not None:
                    raise httpx.ReadError(f"in-process app failed: {error!r}") from error
                return
            if message["type"] == "http.response.body":
                body = message.get("body", b"")
                if body:
                    yield bytes(body)
                if not message.get("more_body", False):
                    return

    async def aclose(self) -> None:
        self._disconnected.set()
        if not self._task.done():
            self._task.cancel()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """Send httpx requests to ``app`` in process, streaming the response body.

    Args:
        app: any ASGI 3 application.
        client: the ``(host, port)`` reported to the app as the peer.

    Raises (from ``handle_async_request``):
        httpx.ConnectError: the app returned or raised before starting a response.
        httpx.ReadError (while reading the body): the app raised after starting it.
    """

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Run the app for ``request``; return once it has sent ``http.response.start``."""
        body = await request.aread()
        url = request.url
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": unquote(url.path),
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "query_string": url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
            "client": self.client,
            "extensions": {},
        }
        queue: asyncio.Queue[Any] = asyncio.Queue()  # unbounded: _END must never block
        disconnected = asyncio.Event()
        request_sent = False

        async def receive() -> Message:
            nonlocal request_sent
            if not request_sent:
                request_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            await queue.put(message)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            finally:
                queue.put_nowait(_END)

        task = asyncio.create_task(run())
        task.add_done_callback(_retrieve)
        first = await queue.get()
        if first is _END or first.get("type") != "http.response.start":
            task.cancel()
            error = task.exception() if task.done() and not task.cancelled() else None
            raise httpx.ConnectError(
                f"in-process app sent no response ({error!r})", request=request
            ) from error
        return httpx.Response(
            status_code=first["status"],
            headers=[(bytes(k), bytes(v)) for k, v in first.get("headers", [])],
            stream=_Body(queue, task, disconnected),
            request=request,
        )
