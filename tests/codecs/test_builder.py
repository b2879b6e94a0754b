"""``RunBuilder`` (``agui_codecs.builder``) tested directly: the AG-UI state machine the
decoders share.

Expected sequences follow the AG-UI 1.0 rules ``@ag-ui/client`` 1.0.0 enforces (checked by the
conformance kit, ``decoder_checks.assert_legal_run``) and the conventions of the builder's
module docstring (ARCHITECTURE.md "Conventions carried in AG-UI events"). The last test drives
the builder with random call sequences: whatever a decoder calls, in any order, the run stays
legal and ends with one terminal event.
"""

from __future__ import annotations

from typing import Any

import pytest
from decoder_checks import assert_legal_run, wire
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agui_codecs.builder import RunBuilder
from agui_codecs.errors import LocalProtocolError


def types(builder: RunBuilder) -> list[str]:
    return [e["type"] for e in wire(builder.drain())]


def test_run_started_comes_once_first_with_protocol_version_and_derived_ids() -> None:
    b = RunBuilder(provider="p")
    b.start(upstream_id="up1", model="m1")
    b.start(upstream_id="other", model="m2")
    [started] = wire(b.drain())
    assert started == {
        "type": "RUN_STARTED",
        "threadId": "thread_up1",
        "runId": "run_up1",
        "protocolVersion": "1.0",
    }
    assert b.model == "m1" and b.message_id == "up1"


def test_given_ids_win_and_start_metadata_is_carried() -> None:
    b = RunBuilder(thread_id="t", run_id="r", provider="p")
    b.start_metadata = {"messageId": "m-1"}
    b.start(upstream_id="up")
    assert wire(b.drain()) == [
        {
            "type": "RUN_STARTED",
            "threadId": "t",
            "runId": "r",
            "protocolVersion": "1.0",
            "metadata": {"messageId": "m-1"},
        }
    ]


@pytest.mark.parametrize(("field", "value"), [("upstream_id", 7), ("model", ["m"])])
def test_start_refuses_a_non_string_id_before_emitting_anything(field: str, value: Any) -> None:
    b = RunBuilder(provider="p")
    with pytest.raises(LocalProtocolError):
        b.start(**{field: value})
    assert not b.started and b.drain() == []


def test_any_method_starts_the_run_first() -> None:
    b = RunBuilder(provider="p")
    b.text("hi")
    assert types(b) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]


def test_parts_open_lazily_per_key_and_ids_are_deterministic() -> None:
    b = RunBuilder(run_id="r", provider="p")
    a = b.text("a", key=0)
    c = b.text("c", key=1)
    assert b.text("a2", key=0) == a and a != c
    b.end_text(0)
    b.end_text(0)  # no-op
    assert b.text_id(0) is None and b.text_id(1) == c
    b.finish(finish_reason="stop")
    evs = wire(b.drain())
    assert [e.get("messageId") for e in evs if e["type"] == "TEXT_MESSAGE_START"] == [
        "msg_r",
        "msg_r-1",
    ]
    assert_legal_run(evs)


def test_text_closes_open_reasoning_and_a_tool_call_closes_both_and_names_its_parent() -> None:
    b = RunBuilder(run_id="r", provider="p")
    b.reasoning("think")
    b.text("answer")
    call = b.tool_start("k", "get_weather")
    b.tool_args("k", '{"city":"Paris"}')
    b.finish(finish_reason="tool-calls")
    evs = wire(b.drain())
    assert [e["type"] for e in evs] == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    start = next(e for e in evs if e["type"] == "TOOL_CALL_START")
    assert start["toolCallId"] == call == "msg_r-call"
    assert start["parentMessageId"] == "msg_r"
    assert evs[-1]["outcome"] == {"type": "success", "pendingToolCallIds": [call]}
    assert evs[-1]["metadata"] == {"finishReason": "tool-calls", "provider": "p"}
    assert_legal_run(evs)


