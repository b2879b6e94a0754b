"""The demo upstream: a Chat Completions stream the openai-chat decoder turns into a legal run."""

from __future__ import annotations

from typing import Any

import orjson
from decoder_checks import assert_legal_run, decode_all, wire
from gwtest import drive

from gateway.demo import DEMO_TOOL, create_demo_app, demo_chunks


def body_of(chunks: list[dict[str, Any] | str]) -> bytes:
    return b"".join(
        b"data: " + (c.encode() if isinstance(c, str) else orjson.dumps(c)) + b"\n\n"
        for c in chunks
    )


def test_first_turn_streams_text_then_a_streamed_tool_call() -> None:
    chunks = demo_chunks(
        {"model": "demo", "messages": [{"role": "user", "content": "Weather in Oslo?"}]}
    )
    assert chunks[-1] == "[DONE]"
    usage = chunks[-2]
    assert isinstance(usage, dict) and usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
    events = decode_all("openai-chat", body_of(chunks))
    assert_legal_run(events)
    evs = wire(events)
    kinds = [e["type"] for e in evs]
    assert "TEXT_MESSAGE_CONTENT" in kinds and kinds.count("TOOL_CALL_ARGS") > 1
    start = next(e for e in evs if e["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == DEMO_TOOL
    args = "".join(e["delta"] for e in evs if e["type"] == "TOOL_CALL_ARGS")
    assert orjson.loads(args) == {"city": "Oslo"}
    assert evs[-1]["metadata"]["finishReason"] == "tool-calls"


def test_after_a_tool_result_it_answers_with_text_only() -> None:
    request = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": DEMO_TOOL, "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "sunny"},
        ]
    }
    events = decode_all("openai-chat", body_of(demo_chunks(request)))
    assert_legal_run(events)
    evs = wire(events)
    assert not [e for e in evs if e["type"].startswith("TOOL_CALL")]
    text = "".join(e["delta"] for e in evs if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Here is the weather: sunny."
    assert evs[-1]["metadata"]["finishReason"] == "stop"


async def test_endpoint_streams_sse_and_rejects_a_non_object_body() -> None:
    app = create_demo_app(delay=0)
    result = await drive(app, "/v1/chat/completions", {"messages": []})
    assert result.status == 200
    assert result.headers["content-type"].startswith("text/event-stream")
    assert result.body.endswith(b"data: [DONE]\n\n")
    bad = await drive(app, "/v1/chat/completions", raw=b"[1]")
    assert bad.status == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
