"""Endings (issue 11 kind 3): one terminal reason per turn, whatever the upstream said.

Expected values come from the providers' documentation, written out here independently of
``agui_codecs.endings``:

* OpenAI Chat Completions reference, ``choices[].finish_reason``: ``stop``, ``length``,
  ``tool_calls``, ``content_filter``, ``function_call`` (deprecated); compatible hosts send
  others (``eos``) or none at all before ``data: [DONE]``. The AI SDK's own OpenAI-compatible
  provider maps ``stop`` -> stop, ``length`` -> length, ``content_filter`` -> content-filter,
  ``function_call`` / ``tool_calls`` -> tool-calls, anything else -> other
  (``@ai-sdk/openai-compatible`` ``map-openai-compatible-finish-reason.ts``).
* A turn that produced tool calls is a tool turn, even when a host marks it ``stop`` (Ollama,
  some vLLM builds) or sends a later ``stop`` after ``tool_calls``; ``[DONE]`` without a
  ``finish_reason`` is a normal end; EOF before either is truncation (RUN_ERROR
  ``UPSTREAM_TRUNCATED``), and a call cut there ends with ``metadata.incomplete``.

The real clients (``@ag-ui/client`` 1.0.0 and ``ai`` 7 / 6 / 5 through ``tests/harness``) must
accept the AG-UI and AI SDK wires of these endings, and an aborted run reaches ``useChat`` as
an ``abort`` chunk, not as an error.
"""

from __future__ import annotations

from typing import Any

import orjson
from ag_ui.core import (
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from decoder_checks import assert_legal_run, decode_all, decode_split, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import AI_SDK_CLIENTS, replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder

OPENAI_DOCUMENTED = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}
REASONS = [None, "stop", "length", "tool_calls", "function_call", "content_filter", "eos"]


def _sse(chunk: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [choice],
    }


