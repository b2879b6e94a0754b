"""openai-chat decoder: the faults seen in public reports (issue 2), each pinned by name."""

from __future__ import annotations

import orjson
import pytest
from decoder_checks import assert_legal_run, decode_all, wire

from agui_codecs.encoders.ai_sdk import AiSdkEncoder


def sse(*chunks: dict | str, sep: bytes = b"\n") -> bytes:
    out = b""
    for c in chunks:
        data = c if isinstance(c, str) else orjson.dumps(c).decode()
        out += b"data: " + data.encode() + sep + sep
    return out


def chunk(delta: dict | None = None, *, finish: str | None = None, **extra: object) -> dict:
    body: dict = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o"}
    if delta is not None or finish is not None:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    body.update(extra)
    return body


def of_type(events: list[dict], t: str) -> list[dict]:
    return [e for e in events if e["type"] == t]


def test_two_tool_calls_each_whole_in_own_chunk_stay_separate() -> None:
    body = sse(
        chunk({"role": "assistant", "content": None}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_a", "arguments": '{"x":1}'},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "get_b", "arguments": '{"y":2}'},
                    }
                ]
            }
        ),
        chunk(finish="tool_calls"),
        "[DONE]",
    )
    events = decode_all("openai-chat", body)
    assert_legal_run(events)
    evs = wire(events)
    starts = of_type(evs, "TOOL_CALL_START")
    assert [(s["toolCallId"], s["toolCallName"]) for s in starts] == [
        ("call_a", "get_a"),
        ("call_b", "get_b"),
    ]
    args = {a["toolCallId"]: a["delta"] for a in of_type(evs, "TOOL_CALL_ARGS")}
    assert args == {"call_a": '{"x":1}', "call_b": '{"y":2}'}
    assert sorted(e["toolCallId"] for e in of_type(evs, "TOOL_CALL_END")) == ["call_a", "call_b"]
    assert evs[-1]["outcome"]["pendingToolCallIds"] == ["call_a", "call_b"]


def test_complete_arguments_in_the_chunk_with_id_and_name_emit_args_exactly_once() -> None:
    body = sse(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "tk85n1k4m",
                        "type": "function",
                        "function": {"name": "weather", "arguments": "{}"},
                    }
                ]
            }
        ),
        chunk(finish="tool_calls"),
    )
    evs = wire(decode_all("openai-chat", body))
    assert [a["delta"] for a in of_type(evs, "TOOL_CALL_ARGS")] == ["{}"]


def test_new_id_at_used_index_is_a_new_call() -> None:
    body = sse(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_2", "function": {"name": "g", "arguments": "{}"}}
                ]
            }
        ),
        chunk(finish="tool_calls"),
    )
    events = decode_all("openai-chat", body)
    assert_legal_run(events)
    assert [s["toolCallId"] for s in of_type(wire(events), "TOOL_CALL_START")] == [
        "call_1",
        "call_2",
    ]


def test_tool_call_keyed_by_index_field_not_list_position() -> None:
    body = sse(
        chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "call_b", "function": {"name": "b", "arguments": ""}},
                    {"index": 0, "id": "call_a", "function": {"name": "a", "arguments": ""}},
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"b":2}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
        chunk(finish="tool_calls"),
    )
    events = decode_all("openai-chat", body)
    assert_legal_run(events)
    args: dict[str, str] = {}
    for a in of_type(wire(events), "TOOL_CALL_ARGS"):
        args[a["toolCallId"]] = args.get(a["toolCallId"], "") + a["delta"]
    assert args == {"call_a": '{"a":1}', "call_b": '{"b":2}'}


def test_usage_only_last_chunk_with_empty_choices_lands_on_run_finished() -> None:
    body = sse(
        chunk({"role": "assistant", "content": "Hi"}),
        chunk(finish="stop"),
        {
            "id": "chatcmpl-1",
            "choices": [],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "total_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 4},
                "completion_tokens_details": {"reasoning_tokens": 2},
            },
        },
        "[DONE]",
    )
    evs = wire(decode_all("openai-chat", body))
    assert evs[-1]["type"] == "RUN_FINISHED"
    assert evs[-1]["usage"] == [
        {
            "provider": "openai",
            "model": "gpt-4o",
            "inputTokens": 10,
            "outputTokens": 5,
            "totalTokens": 15,
            "reasoningTokens": 2,
            "cachedInputTokens": 4,
        }
    ]
    assert evs[-1]["metadata"]["finishReason"] == "stop"