def test_provider_executed_calls_are_flagged_and_not_pending_and_results_answer_calls() -> None:
    b = RunBuilder(provider="p")
    b.tool_start("s", "web_search", "srv-1", provider_executed=True)
    b.tool_args("s", "{}")
    b.tool_start("c", "f", "cli-1")  # closes the server call first
    b.tool_args("c", "{}")
    b.end_tool("c")
    assert b.pending_tool_call_ids == ("cli-1",)
    b.tool_result("cli-1", "42", metadata={"isError": False})
    assert b.pending_tool_call_ids == ()
    b.finish(finish_reason="tool-calls")
    evs = wire(b.drain())
    starts = [e for e in evs if e["type"] == "TOOL_CALL_START"]
    assert starts[0]["metadata"] == {"providerExecuted": True} and "metadata" not in starts[1]
    assert "pendingToolCallIds" not in evs[-1]["outcome"]
    result = next(e for e in evs if e["type"] == "TOOL_CALL_RESULT")
    assert (result["messageId"], result["role"]) == ("cli-1-result", "tool")
    assert_legal_run(evs)


def test_fail_closes_calls_as_incomplete_then_everything_then_run_error() -> None:
    b = RunBuilder(provider="p")
    b.step_start("step-1")
    b.text("a")
    b.tool_start("k", "f", "c1")
    b.tool_args("k", '{"x": ')
    b.fail("UPSTREAM_TRUNCATED", "cut")
    evs = wire(b.drain())
    assert [e["type"] for e in evs][-3:] == ["TOOL_CALL_END", "STEP_FINISHED", "RUN_ERROR"]
    assert evs[-3]["metadata"] == {"incomplete": True}
    assert evs[-1] == {
        "type": "RUN_ERROR",
        "message": "cut",
        "code": "UPSTREAM_TRUNCATED",
        "metadata": {"provider": "p"},
    }
    assert b.ended and b.error_code == "UPSTREAM_TRUNCATED"
    assert_legal_run(evs, allowed_warnings={"agui/hygiene/tool-args-not-json"})


def test_nothing_is_emitted_after_the_terminal_event() -> None:
    b = RunBuilder(provider="p")
    b.finish(finish_reason="stop")
    b.drain()
    b.finish(finish_reason="stop")
    b.fail("X", "y")
    b.abort("X", "y")
    assert b.drain() == []


def test_steps_restart_by_name_and_close_newest_first() -> None:
    b = RunBuilder(provider="p")
    b.step_start("a")
    b.step_start("b")
    b.step_start("a")  # a step of that name still active is finished first
    assert b.active_steps == ("b", "a")
    b.step_end("zzz")  # unknown: no-op
    b.finish(finish_reason="stop")
    evs = wire(b.drain())
    steps = [(e["type"], e["stepName"]) for e in evs if "stepName" in e]
    assert steps == [
        ("STEP_STARTED", "a"),
        ("STEP_STARTED", "b"),
        ("STEP_FINISHED", "a"),
        ("STEP_STARTED", "a"),
        ("STEP_FINISHED", "a"),
        ("STEP_FINISHED", "b"),
    ]
    assert_legal_run(evs)


def test_next_run_needs_an_ended_run_then_keeps_the_thread_and_numbers_the_run() -> None:
    b = RunBuilder(provider="p")
    b.start(upstream_id="up")
    with pytest.raises(LocalProtocolError):
        b.next_run()
    b.finish(finish_reason="stop")
    b.next_run()
    b.start(upstream_id="up2")
    b.finish(finish_reason="stop")
    evs = wire(b.drain())
    starts = [e for e in evs if e["type"] == "RUN_STARTED"]
    assert [(s["threadId"], s["runId"]) for s in starts] == [
        ("thread_up", "run_up"),
        ("thread_up", "run_up-2"),
    ]
    assert_legal_run(evs)


def test_usage_drops_counts_that_are_not_non_negative_integers() -> None:
    b = RunBuilder(provider="p")
    b.start(model="m")
    usage = b.usage(input_tokens=3, output_tokens=-1, total_tokens=True, reasoning_tokens=2**60)
    assert usage is not None and usage.input_tokens == 3
    assert usage.output_tokens is None and usage.total_tokens is None
    assert (usage.provider, usage.model) == ("p", "m")
    assert b.usage(input_tokens=None) is None