def _stream(
    text: str, calls: int, reason: str | None, later_stop: bool, usage: bool, done: bool
) -> bytes:
    body = _sse(_chunk({"role": "assistant", "content": ""}))
    if text:
        body += _sse(_chunk({"content": text}))
    for i in range(calls):
        call = {"index": i, "id": f"call_{i}", "type": "function"}
        body += _sse(_chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": ""}}]}))
        body += _sse(_chunk({"tool_calls": [{"index": i, "function": {"arguments": '{"a":'}}]}))
        body += _sse(_chunk({"tool_calls": [{"index": i, "function": {"arguments": f"{i}}}"}}]}))
    if reason is not None:
        body += _sse(_chunk({}, reason))
    if later_stop:
        body += _sse(_chunk({}, "stop"))
    if usage:
        counts = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
        body += _sse({"id": "chatcmpl-1", "choices": [], "usage": counts})
    if done:
        body += b"data: [DONE]\n\n"
    return body


def _expected(calls: int, reason: str | None, later_stop: bool) -> tuple[str, str | None]:
    """(finishReason, providerFinishReason) by the documented rules."""
    # a later ``stop`` adds nothing to an earlier reason: the first other than stop decides
    received = reason if reason not in (None, "stop") else ("stop" if later_stop else reason)
    canonical = OPENAI_DOCUMENTED.get(received or "", "other")
    if calls and canonical in ("stop", "other"):
        canonical = "tool-calls"
    return canonical, received


endings = st.tuples(
    st.text(max_size=5),
    st.integers(0, 2),
    st.sampled_from(REASONS),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ending=endings, cuts=st.lists(st.integers(1, 4000), max_size=8))
def test_every_openai_chat_ending_gives_one_reconciled_terminal_reason(
    ending: tuple[str, int, str | None, bool, bool, bool], cuts: list[int]
) -> None:
    text, calls, reason, later_stop, usage, done = ending
    body = _stream(text, calls, reason, later_stop, usage, done)
    events = wire(decode_split("openai-chat", body, cuts))
    assert_legal_run(events)
    terminal = events[-1]
    if reason is None and not later_stop and not done:
        assert terminal["type"] == "RUN_ERROR"
        assert terminal["code"] == "UPSTREAM_TRUNCATED"
        return
    assert terminal["type"] == "RUN_FINISHED"
    finish, provider = _expected(calls, reason, later_stop)
    assert terminal["metadata"]["finishReason"] == finish
    assert terminal["metadata"].get("providerFinishReason") == provider
    pending = terminal.get("outcome", {}).get("pendingToolCallIds")
    if finish == "tool-calls":
        assert (pending or []) == [f"call_{i}" for i in range(calls)]
    else:
        assert pending is None
    ends = [e for e in events if e["type"] == "TOOL_CALL_END"]
    cut = finish == "length"
    assert [bool(e.get("metadata", {}).get("incomplete")) for e in ends] == [cut] * len(ends)


@settings(max_examples=100, deadline=None)
@given(ending=endings, data=st.data())
def test_eof_at_any_point_ends_legally_and_cut_calls_are_incomplete(
    ending: tuple[str, int, str | None, bool, bool, bool], data: st.DataObject
) -> None:
    text, calls, reason, later_stop, usage, done = ending
    body = _stream(text, calls, reason or "tool_calls", later_stop, usage, done)
    at = data.draw(st.integers(0, len(body)))
    events = wire(decode_all("openai-chat", body[:at]))
    cut_short = {"agui/hygiene/tool-args-not-json", "agui/hygiene/tool-call-without-args"}
    assert_legal_run(events, allowed_warnings=cut_short)
    assert sum(e["type"] in ("RUN_FINISHED", "RUN_ERROR") for e in events) == 1
    terminal = events[-1]
    if terminal["type"] == "RUN_ERROR":
        assert terminal["code"] in ("UPSTREAM_TRUNCATED", "UPSTREAM_EMPTY", "UPSTREAM_MALFORMED")
        for end in (e for e in events if e["type"] == "TOOL_CALL_END"):
            assert end.get("metadata") == {"incomplete": True}


def _agui_ending(tail: list[Any]) -> list[Any]:
    return [
        RunStartedEvent(thread_id="t", run_id="r"),
        TextMessageStartEvent(message_id="m", role="assistant"),
        TextMessageContentEvent(message_id="m", delta="hi"),
        TextMessageEndEvent(message_id="m"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m"),
        ToolCallArgsEvent(tool_call_id="c1", delta='{"a":'),
        *tail,
    ]


def test_agui_decoder_closes_a_call_cut_by_eof_as_incomplete() -> None:
    body = b"".join(AguiEncoder().encode(e) for e in _agui_ending([]))
    events = wire(decode_all("agui", body))
    ends = [e for e in events if e["type"] == "TOOL_CALL_END"]
    assert ends == [{"type": "TOOL_CALL_END", "toolCallId": "c1", "metadata": {"incomplete": True}}]
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "UPSTREAM_TRUNCATED"


def _ai_sdk(events: list[Any], major: int | None = None) -> bytes:
    encoder = AiSdkEncoder(ai_sdk_major=major)
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def _chunks(body: bytes) -> list[dict[str, Any]]:
    blocks = body.decode().split("\n\n")
    return [orjson.loads(b[6:]) for b in blocks if b.startswith("data: ") and b[6:] != "[DONE]"]


CANCELLED = RunFinishedEvent(
    thread_id="t", run_id="r", outcome=RunFinishedCancelledOutcome(), metadata={"abortReason": "x"}
)
CANCELED_ERROR = RunErrorEvent(message="run canceled by user", code="RUN_CANCELED")


def test_aborted_runs_are_abort_chunks_that_every_ai_sdk_major_takes_as_an_abort() -> None:
    require_harness()
    jobs = []
    # A legal AG-UI run closes its calls before RUN_FINISHED (the store guard does so for a
    # cancelled run: a cut call's END carries metadata.incomplete); RUN_ERROR may end a run
    # with the call still open. Either way the cut call is a ``tool-input-error``.
    cut_end = ToolCallEndEvent(tool_call_id="c1", metadata={"incomplete": True})
    for name, tail in (("cancelled", [cut_end, CANCELLED]), ("canceled-error", [CANCELED_ERROR])):
        for client in AI_SDK_CLIENTS:
            major = int(client[-1])
            body = _ai_sdk(_agui_ending(tail), major)
            kinds = [c["type"] for c in _chunks(body)]
            assert kinds[-3:] == ["tool-input-error", "abort", "finish"], kinds
            assert "error" not in kinds and "finish-step" not in kinds
            assert _chunks(body)[-1]["finishReason"] == "other"
            abort = _chunks(body)[-2]
            assert ("reason" in abort) == (major >= 7)
            jobs.append((f"{name}@{client}", client, body))
            if major == 5:
                jobs.append((f"{name}@portable", client, _ai_sdk(_agui_ending(tail))))
    results = replay(jobs)
    for job, result in results.items():
        assert result["accepted"], (job, result["error"])
        # ``abort`` is no error for the chat (``streamError`` none, status ready); ``onFinish``
        # ``isAbort`` is only set by the client's own ``stop()`` (chat.ts)
        assert result["streamError"] is None, (job, result)
        assert result["finishReason"] == "other", (job, result)
        assert result["status"] == "ready", (job, result)


def test_reconciled_endings_are_accepted_by_the_real_clients() -> None:
    require_harness()
    jobs = []
    for reason in ("stop", None):
        body = _stream("hi", 1, reason, reason == "stop", True, True)
        events = decode_all("openai-chat", body)
        agui = b"".join(AguiEncoder().encode(e) for e in events)
        jobs.append((f"agui-{reason}", "agui", agui))
        for client in AI_SDK_CLIENTS:
            jobs.append((f"{client}-{reason}", client, _ai_sdk(events)))
    results = replay(jobs)
    for job, result in results.items():
        assert result["accepted"], (job, result["error"])
        if job.startswith("ai-"):
            assert result["finishReason"] == "tool-calls", (job, result)
            parts = result["messages"][-1]["parts"]
            calls = [p for p in parts if p.get("toolCallId") == "call_0"]
            assert (
                calls and calls[0]["state"] == "input-available" and calls[0]["input"] == {"a": 0}
            )
        else:
            tool_calls = result["messages"][-1].get("toolCalls") or []
            assert [c["id"] for c in tool_calls] == ["call_0"]
