"""openai-responses decoder (issue 5): each fault pinned by name, then the terminal events.

Expected values come from the upstream bytes themselves (ids, arguments read straight from the
events), from the AG-UI 1.0 rules (``docs/protocols.md`` §2) or from the Responses
streaming reference (``incomplete_details``, ``response.failed``, ``error``). The recorded corpus
and the real clients are in ``test_openai_responses_corpus.py``, the output items (tools,
reasoning, citations, MCP approvals) in ``test_openai_responses_items.py``.
"""

from __future__ import annotations

import pytest
from decoder_checks import assert_legal_run, decode_all, wire
from openai_responses_fixtures import (
    FUNCTION_CALL_ITEM,
    MESSAGE_ITEM,
    NAME,
    REFUSAL,
    ai_sdk_chunks,
    cfile,
    completed,
    created,
    decoded,
    of_type,
    refusal_body,
    response,
    sse,
)

from agui_codecs import get_decoder


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


def test_refusal_is_surfaced_on_both_the_agui_and_the_ai_sdk_output() -> None:
    events = decode_all(NAME, refusal_body())
    evs = wire(events)
    assert_legal_run(events)
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
    assert_legal_run(decode_all(NAME, body))
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
    assert_legal_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_new_response_while_previous_is_open_ends_it_as_truncated_then_starts_a_run() -> None:
    body = sse(created("resp_a"), created("resp_b"), completed(rid="resp_b"))
    events = decode_all(NAME, body)
    assert_legal_run(events)
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
    assert_legal_run(events)
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
