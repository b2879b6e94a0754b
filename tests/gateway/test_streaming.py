"""Streaming behaviour, driven through the ASGI app directly (own receive/send + watchdog):
keep-alive comments while the upstream is idle, client disconnect cancelling the upstream,
and the in-process transport streaming rather than buffering."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx
from gwtest import (
    CHAT_REQUEST,
    OPENAI_URL,
    RUN_INPUT,
    Exchange,
    GatedStream,
    chunk,
    drive,
    sse,
)
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from gateway.asgi_transport import StreamingASGITransport
from gateway.sse_response import KEEPALIVE, SSEResponse

FIRST = sse(chunk({"role": "assistant", "content": "Hel"}))
REST = sse(chunk({"content": "lo"}), chunk({}, "stop"), "[DONE]")


@pytest.mark.parametrize(
    ("path", "body"), [("/v1/agui/gpt", RUN_INPUT), ("/v1/ai-sdk/gpt", CHAT_REQUEST)]
)
async def test_keepalive_comment_while_upstream_is_idle(
    make_app: Any, router: respx.MockRouter, keys: None, path: str, body: dict[str, Any]
) -> None:
    resume = asyncio.Event()
    router.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, stream=GatedStream([FIRST, resume, REST]))
    )

    def on_chunk(data: bytes, exchange: Exchange) -> None:
        if data == KEEPALIVE:
            resume.set()  # the upstream stays silent until a keep-alive went out

    result = await drive(make_app(keepalive_seconds=0.01), path, body, on_chunk=on_chunk)
    assert KEEPALIVE in result.chunks
    first_keepalive = result.chunks.index(KEEPALIVE)
    assert b"data: " in b"".join(result.chunks[:first_keepalive])  # after the first events
    tail = b"".join(result.chunks[first_keepalive:])
    assert b'"delta":"lo"' in tail  # the stream went on afterwards
    assert result.complete
    assert b"id:" not in b"".join(c for c in result.chunks if c == KEEPALIVE)


@pytest.mark.parametrize(
    ("spec_version", "keepalive"),
    [("2.3", 15.0), ("2.4", 0.01)],  # 2.4: disconnect surfaces as OSError on the next send
)
async def test_client_disconnect_closes_the_upstream_stream(
    make_app: Any,
    router: respx.MockRouter,
    keys: None,
    monkeypatch: pytest.MonkeyPatch,
    spec_version: str,
    keepalive: float,
) -> None:
    never = asyncio.Event()
    upstream = GatedStream([FIRST, never, REST])
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=upstream))
    gone = asyncio.Event()

    def on_chunk(data: bytes, exchange: Exchange) -> None:
        gone.set()  # the client leaves after the first bytes

    app = make_app(keepalive_seconds=keepalive)

    async def versioned(scope: Any, receive: Any, send: Any) -> None:
        scope["asgi"]["spec_version"] = spec_version
        await app(scope, receive, send)

    call = drive(versioned, "/v1/agui/gpt", RUN_INPUT, on_chunk=on_chunk, disconnect=gone)
    if spec_version == "2.4":
        with pytest.raises(ClientDisconnect):  # starlette's translation of the send OSError
            await call
    else:
        await call
    assert upstream.closed.is_set()
    assert upstream.sent == 1


async def test_source_error_is_raised_after_the_chunks_before_it() -> None:
    async def source() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        raise RuntimeError("bug in source")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await SSEResponse(source(), keepalive_seconds=5)(scope, receive, send)

    seen: list[bytes] = []

    def on_chunk(data: bytes, exchange: Exchange) -> None:
        seen.append(data)

    with pytest.raises(RuntimeError, match="bug in source"):
        await drive(app, "/", method="GET", on_chunk=on_chunk)
    assert seen == [b"data: 1\n\n"]


async def test_sse_response_headers() -> None:
    async def source() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"

    async def app(scope: Any, receive: Any, send: Any) -> None:
        response = SSEResponse(source(), headers={"x-extra": "1"})
        await response(scope, receive, send)

    result = await drive(app, "/", method="GET")
    assert result.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert result.headers["cache-control"] == "no-cache"
    assert result.headers["x-accel-buffering"] == "no"
    assert result.headers["x-extra"] == "1"
    assert "content-encoding" not in result.headers
    assert result.body == b"data: 1\n\n"


async def test_keepalives_fill_each_silence_with_one_timer_and_no_early_comment() -> None:
    """A keep-alive after each ``keepalive_seconds`` without output, counted from the last
    write (data or keep-alive), re-armed by data; the stream's one timer is called about once
    per write (never one timer per chunk, nor a process-wide scan)."""
    interval = 0.05
    loop = asyncio.get_running_loop()
    sent: list[tuple[float, bytes]] = []
    calls = 0
    call_at = loop.call_at

    def counted(when: float, callback: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += getattr(callback, "__name__", "") == "tick"  # the keep-alive timer's
        return call_at(when, callback, *args, **kwargs)

    async def source() -> AsyncIterator[bytes]:
        for part in (b"data: 1\n\n", b"data: 2\n\n"):
            yield part
            await asyncio.sleep(8 * interval)

    async def receive() -> Any:
        await asyncio.Event().wait()  # the client stays

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            sent.append((loop.time(), message["body"]))

    scope = {"type": "http", "asgi": {"spec_version": "2.3"}, "method": "GET", "path": "/"}
    loop.call_at = counted  # type: ignore[method-assign]
    try:
        await SSEResponse(source(), keepalive_seconds=interval)(scope, receive, send)
    finally:
        del loop.call_at  # type: ignore[method-assign]
    bodies = [body for _, body in sent]
    assert [b for b in bodies if b != KEEPALIVE] == [b"data: 1\n\n", b"data: 2\n\n"]
    second = bodies.index(b"data: 2\n\n")
    assert bodies[1:second].count(KEEPALIVE) >= 3  # each silence gets keep-alives
    assert bodies[second + 1 :].count(KEEPALIVE) >= 3
    for (before, _), (at, body) in itertools.pairwise(sent):
        if body == KEEPALIVE:
            assert at - before >= interval * 0.99  # never before a whole interval of silence
    assert 0 < calls <= len(bodies) + 2  # about one per write, and the first


def test_sse_response_rejects_a_non_positive_keepalive() -> None:
    async def source() -> AsyncIterator[bytes]:
        yield b""

    with pytest.raises(ValueError):
        SSEResponse(source(), keepalive_seconds=0)


# -- the in-process transport ------------------------------------------------------------------


def gated_app(gate: asyncio.Event, cancelled: asyncio.Event) -> Starlette:
    async def endpoint(request: Request) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            try:
                yield b"first"
                await gate.wait()
                yield b"second"
            except asyncio.CancelledError:
                cancelled.set()
                raise

        return StreamingResponse(body(), media_type="text/plain")

    return Starlette(routes=[Route("/s", endpoint, methods=["POST"])])


async def test_in_process_transport_streams_instead_of_buffering() -> None:
    gate, cancelled = asyncio.Event(), asyncio.Event()
    transport = StreamingASGITransport(gated_app(gate, cancelled))
    async with (
        asyncio.timeout(10),
        httpx.AsyncClient(transport=transport, base_url="http://x") as client,
    ):
        async with client.stream("POST", "/s", content=b"{}") as response:
            assert response.status_code == 200
            parts = []
            async for part in response.aiter_raw():
                parts.append(part)
                gate.set()  # the app only sends the rest once the first part was read
    assert parts == [b"first", b"second"]


async def test_in_process_transport_close_cancels_the_app() -> None:
    gate, cancelled = asyncio.Event(), asyncio.Event()
    transport = StreamingASGITransport(gated_app(gate, cancelled))
    async with (
        asyncio.timeout(10),
        httpx.AsyncClient(transport=transport, base_url="http://x") as client,
    ):
        async with client.stream("POST", "/s") as response:
            async for _ in response.aiter_raw():
                break
        await cancelled.wait()  # watchdog-bounded: the app task saw the cancellation


async def test_in_process_transport_app_without_response_is_a_connect_error() -> None:
    async def silent(scope: Any, receive: Any, send: Any) -> None:
        return None

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(silent), base_url="http://x"
    ) as c:
        with pytest.raises(httpx.ConnectError):
            await c.post("/")
