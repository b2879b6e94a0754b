"""Anthropic Messages stream decoder (``agui_codecs.protocols.anthropic.decoder``): named faults.

Each test is a regression named after the fault it pins: pings, mid-stream errors, signatures,
refusals, redacted thinking, CRLF framing, malformed and truncated input, tool input edge cases.
Expected values come from the upstream input itself (the recorded streams in
``tests/corpus/anthropic``, parsed independently here), from the Anthropic Messages streaming
reference (error events, stop details) and from the AG-UI 1.0 / AI SDK rules in
``docs/protocols.md`` §2. The whole corpus is checked in ``test_anthropic_corpus.py``, the
semantics in ``test_anthropic.py``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from anthropic_fixtures import (
    MESSAGE_START,
    T,
    ai_sdk_chunks,
    assert_complete_run,
    corpus_file,
    decode,
    decode_bytewise,
    delta,
    ending,
    of_type,
    sse,
    start,
    stop,
    text_block,
    upstream_events,
)
from decoder_checks import wire

from agui_codecs.events import event_to_wire
from agui_codecs.protocols.anthropic.decoder import REFUSAL_FALLBACK, AnthropicDecoder


def tool_use(call_id: str, name: str, tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


# -- regressions, each named after the fault it pins -------------------------------------
def test_ping_between_blocks_is_not_an_error_and_not_content() -> None:
    ping = {"type": "ping"}
    with_pings = sse(
        ping, MESSAGE_START, ping, *text_block(0, "a"), ping, *text_block(1, "b"), ping, *ending()
    )
    without = sse(MESSAGE_START, *text_block(0, "a"), *text_block(1, "b"), *ending())
    events = decode(with_pings)
    assert wire(events) == wire(decode(without))
    assert events[-1].type == T.RUN_FINISHED


def test_overloaded_error_midstream_closes_open_text_then_run_error() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = sse(
        MESSAGE_START,
        start(0, {"type": "text", "text": ""}),
        delta(0, "text_delta", text="Hel"),
        error,
    )
    events = decode(body)
    assert [e.type for e in events[-3:]] == [
        T.TEXT_MESSAGE_CONTENT,
        T.TEXT_MESSAGE_END,
        T.RUN_ERROR,
    ]
    err = event_to_wire(events[-1])
    assert (err["code"], err["message"]) == ("overloaded_error", "Overloaded")
    assert_complete_run(events)
    chunks = ai_sdk_chunks(events)
    assert [c if c == "[DONE]" else c["type"] for c in chunks[-4:]] == [
        "text-end",
        "error",
        "finish",
        "[DONE]",
    ]
    assert chunks[-2] == {"type": "finish", "finishReason": "error"}
    assert "overloaded_error" in chunks[-3]["errorText"]


def test_thinking_signature_survives_in_agui_and_ai_sdk() -> None:
    path = corpus_file("thinking-signature.sse")
    signature = next(
        u["delta"]["signature"]
        for u in upstream_events(path)
        if u["type"] == "content_block_delta" and u["delta"]["type"] == "signature_delta"
    )
    events = decode(path.read_bytes())
    types = [e.type for e in events]
    enc = types.index(T.REASONING_ENCRYPTED_VALUE)
    assert enc < types.index(T.REASONING_MESSAGE_END)
    w = event_to_wire(events[enc])
    assert w["encryptedValue"] == signature
    assert w["metadata"] == {"provider": "anthropic", "field": "signature"}
    chunks = [c for c in ai_sdk_chunks(events) if isinstance(c, dict)]
    carried = [c for c in chunks if c["type"] == "reasoning-delta" and "providerMetadata" in c]
    assert [c["providerMetadata"] for c in carried] == [{"anthropic": {"signature": signature}}]
    first_end = next(i for i, c in enumerate(chunks) if c["type"] == "reasoning-end")
    assert chunks.index(carried[0]) < first_end


def test_refusal_stop_reason_is_surfaced_not_an_empty_success() -> None:
    path = corpus_file("refusal-stop-details.sse")
    details = next(u for u in upstream_events(path) if u["type"] == "message_delta")["delta"][
        "stop_details"
    ]
    finished = event_to_wire(decode(path.read_bytes())[-1])
    assert finished["type"] == "RUN_FINISHED"
    assert finished["metadata"]["finishReason"] == "content-filter"
    assert finished["metadata"]["refusal"] == details["explanation"]
    assert finished["metadata"]["stopDetails"] == details
    finish = [c for c in ai_sdk_chunks(decode(path.read_bytes())) if isinstance(c, dict)][-1]
    assert finish["finishReason"] == "content-filter"


def test_refusal_without_stop_details_still_reports_a_refusal() -> None:
    events = decode(sse(MESSAGE_START, *text_block(0, "Sure, here"), *ending("refusal")))
    meta = event_to_wire(events[-1])["metadata"]
    assert (meta["finishReason"], meta["refusal"]) == ("content-filter", REFUSAL_FALLBACK)


def test_redacted_thinking_is_kept_as_encrypted_value() -> None:
    path = corpus_file("redacted-thinking.sse")
    data = [
        u["content_block"]["data"]
        for u in upstream_events(path)
        if u["type"] == "content_block_start" and u["content_block"]["type"] == "redacted_thinking"
    ]
    events = decode(path.read_bytes())
    values = of_type(events, T.REASONING_ENCRYPTED_VALUE)
    assert [v["encryptedValue"] for v in values] == data
    assert {v["metadata"]["field"] for v in values} == {"redactedData"}
    assert len({v["entityId"] for v in values}) == 2  # one reasoning message per block
    carried = [
        c["providerMetadata"]["anthropic"]["redactedData"]
        for c in ai_sdk_chunks(events)
        if isinstance(c, dict) and "providerMetadata" in c and c["type"] == "reasoning-delta"
    ]
    assert carried == data


def test_crlf_framed_sse_with_comments_parses_identically() -> None:
    payloads = [MESSAGE_START, *text_block(0, "a\nb"), *ending()]
    lf = sse(*payloads)
    crlf = b": keep-alive\r\n\r\n" + sse(*payloads, crlf=True).replace(
        b"\r\n\r\nevent:", b"\r\n\r\n: comment\r\n\r\nevent:"
    )
    assert b"\r\n: comment" in crlf
    assert wire(decode(crlf)) == wire(decode(lf))
    assert wire(decode_bytewise(crlf)) == wire(decode(lf))


def test_malformed_json_data_line_ends_run_with_upstream_malformed_and_closes_open_parts() -> None:
    good = sse(
        MESSAGE_START,
        start(0, {"type": "thinking", "thinking": ""}),
        delta(0, "thinking_delta", thinking="hm"),
        stop(0),
        start(1, tool_use("toolu_1", "f", {})),
        delta(1, "input_json_delta", partial_json='{"a":'),
    )
    body = (
        good
        + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,\n\n'
        + sse(*ending())
    )
    decoder = AnthropicDecoder()
    events = decoder.feed(body) + decoder.close()
    assert events[-1].type == T.RUN_ERROR
    assert event_to_wire(events[-1])["code"] == "UPSTREAM_MALFORMED"
    assert decoder.error is not None and decoder.error.code == "UPSTREAM_MALFORMED"
    assert events[-2].type == T.TOOL_CALL_END  # the open call was closed before the error
    assert [e.type for e in events].count(T.RUN_FINISHED) == 0


def test_one_mib_input_json_delta_line_is_handled() -> None:
    big = "x" * (1024 * 1024)
    fragment = json.dumps({"blob": big})
    body = sse(
        MESSAGE_START,
        start(0, tool_use("toolu_big", "store", {})),
        delta(0, "input_json_delta", partial_json=fragment),
        stop(0),
        *ending("tool_use"),
    )
    assert len(body) > 1024 * 1024
    for events in (decode(body), decode(body, range(0, len(body), 65536))):
        assert_complete_run(events)
        args = "".join(w["delta"] for w in of_type(events, T.TOOL_CALL_ARGS))
        assert orjson.loads(args) == {"blob": big}


def test_eof_without_message_stop_is_truncated_not_success() -> None:
    body = sse(MESSAGE_START, *text_block(0, "partial"), ending()[0])  # message_delta, no stop
    events = decode(body)
    assert_complete_run(events)
    assert event_to_wire(events[-1])["code"] == "UPSTREAM_TRUNCATED"


def test_tool_use_with_complete_input_in_block_start_emits_exactly_one_args() -> None:
    block = tool_use("toolu_full", "f", {"city": "Paris", "n": [1, 2]})
    body = sse(
        MESSAGE_START,
        start(0, block),
        stop(0),
        *ending("tool_use"),
    )
    args = of_type(decode(body), T.TOOL_CALL_ARGS)
    assert len(args) == 1 and json.loads(args[0]["delta"]) == block["input"]


def test_tool_use_with_empty_input_and_no_deltas_emits_empty_object_args() -> None:
    block = tool_use("toolu_e", "f", {})
    body = sse(
        MESSAGE_START,
        start(0, block),
        stop(0),
        *ending("tool_use"),
    )
    assert [w["delta"] for w in of_type(decode(body), T.TOOL_CALL_ARGS)] == ["{}"]


def test_input_json_delta_for_a_non_tool_block_is_malformed_not_a_crash() -> None:
    body = sse(
        MESSAGE_START,
        *text_block(0, "a")[:2],
        delta(0, "input_json_delta", partial_json="{"),
    )
    events = decode(body)
    assert_complete_run(events)
    assert event_to_wire(events[-1])["code"] == "UPSTREAM_MALFORMED"


def test_unknown_event_type_and_unknown_delta_type_are_ignored() -> None:
    body = sse(
        MESSAGE_START,
        {"type": "future_event", "x": 1},
        *text_block(0, "a")[:2],
        delta(0, "future_delta", y=2),
        stop(0),
        *ending(),
    )
    assert wire(decode(body)) == wire(decode(sse(MESSAGE_START, *text_block(0, "a"), *ending())))
