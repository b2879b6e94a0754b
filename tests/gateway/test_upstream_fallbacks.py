"""Fallback routes (issue 19 item 2): tried in order once a route's retries are exhausted (or
for a failure not worth retrying), ``fallback_on`` mapping error kinds to specific routes, the
request translated to each fallback's own protocol.

Expected upstream bodies follow the providers' API references: OpenAI Chat Completions
(assistant ``tool_calls`` ``{id, type: "function", function: {name, arguments}}``, then a
``tool`` message with ``tool_call_id``), Anthropic Messages (``model``, ``max_tokens``,
``messages``, ``stream: true``); OpenAI's context overflow is HTTP 400 with ``code:
"context_length_exceeded"``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import (
    ANTHROPIC_BASE,
    CHAT_REQUEST,
    OPENAI_BASE,
    OPENAI_URL,
    RUN_INPUT,
    GatedStream,
    chunk,
    drive,
    sse,
)
from real_clients import replay, require_harness
from resilience import TOOL_STEP, agui_sse, anthropic_text, build, scripted

from gateway.config import load_routes
from gateway.errors import ConfigError

AGENT_URL = "https://agent.test/run"
LONG_BASE = "https://long.test/v1"

ROUTES = f"""
[[routes]]
name = "gpt"
upstream_url = "{OPENAI_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
retry = {{ attempts = 2 }}
fallbacks = ["claude"]
fallback_on = {{ context_length_exceeded = ["gpt-long"] }}

[[routes]]
name = "gpt-long"
upstream_url = "{LONG_BASE}"
protocol = "openai-chat"
model = "gpt-4.1"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
retry = {{ attempts = 1 }}

[[routes]]
name = "claude"
upstream_url = "{ANTHROPIC_BASE}"
protocol = "anthropic"
model = "claude-sonnet-4-5"
auth = {{ type = "header", header = "x-api-key", env = "TEST_ANTHROPIC_KEY" }}
retry = {{ attempts = 1 }}

