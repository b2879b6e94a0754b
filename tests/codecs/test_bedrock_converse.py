"""The ``bedrock-converse`` decoder on recorded ConverseStream bodies and on the stream rules.

Recordings (``tests/corpus/bedrock-converse``, MANIFEST.md): pydantic-ai's VCR cassettes of real
Bedrock responses (binary event-stream) and a vercel/ai fixture (JSON lines of the same
members). What each event must carry is read off the upstream payloads with botocore's parser
(what the AWS SDK gives an application), and the rules come from the ConverseStream reference
(``StopReason``, ``TokenUsage``, the exception members) as the module docstring of
``protocols/bedrock_converse/decoder.py`` states them. The generic promises (any split, legal
runs, truncation, fuzz, the real clients) are the decoder contract suite's.
"""

from __future__ import annotations

import json
from typing import Any

import eventstream
import pytest
from corpus import corpus_path
from decoder_checks import assert_legal_run
from decoder_runs import decode, wire
from eventstream import MODEL_STREAM_ERROR, botocore_frames

from agui_codecs.protocols.bedrock_converse.decoder import STOP_REASONS

NAME = "bedrock-converse"


def run(body: bytes) -> list[dict[str, Any]]:
    events, _ = decode(NAME, body)
    assert_legal_run(events)
    return wire(events)


def members(file: str) -> list[dict[str, Any]]:
    body = corpus_path(f"bedrock-converse/{file}").read_bytes()
    if body[:1] == b"\x00":
        return botocore_frames(body)
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


@pytest.mark.parametrize(
    "file",
    ["reasoning-signature.eventstream", "reasoning-signature-claude.jsonl"],
)
def test_reasoning_text_and_its_signature_come_back_for_the_next_turn(file: str) -> None:
    upstream = [m["contentBlockDelta"]["delta"] for m in members(file) if "contentBlockDelta" in m]
    thinking = "".join(
        d["reasoningContent"].get("text", "") for d in upstream if "reasoningContent" in d
    )
    [signature] = [
        d["reasoningContent"]["signature"]
        for d in upstream
        if "signature" in d.get("reasoningContent", {})
    ]
    answer = "".join(d["text"] for d in upstream if "text" in d)
    events = run(corpus_path(f"bedrock-converse/{file}").read_bytes())
    assert "".join(e["delta"] for e in of(events, "REASONING_MESSAGE_CONTENT")) == thinking
    [encrypted] = of(events, "REASONING_ENCRYPTED_VALUE")
    assert encrypted["encryptedValue"] == signature
    assert encrypted["metadata"] == {"provider": "amazon-bedrock", "field": "signature"}
    assert encrypted["entityId"] == of(events, "REASONING_MESSAGE_START")[0]["messageId"]
    assert "".join(e["delta"] for e in of(events, "TEXT_MESSAGE_CONTENT")) == answer
    types = [e["type"] for e in events]
    assert types.index("REASONING_END") < types.index("TEXT_MESSAGE_START")  # thinking first


def test_redacted_reasoning_blocks_are_kept_opaque() -> None:
    redacted = [
        m["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"]
        for m in members("reasoning-redacted.eventstream")
        if "redactedContent"
        in m.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
    ]
    events = run(corpus_path("bedrock-converse/reasoning-redacted.eventstream").read_bytes())
    values = of(events, "REASONING_ENCRYPTED_VALUE")
    assert [v["encryptedValue"] for v in values] == redacted and len(redacted) == 2
    assert {v["metadata"]["field"] for v in values} == {"redactedContent"}
    assert len(of(events, "REASONING_START")) == 2  # one reasoning message per block


