"""Anthropic Messages stream decoder (``agui_codecs.protocols.anthropic.decoder``): semantics.

Tool calls, text messages, citations, compaction, usage, stop reasons and framing, on recorded
streams and hand-made ones. Expected values come from the upstream input itself (the recorded
streams in ``tests/corpus/anthropic``, parsed independently here), from the Anthropic Messages
streaming reference (stop reasons, usage fields) and from the AG-UI 1.0 / AI SDK rules in
``docs/protocols.md`` §2. The whole corpus and the real clients are in
``test_anthropic_corpus.py``, the named faults in ``test_anthropic_faults.py``.
"""

from __future__ import annotations

import json

import pytest
from anthropic_fixtures import (
    MESSAGE_START,
    T,
    ai_sdk_chunks,
    assert_complete_run,
    corpus_file,
    decode,
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
from agui_codecs.protocols.anthropic.decoder import UNKNOWN_BLOCK_EVENT


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