def test_refusal_delta_is_surfaced_not_an_empty_success() -> None:
    body = sse(
        chunk({"role": "assistant", "content": None, "refusal": ""}),
        chunk({"refusal": "I'm sorry, "}),
        chunk({"refusal": "I can't help with that."}),
        chunk(finish="stop"),
        "[DONE]",
    )
    events = decode_all("openai-chat", body)
    assert_legal_run(events)
    evs = wire(events)
    start = of_type(evs, "TEXT_MESSAGE_START")[0]
    assert start["metadata"] == {"refusal": True}
    assert "".join(c["delta"] for c in of_type(evs, "TEXT_MESSAGE_CONTENT")) == (
        "I'm sorry, I can't help with that."
    )
    meta = evs[-1]["metadata"]
    assert meta["refusal"] == "I'm sorry, I can't help with that."
    assert meta["finishReason"] == "content-filter"
    enc = AiSdkEncoder()
    chunks = [c for e in events for c in enc.chunks(e)]
    assert chunks[-1] == {"type": "finish", "finishReason": "content-filter"}
    assert any(c["type"] == "text-delta" and "sorry" in c["delta"] for c in chunks)


def test_crlf_framing_and_comment_lines_parse_identically() -> None:
    parts = [chunk({"content": "a"}), chunk({"content": "b"}), chunk(finish="stop")]
    lf = sse(*parts, "[DONE]")
    crlf = b": OPENROUTER PROCESSING\r\n\r\n" + sse(*parts, "[DONE]", sep=b"\r\n")
    assert wire(decode_all("openai-chat", crlf)) == wire(decode_all("openai-chat", lf))
    assert all("PROCESSING" not in str(e) for e in wire(decode_all("openai-chat", crlf)))


def test_one_mebibyte_tool_arguments_line_is_handled() -> None:
    big = orjson.dumps({"blob": "x" * (1024 * 1024)}).decode()
    body = sse(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_big", "function": {"name": "f", "arguments": big}}
                ]
            }
        ),
        chunk(finish="tool_calls"),
    )
    evs = wire(decode_all("openai-chat", body))
    assert of_type(evs, "TOOL_CALL_ARGS")[0]["delta"] == big
    assert evs[-1]["type"] == "RUN_FINISHED"


def test_line_past_the_cap_is_a_typed_error_and_a_clean_run_error() -> None:
    big = "x" * 5000
    body = sse(
        chunk({"content": "partial answer"}),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_big", "function": {"name": "f", "arguments": big}}
                ]
            }
        ),
    )
    events = decode_all("openai-chat", body, max_event_size=4096)
    assert_legal_run(events)
    evs = wire(events)
    assert evs[-1]["type"] == "RUN_ERROR"
    assert evs[-1]["code"] == "UPSTREAM_EVENT_TOO_LARGE"
    # Nothing decoded before the fault is lost.
    assert of_type(evs, "TEXT_MESSAGE_CONTENT")[0]["delta"] == "partial answer"


def test_malformed_json_mid_stream_closes_open_text_then_run_error() -> None:
    body = sse(chunk({"content": "so far"})) + b"data: {not json\n\n"
    events = decode_all("openai-chat", body)
    assert_legal_run(events)
    evs = wire(events)
    assert [e["type"] for e in evs[-2:]] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert evs[-1]["code"] == "UPSTREAM_MALFORMED"


def test_stream_cut_before_finish_reason_is_an_error_not_a_short_success() -> None:
    events = decode_all("openai-chat", sse(chunk({"content": "The answer is"})))
    evs = wire(events)
    assert evs[-1]["type"] == "RUN_ERROR"
    assert evs[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_error_object_in_chunk_is_run_error_with_upstream_code() -> None:
    body = sse(
        chunk({"content": "x"}), {"error": {"code": "rate_limit_exceeded", "message": "slow down"}}
    )
    evs = wire(decode_all("openai-chat", body))
    assert evs[-1] == {
        "type": "RUN_ERROR",
        "metadata": {"provider": "openai", "model": "gpt-4o"},
        "message": "slow down",
        "code": "rate_limit_exceeded",
    }


def test_named_sse_error_event_ends_run() -> None:
    body = sse(chunk({"content": "x"})) + (
        b'event: error\ndata: {"error":{"message":"bad tool","type":"invalid_request_error",'
        b'"code":"tool_use_failed"}}\n\n'
    )
    evs = wire(decode_all("openai-chat", body))
    assert evs[-1]["type"] == "RUN_ERROR" and evs[-1]["code"] == "tool_use_failed"


def test_empty_body_is_an_error() -> None:
    evs = wire(decode_all("openai-chat", b""))
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_ERROR"]
    assert evs[-1]["code"] == "UPSTREAM_EMPTY"


@pytest.mark.parametrize(
    "payload",
    [
        b"data: []\n\n",
        b'data: {"choices": "nope"}\n\n',
        b'data: {"choices":[{"index":0,"delta":{"content":5}}]}\n\n',
    ],
)
def test_wrong_shapes_are_malformed_not_crashes(payload: bytes) -> None:
    evs = wire(decode_all("openai-chat", payload))
    assert evs[-1]["type"] == "RUN_ERROR"
    assert evs[-1]["code"] == "UPSTREAM_MALFORMED"