# -- all or nothing -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "misuse",
    [
        lambda b: b.tool_start("k", 42, "c1"),  # a name that is not a string
        lambda b: b.tool_start("k", "f", 7),  # an id that is not a string
        lambda b: b.text("x", metadata="not a dict"),
        lambda b: b.text(["not", "text"]),
        lambda b: b.reasoning(3),
        lambda b: b.reasoning_encrypted(None),
        lambda b: b.step_start(None),
        lambda b: b.tool_result("c", {"not": "a string"}),
        lambda b: b.finish(finish_reason="stop", outcome="not an outcome"),
    ],
)
def test_a_call_with_bad_arguments_raises_and_leaves_nothing_half_open(misuse: Any) -> None:
    b = RunBuilder(provider="p")
    b.text("before")
    b.tool_start("open", "f", "c0")
    with pytest.raises((ValidationError, LocalProtocolError)):
        misuse(b)
    assert not b.ended
    b.fail("INTERNAL_DECODER_ERROR", "internal decoder error")
    evs = wire(b.drain())
    assert [e["type"] for e in evs][-2:] == ["TOOL_CALL_END", "RUN_ERROR"]
    assert [e["type"] for e in evs].count("TOOL_CALL_START") == 1
    assert_legal_run(evs, allowed_warnings={"agui/hygiene/tool-call-without-args"})


def test_abort_ends_the_run_bare_as_a_last_resort() -> None:
    b = RunBuilder(provider="p")
    b.abort("INTERNAL_DECODER_ERROR", "internal decoder error")
    assert types(b) == ["RUN_STARTED", "RUN_ERROR"]
    assert b.ended


# -- any call sequence ----------------------------------------------------------------------------
KEYS = st.sampled_from(["a", "b", 0])
DELTAS = st.sampled_from(["", "x", "{}", '{"a":1}'])
Op = tuple[str, Any, Any]
OPS: st.SearchStrategy[Op] = st.one_of(
    st.tuples(st.sampled_from(["text", "reasoning", "reasoning_encrypted", "tool_args"]), KEYS, DELTAS),
    st.tuples(st.sampled_from(["end_text", "end_reasoning", "end_tool", "tool_start"]), KEYS, st.booleans()),
    st.tuples(st.sampled_from(["step_start", "step_end"]), st.sampled_from(["s1", "s2"]), st.none()),
    st.tuples(st.sampled_from(["source", "close_all", "next_run", "tool_result"]), KEYS, st.none()),
)  # fmt: skip


def apply(b: RunBuilder, index: int, op: Op) -> None:
    """One decoder-like call; provider ids are unique per call, as a provider's are."""
    name, key, arg = op
    if name == "next_run":
        if b.ended:
            b.next_run()
        return
    if b.ended:
        return  # a decoder stops calling once the run ended (the base ignores later input)
    if name in ("text", "reasoning"):
        getattr(b, name)(arg, key=key)
    elif name == "reasoning_encrypted":
        b.reasoning_encrypted(arg or "sig", key=key)
    elif name == "tool_args":
        b.tool_args(key, arg)
    elif name == "tool_start":
        b.tool_start(key, "f", f"call-{index}" if arg else None, provider_executed=index % 3 == 0)
    elif name == "tool_result":
        if b.pending_tool_call_ids:
            b.tool_result(b.pending_tool_call_ids[0], "ok")
    elif name in ("end_text", "end_reasoning", "end_tool"):
        getattr(b, name)(key)
    elif name == "step_start":
        b.step_start(key)
    elif name == "step_end":
        b.step_end()
    elif name == "source":
        b.source({"sourceType": "url", "sourceId": f"u{index}", "url": f"https://x/{index}"})
    else:
        b.close_all()


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(OPS, max_size=30), end=st.sampled_from(["finish", "fail", "abort"]))
def test_any_call_sequence_gives_a_legal_run_that_ends_once(ops: list[Op], end: str) -> None:
    b = RunBuilder(provider="p")
    for index, op in enumerate(ops):
        apply(b, index, op)
    if end == "finish":
        b.finish(finish_reason="stop")
    elif end == "fail":
        b.fail("UPSTREAM_TRUNCATED", "cut")
    else:
        b.abort("INTERNAL_DECODER_ERROR", "internal decoder error")
    evs = wire(b.drain())
    assert evs[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    caller_choices = {
        "agui/hygiene/tool-call-without-args",  # the caller gave a call no ARGS
        "agui/hygiene/tool-args-not-json",  # the caller's ARGS, or ones cut by fail()
        "agui/hygiene/open-at-run-error",  # abort() closes nothing, by definition
    }
    assert_legal_run(evs, allowed_warnings=caller_choices)
