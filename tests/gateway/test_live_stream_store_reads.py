"""A client that starts a durable run gets its events from the broker, not back from the store
(issue 13: one store read less per live stream). The run's reader skips its store replay when
the in-process broker's retained tail begins with the run's first event
(``gateway/runs/reader.py``, ``_tail_follows``; ``docs/runs.md`` §3): that holds when the
run's pump has taken its first step (RUN_STARTED published) before the reader subscribes,
which the SSE response keeps by starting its source one loop turn after the endpoint returned
(``gateway/sse_response.py``, ``_first_turn``). The stream must still be the whole run, once,
in order. Both wires: AG-UI (``POST /v1/agui/{route}``) and the AI SDK's UI message stream
(``POST /v1/ai-sdk/{route}``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import CHAT_REQUEST, FAST, OPENAI_URL, RUN_INPUT, drive

BODY = (
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"h"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"i"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


async def _reads_while(app: Any, stream: Callable[[int], Awaitable[None]]) -> list[Any]:
    """The store's event reads (``read_wire`` calls) while ``stream(n)`` runs for n = 0, 1, 2."""
    async with app.router.lifespan_context(app):
        store = app.state.services.manager.store
        reads: list[Any] = []
        inner = store.read_wire

        async def read_wire(*args: Any, **kwargs: Any) -> Any:
            reads.append(args)
            return await inner(*args, **kwargs)

        store.read_wire = read_wire
        for n in range(3):
            await stream(n)
    return reads


def _app(tmp_path: Path, make_app: Callable[..., Any], router: respx.MockRouter) -> Any:
    router.post(OPENAI_URL).mock(
        side_effect=lambda _request: httpx.Response(
            200, content=BODY, headers={"content-type": "text/event-stream"}
        )
    )
    return make_app(database_url=f"sqlite+aiosqlite:///{tmp_path}/runs.db", **FAST)


@pytest.mark.usefixtures("keys")
async def test_a_live_durable_stream_reads_none_of_its_events_back_from_the_store(
    tmp_path: Path, make_app: Callable[..., Any], router: respx.MockRouter
) -> None:
    app = _app(tmp_path, make_app, router)

    async def stream(n: int) -> None:
        result = await drive(app, "/v1/agui/gpt", {**RUN_INPUT, "runId": f"run-{n}"})
        events = [e for e in result.data() if isinstance(e, dict)]
        types = [e["type"] for e in events]
        assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED", types
        assert "".join(e.get("delta", "") for e in events) == "hi"  # whole, once

    assert await _reads_while(app, stream) == []


@pytest.mark.usefixtures("keys")
async def test_a_live_durable_ai_sdk_stream_reads_none_of_its_events_back_from_the_store(
    tmp_path: Path, make_app: Callable[..., Any], router: respx.MockRouter
) -> None:
    app = _app(tmp_path, make_app, router)

    async def stream(n: int) -> None:
        result = await drive(app, "/v1/ai-sdk/gpt", {**CHAT_REQUEST, "id": f"chat-{n}"})
        assert result.status == 200, result.body
        data = result.data()
        chunks = [e for e in data if isinstance(e, dict)]
        types = [e["type"] for e in chunks]
        assert types[0] == "start" and types[-1] == "finish", types
        assert data[-1] == "[DONE]"
        deltas = "".join(e.get("delta", "") for e in chunks if e["type"] == "text-delta")
        assert deltas == "hi"  # whole, once

    assert await _reads_while(app, stream) == []
