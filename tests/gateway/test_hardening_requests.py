"""Requests every provider rejects are refused with a clear 422 before any upstream request:
an empty conversation (``messages: []``, or system messages only) and a tool result whose call
no earlier assistant message made, the same on every provider protocol. Passthrough routes
(``ai-sdk``, ``agui``) forward what they get: their backend decides; converting an orphan tool
result for an AI SDK backend drops it rather than sending an empty assistant message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import drive

from gateway.app import create_app
from gateway.config import Settings

PROVIDER_URLS = {
    "chat": "https://openai.test/v1/chat/completions",
    "claude": "https://anthropic.test/v1/messages",
    "resp": "https://openai.test/v1/responses",
    "gem": "https://gemini.test/v1beta/models/gemini-2.5-flash:streamGenerateContent",
}
SDK_URL = "https://agent.test/api/chat"
AGUI_URL = "https://runtime.test/agent"
ROUTES = """
[[routes]]
name = "chat"
upstream_url = "https://openai.test/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"

[[routes]]
name = "claude"
upstream_url = "https://anthropic.test/v1"
protocol = "anthropic"
model = "claude-sonnet-4-5"

[[routes]]
name = "resp"
upstream_url = "https://openai.test/v1"
protocol = "openai-responses"
model = "gpt-5"

[[routes]]
name = "gem"
upstream_url = "https://gemini.test/v1beta"
protocol = "gemini"
model = "gemini-2.5-flash"

[[routes]]
name = "sdk"
upstream_url = "https://agent.test/api/chat"
protocol = "ai-sdk"

[[routes]]
name = "rt"
upstream_url = "https://runtime.test/agent"
protocol = "agui"
"""
PROVIDERS = list(PROVIDER_URLS)


def run_input(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": "r1",
        "messages": messages,
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }


USER = {"id": "u1", "role": "user", "content": "Weather in Paris?"}
CALL = {
    "id": "a1",
    "role": "assistant",
    "toolCalls": [
        {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    ],
}
RESULT = {"id": "tr1", "role": "tool", "toolCallId": "call_1", "content": "sunny"}
ORPHAN = {"id": "tr9", "role": "tool", "toolCallId": "call_ghost", "content": "sunny"}


@pytest.fixture
def app(tmp_path: Path, router: respx.MockRouter) -> Any:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    for url in [*PROVIDER_URLS.values(), SDK_URL, AGUI_URL]:
        router.post(url).mock(return_value=httpx.Response(200, content=b""))
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    return create_app(Settings(config=path), http_client=client)


def upstream_calls(router: respx.MockRouter) -> int:
    return len(router.calls)


# -- empty conversation --------------------------------------------------------------------


@pytest.mark.parametrize("route", PROVIDERS)
async def test_empty_messages_is_422_on_provider_routes(
    app: Any, router: respx.MockRouter, route: str
) -> None:
    result = await drive(app, f"/v1/agui/{route}", run_input([]))
    assert result.status == 422
    assert result.json()["error"]["code"] == "INVALID_REQUEST"
    assert "messages is empty" in result.json()["error"]["message"]
    chat = await drive(app, f"/v1/ai-sdk/{route}", {"id": "c1", "messages": []})
    assert chat.status == 422
    assert "messages is empty" in chat.json()["error"]["message"]
    assert upstream_calls(router) == 0


@pytest.mark.parametrize("route", PROVIDERS)
async def test_system_only_conversation_is_422_on_provider_routes(
    app: Any, router: respx.MockRouter, route: str
) -> None:
    system = {"id": "s1", "role": "system", "content": "Be brief."}
    result = await drive(app, f"/v1/agui/{route}", run_input([system]))
    assert result.status == 422
    assert result.json()["error"]["code"] == "INVALID_REQUEST"
    assert upstream_calls(router) == 0


async def test_empty_messages_are_forwarded_as_is_to_passthrough_routes(
    app: Any, router: respx.MockRouter
) -> None:
    chat = {"id": "c1", "messages": [], "trigger": "submit-message"}
    result = await drive(app, "/v1/ai-sdk/sdk", chat)
    assert result.status == 200
    assert orjson.loads(router.calls.last.request.content) == chat
    agui = run_input([])
    result = await drive(app, "/v1/agui/rt", agui)
    assert result.status == 200
    assert orjson.loads(router.calls.last.request.content) == agui


# -- tool results without their call -------------------------------------------------------


@pytest.mark.parametrize("route", PROVIDERS)
async def test_orphan_tool_result_is_422_invalid_tool_result_on_every_provider(
    app: Any, router: respx.MockRouter, route: str
) -> None:
    result = await drive(app, f"/v1/agui/{route}", run_input([USER, CALL, RESULT, ORPHAN]))
    assert result.status == 422
    error = result.json()["error"]
    assert error["code"] == "INVALID_TOOL_RESULT"
    assert "messages[3]" in error["message"] and "'call_ghost'" in error["message"]
    assert upstream_calls(router) == 0


@pytest.mark.parametrize("route", PROVIDERS)
async def test_tool_result_before_its_call_is_422(
    app: Any, router: respx.MockRouter, route: str
) -> None:
    result = await drive(app, f"/v1/agui/{route}", run_input([USER, RESULT, CALL]))
    assert result.status == 422
    assert result.json()["error"]["code"] == "INVALID_TOOL_RESULT"
    assert upstream_calls(router) == 0


@pytest.mark.parametrize("route", PROVIDERS)
async def test_answered_tool_call_still_goes_upstream(
    app: Any, router: respx.MockRouter, route: str
) -> None:
    result = await drive(app, f"/v1/agui/{route}", run_input([USER, CALL, RESULT]))
    assert result.status == 200
    assert router.calls.last.request.url == PROVIDER_URLS[route] + (
        "?alt=sse" if route == "gem" else ""
    )


async def test_orphan_tool_result_for_an_ai_sdk_backend_is_dropped_not_an_empty_message(
    app: Any, router: respx.MockRouter
) -> None:
    later = {"id": "a2", "role": "assistant", "content": "It is sunny."}
    result = await drive(app, "/v1/agui/sdk", run_input([USER, ORPHAN, later]))
    assert result.status == 200
    sent = orjson.loads(router.calls.last.request.content)["messages"]
    assert [m["id"] for m in sent] == ["u1", "a2"]
    assistant = sent[1]
    assert assistant["parts"] == [{"type": "step-start"}, {"type": "text", "text": "It is sunny."}]
    assert all(
        any(p["type"] != "step-start" for p in m["parts"]) for m in sent if m["role"] == "assistant"
    )


async def test_orphan_tool_result_inside_a_turn_for_an_ai_sdk_backend_is_dropped(
    app: Any, router: respx.MockRouter
) -> None:
    result = await drive(app, "/v1/agui/sdk", run_input([USER, CALL, ORPHAN, RESULT]))
    assert result.status == 200
    sent = orjson.loads(router.calls.last.request.content)["messages"]
    assert [m["id"] for m in sent] == ["u1", "a1"]
    tools = [p for p in sent[1]["parts"] if p["type"].startswith("tool-")]
    assert [(p["toolCallId"], p["state"], p["output"]) for p in tools] == [
        ("call_1", "output-available", "sunny")
    ]
