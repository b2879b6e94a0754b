"""Upstream AI SDK UI message stream decoder (``agui_codecs.protocols.ai_sdk.decoder``).

Chunk semantics other than tool chunks: message ids, reasoning signatures, sources, files and
data parts, finish reasons, message metadata and usage, errors, aborts, truncation, steps,
framing and malformed chunks. Expected values come from the chunk semantics of ``ai`` 7.0.173
``src/ui/process-ui-message-stream.ts`` (what a part and a step are) and from the AG-UI 1.0
rules in ``docs/protocols.md`` §2 (outcomes, balanced steps). The corpus and the real
clients are in ``test_ai_sdk_decoder_corpus.py``, the tool chunks in
``test_ai_sdk_decoder_tools.py``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from ag_ui.core import Event
from ai_sdk_decoder_fixtures import decode, of_type, run, sse
from decoder_checks import assert_legal_run, wire

from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.errors import MalformedUpstreamError
from agui_codecs.protocols.ai_sdk.decoder import AiSdkUpstreamDecoder


def ai_sdk_chunks(events: list[Event]) -> list[Any]:
    encoder = AiSdkEncoder()
    body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    return [
        json.loads(block[6:])
        for block in body.decode().split("\n\n")
        if block.startswith("data: ") and block[6:] != "[DONE]"
    ]


# -- chunk semantics --------------------------------------------------------------------------
def test_start_message_id_is_the_base_message_id() -> None:
    events = decode(
        run(
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hi"},
            {"type": "text-end", "id": "t"},
        )
    )
    assert_legal_run(events)
    assert of_type(events, "TEXT_MESSAGE_START")[0]["messageId"] == "msg-1"


def test_reasoning_signature_becomes_an_encrypted_value_of_its_provider() -> None:
    events = decode(
        run(
            {"type": "reasoning-start", "id": "r"},
            {"type": "reasoning-delta", "id": "r", "delta": "Let me think."},
            {
                "type": "reasoning-delta",
                "id": "r",
                "delta": "",
                "providerMetadata": {"anthropic": {"signature": "sig-abc"}},
            },
            {
                "type": "reasoning-end",
                "id": "r",
                "providerMetadata": {"anthropic": {"signature": "sig-abc"}},
            },
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Answer"},
            {"type": "text-end", "id": "t"},
        )
    )
    assert_legal_run(events)
    values = of_type(events, "REASONING_ENCRYPTED_VALUE")
    reasoning_id = of_type(events, "REASONING_MESSAGE_START")[0]["messageId"]
    assert values == [
        {  # emitted once, not once per chunk that repeats it
            "type": "REASONING_ENCRYPTED_VALUE",
            "metadata": {"provider": "anthropic", "field": "signature"},
            "subtype": "message",
            "entityId": reasoning_id,
            "encryptedValue": "sig-abc",
        }
    ]
    reasoning = [c for c in ai_sdk_chunks(events) if c["type"].startswith("reasoning")]
    assert {"anthropic": {"signature": "sig-abc"}} in [c.get("providerMetadata") for c in reasoning]


def test_reasoning_signature_after_the_part_was_closed_by_a_tool_call_survives() -> None:
    # The langgraph snapshots end reasoning after the tool calls that closed it.
    events = decode(
        run(
            {"type": "reasoning-start", "id": "r"},
            {"type": "reasoning-delta", "id": "r", "delta": "plan"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {
                "type": "reasoning-end",
                "id": "r",
                "providerMetadata": {"google": {"thoughtSignature": "gsig"}},
            },
        )
    )
    assert_legal_run(events)
    value = of_type(events, "REASONING_ENCRYPTED_VALUE")[0]
    assert value["entityId"] == of_type(events, "REASONING_MESSAGE_START")[0]["messageId"]
    assert value["metadata"] == {"provider": "google", "field": "thoughtSignature"}


def test_sources_files_and_data_parts_are_relayed() -> None:
    events = decode(
        run(
            {"type": "source-url", "sourceId": "s1", "url": "https://a.example", "title": "A"},
            {
                "type": "source-document",
                "sourceId": "d1",
                "mediaType": "application/pdf",
                "title": "Doc",
                "filename": "doc.pdf",
            },
            {"type": "file", "url": "data:image/png;base64,AA", "mediaType": "image/png"},
            {"type": "data-weather", "id": "w1", "data": {"temp": 20}},
            {"type": "some-future-chunk", "x": 1},
        )
    )
    assert_legal_run(events)
    customs = [(c["name"], c["value"]) for c in of_type(events, "CUSTOM")]
    assert customs == [
        (
            "source",
            {"sourceType": "url", "sourceId": "s1", "url": "https://a.example", "title": "A"},
        ),
        (
            "source",
            {
                "sourceType": "document",
                "sourceId": "d1",
                "mediaType": "application/pdf",
                "title": "Doc",
                "filename": "doc.pdf",
            },
        ),
        ("file", {"url": "data:image/png;base64,AA", "mediaType": "image/png"}),
        ("data-weather", {"id": "w1", "data": {"temp": 20}}),
    ]


def test_finish_reason_and_message_metadata_and_usage_reach_run_finished() -> None:
    usage = {
        "inputTokens": 10,
        "outputTokens": 7,
        "totalTokens": 17,
        "inputTokenDetails": {"cacheReadTokens": 4},
        "outputTokenDetails": {"reasoningTokens": 3},
    }
    events = decode(
        sse(
            {"type": "start", "messageId": "m", "messageMetadata": {"createdAt": 1}},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "x"},
            {"type": "message-metadata", "messageMetadata": {"model": "gpt-x"}},
            {"type": "finish", "finishReason": "length", "messageMetadata": {"totalUsage": usage}},
        )
    )
    finished = wire(events)[-1]
    assert finished["metadata"]["finishReason"] == "length"
    assert finished["metadata"]["messageMetadata"] == {
        "createdAt": 1,
        "model": "gpt-x",
        "totalUsage": usage,
    }
    assert finished["usage"] == [
        {
            "provider": "ai-sdk",
            "inputTokens": 10,
            "outputTokens": 7,
            "totalTokens": 17,
            "reasoningTokens": 3,
            "cachedInputTokens": 4,
        }
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", "stop"),
        ("tool-calls", "tool-calls"),
        ("content-filter", "content-filter"),
        ("error", "error"),
        ("other", "other"),
        ("unknown", "other"),
        ("interrupted", "other"),
    ],
)
def test_finish_reason_outside_the_safe_set_becomes_other(raw: str, expected: str) -> None:
    finished = wire(decode(sse({"type": "start"}, {"type": "finish", "finishReason": raw})))[-1]
    assert finished["metadata"]["finishReason"] == expected
    assert finished["metadata"]["providerFinishReason"] == raw


def test_error_chunk_closes_open_parts_then_run_error() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hal"},
            {"type": "error", "errorText": "Rate limited"},
        )
    )
    assert_legal_run(events)
    assert [w["type"] for w in wire(events)][-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert (wire(events)[-1]["code"], wire(events)[-1]["message"]) == (
        "UPSTREAM_ERROR",
        "Rate limited",
    )


def test_abort_is_a_cancelled_run_not_an_error() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hal"},
            {"type": "abort", "reason": "user stop"},
        )
    )
    assert_legal_run(events)
    finished = wire(events)[-1]
    assert finished["outcome"] == {"type": "cancelled"}
    assert finished["metadata"]["abortReason"] == "user stop"


def test_stream_cut_before_finish_is_truncated_not_a_short_success() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hal"},
            done=False,
        )
    )
    assert_legal_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_done_without_finish_chunk_ends_the_run() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hi"},
        )
    )
    assert_legal_run(events)
    assert wire(events)[-1]["metadata"]["finishReason"] == "stop"


def test_unbalanced_steps_come_out_balanced() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "start-step"},
            {"type": "finish"},
        )
    )
    assert_legal_run(events)
    steps = [(w["type"], w["stepName"]) for w in of_type(events, "STEP_STARTED", "STEP_FINISHED")]
    assert steps == [
        ("STEP_STARTED", "step-1"),
        ("STEP_FINISHED", "step-1"),
        ("STEP_STARTED", "step-2"),
        ("STEP_FINISHED", "step-2"),
    ]


def test_jsonl_framing_is_accepted() -> None:
    body = b"".join(
        orjson.dumps(c) + b"\n"
        for c in (
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "x"},
            {"type": "finish"},
        )
    )
    assert wire(decode(body))[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize(
    "chunk",
    [
        {"no": "type"},
        {"type": "tool-input-delta", "toolCallId": "nope", "inputTextDelta": "{"},
        {"type": "text-delta", "delta": "no id"},
        {"type": "tool-input-start", "toolCallId": "c1"},
    ],
)
def test_malformed_chunk_is_a_typed_error_and_a_clean_run_error(chunk: dict[str, Any]) -> None:
    decoder = AiSdkUpstreamDecoder()
    events = decoder.feed(sse({"type": "start"}, {"type": "text-start", "id": "t"}, chunk))
    events += decoder.close()
    assert_legal_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"
    assert isinstance(decoder.error, MalformedUpstreamError)
