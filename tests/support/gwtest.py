"""Helpers of the gateway tests (imported as ``gwtest``; ``tests/support`` is on the pytest
pythonpath): route files, mocked upstream bodies, and a direct ASGI driver.

Streaming is tested by calling the ASGI app directly with our own ``receive``/``send`` and a
watchdog timeout (``TestClient`` and ``httpx.ASGITransport`` buffer whole bodies), or over a
real uvicorn on 127.0.0.1 (see ``test_server_e2e.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from starlette.types import ASGIApp, Message

OPENAI_BASE = "https://openai.test/v1"
ANTHROPIC_BASE = "https://anthropic.test/v1"
OPENAI_URL = f"{OPENAI_BASE}/chat/completions"

RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-1",
    "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": "hi"}],
    "tools": [],
    "context": [],
    "state": None,
    "forwardedProps": {},
}
"""A minimal AG-UI RunAgentInput (one user message, "hi")."""

CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}
"""A minimal AI SDK chat request (one user message, "hi")."""

FAST = {
    "batch_interval": 0.01,
    "heartbeat_interval": 0.05,
    "lease_timeout": 5.0,
    "reaper_interval": 0.05,
    "reader_recheck": 0.05,
}
"""Durable-run settings with short intervals, for apps built over a run store in tests."""

ROUTES_TOML = f"""
[[routes]]
name = "gpt"
upstream_url = "{OPENAI_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
retry = {{ base_delay = 0.01, max_delay = 0.02 }}  # retried as by default, without the waits

[[routes]]
name = "claude"
upstream_url = "{ANTHROPIC_BASE}"
protocol = "anthropic"
model = "claude-sonnet-4-5"
auth = {{ type = "header", header = "x-api-key", env = "TEST_ANTHROPIC_KEY" }}
retry = {{ base_delay = 0.01, max_delay = 0.02 }}

[[routes]]
name = "demo"
upstream_url = "self:/demo/openai/v1"
protocol = "openai-chat"
model = "demo-weather-1"
"""


class GatedStream(httpx.AsyncByteStream):
    """An upstream body: yields ``parts``; a part that is an ``asyncio.Event`` is waited for.

    ``closed`` is set when httpx closes the response (the upstream request was cancelled or
    finished); ``raise_at_end`` is raised after the parts (e.g. ``httpx.ReadTimeout``).
    """

    def __init__(
        self, parts: Iterable[bytes | asyncio.Event], raise_at_end: Exception | None = None
    ) -> None:
        self.parts = list(parts)
        self.raise_at_end = raise_at_end
        self.closed = asyncio.Event()
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            if isinstance(part, asyncio.Event):
                await part.wait()
            else:
                self.sent += 1
                yield part
        if self.raise_at_end is not None:
            raise self.raise_at_end

    async def aclose(self) -> None:
        self.closed.set()


class HeldCreates:
    """Wraps a run store's ``create_run``: each call waits for :attr:`release` (then runs the
    real one, or raises :attr:`error`); :attr:`entered` counts the calls that arrived. A test
    holding the create sees what happens while a run is not yet recorded (the early upstream
    request, a stop sent meanwhile) in order, not by timing."""

    def __init__(self, store: Any) -> None:
        self.real = store.create_run
        self.release = asyncio.Event()
        self.entered = 0
        self.error: Exception | None = None
        store.create_run = self

    async def __call__(self, **kwargs: Any) -> Any:
        self.entered += 1
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return await self.real(**kwargs)


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One OpenAI ``chat.completion.chunk`` (choice 0) carrying ``delta``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def sse(*items: dict[str, Any] | str) -> bytes:
    """SSE body of ``data:`` events (a str is sent as is, e.g. ``"[DONE]"``)."""
    out = b""
    for item in items:
        data = item.encode() if isinstance(item, str) else orjson.dumps(item)
        out += b"data: " + data + b"\n\n"
    return out


def anthropic_sse(*events: dict[str, Any]) -> bytes:
    """Anthropic SSE body: ``event: <type>`` + ``data:`` per event, as the API sends it."""
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n" for e in events
    )


@dataclass
class Exchange:
    """What the app sent for one request (see :func:`drive`)."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    complete: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def json(self) -> Any:
        return orjson.loads(self.body)

    def data(self) -> list[Any]:
        """The ``data:`` payloads of an SSE body, JSON-decoded (``[DONE]`` kept as a str)."""
        out: list[Any] = []
        for block in self.body.split(b"\n\n"):
            for line in block.split(b"\n"):
                if line.startswith(b"data: "):
                    raw = line[6:]
                    out.append(raw.decode() if raw == b"[DONE]" else orjson.loads(raw))
        return out


async def drive(
    app: ASGIApp,
    path: str,
    body: Any = None,
    *,
    method: str = "POST",
    raw: bytes | None = None,
    on_chunk: Callable[[bytes, Exchange], Awaitable[None] | None] | None = None,
    disconnect: asyncio.Event | None = None,
    watchdog: float = 10.0,
) -> Exchange:
    """Call ``app`` for one HTTP request, collecting what it sends as it sends it.

    Args:
        body: JSON body (ignored when ``raw`` is given).
        on_chunk: called with each non-empty body chunk as it arrives.
        disconnect: when set, ``receive`` reports ``http.disconnect`` (the client went away).
        watchdog: seconds after which the test fails instead of hanging.
    """
    payload = raw if raw is not None else (b"" if body is None else orjson.dumps(body))
    gone = disconnect or asyncio.Event()
    result = Exchange()
    sent_request = False

    async def receive() -> Message:
        nonlocal sent_request
        if not sent_request:
            sent_request = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if gone.is_set():
            raise OSError("client disconnected")
        if message["type"] == "http.response.start":
            result.status = message["status"]
            result.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk:
                result.chunks.append(chunk)
                if on_chunk is not None:
                    awaited = on_chunk(chunk, result)
                    if awaited is not None:
                        await awaited
            if not message.get("more_body", False):
                result.complete = True

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"testserver")],
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 5000),
    }
    async with asyncio.timeout(watchdog):
        await app(scope, receive, send)
    return result
