"""``langgraph`` routes over HTTP, both endpoints, against a mocked LangGraph Platform.

respx checks what the gateway sends: ``POST {base}/threads/{thread}/runs/stream`` with the
request's thread as a UUID (the ``{thread_id}`` path capability of the protocol spec), the
route's model as ``assistant_id``, the new turn as ``input``, and an interrupt's answer as
``command.resume``; the replies are the LangGraph API server's recordings of the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from corpus import CORPUS_DIR
from gwtest import drive

from agui_codecs.protocols.langgraph.request import thread_uuid

BASE = "https://graphs.test"
THREAD = thread_uuid("thread-1")
URL = f"{BASE}/threads/{THREAD}/runs/stream"

ROUTES = f"""
[[routes]]
name = "graph"
upstream_url = "{BASE}"
protocol = "langgraph"
model = "agent"
auth = {{ type = "header", header = "x-api-key", env = "TEST_LANGSMITH_KEY" }}
params = {{ config = {{ recursion_limit = 10 }} }}
"""


@pytest.fixture
def routes_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TEST_LANGSMITH_KEY", "lsv2-test")
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


def reply(router: respx.MockRouter, url: str, file: str) -> respx.Route:
    body = (CORPUS_DIR / "langgraph" / file).read_bytes()
    headers = {"content-type": "text/event-stream"}
    return router.post(url).mock(return_value=httpx.Response(200, content=body, headers=headers))


def run_input(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"threadId": "thread-1", "runId": "run-1", "tools": [], "context": [], "state": None,
            "forwardedProps": {}, "messages": messages, **extra}  # fmt: skip


async def test_agui_endpoint_interrupt_then_resume(make_app: Any, router: respx.MockRouter) -> None:
    route = reply(router, URL, "weather-tool-subgraph-custom-interrupt.sse")
    history = [{"id": "u1", "role": "user", "content": "weather in Paris?"}]
    events = (await drive(make_app(), "/v1/agui/graph", run_input(history))).data()
    [interrupt] = events[-1]["outcome"]["interrupts"]
    request = route.calls.last.request
    assert request.headers["x-api-key"] == "lsv2-test"
    assert orjson.loads(request.content) == {
        "assistant_id": "agent",
        "input": {"messages": [{"role": "user", "content": "weather in Paris?", "id": "u1"}]},
        "stream_mode": ["messages-tuple", "updates", "custom"],
        "stream_subgraphs": True,
        "stream_resumable": False,
        "if_not_exists": "create",
        "config": {"recursion_limit": 10},
    }

    route = reply(router, URL, "weather-resume-command-final-answer.sse")
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "yes"}]
    events = (
        await drive(make_app(), "/v1/agui/graph", run_input(history, runId="run-2", resume=resume))
    ).data()
    assert events[-1]["type"] == "RUN_FINISHED"
    body = orjson.loads(route.calls.last.request.content)
    assert body["command"] == {"resume": "yes"} and "input" not in body


async def test_ai_sdk_endpoint_uses_the_chat_id_as_thread(
    make_app: Any, router: respx.MockRouter
) -> None:
    url = f"{BASE}/threads/{thread_uuid('chat-1')}/runs/stream"
    reply(router, url, "weather-tool-subgraph-custom-interrupt.sse")
    chat = {"id": "chat-1", "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather in Paris?"}]}]}  # fmt: skip
    chunks = (await drive(make_app(), "/v1/ai-sdk/graph", chat)).data()
    kinds = [c["type"] for c in chunks if isinstance(c, dict)]
    assert "tool-output-available" in kinds and "data-langgraph-custom" in kinds
    assert "data-interrupt" in kinds and chunks[-1] == "[DONE]"


async def test_a_graph_error_is_a_run_error(make_app: Any, router: respx.MockRouter) -> None:
    reply(router, URL, "error-event.sse")
    events = (
        await drive(
            make_app(),
            "/v1/agui/graph",
            run_input([{"id": "u", "role": "user", "content": "fail now"}]),
        )
    ).data()
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "ValueError"
