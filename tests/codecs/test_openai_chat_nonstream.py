"""openai-chat decoder, non-streamed replies: one ``chat.completion`` object (Chat Completions
reference, "The chat completion object": ``choices[].message`` instead of ``delta``), compact as
most compatible hosts send it or indented as ``api.openai.com`` does, decoded into a complete
run and accepted by the real clients (``@ag-ui/client`` 1.0.0; ``ai`` 7, 6, 5).

Regression: such a body used to end as an empty success (no text, no tool calls).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from decoder_checks import assert_legal_run, decode_all, decode_split, wire
from real_clients import AI_SDK_CLIENTS, replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder


def completion(
    message: dict[str, Any], finish: str | None = "stop", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-ns1",
        "object": "chat.completion",
        "created": 1766434871,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": 19,
            "completion_tokens": 10,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
        "system_fingerprint": "fp_1",
    }
    body.update(extra)
    return body


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


TOOL_REPLY = completion(
    {
        "content": "Checking both.",
        "refusal": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"tz":"Europe/Paris"}'},
            },
        ],
    },
    finish="tool_calls",
)


def test_non_streamed_completion_is_a_complete_run_not_an_empty_success() -> None:
    events = decode_all("openai-chat", orjson.dumps(TOOL_REPLY))
    assert_legal_run(events)
    evs = wire(events)
    assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == ["Checking both."]
    starts = of_type(evs, "TOOL_CALL_START")
    assert [(s["toolCallId"], s["toolCallName"]) for s in starts] == [
        ("call_a", "get_weather"),
        ("call_b", "get_time"),
    ]
    args = {a["toolCallId"]: a["delta"] for a in of_type(evs, "TOOL_CALL_ARGS")}
    assert args == {"call_a": '{"city":"Paris"}', "call_b": '{"tz":"Europe/Paris"}'}
    finished = evs[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"] == {"type": "success", "pendingToolCallIds": ["call_a", "call_b"]}
    assert finished["metadata"]["finishReason"] == "tool-calls"
    assert finished["metadata"]["providerFinishReason"] == "tool_calls"
    assert finished["metadata"]["model"] == "gpt-4o-2024-08-06"
    (usage,) = finished["usage"]
    assert (usage["inputTokens"], usage["outputTokens"], usage["totalTokens"]) == (19, 10, 29)


def test_indented_body_as_api_openai_com_sends_it_gives_the_same_run_in_any_split() -> None:
    compact = wire(decode_all("openai-chat", orjson.dumps(TOOL_REPLY)))
    indented = json.dumps(TOOL_REPLY, indent=2).encode()
    assert indented.startswith(b"{\n")
    assert wire(decode_all("openai-chat", indented)) == compact
    assert wire(decode_all("openai-chat", indented + b"\n")) == compact
    assert wire(decode_split("openai-chat", indented, list(range(1, len(indented))))) == compact


def test_non_streamed_refusal_is_surfaced_as_refusal_text() -> None:
    body = completion({"content": None, "refusal": "I can't help with that."})
    evs = wire(decode_all("openai-chat", json.dumps(body, indent=2).encode()))
    (start,) = of_type(evs, "TEXT_MESSAGE_START")
    assert start["metadata"] == {"refusal": True}
    assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == ["I can't help with that."]
    assert evs[-1]["metadata"]["finishReason"] == "content-filter"
    assert evs[-1]["metadata"]["refusal"] == "I can't help with that."


def test_non_streamed_reasoning_content_and_length_finish() -> None:
    body = completion({"reasoning_content": "Think.", "content": "Answer"}, finish="length")
    evs = wire(decode_all("openai-chat", orjson.dumps(body)))
    assert [e["delta"] for e in of_type(evs, "REASONING_MESSAGE_CONTENT")] == ["Think."]
    assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == ["Answer"]
    assert evs[-1]["metadata"]["finishReason"] == "length"


def test_non_streamed_reply_without_finish_reason_is_complete_with_other() -> None:
    evs = wire(decode_all("openai-chat", orjson.dumps(completion({"content": "Hi"}, finish=None))))
    assert evs[-1]["type"] == "RUN_FINISHED"
    assert evs[-1]["metadata"]["finishReason"] == "other"
    assert "providerFinishReason" not in evs[-1]["metadata"]


def test_indented_error_body_is_a_run_error_with_the_upstream_code() -> None:
    body = {
        "error": {
            "message": "Invalid model",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    evs = wire(decode_all("openai-chat", json.dumps(body, indent=2).encode()))
    assert evs[-1]["type"] == "RUN_ERROR"
    assert (evs[-1]["code"], evs[-1]["message"]) == ("model_not_found", "Invalid model")


def test_indented_body_cut_short_is_malformed_not_a_success() -> None:
    indented = json.dumps(TOOL_REPLY, indent=2).encode()
    evs = wire(decode_all("openai-chat", indented[: len(indented) // 2]))
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_ERROR"]
    assert evs[-1]["code"] == "UPSTREAM_MALFORMED"


def test_indented_body_larger_than_the_cap_is_a_typed_error() -> None:
    indented = json.dumps(completion({"content": "x" * 4096}), indent=2).encode()
    evs = wire(decode_all("openai-chat", indented, max_event_size=1024))
    assert evs[-1]["type"] == "RUN_ERROR"
    assert evs[-1]["code"] == "UPSTREAM_EVENT_TOO_LARGE"


def test_streams_still_decode_as_before_even_when_chunks_are_labelled_chat_completion() -> None:
    def chunk(label: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return orjson.dumps({"id": "c", "object": label, "model": "m", "choices": [choice]})

    for label in ("chat.completion.chunk", "chat.completion"):
        first, last = chunk(label, {"content": "Hi"}), chunk(label, {"content": "!"}, "stop")
        for body in (
            b"data: " + first + b"\n\ndata: " + last + b"\n\ndata: [DONE]\n\n",
            first + b"\n" + last + b"\n",
        ):
            evs = wire(decode_all("openai-chat", body))
            assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == ["Hi", "!"]
            assert evs[-1]["metadata"]["finishReason"] == "stop"


def test_real_clients_build_the_non_streamed_reply() -> None:
    require_harness()
    events = decode_all("openai-chat", json.dumps(TOOL_REPLY, indent=2).encode())
    agui = b"".join(AguiEncoder().encode(e) for e in events)
    ai_encoder = AiSdkEncoder()
    ai = b"".join(ai_encoder.encode(e) for e in events) + ai_encoder.close()
    results = replay([("agui", "agui", agui)] + [(c, c, ai) for c in AI_SDK_CLIENTS])
    agui_result = results["agui"]
    assert agui_result["accepted"], agui_result["error"]
    (message,) = [m for m in agui_result["messages"] if m["role"] == "assistant"]
    assert message["content"] == "Checking both."
    assert [(c["id"], c["function"]["arguments"]) for c in message["toolCalls"]] == [
        ("call_a", '{"city":"Paris"}'),
        ("call_b", '{"tz":"Europe/Paris"}'),
    ]
    for client in AI_SDK_CLIENTS:
        result = results[client]
        assert result["accepted"], result["error"]
        (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
        texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
        inputs = {p["toolCallId"]: p["input"] for p in message["parts"] if "toolCallId" in p}
        assert texts == ["Checking both."]
        assert inputs == {"call_a": {"city": "Paris"}, "call_b": {"tz": "Europe/Paris"}}
        assert result["finishReason"] == "tool-calls"
