"""The body of an SSE response past the app's per-message wrappers (issue 13): through the access
log's body writer, the server receives the bytes starlette's own ``StreamingResponse`` sends for
the same chunks (the reference path: one message per chunk, every message through the wrapped
``send``), in order, once, and the access record counts every byte of them. Each chunk of the
source is one message, exactly as the reference sends them, and the source is asked for its
next chunk only once the previous message is out (no read-ahead: joining what is ready together
is the encoders' work, ``gateway/encoding.py``, one chunk per batch).

Expected messages from the ASGI HTTP spec (``http.response.body``: ``body``, ``more_body``, the
last one with ``more_body`` false) as starlette 1.x ``StreamingResponse.stream_response`` sends
them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from gateway.routes import AccessLog
from gateway.sse_response import BODY_WRITER, SSEResponse

SCOPE: dict[str, Any] = {
    "type": "http",
    "asgi": {"version": "3.0", "spec_version": "2.3"},
    "http_version": "1.1",
    "method": "GET",
    "scheme": "http",
    "path": "/events",
    "raw_path": b"/events",
    "query_string": b"",
    "root_path": "",
    "headers": [(b"origin", b"http://page.test")],
    "server": ("127.0.0.1", 8000),
    "client": ("127.0.0.1", 50000),
}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.access)  # type: ignore[attr-defined]


def _app(
    chunks: Sequence[bytes],
    *,
    reference: bool,
    logger: logging.Logger,
    waits: Sequence[bool] = (True,),
) -> Starlette:
    async def source() -> AsyncIterator[bytes]:
        for i, chunk in enumerate(chunks):
            yield chunk
            if waits[i % len(waits)]:
                await asyncio.sleep(0)

    async def events(request: Request) -> Response:
        if reference:
            return StreamingResponse(source(), media_type="text/event-stream")
        return SSEResponse(source(), keepalive_seconds=60)

    return Starlette(
        routes=[Route("/events", events)],
        middleware=[
            Middleware(AccessLog, logger=logger),
            Middleware(CORSMiddleware, allow_origins=["http://page.test"]),
        ],
    )


async def _serve(app: Starlette) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {**SCOPE, "headers": list(SCOPE["headers"])}
    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    done.set()
    return sent


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(st.binary(min_size=0, max_size=64), max_size=12),
    waits=st.lists(st.booleans(), min_size=1, max_size=5),
)
def test_the_body_through_the_writer_is_the_reference_body_and_is_counted(
    chunks: list[bytes], waits: list[bool]
) -> None:
    logger = logging.getLogger("test.sse_body_writer")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = _Records()
    logger.addHandler(handler)

    async def main() -> None:
        direct = await _serve(_app(chunks, reference=False, logger=logger, waits=waits))
        wrapped = await _serve(_app(chunks, reference=True, logger=logger, waits=waits))
        bodies = [m for m in direct if m["type"] == "http.response.body"]
        expected = [m for m in wrapped if m["type"] == "http.response.body"]
        assert bodies == expected  # one message per chunk, in order, once, waits or not
        assert all(m["more_body"] for m in bodies[:-1])
        assert bodies[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
        starts = [m for m in direct if m["type"] == "http.response.start"]
        assert len(starts) == 1 and direct[0] is starts[0]  # the start first, once
        headers = dict(starts[0]["headers"])
        assert headers[b"access-control-allow-origin"] == b"http://page.test"  # CORS saw it
        total = sum(len(chunk) for chunk in chunks)
        assert [r["bytes"] for r in handler.records] == [total, total]

    try:
        asyncio.run(main())
    finally:
        logger.removeHandler(handler)


async def test_without_the_access_log_the_body_goes_through_send() -> None:
    async def source() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = dict(SCOPE)
    assert BODY_WRITER not in scope
    await SSEResponse(source())(scope, receive, send)
    assert [m.get("body") for m in sent] == [None, b"data: 1\n\n", b""]


@pytest.mark.parametrize("spec_version", ["2.3", "2.4"])
async def test_a_failing_keepalive_send_ends_the_stream_with_its_error(spec_version: str) -> None:
    """A keep-alive's ``send`` that raises (the server's connection error) ends the response
    with that error and closes the source, as a failing data ``send`` does."""
    closed = asyncio.Event()

    async def source() -> AsyncIterator[bytes]:
        try:
            yield b"data: 1\n\n"
            await asyncio.Event().wait()  # silent: only keep-alives go out
        finally:
            closed.set()

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message.get("body", b"").startswith(b":"):
            raise OSError("connection reset")

    scope = {**SCOPE, "asgi": {"version": "3.0", "spec_version": spec_version}}
    with pytest.raises(Exception) as raised:
        await asyncio.wait_for(
            SSEResponse(source(), keepalive_seconds=0.02)(scope, receive, send), 5
        )
    assert isinstance(raised.value, OSError) or type(raised.value).__name__ == "ClientDisconnect"
    assert closed.is_set()


async def test_the_source_is_read_only_once_the_previous_write_is_out() -> None:
    """While a body message waits to go out (a client that reads slowly: the server's ``send``
    does not return), the source is not asked for its next chunk: a slow client holds the
    source back (backpressure) instead of the response buffering ahead of it."""
    asked: list[int] = []
    release = asyncio.Event()
    sent: list[bytes] = []

    async def source() -> AsyncIterator[bytes]:
        for i in range(3):
            asked.append(i)
            yield f"data: {i}\n\n".encode()

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            if message["body"] == b"data: 0\n\n":
                await release.wait()  # the first write is slow
            sent.append(message["body"])

    response = asyncio.ensure_future(SSEResponse(source())(dict(SCOPE), receive, send))
    for _ in range(5):
        await asyncio.sleep(0)
    assert asked == [0] and sent == []  # the first write under way: nothing more read
    release.set()
    await asyncio.wait_for(response, 5)
    assert asked == [0, 1, 2]
    assert sent == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n", b""]


class _Countdown:
    """An async iterator that is not a generator: ``__anext__`` is a coroutine that waits one
    loop turn before every other frame."""

    def __init__(self, total: int) -> None:
        self.left = total

    def __aiter__(self) -> _Countdown:
        return self

    async def __anext__(self) -> bytes:
        if self.left == 0:
            raise StopAsyncIteration
        self.left -= 1
        if self.left % 2:
            await asyncio.sleep(0)
        return f"data: {self.left}\n\n".encode()


async def test_any_async_iterator_is_a_source() -> None:
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])

    await asyncio.wait_for(SSEResponse(_Countdown(5))(dict(SCOPE), receive, send), 5)
    assert b"".join(sent) == b"".join(f"data: {i}\n\n".encode() for i in (4, 3, 2, 1, 0))
    assert sent[-1] == b""
