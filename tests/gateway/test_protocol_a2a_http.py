"""``a2a`` routes over HTTP, both endpoints, with the official ``a2a-sdk`` server as the upstream.

The gateway's upstream client is an httpx client over the SDK's Starlette app
(``tests/support/a2a_agents.py``), so the SDK parses what the gateway sends and writes what it
decodes: a route's ``upstream_url`` is the agent's JSON-RPC endpoint, posted to as it is. The
interrupt of an ``input-required`` task reaches an AG-UI client as RUN_FINISHED ``interrupt``
and an AI SDK client as a ``data-interrupt`` part; answering it with ``resume`` continues the
task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_agents import a2a_app
from gwtest import drive

from gateway.app import create_app
from gateway.config import Settings

ROUTES = """
[[routes]]
name = "agent"
upstream_url = "http://a2a.test/a2a"
protocol = "a2a"
auth = { type = "bearer", env = "TEST_A2A_TOKEN" }
"""


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TEST_A2A_TOKEN", "a2a-token")
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    seen: list[httpx.Request] = []

    async def log(request: httpx.Request) -> None:
        seen.append(request)

    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=a2a_app("/a2a")), event_hooks={"request": [log]}
    )
    application = create_app(Settings(config=path), http_client=client)
    application.state.seen = seen  # type: ignore[attr-defined]
    return application


def run_input(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"threadId": "thread-1", "runId": "run-1", "tools": [], "context": [], "state": None,
            "forwardedProps": {}, "messages": messages, **extra}  # fmt: skip


def texts(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


async def test_agui_endpoint_interrupt_and_its_continuation(app: Any) -> None:
    history = [{"id": "u1", "role": "user", "content": "weather"}]
    events = (await drive(app, "/v1/agui/agent", run_input(history))).data()
    assert events[-1]["type"] == "RUN_FINISHED"
    [interrupt] = events[-1]["outcome"]["interrupts"]
    assert interrupt["reason"] == "input_required" and interrupt["message"] == "Which city?"
    request = app.state.seen[-1]
    assert str(request.url) == "http://a2a.test/a2a"
    assert request.headers["authorization"] == "Bearer a2a-token"

    history.append({"id": "a1", "role": "assistant", "content": "Which city?"})
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "Paris"}]
    events = (
        await drive(app, "/v1/agui/agent", run_input(history, runId="run-2", resume=resume))
    ).data()
    assert texts(events) == "Forecast for Paris is ready."
    assert [e["name"] for e in events if e["type"] == "CUSTOM"] == ["data-a2a-artifact"]
    assert events[-1]["metadata"]["finishReason"] == "stop"


async def test_ai_sdk_endpoint_texts_artifacts_and_interrupts(app: Any) -> None:
    chat = {"id": "chat-1", "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello there"}]}]}  # fmt: skip
    chunks = (await drive(app, "/v1/ai-sdk/agent", chat)).data()
    assert chunks[-1] == "[DONE]"
    deltas = "".join(
        c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta"
    )
    assert deltas == "Looking that up...Hello! How can I help?"

    chat["messages"] = [
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "weather"}]}
    ]
    chunks = (await drive(app, "/v1/ai-sdk/agent", chat)).data()
    [part] = [c for c in chunks if isinstance(c, dict) and c["type"] == "data-interrupt"]
    assert part["data"]["reason"] == "input_required"


async def test_a_failed_task_is_a_run_error(app: Any) -> None:
    events = (
        await drive(
            app, "/v1/agui/agent", run_input([{"id": "u", "role": "user", "content": "fail now"}])
        )
    ).data()
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "A2A_TASK_FAILED"
