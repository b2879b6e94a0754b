"""A scripted OpenAI Chat Completions upstream, so the gateway runs with no key and no network.

Mounted by :func:`gateway.app.create_app` at ``/demo/openai`` (endpoint
``POST /demo/openai/v1/chat/completions``) when a route uses it or with ``GATEWAY_DEMO=1``;
the embedded route ``demo`` reaches it in process (``upstream_url = "self:/demo/openai/v1"``).
It streams what a real Chat Completions ``stream: true`` response looks like
(``chat.completion.chunk`` objects as in the API reference, shapes checked against
``tests/corpus/openai-chat/gpt4o-tool-call-streamed-args.sse``):

* when the last message is not a tool result: a few text deltas ("Let me check the weather in
  <city>."), then a ``get_weather`` tool call whose ``arguments`` ``{"city": "<city>"}`` arrive
  in fragments, ``finish_reason: "tool_calls"``;
* when the last message is a tool result (``role: "tool"``): a short text answer quoting it,
  ``finish_reason: "stop"``;
* then a usage-only chunk (``choices: []``, since ``stream_options.include_usage``) and
  ``data: [DONE]``.

The city is the first capitalised word after "in" in the last user message (default Paris).
Each chunk is preceded by ``delay`` seconds of sleep, so the stream visibly streams.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agui_codecs.sse import encode_data, encode_event

__all__ = ["DEMO_MOUNT", "DEMO_TOOL", "create_demo_app", "demo_chunks"]

DEMO_MOUNT = "/demo/openai"
"""Where the gateway mounts the demo app."""

DEMO_TOOL = "get_weather"
"""Name of the tool the demo calls."""

_CITY = re.compile(r"\bin\s+([A-Z][\w\-]+)")


def _last_text(messages: list[Any], role: str) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == role:
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    p.get("text", "")
                    for p in content
                    if isinstance(p, dict) and p.get("type") == "text"
                )
    return ""


def demo_chunks(request: dict[str, Any]) -> list[dict[str, Any] | str]:
    """The scripted chunks answering a Chat Completions ``request`` body (``"[DONE]"`` last).

    Pure: the same request gives the same chunks except for the generated ``id``/``created``.
    """
    messages = request.get("messages")
    messages = messages if isinstance(messages, list) else []
    model = str(request.get("model") or "demo")
    base = {
        "id": f"chatcmpl-demo-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks: list[dict[str, Any] | str] = [choice({"role": "assistant", "content": ""})]
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    if last.get("role") == "tool":
        result = _last_text(messages, "tool") or "no data"
        for piece in ("Here is ", "the weather: ", result, "."):
            chunks.append(choice({"content": piece}))
        chunks.append(choice({}, "stop"))
        completion = 12
    else:
        match = _CITY.search(_last_text(messages, "user"))
        city = match.group(1) if match else "Paris"
        for piece in ("Let me ", "check the ", f"weather in {city}."):
            chunks.append(choice({"content": piece}))
        call_id = f"call_demo_{uuid.uuid4().hex[:8]}"
        chunks.append(
            choice(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": DEMO_TOOL, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for fragment in ('{"ci', 'ty": ', orjson.dumps(city).decode(), "}"):
            chunks.append(
                choice({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})
            )
        chunks.append(choice({}, "tool_calls"))
        completion = 20
    prompt = sum(
        len(_last_text([m], str(m.get("role")))) // 4 + 1 for m in messages if isinstance(m, dict)
    )
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    chunks.append({**base, "choices": [], "usage": usage})
    chunks.append("[DONE]")
    return chunks


def create_demo_app(*, delay: float = 0.05) -> Starlette:
    """The demo upstream: ``POST /v1/chat/completions`` streaming :func:`demo_chunks` as SSE.

    Args:
        delay: seconds slept before each chunk (0 for tests that want no sleeps).

    Errors: a body that is not a JSON object gets 400 with an OpenAI-shaped error body
    (``{"error": {"message", "type": "invalid_request_error", "code": null}}``).
    """

    async def completions(request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            error = {
                "message": "body is not a JSON object",
                "type": "invalid_request_error",
                "code": None,
            }
            return JSONResponse({"error": error}, status_code=400)

        async def stream() -> AsyncIterator[bytes]:
            for item in demo_chunks(body):
                if delay:
                    await asyncio.sleep(delay)
                if isinstance(item, str):
                    yield encode_event(item)
                else:
                    yield encode_data(orjson.dumps(item))

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"cache-control": "no-cache"}
        )

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
