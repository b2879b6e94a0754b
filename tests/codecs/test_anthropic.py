"""Anthropic Messages stream decoder (``agui_codecs.decoders.anthropic``).

Expected values come from the upstream input itself (the recorded streams in
``shared/corpus/anthropic``, parsed independently here), from the Anthropic Messages streaming
reference (stop reasons, usage fields, error events) and from the AG-UI 1.0 / AI SDK rules in
``shared/docs/PROTOCOLS.md``; the real clients (``@ag-ui/client`` 1.0.0, ``ai`` 7/6/5) judge
the encoded output in :func:`test_corpus_runs_are_accepted_by_the_real_clients`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from ag_ui.core import Event, EventType
from agui_codecs.decoders.anthropic import REFUSAL_FALLBACK, UNKNOWN_BLOCK_EVENT, AnthropicDecoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from corpus import corpus_files, require_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

FILES = corpus_files("anthropic")
FILE_IDS = [p.name for p in FILES] or ["corpus-absent"]

T = EventType


# -- helpers ------------------------------------------------------------------------------
def decode(data: bytes, cuts: Iterable[int] = (), **options: Any) -> list[Event]:
    """Feed ``data`` split at ``cuts`` (byte offsets), then close."""
    decoder = AnthropicDecoder(**options)
    out: list[Event] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    out += decoder.feed(data[start:])
    return out + decoder.close()


def decode_bytewise(data: bytes) -> list[Event]:
    decoder = AnthropicDecoder()
    out: list[Event] = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    return out + decoder.close()


def wire(events: list[Event]) -> list[dict[str, Any]]:
    return [event_to_wire(e) for e in events]


def of_type(events: list[Event], *types: EventType) -> list[dict[str, Any]]:
    return [event_to_wire(e) for e in events if e.type in types]


def sse(*payloads: dict[str, Any], crlf: bool = False) -> bytes:
    """Anthropic-style SSE: ``event: <type>`` + ``data: <json>`` per payload."""
    nl = "\r\n" if crlf else "\n"
    return "".join(
        f"event: {p['type']}{nl}data: {json.dumps(p)}{nl}{nl}" for p in payloads
    ).encode()


def upstream_events(path: Path) -> list[dict[str, Any]]:
    """The upstream payloads of a corpus file, parsed independently of the decoder."""
    text = path.read_text("utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def ai_sdk_chunks(events: list[Event]) -> list[Any]:
    """The AI SDK encoder's output, parsed back into chunk objects (``"[DONE]"`` kept)."""
    encoder = AiSdkEncoder()
    body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    out: list[Any] = []
    for block in body.decode().split("\n\n"):
        if block.startswith("data: "):
            data = block[6:]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def tool_use(call_id: str, name: str, tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def text_block(index: int, *deltas: str) -> list[dict[str, Any]]:
    return [
        start(index, {"type": "text", "text": ""}),
        *(delta(index, "text_delta", text=d) for d in deltas),
        stop(index),
    ]


def ending(stop_reason: str = "end_turn", **usage: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage or {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]


# AG-UI 1.0 verify rules (PROTOCOLS.md §2) as data: event type -> (part kind, id field).
_OPENS = {
    T.TEXT_MESSAGE_START: ("text", "messageId"),
    T.REASONING_START: ("span", "messageId"),
    T.REASONING_MESSAGE_START: ("reasoning", "messageId"),
    T.TOOL_CALL_START: ("tool", "toolCallId"),
}
_USES = {
    T.TEXT_MESSAGE_CONTENT: ("text", "messageId"),
    T.REASONING_MESSAGE_CONTENT: ("reasoning", "messageId"),
    T.REASONING_ENCRYPTED_VALUE: ("reasoning", "entityId"),  # ours: before the message ends
    T.TOOL_CALL_ARGS: ("tool", "toolCallId"),
}
_CLOSES = {
    T.TEXT_MESSAGE_END: ("text", "messageId"),
    T.REASONING_END: ("span", "messageId"),
    T.REASONING_MESSAGE_END: ("reasoning", "messageId"),
    T.TOOL_CALL_END: ("tool", "toolCallId"),
}


def assert_complete_run(events: list[Event]) -> None:
    """AG-UI verify rules, one terminal event last, and every call's ARGS parse as JSON at END."""
    assert events and events[0].type == T.RUN_STARTED
    assert events[-1].type in (T.RUN_FINISHED, T.RUN_ERROR)
    assert sum(e.type in (T.RUN_FINISHED, T.RUN_ERROR) for e in events) == 1
    open_parts: dict[tuple[str, str], list[str]] = {}
    for e in events:
        w = event_to_wire(e)
        if e.type in _OPENS:
            kind, field = _OPENS[e.type]
            assert (kind, w[field]) not in open_parts, w
            open_parts[kind, w[field]] = []
        elif e.type in _USES:
            kind, field = _USES[e.type]
            open_parts[kind, w[field]].append(w.get("delta", ""))  # KeyError: not open
        elif e.type in _CLOSES:
            kind, field = _CLOSES[e.type]
            fragments = open_parts.pop((kind, w[field]))
            if kind == "tool":
                json.loads("".join(fragments))
        elif e.type == T.RUN_FINISHED:
            assert not open_parts, f"RUN_FINISHED with open parts {list(open_parts)}"


def corpus_file(name: str) -> Path:
    files = {p.name: p for p in require_corpus("anthropic")}
    return files[name]


# -- every corpus file --------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_file_decodes_to_a_complete_run_whole_or_bytewise(path: Path | None) -> None:
    if path is None:
        require_corpus("anthropic")
        return
    data = path.read_bytes()
    events = decode(data)
    assert_complete_run(events)
    assert events[-1].type == T.RUN_FINISHED  # every recording ends with message_stop
    assert wire(decode_bytewise(data)) == wire(events)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corpus_random_splits_give_identical_events(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(require_corpus("anthropic")))
    raw = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=30))
    assert wire(decode(raw, cuts)) == wire(decode(raw))