def test_text_then_a_tool_call_ends_for_the_client_tool() -> None:
    ms = members("text-then-tool-use.eventstream")
    [start] = [m["contentBlockStart"]["start"]["toolUse"] for m in ms if "contentBlockStart" in m]
    args = "".join(
        m["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for m in ms
        if "toolUse" in m.get("contentBlockDelta", {}).get("delta", {})
    )
    events = run(corpus_path("bedrock-converse/text-then-tool-use.eventstream").read_bytes())
    [call] = of(events, "TOOL_CALL_START")
    assert (call["toolCallId"], call["toolCallName"]) == (start["toolUseId"], start["name"])
    assert call["parentMessageId"] == of(events, "TEXT_MESSAGE_START")[0]["messageId"]
    assert "".join(e["delta"] for e in of(events, "TOOL_CALL_ARGS")) == args
    finished = events[-1]
    assert finished["metadata"]["finishReason"] == "tool-calls"
    assert finished["metadata"]["providerFinishReason"] == "tool_use"
    assert finished["outcome"] == {"type": "success", "pendingToolCallIds": [start["toolUseId"]]}


def test_a_server_tool_and_its_result_are_provider_executed() -> None:
    ms = members("server-tool-code-execution.eventstream")
    [result_items] = [
        m["contentBlockDelta"]["delta"]["toolResult"]
        for m in ms
        if "toolResult" in m.get("contentBlockDelta", {}).get("delta", {})
    ]
    events = run(
        corpus_path("bedrock-converse/server-tool-code-execution.eventstream").read_bytes()
    )
    server, client = of(events, "TOOL_CALL_START")
    assert server["toolCallName"] == "nova_code_interpreter"
    assert server["metadata"] == {"providerExecuted": True}
    assert "metadata" not in client
    [result] = of(events, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == server["toolCallId"]
    assert json.loads(result["content"]) == result_items
    assert events[-1]["outcome"]["pendingToolCallIds"] == [client["toolCallId"]]


def test_usage_and_latency_come_from_the_metadata_event() -> None:
    [meta] = [m["metadata"] for m in members("text-nova-micro.eventstream") if "metadata" in m]
    finished = run(corpus_path("bedrock-converse/text-nova-micro.eventstream").read_bytes())[-1]
    assert finished["type"] == "RUN_FINISHED"
    [usage] = finished["usage"]
    assert (usage["inputTokens"], usage["outputTokens"], usage["totalTokens"]) == (
        meta["usage"]["inputTokens"],
        meta["usage"]["outputTokens"],
        meta["usage"]["totalTokens"],
    )
    assert finished["metadata"]["latencyMs"] == meta["metrics"]["latencyMs"]


def test_cache_tokens_are_part_of_the_input_total() -> None:
    # Bedrock counts cache reads and writes apart from inputTokens; totalTokens holds all three.
    body = (
        eventstream.event("messageStart", {"role": "assistant"})
        + eventstream.event("messageStop", {"stopReason": "end_turn"})
        + eventstream.event(
            "metadata",
            {"usage": {"inputTokens": 4, "outputTokens": 15, "totalTokens": 1039,
                       "cacheReadInputTokens": 0, "cacheWriteInputTokens": 1020}},
        )
    )  # fmt: skip
    [usage] = run(body)[-1]["usage"]
    assert usage["inputTokens"] == 1024 and usage["cacheWriteInputTokens"] == 1020
    assert usage["cachedInputTokens"] == 0 and usage["totalTokens"] == 1039


@pytest.mark.parametrize(
    ("stop", "reason"), [*STOP_REASONS.items(), ("malformed_tool_use", "other")]
)
def test_stop_reasons_map_to_finish_reasons(stop: str, reason: str) -> None:
    body = eventstream.event("messageStop", {"stopReason": stop}) + eventstream.event(
        "metadata", {}
    )
    finished = run(body)[-1]
    assert finished["metadata"]["finishReason"] == reason
    assert finished["metadata"]["providerFinishReason"] == stop


def test_metadata_before_message_stop_still_finishes_at_message_stop() -> None:
    # vercel/ai bedrock-tool-call.1.chunks.txt has the two in this order.
    body = (
        b'{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"x"}}}}\n'
        b'{"contentBlockStop":{"contentBlockIndex":0}}\n'
        b'{"metadata":{"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}}\n'
        b'{"messageStop":{"stopReason":"tool_use"}}\n'
    )
    events = run(body)
    assert of(events, "TOOL_CALL_ARGS")[0]["delta"] == "{}"  # a call without argument text
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["usage"][0]["totalTokens"] == 3


def test_eof_after_message_stop_without_metadata_finishes_without_usage() -> None:
    events, decoder = decode(NAME, eventstream.event("messageStop", {"stopReason": "end_turn"}))
    assert wire(events)[-1]["type"] == "RUN_FINISHED" and "usage" not in wire(events)[-1]
    assert decoder.error is None


def test_an_exception_mid_stream_closes_the_text_and_ends_with_its_code() -> None:
    body = (
        eventstream.event("messageStart", {"role": "assistant"})
        + eventstream.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})
        + MODEL_STREAM_ERROR
    )
    events, decoder = decode(NAME, body)
    evs = wire(events)
    assert [e["type"] for e in evs][-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert evs[-1]["code"] == "ModelStreamErrorException"
    assert evs[-1]["message"] == "Model Stream Error"
    assert decoder.error is None  # the upstream reported it: not a fault of the bytes
    assert_legal_run(events)


def test_a_throttling_exception_before_anything_is_a_run_error() -> None:
    evs = run(eventstream.exception("throttlingException", {"message": "Too many requests"}))
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_ERROR"]
    assert (evs[-1]["code"], evs[-1]["message"]) == ("ThrottlingException", "Too many requests")


def test_citations_become_document_sources_once_each() -> None:
    citation = {"location": {"documentPage": {"documentIndex": 0, "start": 1, "end": 2}},
                "sourceContent": [{"text": "AI 1"}], "title": "document-1"}  # fmt: skip
    delta = {"contentBlockIndex": 1, "delta": {"citation": citation}}
    body = b"".join(
        eventstream.event(k, v)
        for k, v in [
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Based on "}}),
            ("contentBlockDelta", delta),
            ("contentBlockDelta", delta),
            ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "the document"}}),
            ("messageStop", {"stopReason": "end_turn"}),
        ]
    )
    events = run(body)
    [source] = [e["value"] for e in of(events, "CUSTOM") if e["name"] == "source"]
    assert source["sourceType"] == "document" and source["title"] == "document-1"
    assert len(of(events, "TEXT_MESSAGE_START")) == 1  # the cited text continues the message
