"""The AI SDK chat endpoint keeps what ``test_live_stream_store_reads.py`` shows for AG-UI: a
client that starts a durable run gets its events from the broker, none read back from the
store, and the stream is the whole run, once, in order (``gateway/sse_response.py``,
``_first_turn``; ``gateway/runs/reader.py``, ``_tail_follows``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import CHAT_REQUEST, FAST, OPENAI_URL, drive

BODY = (
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"h"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"i"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


@pytest.mark.usefixtures("keys")
async def test_a_live_durable_ai_sdk_stream_reads_none_of_its_events_back_from_the_store(
    tmp_path: Path, make_app: Callable[..., Any], router: respx.MockRouter
) -> None:
    router.post(OPENAI_URL).mock(
        side_effect=lambda _request: httpx.Response(
            200, content=BODY, headers={"content-type": "text/event-stream"}
        )
    )
    app = make_app(database_url=f"sqlite+aiosqlite:///{tmp_path}/runs.db", **FAST)
    async with app.router.lifespan_context(app):
        store = app.state.services.manager.store
        reads: list[Any] = []
        inner = store.read_wire

        async def read_wire(*args: Any, **kwargs: Any) -> Any:
            reads.append(args)
            return await inner(*args, **kwargs)

        store.read_wire = read_wire
        for n in range(3):
            result = await drive(app, "/v1/ai-sdk/gpt", {**CHAT_REQUEST, "id": f"chat-{n}"})
            assert result.status == 200, result.body
            data = result.data()
            chunks = [e for e in data if isinstance(e, dict)]
            types = [e["type"] for e in chunks]
            assert types[0] == "start" and types[-1] == "finish", types
            assert data[-1] == "[DONE]"
            deltas = "".join(e.get("delta", "") for e in chunks if e["type"] == "text-delta")
            assert deltas == "hi"  # whole, once
        assert reads == []