def test_corpus_server_tool_calls_and_results_are_never_dropped() -> None:
    for path in require_corpus("anthropic"):
        upstream = upstream_events(path)
        blocks = [u["content_block"] for u in upstream if u["type"] == "content_block_start"]
        events = decode(path.read_bytes())
        starts = {w["toolCallId"]: w for w in of_type(events, T.TOOL_CALL_START)}
        results = {w["toolCallId"]: w for w in of_type(events, T.TOOL_CALL_RESULT)}
        for block in blocks:
            if block["type"].endswith("tool_use"):
                start = starts[block["id"]]
                assert start["toolCallName"] == block["name"]
                executed = (start.get("metadata") or {}).get("providerExecuted", False)
                assert executed is (block["type"] != "tool_use"), path.name
            elif block["type"].endswith("_tool_result"):
                result = results[block["tool_use_id"]]
                assert json.loads(result["content"]) == block["content"], path.name


def test_corpus_streamed_tool_arguments_concatenate_to_the_upstream_json() -> None:
    for path in require_corpus("anthropic"):
        upstream = upstream_events(path)
        expected: dict[str, str] = {}
        ids: dict[int, str] = {}
        for u in upstream:
            if u["type"] == "content_block_start" and "id" in u["content_block"]:
                ids[u["index"]] = u["content_block"]["id"]
                expected[ids[u["index"]]] = ""
            elif u["type"] == "content_block_delta" and u["delta"]["type"] == "input_json_delta":
                expected[ids[u["index"]]] += u["delta"]["partial_json"]
        got: dict[str, str] = {}
        for w in of_type(decode(path.read_bytes()), T.TOOL_CALL_ARGS):
            got[w["toolCallId"]] = got.get(w["toolCallId"], "") + w["delta"]
        want = {k: json.loads(v) if v else {} for k, v in expected.items()}
        assert {k: json.loads(v) for k, v in got.items()} == want, path.name


# -- semantics on recorded streams --------------------------------------------------------
def test_parallel_tool_use_blocks_keep_their_own_ids() -> None:
    events = decode(corpus_file("tool-use-parallel-no-args.sse").read_bytes())
    ids = ["toolu_01LtHJmixrs9NcWQkK8hu8hj", "toolu_01N8a4jWyf116qKTMqKKmjyt"]
    assert [w["toolCallId"] for w in of_type(events, T.TOOL_CALL_START)] == ids
    assert [(w["toolCallId"], w["delta"]) for w in of_type(events, T.TOOL_CALL_ARGS)] == [
        (ids[0], "{}"),
        (ids[1], "{}"),
    ]
    finished = event_to_wire(events[-1])
    assert finished["metadata"]["finishReason"] == "tool-calls"
    assert finished["outcome"]["pendingToolCallIds"] == ids


def test_tool_use_with_empty_input_gives_input_object_in_ai_sdk() -> None:
    chunks = ai_sdk_chunks(decode(corpus_file("tool-use-no-args.jsonl").read_bytes()))
    available = [c for c in chunks if isinstance(c, dict) and c["type"] == "tool-input-available"]
    assert [(c["toolName"], c["input"]) for c in available] == [("updateIssueList", {})]


