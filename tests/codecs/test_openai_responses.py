"""openai-responses decoder (issue 5): the recorded corpus, then each fault pinned by name.

Expected values come from the upstream bytes themselves (ids, arguments, usage read straight
from the recorded events), from the AG-UI 1.0 rules (``shared/docs/PROTOCOLS.md`` §2) or from
the real clients, which judge the encoded output in
:func:`test_synthetic_runs_are_accepted_by_the_real_clients` (the corpus files themselves are
replayed by ``tests/test_corpus_clients.py``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import orjson
import pytest
from agui_codecs import get_decoder
from agui_codecs.cost import price_usage
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import TokenUsage
from corpus import CORPUS_DIR, require_corpus
from decoder_checks import assert_well_formed_run, decode_all, decode_split, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import AI_SDK_CLIENTS, replay, require_harness

NAME = "openai-responses"
FAMILY = CORPUS_DIR / "openai-responses"
CORPUS = sorted(FAMILY.iterdir()) if FAMILY.is_dir() else []
CORPUS_IDS = [p.name for p in CORPUS]


# -- helpers ----------------------------------------------------------------------------
def sse(*events: dict[str, Any]) -> bytes:
    """An SSE body the way api.openai.com frames it: ``event: <type>`` + ``data: <json>``."""
    out = b""
    for e in events:
        out += b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
    return out


def response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": "gpt-4o-2024-08-06",
        "output": [],
        "usage": None,
    }
    body.update(extra)
    return body


def created(rid: str = "resp_1") -> dict[str, Any]:
    return {"type": "response.created", "response": response(id=rid)}


def completed(usage: dict[str, Any] | None = None, rid: str = "resp_1") -> dict[str, Any]:
    return {"type": "response.completed", "response": response("completed", id=rid, usage=usage)}


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def upstream_payloads(path: Path) -> list[dict[str, Any]]:
    """The recorded events, read without our framing code (``data:`` lines or JSON lines)."""
    out = []
    for line in path.read_bytes().splitlines():
        line = line.strip()
        if line.startswith(b"data:"):
            line = line[5:].strip()
        if line.startswith(b"{"):
            out.append(orjson.loads(line))
    return out


def cfile(name: str) -> Path:
    """A corpus file (skips locally, fails under CI=true, when the corpus is absent)."""
    require_corpus("openai-responses")
    return FAMILY / name


@functools.cache
def decoded(path: Path) -> list[dict[str, Any]]:
    return wire(decode_all(NAME, path.read_bytes()))


def ai_sdk_chunks(events: list[Any]) -> list[dict[str, Any]]:
    encoder = AiSdkEncoder()
    return [c for e in events for c in encoder.chunks(e)]


FUNCTION_CALL_ITEM = {
    "type": "function_call",
    "id": "fc_67e554a1de488191af0831d35cbe082e",
    "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
    "name": "get_capital",
    "arguments": "",
    "status": "in_progress",
}


# -- the corpus -------------------------------------------------------------------------
def test_corpus_family_is_present() -> None:
    assert len(require_corpus("openai-responses")) >= 19


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_file_decodes_to_well_formed_runs(path: Path) -> None:
    require_corpus("openai-responses")
    events = decode_all(NAME, path.read_bytes())
    assert_well_formed_run(events)
    evs = wire(events)
    upstream = upstream_payloads(path)
    responses = {p["response"]["id"] for p in upstream if p.get("type") == "response.created"}
    assert len(of_type(evs, "RUN_STARTED")) == max(1, len(responses))
    # Every client function call is announced under its call_... id, with its own arguments.
    calls = {
        p["item"]["call_id"]: p["item"]
        for p in upstream
        if p.get("type") == "response.output_item.done"
        and p["item"]["type"] in ("function_call", "custom_tool_call")
    }
    starts = [e for e in of_type(evs, "TOOL_CALL_START") if not e.get("metadata")]
    assert {e["toolCallId"] for e in starts} == set(calls)
    assert all(call_id.startswith("call_") for call_id in calls)
    for call_id, item in calls.items():
        args = "".join(
            e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS") if e["toolCallId"] == call_id
        )
        expected = item.get("arguments", item.get("input"))
        if item["type"] == "function_call":
            assert orjson.loads(args) == orjson.loads(expected or "{}")
        else:  # free-form input travels as a JSON string
            assert orjson.loads(args) == expected


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_file_byte_by_byte_gives_identical_events(path: Path) -> None:
    require_corpus("openai-responses")
    data = path.read_bytes()
    assert wire(decode_split(NAME, data, list(range(1, len(data))))) == decoded(path)


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_corpus_file_random_splits_give_identical_events(path: Path, data: st.DataObject) -> None:
    body = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=40))
    assert wire(decode_split(NAME, body, cuts)) == decoded(path)


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_usage_equals_the_upstream_figures(path: Path) -> None:
    require_corpus("openai-responses")
    finals = [
        p["response"]
        for p in upstream_payloads(path)
        if p.get("type") in ("response.completed", "response.incomplete", "response.failed")
    ]
    terminals = [e for e in decoded(path) if e["type"] in ("RUN_FINISHED", "RUN_ERROR")]
    assert len(terminals) == len(finals) or not finals
    for final, terminal in zip(finals, terminals, strict=False):
        u = final.get("usage")
        if not u:
            assert "usage" not in terminal
            continue
        expected = {
            "provider": "openai",
            "model": final["model"],
            "inputTokens": u["input_tokens"],
            "outputTokens": u["output_tokens"],
            "totalTokens": u["total_tokens"],
            "cachedInputTokens": u["input_tokens_details"]["cached_tokens"],
            "reasoningTokens": u["output_tokens_details"]["reasoning_tokens"],
        }
        assert terminal["usage"] == [expected]
        # AG-UI accounting: reasoning is a part of the output total, never added to it.
        assert expected["totalTokens"] == expected["inputTokens"] + expected["outputTokens"]
        cost = price_usage(TokenUsage(**{k: v for k, v in expected.items()}))
        if "cost" in u:  # OpenRouter reports the charge itself
            assert terminal["metadata"]["cost"] == u["cost"]
            assert terminal["metadata"]["costSource"] == "provider"
        else:
            assert terminal["metadata"]["cost"] == cost["cost"]
            assert terminal["metadata"]["costSource"] == "catalog_fallback"


def test_concatenated_agent_loop_becomes_one_run_per_response_not_one_corrupted_run() -> None:
    path = cfile("agent-loop-4-concatenated-responses-reasoning-function-calls.jsonl")
    evs = decoded(path)
    starts = of_type(evs, "RUN_STARTED")
    finishes = of_type(evs, "RUN_FINISHED")
    assert len(starts) == len(finishes) == 4
    assert len({s["runId"] for s in starts}) == 4  # distinct runs, -2 -3 -4 suffixed
    assert {s["threadId"] for s in starts} == {starts[0]["threadId"]}  # one conversation
    assert [f["metadata"]["finishReason"] for f in finishes] == [
        "tool-calls",
        "tool-calls",
        "tool-calls",
        "stop",
    ]
    responses = [
        p["response"]["id"] for p in upstream_payloads(path) if p["type"] == "response.created"
    ]
    assert [f["metadata"]["responseId"] for f in finishes] == responses
    text = "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT"))
    assert text == "The final result is **570**."
    # The AI SDK sees one assistant message: one start, one step per response.
    chunks = ai_sdk_chunks(decode_all(NAME, path.read_bytes()))
    assert [c["type"] for c in chunks].count("start") == 1
    assert [c["type"] for c in chunks].count("start-step") == 4


def test_resumed_stream_without_response_created_still_starts_the_run() -> None:
    path = cfile("background-resume-starting-after.sse")
    evs = decoded(path)
    assert evs[0]["type"] == "RUN_STARTED"
    assert evs[0]["runId"] == "run_resp_0850765c843cca5300699cc47d93c0819089a181f5feeff8eb"
    assert "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")) == "2 + 2 equals 4."
    assert evs[-1]["type"] == "RUN_FINISHED"


def test_rotating_item_ids_stay_one_message_keyed_by_output_index() -> None:
    path = cfile("compat-github-copilot-rotating-item-ids.jsonl")
    evs = decoded(path)
    assert len(of_type(evs, "TEXT_MESSAGE_START")) == 1
    done = [p for p in upstream_payloads(path) if p["type"] == "response.output_text.done"]
    assert "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")) == done[0]["text"]
    assert of_type(evs, "TEXT_MESSAGE_START")[0]["metadata"] == {"phase": "final_answer"}


# -- regression tests from the issue ----------------------------------------------------
def test_argument_deltas_keyed_by_item_id_use_the_call_id_everywhere() -> None:
    body = sse(
        created(),
        {"type": "response.output_item.added", "output_index": 0, "item": FUNCTION_CALL_ITEM},
        *[
            {
                "type": "response.function_call_arguments.delta",
                "item_id": FUNCTION_CALL_ITEM["id"],
                "output_index": 0,
                "delta": d,
            }
            for d in ('{"', "country", '":"', "France", '"}')
        ],
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**FUNCTION_CALL_ITEM, "arguments": '{"country":"France"}'},
        },
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    ids = {e["toolCallId"] for e in evs if e["type"].startswith("TOOL_CALL")}
    assert ids == {"call_kL0PCQV7M2WMoVX8V8OtYSAL"}
    args = of_type(evs, "TOOL_CALL_ARGS")
    assert "".join(a["delta"] for a in args) == '{"country":"France"}'
    finished = evs[-1]
    assert finished["metadata"]["finishReason"] == "tool-calls"
    assert finished["outcome"] == {
        "type": "success",
        "pendingToolCallIds": ["call_kL0PCQV7M2WMoVX8V8OtYSAL"],
    }


def test_arguments_only_in_done_event_give_exactly_one_args() -> None:
    body = sse(
        created(),
        {"type": "response.output_item.added", "output_index": 0, "item": FUNCTION_CALL_ITEM},
        {
            "type": "response.function_call_arguments.done",
            "item_id": FUNCTION_CALL_ITEM["id"],
            "output_index": 0,
            "arguments": '{"country":"France"}',
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**FUNCTION_CALL_ITEM, "arguments": '{"country":"France"}'},
        },
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert [a["delta"] for a in of_type(evs, "TOOL_CALL_ARGS")] == ['{"country":"France"}']
    assert len(of_type(evs, "TOOL_CALL_END")) == 1


def test_arguments_only_in_output_item_done_give_exactly_one_args() -> None:
    item = {**FUNCTION_CALL_ITEM, "arguments": '{"a":1}', "status": "completed"}
    body = sse(created(), {"type": "response.output_item.done", "output_index": 0, "item": item})
    evs = wire(decode_all(NAME, body + sse(completed())))
    assert [a["delta"] for a in of_type(evs, "TOOL_CALL_ARGS")] == ['{"a":1}']
    assert of_type(evs, "TOOL_CALL_START")[0]["toolCallId"] == "call_kL0PCQV7M2WMoVX8V8OtYSAL"


def test_function_call_without_arguments_gets_empty_object_args() -> None:
    item = {**FUNCTION_CALL_ITEM, "status": "completed"}
    body = sse(
        created(),
        {"type": "response.output_item.added", "output_index": 0, "item": FUNCTION_CALL_ITEM},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert [a["delta"] for a in of_type(evs, "TOOL_CALL_ARGS")] == ["{}"]


REFUSAL = "I'm sorry, but I can't help with that."
MESSAGE_ITEM = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}


def refusal_body() -> bytes:
    part = {"type": "refusal", "refusal": REFUSAL}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "refusal", "refusal": ""},
        },
        {"type": "response.refusal.delta", **where, "delta": REFUSAL[:10]},
        {"type": "response.refusal.delta", **where, "delta": REFUSAL[10:]},
        {"type": "response.refusal.done", **where, "refusal": REFUSAL},
        {"type": "response.content_part.done", **where, "part": part},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "status": "completed", "content": [part]},
        },
        completed({"input_tokens": 10, "output_tokens": 9, "total_tokens": 19}),
    )


def test_refusal_is_surfaced_on_both_the_agui_and_the_ai_sdk_output() -> None:
    events = decode_all(NAME, refusal_body())
    evs = wire(events)
    assert_well_formed_run(events)
    start = of_type(evs, "TEXT_MESSAGE_START")[0]
    assert start["metadata"] == {"refusal": True}
    assert "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")) == REFUSAL
    assert evs[-1]["metadata"]["finishReason"] == "content-filter"
    assert evs[-1]["metadata"]["refusal"] == REFUSAL
    chunks = ai_sdk_chunks(events)
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == REFUSAL
    finish = [c for c in chunks if c["type"] == "finish"]
    assert finish[0]["finishReason"] == "content-filter"


def test_refusal_sent_only_in_done_events_is_sent_once() -> None:
    body = refusal_body().replace(b"response.refusal.delta", b"response.unknown.delta")
    evs = wire(decode_all(NAME, body))
    assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == [REFUSAL]


# -- terminal events --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reason", "finish"),
    [("max_output_tokens", "length"), ("content_filter", "content-filter"), ("other", "other")],
)
def test_incomplete_response_finishes_with_reason_from_incomplete_details(
    reason: str, finish: str
) -> None:
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    body = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {"type": "response.output_text.delta", **where, "delta": "Once upon a"},
        {
            "type": "response.incomplete",
            "response": response("incomplete", incomplete_details={"reason": reason}),
        },
    )
    evs = wire(decode_all(NAME, body))
    assert_well_formed_run(decode_all(NAME, body))
    assert evs[-1]["type"] == "RUN_FINISHED"
    assert evs[-1]["metadata"]["finishReason"] == finish
    assert evs[-1]["metadata"]["providerFinishReason"] == reason


def test_insufficient_quota_is_run_error_with_the_upstream_code() -> None:
    path = cfile("error-insufficient-quota-response-failed.jsonl")
    evs = decoded(path)
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_ERROR"]
    assert evs[-1]["code"] == "insufficient_quota"
    assert evs[-1]["message"].startswith("You exceeded your current quota")


def test_response_failed_without_error_event_is_run_error_with_its_code() -> None:
    failed = response(
        "failed", error={"code": "server_error", "message": "The server had an error"}
    )
    evs = wire(decode_all(NAME, sse(created(), {"type": "response.failed", "response": failed})))
    assert evs[-1] == {
        "type": "RUN_ERROR",
        "metadata": {"provider": "openai", "model": "gpt-4o-2024-08-06"},
        "message": "The server had an error",
        "code": "server_error",
    }


def test_documented_error_event_shape_with_top_level_code() -> None:
    err = {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}
    evs = wire(decode_all(NAME, sse(created(), err)))
    assert evs[-1]["type"] == "RUN_ERROR" and evs[-1]["code"] == "rate_limit_exceeded"


def test_stream_cut_before_response_completed_is_truncated_error() -> None:
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    body = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {"type": "response.output_text.delta", **where, "delta": "Hel"},
    )
    events = decode_all(NAME, body)
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_new_response_while_previous_is_open_ends_it_as_truncated_then_starts_a_run() -> None:
    body = sse(created("resp_a"), created("resp_b"), completed(rid="resp_b"))
    events = decode_all(NAME, body)
    assert_well_formed_run(events)
    assert [e["type"] for e in wire(events)] == [
        "RUN_STARTED",
        "RUN_ERROR",
        "RUN_STARTED",
        "RUN_FINISHED",
    ]


def test_replayed_events_of_a_resumed_tail_are_not_sent_twice() -> None:
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events = [
        {**created(), "sequence_number": 0},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
            "sequence_number": 1,
        },
        {"type": "response.output_text.delta", **where, "delta": "A", "sequence_number": 2},
        {"type": "response.output_text.delta", **where, "delta": "B", "sequence_number": 3},
    ]
    tail = [
        {"type": "response.output_text.delta", **where, "delta": "B", "sequence_number": 3},
        {"type": "response.output_text.delta", **where, "delta": "C", "sequence_number": 4},
        {**completed(), "sequence_number": 5},
    ]
    evs = wire(decode_all(NAME, sse(*events) + sse(*tail)))
    assert "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")) == "ABC"


@pytest.mark.parametrize(
    "payload",
    [b"data: [1, 2]\n\n", b'data: {"no_type": true}\n\n', b"data: {not json\n\n"],
    ids=["not-an-object", "no-type", "bad-json"],
)
def test_malformed_event_ends_the_run_with_a_typed_error_not_a_crash(payload: bytes) -> None:
    d = get_decoder(NAME)
    events = d.feed(sse(created()) + payload) + d.close()
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"
    assert d.error is not None and d.ended


def test_function_call_without_call_id_or_name_is_malformed() -> None:
    item = {"type": "function_call", "id": "fc_1", "arguments": ""}
    body = sse(created(), {"type": "response.output_item.added", "output_index": 0, "item": item})
    assert wire(decode_all(NAME, body))[-1]["code"] == "UPSTREAM_MALFORMED"


def test_trailing_done_after_completed_is_counted_not_a_new_run() -> None:
    d = get_decoder(NAME)
    events = d.feed(sse(created(), completed()) + b"data: [DONE]\n\n") + d.close()
    assert [e["type"] for e in wire(events)] == ["RUN_STARTED", "RUN_FINISHED"]
    assert d.trailing == 1 and d.ended


# -- items --------------------------------------------------------------------------------
def test_custom_tool_input_is_sent_as_a_json_string() -> None:
    path = cfile("custom-tool-call.jsonl")
    events = decode_all(NAME, path.read_bytes())
    args = "".join(e["delta"] for e in of_type(wire(events), "TOOL_CALL_ARGS"))
    assert orjson.loads(args) == "SELECT * FROM users WHERE age > 25"
    chunks = ai_sdk_chunks(events)
    available = [c for c in chunks if c["type"] == "tool-input-available"]
    assert available[0]["input"] == "SELECT * FROM users WHERE age > 25"


def test_reasoning_encrypted_content_is_keyed_to_its_reasoning_message() -> None:
    path = cfile("code-interpreter-reasoning-summary.sse")
    evs = decoded(path)
    final = [
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "reasoning"
    ]
    values = of_type(evs, "REASONING_ENCRYPTED_VALUE")
    assert [v["encryptedValue"] for v in values] == [i["encrypted_content"] for i in final]
    reasoning_ids = {e["messageId"] for e in of_type(evs, "REASONING_MESSAGE_START")}
    for v in values:
        assert v["subtype"] == "message" and v["entityId"] in reasoning_ids
        assert v["metadata"] == {"provider": "openai", "field": "encryptedContent"}
    summary = "".join(e["delta"] for e in of_type(evs, "REASONING_MESSAGE_CONTENT"))
    assert summary == final[0]["summary"][0]["text"]


def test_summary_parts_of_one_item_are_separate_paragraphs_of_one_reasoning_message() -> None:
    where = {"item_id": "rs_1", "output_index": 0}
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    body = sse(
        created(),
        {"type": "response.output_item.added", **where, "item": item},
        {
            "type": "response.reasoning_summary_text.delta",
            **where,
            "summary_index": 0,
            "delta": "One.",
        },
        {
            "type": "response.reasoning_summary_text.delta",
            **where,
            "summary_index": 1,
            "delta": "Two.",
        },
        {"type": "response.output_item.done", **where, "item": item},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert len(of_type(evs, "REASONING_MESSAGE_START")) == 1
    assert "".join(e["delta"] for e in of_type(evs, "REASONING_MESSAGE_CONTENT")) == "One.\n\nTwo."


def test_hosted_tools_are_provider_executed_calls_with_results() -> None:
    for name, item_type in [
        ("web-search-calls-url-citations.sse", "web_search_call"),
        ("file-search-call-file-citations.sse", "file_search_call"),
        ("code-interpreter-reasoning-summary.sse", "code_interpreter_call"),
        ("mcp-list-tools-mcp-call.sse", "mcp_call"),
        ("image-generation-call.jsonl", "image_generation_call"),
    ]:
        path = require_corpus("openai-responses")[0].parent / name
        evs = decoded(path)
        items = [
            p["item"]
            for p in upstream_payloads(path)
            if p["type"] == "response.output_item.done" and p["item"]["type"] == item_type
        ]
        assert items, name
        for item in items:
            start = [e for e in of_type(evs, "TOOL_CALL_START") if e["toolCallId"] == item["id"]]
            assert start and start[0]["metadata"] == {"providerExecuted": True}, name
            results = [e for e in of_type(evs, "TOOL_CALL_RESULT") if e["toolCallId"] == item["id"]]
            assert [orjson.loads(r["content"]) for r in results] == [item], name


def test_code_interpreter_arguments_parse_to_container_and_code() -> None:
    path = cfile("code-interpreter-reasoning-summary.sse")
    evs = decoded(path)
    items = [
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "code_interpreter_call"
    ]
    for item in items:
        args = "".join(
            e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS") if e["toolCallId"] == item["id"]
        )
        assert orjson.loads(args) == {"container_id": item["container_id"], "code": item["code"]}


def test_citations_become_sources_once_each() -> None:
    web = decoded(cfile("web-search-calls-url-citations.sse"))
    sources = [e["value"] for e in of_type(web, "CUSTOM") if e["name"] == "source"]
    url = "https://www.britannica.com/place/Mount-Columbia?utm_source=openai"
    assert sources == [
        {
            "sourceType": "url",
            "sourceId": url,
            "url": url,
            "title": "Mount Columbia | mountain, Alberta, Canada | Britannica",
        }
    ]
    files = decoded(cfile("file-search-call-file-citations.sse"))
    docs = [e["value"] for e in of_type(files, "CUSTOM") if e["name"] == "source"]
    assert docs == [
        {
            "sourceType": "document",
            "sourceId": "file-9RhPAs9YqVajpGXRfcgavJ",
            "title": "tmp8l5_2pzy.txt",
            "filename": "tmp8l5_2pzy.txt",
            "mediaType": "text/plain",
            "fileId": "file-9RhPAs9YqVajpGXRfcgavJ",
        }
    ]


def test_mcp_approval_request_is_a_tool_call_and_an_interrupt() -> None:
    path = cfile("mcp-approval-request.jsonl")
    evs = decoded(path)
    request = next(
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "mcp_approval_request"
    )
    start = [e for e in of_type(evs, "TOOL_CALL_START") if e["toolCallId"] == request["id"]]
    assert start[0]["toolCallName"] == "mcp.create_short_url"
    args = "".join(
        e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS") if e["toolCallId"] == request["id"]
    )
    assert orjson.loads(args) == orjson.loads(request["arguments"])
    outcome = evs[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    assert interrupt["id"] == interrupt["toolCallId"] == request["id"]
    assert interrupt["reason"] == "tool_approval"  # ARCHITECTURE.md convention
    assert interrupt["metadata"]["serverLabel"] == "zip1"


def test_partial_image_is_a_preliminary_output_of_its_call() -> None:
    path = cfile("image-generation-call.jsonl")
    upstream = next(
        p
        for p in upstream_payloads(path)
        if p["type"].endswith("image_generation_call.partial_image")
    )
    [partial] = [
        e for e in of_type(decoded(path), "CUSTOM") if e["name"] == "tool-output-preliminary"
    ]
    assert partial["value"]["toolCallId"] == upstream["item_id"]
    assert partial["value"]["preliminary"] is True
    assert partial["value"]["output"]["result"] == upstream["partial_image_b64"]
    assert partial["value"]["output"]["partial_image_index"] == 0


def test_failed_hosted_call_result_is_flagged_as_error() -> None:
    item = {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "ask",
        "server_label": "wiki",
        "arguments": "{}",
        "status": "failed",
        "error": {"type": "mcp_tool_error", "message": "boom"},
        "output": None,
    }
    body = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress", "error": None},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        completed(),
    )
    [result] = of_type(wire(decode_all(NAME, body)), "TOOL_CALL_RESULT")
    assert result["metadata"] == {"isError": True}
    assert orjson.loads(result["content"]) == item


def test_unknown_items_are_kept_and_unknown_client_calls_are_tool_calls() -> None:
    shell = {
        "type": "shell_call",
        "id": "sh_1",
        "call_id": "call_shell_1",
        "status": "completed",
        "action": {"commands": ["ls"]},
    }
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"}
    body = sse(
        created(),
        {"type": "response.output_item.done", "output_index": 0, "item": shell},
        {"type": "response.output_item.done", "output_index": 1, "item": compaction},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    start = of_type(evs, "TOOL_CALL_START")[0]
    assert (start["toolCallId"], start["toolCallName"]) == ("call_shell_1", "shell")
    args = "".join(e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS"))
    assert orjson.loads(args) == {"action": {"commands": ["ls"]}}
    custom = [e for e in of_type(evs, "CUSTOM") if e["name"] == "openai.output_item"]
    assert custom[0]["value"] == {"outputIndex": 1, "item": compaction}
    assert evs[-1]["metadata"]["finishReason"] == "tool-calls"


def test_events_without_output_index_are_keyed_by_item_id() -> None:
    item = {**FUNCTION_CALL_ITEM}
    body = sse(
        created(),
        {"type": "response.output_item.added", "item": item},
        {"type": "response.function_call_arguments.delta", "item_id": item["id"], "delta": '{"a":'},
        {"type": "response.function_call_arguments.delta", "item_id": item["id"], "delta": "1}"},
        {"type": "response.output_item.done", "item": {**item, "arguments": '{"a":1}'}},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert "".join(e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS")) == '{"a":1}'


def test_item_events_missing_output_index_join_the_item_announced_with_one() -> None:
    where = {"item_id": "msg_1", "content_index": 0}
    body = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {"type": "response.output_text.delta", **where, "delta": "Hi"},
        {"type": "response.output_text.done", **where, "text": "Hi"},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": [{"type": "output_text", "text": "Hi"}]},
        },
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == ["Hi"]


def test_openrouter_reported_cost_is_the_run_cost() -> None:
    evs = decoded(cfile("compat-openrouter-raw-cot-reasoning-text.sse"))
    meta = evs[-1]["metadata"]
    assert (meta["cost"], meta["currency"], meta["costSource"]) == (1.13e-05, "USD", "provider")


def test_openrouter_byok_cost_without_upstream_cost_is_partial() -> None:
    usage = {
        "input_tokens": 1000,
        "output_tokens": 100,
        "total_tokens": 1100,
        "cost": 0.0001,
        "is_byok": True,
        "cost_details": {"upstream_inference_cost": None},
    }
    meta = wire(decode_all(NAME, sse(created(), completed(usage))))[-1]["metadata"]
    assert meta["costSource"] == "catalog_fallback_incomplete_provider_cost"
    assert meta["providerCost"] == 0.0001
    # gpt-4o list price (USD per 1M tokens): 2.50 input, 10.00 output.
    assert meta["cost"] == pytest.approx((1000 * 2.50 + 100 * 10.00) / 1e6)


# -- real clients ---------------------------------------------------------------------------
def test_synthetic_runs_are_accepted_by_the_real_clients() -> None:
    require_harness()
    incomplete = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Once upon a",
        },
        {
            "type": "response.incomplete",
            "response": response("incomplete", incomplete_details={"reason": "max_output_tokens"}),
        },
    )
    bodies = {"refusal": refusal_body(), "incomplete": incomplete}
    jobs = []
    for key, body in bodies.items():
        events = decode_all(NAME, body)
        agui = b"".join(AguiEncoder().encode(e) for e in events)
        encoder = AiSdkEncoder()
        ai = b"".join(encoder.encode(e) for e in events) + encoder.close()
        jobs.append((f"{key}|agui", "agui", agui))
        jobs += [(f"{key}|{client}", client, ai) for client in AI_SDK_CLIENTS]
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], (job_id, result["error"])
    for client in AI_SDK_CLIENTS:
        refusal = results[f"refusal|{client}"]
        assert refusal["finishReason"] == "content-filter"
        parts = [p for m in refusal["messages"] for p in m["parts"] if p["type"] == "text"]
        assert "".join(p["text"] for p in parts) == REFUSAL
        assert results[f"incomplete|{client}"]["finishReason"] == "length"
    agui_texts = [m.get("content") for m in results["refusal|agui"]["messages"]]
    assert REFUSAL in agui_texts