[[routes]]
name = "agent"
upstream_url = "{AGENT_URL}"
protocol = "agui"
retry = {{ attempts = 1 }}
fallbacks = ["gpt-long"]
"""

TEXT_OK = sse(chunk({"role": "assistant", "content": "Long"}), chunk({}, finish="stop"), "[DONE]")
CONTEXT = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


def types(events: list[Any]) -> list[str]:
    return [e["type"] for e in events if isinstance(e, dict)]


@pytest.fixture
def gw(tmp_path: Path, router: respx.MockRouter, keys: None) -> Any:
    return build(tmp_path, router, ROUTES)


async def agui(gw: Any, route: str = "gpt") -> list[dict[str, Any]]:
    result = await drive(gw.app, f"/v1/agui/{route}", RUN_INPUT)
    assert result.status == 200 and result.complete
    return result.data()


async def test_chat_route_falls_back_to_anthropic(gw: Any, router: respx.MockRouter) -> None:
    primary = router.post(OPENAI_URL).mock(return_value=httpx.Response(503, text="busy"))
    claude = router.post(f"{ANTHROPIC_BASE}/messages").mock(
        return_value=httpx.Response(200, content=anthropic_text("Bonjour"))
    )
    events = await agui(gw)
    kinds = types(events)
    assert kinds.count("RUN_STARTED") == 1 and kinds[-1] == "RUN_FINISHED"
    assert "RUN_ERROR" not in kinds
    assert primary.call_count == 2 and claude.call_count == 1
    body = orjson.loads(claude.calls[0].request.content)
    assert body["model"] == "claude-sonnet-4-5" and body["stream"] is True
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert isinstance(body["max_tokens"], int)
    end = events[-1]
    assert end["metadata"]["provider"] == "anthropic"
    assert [(a["route"], a["outcome"]) for a in end["metadata"]["attempts"]] == [
        ("gpt", "error"),
        ("gpt", "error"),
        ("claude", "success"),
    ]


async def test_context_length_exceeded_goes_to_its_own_fallback(
    gw: Any, router: respx.MockRouter
) -> None:
    primary = router.post(OPENAI_URL).mock(return_value=httpx.Response(400, json=CONTEXT))
    long = router.post(f"{LONG_BASE}/chat/completions").mock(
        return_value=httpx.Response(200, content=TEXT_OK)
    )
    claude = router.post(f"{ANTHROPIC_BASE}/messages").mock(
        return_value=httpx.Response(200, content=anthropic_text("no"))
    )
    events = await agui(gw)
    assert types(events)[-1] == "RUN_FINISHED"
    assert primary.call_count == 1  # a 400 is not retried
    assert long.call_count == 1 and claude.call_count == 0
    assert orjson.loads(long.calls[0].request.content)["model"] == "gpt-4.1"
    assert gw.sleeps == []


async def test_exhausted_chain_ends_with_the_last_failure(
    gw: Any, router: respx.MockRouter
) -> None:
    router.post(OPENAI_URL).mock(side_effect=httpx.ConnectError("refused"))
    router.post(f"{ANTHROPIC_BASE}/messages").mock(
        return_value=httpx.Response(
            529, json={"type": "error", "error": {"type": "overloaded_error", "message": "x"}}
        )
    )
    events = await agui(gw)
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    end = events[-1]
    assert end["code"] == "overloaded_error"
    assert [a["route"] for a in end["metadata"]["attempts"]] == ["gpt", "gpt", "claude"]


async def test_fallback_after_a_step_boundary_carries_the_step_in_its_protocol(
    gw: Any, router: respx.MockRouter
) -> None:
    first = GatedStream([agui_sse(*TOOL_STEP)], raise_at_end=httpx.ReadError("reset"))
    agent = router.post(AGENT_URL).mock(return_value=httpx.Response(200, stream=first))
    long = router.post(f"{LONG_BASE}/chat/completions").mock(
        return_value=httpx.Response(200, content=TEXT_OK)
    )
    events = await agui(gw, "agent")
    kinds = types(events)
    assert kinds.count("TOOL_CALL_RESULT") == 1 and kinds[-1] == "RUN_FINISHED"
    assert agent.call_count == 1 and long.call_count == 1
    messages = orjson.loads(long.calls[0].request.content)["messages"]
    assert messages[0]["role"] == "user"
    assert messages[1]["role"] == "assistant"
    assert messages[1]["tool_calls"] == [
        {
            "id": "call-1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
    ]
    assert messages[2] == {"role": "tool", "tool_call_id": "call-1", "content": "sunny"}


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ('fallbacks = ["nowhere"]', "no route named 'nowhere'"),
        ('fallbacks = ["gpt"]', "own fallback"),
        ('fallback_on = { timeout = ["nowhere"] }', "no route named 'nowhere'"),
    ],
)
def test_fallback_names_are_checked(tmp_path: Path, extra: str, needle: str) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(
        f'[[routes]]\nname = "gpt"\nupstream_url = "{OPENAI_BASE}"\nprotocol = "openai-chat"\n'
        f'model = "m"\n{extra}\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=needle):
        load_routes(path)


def test_real_clients_accept_fallback_runs(tmp_path: Path, keys: None) -> None:
    require_harness()

    async def bodies() -> dict[str, bytes]:
        out = {}
        for wire, path, body in (
            ("agui", "/v1/agui", RUN_INPUT),
            ("sdk", "/v1/ai-sdk", CHAT_REQUEST),
        ):
            router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
            gw = build(tmp_path, router, ROUTES)
            router.post(OPENAI_URL).mock(side_effect=scripted(*[httpx.Response(503)] * 2))
            router.post(f"{ANTHROPIC_BASE}/messages").mock(
                return_value=httpx.Response(200, content=anthropic_text("Bonjour"))
            )
            out[f"{wire}-cross"] = (await drive(gw.app, f"{path}/gpt", body)).body
            first = GatedStream([agui_sse(*TOOL_STEP)], raise_at_end=httpx.ReadError("reset"))
            router.post(AGENT_URL).mock(return_value=httpx.Response(200, stream=first))
            router.post(f"{LONG_BASE}/chat/completions").mock(
                return_value=httpx.Response(200, content=TEXT_OK)
            )
            out[f"{wire}-boundary"] = (await drive(gw.app, f"{path}/agent", body)).body
        return out

    got = asyncio.run(bodies())
    jobs: list[Any] = []
    for key, body in got.items():
        clients = ("agui",) if key.startswith("agui") else ("ai-v7", "ai-v6", "ai-v5")
        jobs += [(f"{key}-{client}", client, body) for client in clients]
    results = replay(jobs)
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        assert res["streamError"] is None, (job_id, res["streamError"])


async def test_a_fallback_that_cannot_express_the_request_is_skipped(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    # Anthropic Messages has no audio input block; OpenAI Chat has ``input_audio``
    toml = ROUTES.replace('fallbacks = ["claude"]', 'fallbacks = ["claude", "gpt-long"]', 1)
    gw = build(tmp_path, router, toml)
    audio = {
        "type": "audio",
        "source": {"type": "data", "value": "UklGRg==", "mimeType": "audio/wav"},
    }
    body = {
        **RUN_INPUT,
        "messages": [
            {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}, audio]}
        ],
    }
    router.post(OPENAI_URL).mock(return_value=httpx.Response(503))
    claude = router.post(f"{ANTHROPIC_BASE}/messages").mock(return_value=httpx.Response(200))
    long = router.post(f"{LONG_BASE}/chat/completions").mock(
        return_value=httpx.Response(200, content=TEXT_OK)
    )
    result = await drive(gw.app, "/v1/agui/gpt", body)
    end = result.data()[-1]
    assert end["type"] == "RUN_FINISHED"
    assert claude.call_count == 0 and long.call_count == 1
    assert [(a["route"], a["outcome"], a.get("code")) for a in end["metadata"]["attempts"]] == [
        ("gpt", "error", "UPSTREAM_HTTP_503"),
        ("gpt", "error", "UPSTREAM_HTTP_503"),
        ("claude", "skipped", "UNSUPPORTED_CONTENT"),
        ("gpt-long", "success", None),
    ]