def test_consecutive_text_blocks_continue_one_text_message() -> None:
    path = corpus_file("web-search-citations.sse")
    upstream = upstream_events(path)
    last_tool = max(
        u["index"]
        for u in upstream
        if u["type"] == "content_block_start" and u["content_block"]["type"] != "text"
    )
    answer = "".join(
        u["delta"]["text"]
        for u in upstream
        if u["type"] == "content_block_delta"
        and u["index"] > last_tool
        and u["delta"]["type"] == "text_delta"
    )
    events = decode(path.read_bytes())
    last_start = of_type(events, T.TEXT_MESSAGE_START)[-1]["messageId"]
    content = "".join(
        w["delta"] for w in of_type(events, T.TEXT_MESSAGE_CONTENT) if w["messageId"] == last_start
    )
    assert content == answer


def test_text_after_tool_use_starts_a_new_text_message() -> None:
    events = decode(corpus_file("code-execution-thinking.sse").read_bytes())
    kinds = [
        e.type
        for e in events
        if e.type in (T.TEXT_MESSAGE_START, T.TEXT_MESSAGE_END, T.TOOL_CALL_START)
    ]
    assert kinds == [
        T.TEXT_MESSAGE_START,
        T.TEXT_MESSAGE_END,
        T.TOOL_CALL_START,
        T.TEXT_MESSAGE_START,
        T.TEXT_MESSAGE_END,
    ]
    starts = of_type(events, T.TEXT_MESSAGE_START)
    assert starts[0]["messageId"] != starts[1]["messageId"]


def test_interleaved_thinking_ends_the_text_message_before_reasoning_starts() -> None:
    body = sse(
        MESSAGE_START,
        *text_block(0, "Let me think."),
        start(1, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(1, "thinking_delta", thinking="hmm"),
        delta(1, "signature_delta", signature="sig"),
        stop(1),
        *text_block(2, "Done."),
        *ending(),
    )
    events = decode(body)
    assert_complete_run(events)
    order = [
        e.type.name for e in events if "REASONING_START" in e.type.name or "TEXT" in e.type.name
    ]
    assert order == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "REASONING_START",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    first, second = (w["messageId"] for w in of_type(events, T.TEXT_MESSAGE_START))
    assert first != second


def test_web_search_citations_become_url_sources_once_each() -> None:
    path = corpus_file("web-search-citations.sse")
    cited = {
        u["delta"]["citation"]["url"]
        for u in upstream_events(path)
        if u["type"] == "content_block_delta" and u["delta"]["type"] == "citations_delta"
    }
    sources = [
        w["value"] for w in of_type(decode(path.read_bytes()), T.CUSTOM) if w["name"] == "source"
    ]
    ids = [s["sourceId"] for s in sources]
    assert len(ids) == len(set(ids))
    assert cited <= {s["url"] for s in sources if s["sourceType"] == "url"}
    chunks = ai_sdk_chunks(decode(path.read_bytes()))
    assert cited <= {c["url"] for c in chunks if isinstance(c, dict) and c["type"] == "source-url"}


def test_document_citation_becomes_document_source() -> None:
    citation = {
        "type": "char_location",
        "cited_text": "the grass is green",
        "document_index": 0,
        "document_title": "Facts",
        "start_char_index": 0,
        "end_char_index": 18,
    }
    body = sse(
        MESSAGE_START,
        *text_block(0, "Green."),
        delta(0, "citations_delta", citation=citation),
        *ending(),
    )
    sources = [w["value"] for w in of_type(decode(body), T.CUSTOM)]
    assert sources == [
        {"sourceType": "document", "sourceId": "0", "title": "Facts", "mediaType": "text/plain"}
    ]


def test_unknown_compaction_block_is_carried_as_custom_not_dropped() -> None:
    path = corpus_file("compaction-block-cache-usage.sse")
    summary = next(
        u["delta"]["content"]
        for u in upstream_events(path)
        if u["type"] == "content_block_delta" and u["delta"]["type"] == "compaction_delta"
    )
    events = decode(path.read_bytes())
    custom = [w for w in of_type(events, T.CUSTOM) if w["name"] == UNKNOWN_BLOCK_EVENT]
    assert len(custom) == 1
    assert custom[0]["value"]["index"] == 0
    assert custom[0]["value"]["contentBlock"]["type"] == "compaction"
    assert [d["content"] for d in custom[0]["value"]["deltas"]] == [summary]
    texts = "".join(w["delta"] for w in of_type(events, T.TEXT_MESSAGE_CONTENT))
    assert summary not in texts  # the summary is not shown as the model's answer


def test_compaction_usage_sums_the_iterations() -> None:
    # Top-level usage excludes the compaction pass; its iterations carry both passes.
    events = decode(corpus_file("compaction-block-cache-usage.sse").read_bytes())
    usage = event_to_wire(events[-1])["usage"][0]
    # iterations: compaction {in 100, out 83, read 55096, write 0}; message {181, 8, 0, 0}
    assert usage["inputTokens"] == 100 + 181 + 55096
    assert usage["cachedInputTokens"] == 55096
    assert usage["cacheWriteInputTokens"] == 0
    assert usage["outputTokens"] == 83 + 8
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]


