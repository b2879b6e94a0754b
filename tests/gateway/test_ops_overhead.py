"""The overhead header (issue 16 item 4) and the first bytes (item 7): every streaming response
carries ``x-agui-gateway-overhead-duration-ms`` (after LiteLLM's
``x-litellm-overhead-duration-ms``: the gateway's own milliseconds before the first byte), and
the response starts, and RUN_STARTED goes out, before the upstream has sent anything."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    call,
    chat_events,
    eventually,
    frames,
    resume_attached,
    resume_count,
    run_input,
    running,
)

from gateway.routes import OVERHEAD_HEADER

pytestmark = pytest.mark.timeout(120)

CHAT = {
    "id": "c1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def overhead(headers: dict[str, str]) -> float:
    raw = headers[OVERHEAD_HEADER]
    value = float(raw)
    assert value >= 0 and raw == f"{value:.3f}"  # milliseconds, three decimals
    return value


async def test_every_streaming_response_carries_the_overhead_header(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    router.post(OPENAI_URL).mock(
        side_effect=[
            httpx.Response(200, stream=GatedStream(parts)),
            httpx.Response(200, stream=GatedStream([*parts[:2], gate, *parts[2:]])),
        ]
    )
    app = app_factory()
    async with running(app):
        agui = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        cursor = frames(agui.body)[1].id or ""
        events = await call(
            app, "GET", "/api/v1/agent/runs/t1/events?runId=r1", headers={"last-event-id": cursor}
        )
        first = await call(app, "POST", "/v1/ai-sdk/gpt", CHAT, stop=lambda reply: True)
        before = resume_count("ai_sdk")
        rejoin = asyncio.create_task(call(app, "GET", "/v1/ai-sdk/gpt/c1/stream"))
        await resume_attached("ai_sdk", before)  # attached while the run is live (else a 204)
        gate.set()
        resumed = await rejoin
        health = await call(app, "GET", "/healthz")
        created = await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t9", "r9")}
        )
    for reply in (agui, events, first, resumed):
        assert reply.headers["content-type"].startswith("text/event-stream")
        overhead(reply.headers)
    for reply in (health, created):  # JSON answers are not streams
        assert OVERHEAD_HEADER not in reply.headers


async def test_headers_and_run_started_go_out_before_the_upstream_answers(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    upstream = GatedStream([gate, *chat_events(text=["hi"])])  # nothing until the gate opens
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=upstream))
    app = app_factory()
    sent: list[dict[str, Any]] = []
    body = orjson.dumps(run_input("t1", "r1"))
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/agui/gpt",
        "raw_path": b"/v1/agui/gpt",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"testserver")],
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 5000),
    }
    async with running(app):
        task = asyncio.create_task(app(scope, receive, send))

        async def started() -> bool:
            return any(m["type"] == "http.response.start" for m in sent)

        await eventually(started, within=20, what="response start")
        assert upstream.sent == 0  # the upstream has not sent a byte: the headers went out first
        start = next(m for m in sent if m["type"] == "http.response.start")
        headers = {k.decode(): v.decode() for k, v in start["headers"]}
        assert start["status"] == 200
        assert (
            headers["cache-control"].startswith("no-cache") and headers["x-accel-buffering"] == "no"
        )
        assert "content-encoding" not in headers
        overhead(headers)

        async def first_event() -> bool:
            return any(m["type"] == "http.response.body" and m.get("body") for m in sent)

        await eventually(first_event, within=20, what="first event")
        assert upstream.sent == 0  # RUN_STARTED went out before the upstream's first byte
        [chunk] = [m["body"] for m in sent if m["type"] == "http.response.body" and m.get("body")]
        data = orjson.loads(chunk.split(b"data: ", 1)[1])
        assert data == {
            "type": "RUN_STARTED",
            "threadId": "t1",
            "runId": "r1",
            "protocolVersion": "1.0",
        }
        gate.set()
        async with asyncio.timeout(20):
            await task
    assert not sent[-1].get("more_body", False)  # the stream ended after the gate opened
