"""Helpers of the upstream resilience tests (issue 19): apps over a routes file written by the
test, with backoff sleeps recorded instead of waited, and a route the test scripts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import respx
from gwtest import anthropic_sse
from starlette.types import ASGIApp

from gateway.app import create_app
from gateway.attempts import AttemptRecord
from gateway.config import Settings

__all__ = [
    "ANSWER",
    "CARRIED",
    "MESSAGE_START",
    "OVERLOADED",
    "TOOL_STEP",
    "ResilientApp",
    "agui_sse",
    "anthropic_text",
    "build",
    "scripted",
]


@dataclass
class ResilientApp:
    """An app whose backoff waits are recorded in :attr:`sleeps` (seconds), not slept."""

    app: ASGIApp
    sleeps: list[float] = field(default_factory=list)
    attempts: list[AttemptRecord] = field(default_factory=list)


def build(
    tmp_path: Path, router: respx.MockRouter, routes_toml: str, **settings: Any
) -> ResilientApp:
    """The app over ``routes_toml`` with ``router`` as every upstream (``settings``: more
    :class:`~gateway.config.Settings` fields, e.g. a ``database_url``)."""
    path = tmp_path / "routes.toml"
    path.write_text(routes_toml, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    holder = ResilientApp(app=None)  # type: ignore[arg-type]
    app = create_app(
        Settings(config=path, **settings), http_client=client, on_attempt=holder.attempts.append
    )

    async def sleep(delay: float) -> None:
        holder.sleeps.append(delay)

    app.state.services.pipeline.sleep = sleep
    holder.app = app
    return holder


def scripted(*responses: httpx.Response | Exception) -> Iterator[httpx.Response]:
    """A respx ``side_effect`` answering each request with the next item (an exception is
    raised, as a transport failure)."""

    def gen() -> Iterator[Any]:
        yield from responses

    items = gen()

    def answer(request: httpx.Request) -> httpx.Response:
        item = next(items)
        if isinstance(item, Exception):
            raise item
        return item

    return answer  # type: ignore[return-value]


def agui_sse(*events: dict[str, Any]) -> bytes:
    """AG-UI SSE body (``data: <json>\\n\\n`` per event), as an AG-UI runtime sends it."""
    return b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-sonnet-4-5",
        "stop_reason": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}


def anthropic_text(text: str) -> bytes:
    return anthropic_sse(
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    )


TOOL_STEP = [
    {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
    {
        "type": "TOOL_CALL_START",
        "toolCallId": "call-1",
        "toolCallName": "get_weather",
        "parentMessageId": "a1",
    },
    {"type": "TOOL_CALL_ARGS", "toolCallId": "call-1", "delta": '{"city":"Paris"}'},
    {"type": "TOOL_CALL_END", "toolCallId": "call-1"},
    {
        "type": "TOOL_CALL_RESULT",
        "messageId": "t1",
        "toolCallId": "call-1",
        "content": "sunny",
        "role": "tool",
    },
]
ANSWER = [
    {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
    {"type": "TEXT_MESSAGE_START", "messageId": "a2", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": "It is sunny."},
    {"type": "TEXT_MESSAGE_END", "messageId": "a2"},
    {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
]
CARRIED = [
    {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {
                "id": "call-1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    },
    {"id": "t1", "role": "tool", "toolCallId": "call-1", "content": "sunny"},
]
