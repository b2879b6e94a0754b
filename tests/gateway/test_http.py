"""The HTTP path with a mocked upstream: both endpoints x both protocols, refusals as JSON.

Upstream bodies are recorded provider streams from the corpus (``tests/corpus/MANIFEST.md``); the
gateway's output is checked by its wire shape here and by the real clients in
``test_real_clients_accept_gateway_output``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from corpus import CORPUS_DIR, require_corpus
from gwtest import ANTHROPIC_BASE, OPENAI_BASE, Exchange, GatedStream, drive
from real_clients import replay, require_harness

OPENAI_TOOL = "openai-chat/gpt4o-tool-call-streamed-args.sse"
OPENAI_TEXT = "openai-chat/gpt4omini-text-usage.sse"
ANTHROPIC_THINKING = "anthropic/thinking-signature.sse"
ANTHROPIC_TOOLS = "anthropic/tool-use-parallel-no-args.sse"


def corpus(name: str) -> bytes:
    require_corpus(name.split("/")[0])
    return (CORPUS_DIR / name).read_bytes()


RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-1",
    "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": "Weather in Paris?"}],
    "tools": [
        {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ],
    "context": [],
    "state": None,
    "forwardedProps": {"temperature": 0.5},
}

CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-1",
    "trigger": "submit-message",
    "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]}
    ],
}


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events if isinstance(e, dict)]


def captured(route: respx.Route) -> tuple[httpx.Request, dict[str, Any]]:
    request = route.calls.last.request
    return request, orjson.loads(request.content)


# -- AG-UI endpoint --------------------------------------------------------------------------


async def test_agui_openai_streams_events_as_upstream_bytes_arrive(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    body = corpus(OPENAI_TOOL)
    half = body.index(b"\n\n", len(body) // 2) + 2
    release = asyncio.Event()
    upstream = GatedStream([body[:half], release, body[half:]])
    route = router.post(f"{OPENAI_BASE}/chat/completions").mock(
        return_value=httpx.Response(200, stream=upstream)
    )

    def on_chunk(chunk: bytes, exchange: Exchange) -> None:
        release.set()  # only reachable if the first half was forwarded before the rest arrived

    result = await drive(make_app(), "/v1/agui/gpt", RUN_INPUT, on_chunk=on_chunk)

    assert result.status == 200
    assert result.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert result.headers["cache-control"] == "no-cache"
    assert result.headers["x-accel-buffering"] == "no"
    assert "content-encoding" not in result.headers
    assert len(result.chunks) >= 2
    events = result.data()
    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        *["TOOL_CALL_ARGS"] * types(events).count("TOOL_CALL_ARGS"),
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    assert events[0]["threadId"] == "thread-1" and events[0]["runId"] == "run-1"
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert orjson.loads(args) == {"city": "Mexico City"}  # what the recorded model asked
    assert events[-1]["outcome"]["pendingToolCallIds"] == [events[1]["toolCallId"]]

    request, sent = captured(route)
    assert request.headers["authorization"] == "Bearer sk-test-openai"
    assert sent["model"] == "gpt-4o-mini"
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["temperature"] == 0.5
    assert sent["messages"] == [{"role": "user", "content": "Weather in Paris?"}]
    assert sent["tools"][0]["function"]["name"] == "get_weather"
    assert upstream.closed.is_set()


async def test_agui_anthropic_streams_reasoning_with_signature(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    route = router.post(f"{ANTHROPIC_BASE}/messages").mock(
        return_value=httpx.Response(200, content=corpus(ANTHROPIC_THINKING))
    )
    result = await drive(make_app(), "/v1/agui/claude", RUN_INPUT)
    events = result.data()
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
    assert "REASONING_ENCRYPTED_VALUE" in types(events)
    assert "TEXT_MESSAGE_CONTENT" in types(events)

    request, sent = captured(route)
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert sent["model"] == "claude-sonnet-4-5"
    assert sent["max_tokens"] == 4096 and sent["stream"] is True
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
    ]
    assert sent["tools"][0]["input_schema"]["properties"] == {"city": {"type": "string"}}


# -- AI SDK endpoint -------------------------------------------------------------------------


async def test_ai_sdk_openai_headers_chunks_and_done(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    route = router.post(f"{OPENAI_BASE}/chat/completions").mock(
        return_value=httpx.Response(200, content=corpus(OPENAI_TEXT))
    )
    result = await drive(make_app(), "/v1/ai-sdk/gpt", CHAT_REQUEST)
    assert result.status == 200
    assert result.headers["content-type"] == "text/event-stream"
    assert result.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert result.headers["cache-control"] == "no-cache"
    assert result.headers["x-accel-buffering"] == "no"
    chunks = result.data()
    assert chunks[-1] == "[DONE]"
    assert result.body.endswith(b"data: [DONE]\n\n")
    assert types(chunks)[:3] == ["start", "start-step", "text-start"]
    assert types(chunks)[-2:] == ["finish-step", "finish"]
    assert chunks[0]["messageId"].startswith("msg_")  # a new user turn: a fresh id
    assert chunks[-2]["finishReason"] == "stop"
    _, sent = captured(route)
    assert sent["messages"] == [{"role": "user", "content": "Weather in Paris?"}]


async def test_ai_sdk_anthropic_continuation_reuses_message_id(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    route = router.post(f"{ANTHROPIC_BASE}/messages").mock(
        return_value=httpx.Response(200, content=corpus(ANTHROPIC_TOOLS))
    )
    continuation = {
        **CHAT_REQUEST,
        "messageId": "a1",
        "messages": [
            *CHAT_REQUEST["messages"],
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {"type": "step-start"},
                    {
                        "type": "tool-get_weather",
                        "toolCallId": "toolu_1",
                        "state": "output-available",
                        "input": {"city": "Paris"},
                        "output": {"temperature": 18},
                    },
                ],
            },
        ],
        "maxOutputTokens": 256,
    }
    result = await drive(make_app(), "/v1/ai-sdk/claude", continuation)
    chunks = result.data()
    assert chunks[0] == {"type": "start", "messageId": "a1"}
    assert "tool-input-available" in types(chunks)
    assert chunks[-1] == "[DONE]"
    _, sent = captured(route)
    assert sent["max_tokens"] == 256
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"temperature":18}'}
            ],
        },
    ]


def test_real_clients_accept_gateway_output(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    require_harness()
    router.post(f"{OPENAI_BASE}/chat/completions").mock(
        side_effect=lambda request: httpx.Response(200, content=corpus(OPENAI_TOOL))
    )
    router.post(f"{ANTHROPIC_BASE}/messages").mock(
        side_effect=lambda request: httpx.Response(200, content=corpus(ANTHROPIC_THINKING))
    )

    async def bodies() -> dict[str, bytes]:
        out = {}
        for name in ("gpt", "claude"):
            out[f"agui-{name}"] = (await drive(make_app(), f"/v1/agui/{name}", RUN_INPUT)).body
            out[f"sdk-{name}"] = (await drive(make_app(), f"/v1/ai-sdk/{name}", CHAT_REQUEST)).body
        return out

    outputs = asyncio.run(bodies())
    jobs: list[Any] = []
    for key, body in outputs.items():
        clients = ("agui",) if key.startswith("agui") else ("ai-v7", "ai-v6", "ai-v5")
        jobs += [(f"{key}-{client}", client, body) for client in clients]
    results = replay(jobs)
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        assert res["streamError"] is None, (job_id, res["streamError"])
        assert res["warnings"] == [], (job_id, res["warnings"])
    gpt = results["agui-gpt-agui"]["messages"]
    assert gpt[-1]["toolCalls"][0]["function"]["name"] == "get_weather"
    sdk = results["sdk-claude-ai-v7"]["messages"]
    assert [p["type"] for p in sdk[-1]["parts"]][:2] == ["step-start", "reasoning"]


# -- refusals before streaming ---------------------------------------------------------------


async def test_unknown_route_is_404_json(make_app: Any) -> None:
    result = await drive(make_app(), "/v1/agui/nope", RUN_INPUT)
    assert result.status == 404
    assert result.headers["content-type"] == "application/json"
    assert result.json()["error"]["code"] == "ROUTE_NOT_FOUND"
    assert "'nope'" in result.json()["error"]["message"]
    result = await drive(make_app(), "/v1/ai-sdk/nope", CHAT_REQUEST)
    assert result.status == 404


async def test_unknown_path_and_wrong_method_are_json(make_app: Any) -> None:
    result = await drive(make_app(), "/v2/whatever", {})
    assert (result.status, result.json()["error"]["code"]) == (404, "NOT_FOUND")
    result = await drive(make_app(), "/v1/agui/gpt", method="GET")
    assert (result.status, result.json()["error"]["code"]) == (405, "METHOD_NOT_ALLOWED")


@pytest.mark.parametrize(
    ("path", "raw", "loc"),
    [
        ("/v1/agui/gpt", b"{not json", []),
        ("/v1/agui/gpt", orjson.dumps({"threadId": 1, "runId": "r"}), ["threadId"]),
        (
            "/v1/ai-sdk/gpt",
            orjson.dumps({"messages": [{"id": "x", "role": "bot", "parts": []}]}),
            ["messages", 0, "role"],
        ),
        ("/v1/ai-sdk/gpt", b"[]", []),
    ],
)
async def test_invalid_body_is_422_with_pydantic_errors(
    make_app: Any, router: respx.MockRouter, path: str, raw: bytes, loc: list[Any]
) -> None:
    result = await drive(make_app(), path, raw=raw)
    assert result.status == 422
    body = result.json()
    assert body["error"]["code"] == "INVALID_REQUEST"
    assert isinstance(body["detail"], list) and body["detail"]
    assert all({"type", "loc", "msg"} <= set(e) for e in body["detail"])
    if loc:
        assert loc in [e["loc"] for e in body["detail"]]
    assert not router.calls


async def test_input_without_upstream_equivalent_is_422(
    make_app: Any, router: respx.MockRouter
) -> None:
    video = {
        **RUN_INPUT,
        "messages": [
            {
                "id": "m",
                "role": "user",
                "content": [
                    {"type": "video", "source": {"type": "url", "value": "https://x.test/v.mp4"}}
                ],
            }
        ],
    }
    result = await drive(make_app(), "/v1/agui/gpt", video)
    assert result.status == 422
    assert result.json()["error"]["code"] == "UNSUPPORTED_CONTENT"
    assert not router.calls


async def test_oversized_body_is_413(make_app: Any, router: respx.MockRouter) -> None:
    result = await drive(make_app(max_request_bytes=100), "/v1/agui/gpt", RUN_INPUT)
    assert result.status == 413
    assert result.json()["error"]["code"] == "REQUEST_TOO_LARGE"
    assert not router.calls


async def test_healthz(make_app: Any) -> None:
    result = await drive(make_app(), "/healthz", method="GET")
    assert (result.status, result.json()) == (200, {"status": "ok"})


async def test_demo_route_answers_in_process_without_a_key(make_app: Any) -> None:
    result = await drive(make_app(), "/v1/agui/demo", RUN_INPUT)
    events = result.data()
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert orjson.loads(args) == {"city": "Paris"}
    assert events[-1]["metadata"]["finishReason"] == "tool-calls"


def test_corpus_files_used_here_exist() -> None:
    for name in (OPENAI_TOOL, OPENAI_TEXT, ANTHROPIC_THINKING, ANTHROPIC_TOOLS):
        require_corpus(name.split("/")[0])
        assert Path(CORPUS_DIR / name).is_file(), name
