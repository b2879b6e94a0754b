"""A scripted, slow OpenAI Chat Completions upstream for the replica tests.

Run as ``python slow_upstream.py``: it listens on 127.0.0.1 (a free port), prints
``listening <port>`` on stdout, and answers ``POST /v1/chat/completions`` with an SSE stream
whose shape the last user message sets, as JSON::

    {"text": 300, "delay": 0.01, "reasoning": 3, "tool": true}

``text`` content deltas (``"w<i> "``), preceded by ``reasoning`` reasoning deltas and followed,
with ``tool``, by a tool call whose arguments come in 4 fragments; one event every ``delay``
seconds. Anything else in the message gives the defaults above.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from durable_support import chat_events
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

DEFAULTS: dict[str, Any] = {"text": 300, "delay": 0.01, "reasoning": 3, "tool": True}


def script(content: Any) -> tuple[list[bytes], float]:
    """The SSE events and the per-event delay for a user message's content."""
    spec = dict(DEFAULTS)
    try:
        given = json.loads(content) if isinstance(content, str) else {}
    except ValueError:
        given = {}
    if isinstance(given, dict):
        spec.update({k: v for k, v in given.items() if k in DEFAULTS})
    tool = ("call_1", "lookup", ['{"que', 'ry": "', "durable", ' runs"}']) if spec["tool"] else None
    events = chat_events(
        reasoning=[f"r{i} " for i in range(int(spec["reasoning"]))],
        text=[f"w{i} " for i in range(int(spec["text"]))],
        tool=tool,
    )
    return events, float(spec["delay"])


async def completions(request: Request) -> StreamingResponse:
    """``POST /v1/chat/completions``: the scripted stream."""
    body = await request.json()
    content = body["messages"][-1].get("content") if body.get("messages") else None
    events, delay = script(content)

    async def stream() -> AsyncIterator[bytes]:
        for event in events:
            yield event
            await asyncio.sleep(delay)

    return StreamingResponse(stream(), media_type="text/event-stream")


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"listening {sock.getsockname()[1]}", flush=True)
    server.run(sockets=[sock])
    sys.exit(0)


if __name__ == "__main__":
    main()
