"""Helpers of the durable-run HTTP tests (``tests/gateway/test_runs_*.py``) and the replica
tests (this folder): scripted OpenAI Chat upstream bodies, raw SSE frame parsing, the AG-UI
verdict of the ``conformance`` checker, and a direct ASGI driver with query strings, headers
and the app lifespan.

Imported by path (``sys.path`` gets this folder), as ``tests/runs`` does with ``contracts``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from prometheus_client import REGISTRY
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from conformance import check_bytes

# -- scripted upstream bodies (OpenAI Chat Completions SSE) ----------------------------------


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One ``data:`` event of an OpenAI Chat Completions stream."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(body) + b"\n\n"


def chat_events(
    *,
    reasoning: Sequence[str] = (),
    text: Sequence[str] = (),
    tool: tuple[str, str, Sequence[str]] | None = None,
) -> list[bytes]:
    """The events of one scripted model turn, one SSE event per item (gate between any two).

    Args:
        reasoning: ``reasoning_content`` deltas (-> REASONING_* events).
        text: ``content`` deltas (-> TEXT_MESSAGE_*).
        tool: ``(call id, tool name, argument fragments)`` (-> TOOL_CALL_*); the turn then
            ends with ``finish_reason: tool_calls``.

    Returns:
        SSE events, the last two being the finishing chunk and ``data: [DONE]``.
    """
    out = [chat_chunk({"role": "assistant", "content": ""})]
    out += [chat_chunk({"reasoning_content": part}) for part in reasoning]
    out += [chat_chunk({"content": part}) for part in text]
    if tool is not None:
        call_id, name, fragments = tool
        out.append(
            chat_chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
            for part in fragments
        ]
    out.append(chat_chunk({}, "tool_calls" if tool is not None else "stop"))
    out.append(b"data: [DONE]\n\n")
    return out


def run_input(thread_id: str, run_id: str, content: str = "hi") -> dict[str, Any]:
    """An AG-UI ``RunAgentInput`` (wire form) with one user message."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": f"u-{run_id}", "role": "user", "content": content}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }


# -- SSE frames ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One raw SSE frame as sent: its ``id:`` (None when the frame has no id line), its
    ``event:`` (None when absent), its ``data:`` decoded as JSON (None for comments), and
    ``comment`` (True for a ``:`` keep-alive)."""

    id: str | None
    event: str | None
    data: Any
    comment: bool = False


def frames(body: bytes) -> list[Frame]:
    """Split an LF-framed SSE body (as the gateway writes it) into frames; an unterminated
    last frame is dropped, as SSE clients drop it."""
    out: list[Frame] = []
    blocks = body.split(b"\n\n")
    for block in blocks[:-1]:
        fields: dict[str, str] = {}
        comment = False
        for line in block.split(b"\n"):
            if line.startswith(b":"):
                comment = True
                continue
            name, _, value = line.decode().partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value
        data = fields.get("data")
        parsed = None if data is None or data == "[DONE]" else orjson.loads(data)
        out.append(Frame(fields.get("id"), fields.get("event"), parsed or data, comment))
    return out


def events_of(body: bytes) -> list[dict[str, Any]]:
    """The JSON events of an SSE body (comments and ``[DONE]`` left out)."""
    return [f.data for f in frames(body) if isinstance(f.data, dict)]


def agui_errors(body: bytes) -> list[str]:
    """What ``@ag-ui/client`` 1.0 would reject in ``body`` (the ``conformance`` checker)."""
    return [
        f"{v.rule_id} at {v.index}: {v.message}" for v in check_bytes(body, protocol="agui").errors
    ]


def frame_bytes(items: Iterable[Frame]) -> bytes:
    """Re-frame parsed frames (to join resumed parts into one body for the checkers)."""
    out = b""
    for f in items:
        if f.comment or not isinstance(f.data, dict):
            continue
        head = b"" if f.event is None else b"event: " + f.event.encode() + b"\n"
        head += b"" if f.id is None else b"id: " + f.id.encode() + b"\n"
        out += head + b"data: " + orjson.dumps(f.data) + b"\n\n"
    return out


# -- ASGI driving ----------------------------------------------------------------------------


@dataclass
class Reply:
    """What the app sent for one request."""

    status: int = 0
    headers: dict[str, str] | None = None
    chunks: list[bytes] | None = None
    complete: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks or [])

    def json(self) -> Any:
        return orjson.loads(self.body)


async def call(
    app: ASGIApp,
    method: str,
    target: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    stop: Callable[[Reply], bool] | None = None,
    on_chunk: Callable[[bytes], Awaitable[None] | None] | None = None,
    watchdog: float = 20.0,
) -> Reply:
    """Call ``app`` for one request to ``target`` (path with an optional ``?query``).

    Args:
        body: JSON body (None: empty).
        headers: extra request headers.
        stop: checked after every body chunk; when it returns True the client goes away
            (``http.disconnect``, and the next send fails as with a closed socket).
        on_chunk: awaited with each body chunk.
        watchdog: seconds after which the test fails instead of hanging.
    """
    path, _, query = target.partition("?")
    payload = b"" if body is None else orjson.dumps(body)
    gone = asyncio.Event()
    reply = Reply(chunks=[])
    sent_request = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_request
        if not sent_request:
            sent_request = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if gone.is_set():
            raise OSError("client disconnected")
        if message["type"] == "http.response.start":
            reply.status = message["status"]
            reply.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk:
                assert reply.chunks is not None
                reply.chunks.append(chunk)
                if on_chunk is not None:
                    awaited = on_chunk(chunk)
                    if awaited is not None:
                        await awaited
                if stop is not None and stop(reply):
                    gone.set()
            if not message.get("more_body", False):
                reply.complete = True

    raw_headers = [(b"content-type", b"application/json"), (b"host", b"testserver")]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": raw_headers,
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 5000),
    }
    receive_fn: Receive = receive  # type: ignore[assignment]
    send_fn: Send = send  # type: ignore[assignment]
    async with asyncio.timeout(watchdog):
        try:
            await app(scope, receive_fn, send_fn)
        except OSError:
            if not gone.is_set():
                raise
    return reply


@asynccontextmanager
async def running(app: Starlette) -> AsyncIterator[Starlette]:
    """Run ``app``'s lifespan (store, broker, run manager) around the block."""
    async with app.router.lifespan_context(app):
        yield app


async def eventually(
    check: Callable[[], Awaitable[bool]], *, within: float = 20.0, what: str = "condition"
) -> None:
    """Wait until ``check()`` is true; fail after ``within`` seconds (a liveness bound)."""
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {within} s")
        await asyncio.sleep(0.02)


async def true_when(check: Callable[[], object], *, within: float = 10.0) -> None:
    """:func:`eventually` for a plain (not awaitable) check: wait until ``check()`` is truthy."""

    async def ok() -> bool:
        return bool(check())

    await eventually(ok, within=within)


def resume_count(kind: str) -> float:
    """``agui_gateway_resumes_total{kind}`` of this process so far (``gateway.metrics.RESUMES``,
    prometheus_client's default registry; 0.0 before the first)."""
    return REGISTRY.get_sample_value("agui_gateway_resumes_total", {"kind": kind}) or 0.0


async def resume_attached(kind: str, before: float) -> None:
    """Wait until a resume of ``kind`` was counted past ``before`` (:func:`resume_count`): the route
    counts it once the run's reader is attached (``gateway.routes.runs``), so what the run does
    next reaches that reader live. For an in-process app only."""

    async def counted() -> bool:
        return resume_count(kind) > before

    await eventually(counted, what=f"a {kind} resume")