def test_usage_counts_cache_reads_and_writes_as_input_and_later_values_override() -> None:
    first = json.loads(json.dumps(MESSAGE_START))
    first["message"]["usage"] = {
        "input_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "output_tokens": 1,
    }
    body = sse(first, *text_block(0, "hi"), *ending(output_tokens=42, input_tokens=8))
    usage = event_to_wire(decode(body)[-1])["usage"][0]
    assert usage == {
        "provider": "anthropic",
        "model": "claude-test",
        "inputTokens": 8 + 100 + 20,
        "outputTokens": 42,
        "totalTokens": 8 + 100 + 20 + 42,
        "cachedInputTokens": 100,
        "cacheWriteInputTokens": 20,
    }


@pytest.mark.parametrize(
    ("stop_reason", "finish_reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("pause_turn", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool-calls"),
        ("refusal", "content-filter"),
        ("something_new", "other"),
    ],
)
def test_stop_reason_maps_to_finish_reason(stop_reason: str, finish_reason: str) -> None:
    events = decode(sse(MESSAGE_START, *text_block(0, "x"), *ending(stop_reason)))
    meta = event_to_wire(events[-1])["metadata"]
    assert meta["finishReason"] == finish_reason
    assert meta["providerFinishReason"] == stop_reason


def test_sse_event_name_is_ignored_in_favour_of_json_type() -> None:
    payloads = [MESSAGE_START, *text_block(0, "a", "b"), *ending()]
    body = "".join(f"event: bogus\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()
    jsonl = "".join(json.dumps(p) + "\n" for p in payloads).encode()
    assert wire(decode(body)) == wire(decode(sse(*payloads))) == wire(decode(jsonl))


def test_non_streaming_message_object_is_translated() -> None:
    message = {
        **MESSAGE_START["message"],
        "content": [
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "toolu_x", "name": "f", "input": {"a": 1}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    events = decode(json.dumps(message).encode())
    assert_complete_run(events)
    assert [w["delta"] for w in of_type(events, T.TEXT_MESSAGE_CONTENT)] == ["Calling."]
    assert [w["delta"] for w in of_type(events, T.TOOL_CALL_ARGS)] == ['{"a":1}']
    assert event_to_wire(events[-1])["metadata"]["finishReason"] == "tool-calls"


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


# -- real clients -------------------------------------------------------------------------
def test_corpus_runs_are_accepted_by_the_real_clients() -> None:
    files = require_corpus("anthropic")
    require_harness()
    jobs: list[tuple[str, str, bytes]] = []
    expected_finish: dict[str, str] = {}
    for path in files:
        events = decode(path.read_bytes())
        agui = AguiEncoder()
        jobs.append((f"{path.name}:agui", "agui", b"".join(agui.encode(e) for e in events)))
        expected_finish[path.name] = event_to_wire(events[-1])["metadata"]["finishReason"]
        for client in ("ai-v7", "ai-v6", "ai-v5"):
            enc = AiSdkEncoder()
            body = b"".join(enc.encode(e) for e in events) + enc.close()
            jobs.append((f"{path.name}:{client}", client, body))
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], f"{job_id}: {result['error']}"
        assert not result["warnings"], f"{job_id}: {result['warnings']}"
        name, client = job_id.rsplit(":", 1)
        if client != "agui":
            assert result["finishReason"] == expected_finish[name], job_id
    # The signature reaches the AI SDK UIMessage reasoning part (round-trip to Anthropic).
    parts = results["thinking-signature.sse:ai-v7"]["messages"][-1]["parts"]
    reasoning = [p for p in parts if p["type"] == "reasoning"]
    assert reasoning and reasoning[0]["providerMetadata"]["anthropic"]["signature"]
    # Parallel client tool calls become two tool calls with parsable arguments in AG-UI.
    messages = results["tool-use-parallel-no-args.sse:agui"]["messages"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{}, {}]
