"""AI SDK encoder: an illegal AG-UI event is one precise error in strict mode, and a counted
repair that loses nothing outside it (issue 10: producers consult the transition tables).

Hypothesis puts one lifecycle misuse (an END, CONTENT or ARGS of something never opened) at a
random place of a legal run. The expected verdict comes from the real ``@ag-ui/client`` 1.0.0
(``tests/harness``): it rejects that AG-UI stream, naming the event type. Then

* in strict mode (``AGUI_CODECS_STRICT=1``, the suite's default) the AI SDK encoder raises
  ``IllegalEventError`` at that event, with the fault the tables name
  (``agui_codecs.core.lifecycle_fault``) and the id;
* outside strict mode it encodes the run anyway, counts the repair under that fault, and the real
  ``ai`` 7, 6 and 5 clients accept the output with every text delta and every tool call's
  arguments in the message (content of an unopened part: the part is opened first).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import (
    Event,
    ReasoningMessageEndEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import AI_SDK_CLIENTS, replay, require_harness

from agui_codecs.core import IllegalEventError, lifecycle_fault, strict
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder

SETTINGS = settings(
    deadline=None,
    max_examples=3,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BASE: list[Event] = [
    RunStartedEvent(thread_id="t", run_id="r"),
    TextMessageStartEvent(message_id="m1", role="assistant"),
    TextMessageContentEvent(message_id="m1", delta="Hello "),
    TextMessageContentEvent(message_id="m1", delta="world"),
    TextMessageEndEvent(message_id="m1"),
    ToolCallStartEvent(tool_call_id="c1", tool_call_name="search"),
    ToolCallArgsEvent(tool_call_id="c1", delta='{"q":'),
    ToolCallArgsEvent(tool_call_id="c1", delta='"x"}'),
    ToolCallEndEvent(tool_call_id="c1"),
    ToolCallResultEvent(message_id="r1", tool_call_id="c1", content='{"hits":1}'),
    RunFinishedEvent(thread_id="t", run_id="r"),
]
MISUSES: list[Event] = [
    TextMessageEndEvent(message_id="ghost"),
    TextMessageContentEvent(message_id="ghost", delta="ghost text"),
    ToolCallEndEvent(tool_call_id="ghost-call"),
    ToolCallArgsEvent(tool_call_id="ghost-call", delta='{"g":1}'),
    ReasoningMessageEndEvent(message_id="ghost-thought"),
]
"""One misuse each; fresh ids, so each is illegal wherever it is put."""


@contextlib.contextmanager
def lenient() -> Iterator[None]:
    before = strict()
    strict(False)
    try:
        yield
    finally:
        strict(before)


@st.composite
def misused_runs(draw: st.DrawFn) -> tuple[list[Event], int]:
    """BASE with one misuse inserted after RUN_STARTED and before RUN_FINISHED; its index."""
    at = draw(st.integers(1, len(BASE) - 1))
    return [*BASE[:at], draw(st.sampled_from(MISUSES)), *BASE[at:]], at


def encode(encoder: AiSdkEncoder | AguiEncoder, events: list[Event]) -> bytes:
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def texts(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


@SETTINGS
@given(runs=st.lists(misused_runs(), min_size=6, max_size=10))
def test_a_misuse_is_the_tables_fault_in_strict_mode_and_a_lossless_repair_outside(
    runs: list[tuple[list[Event], int]],
) -> None:
    require_harness()
    lenient_bodies: list[bytes] = []
    jobs = []
    for i, (events, at) in enumerate(runs):
        misuse = events[at]
        kind = misuse.type.value
        ids = (getattr(misuse, "message_id", None) or misuse.tool_call_id,)  # type: ignore[attr-defined]
        encoder = AiSdkEncoder()  # strict: refuses exactly the misuse
        for event in events[:at]:
            encoder.encode(event)
        with pytest.raises(IllegalEventError) as caught:
            encoder.encode(misuse)
        assert (caught.value.fault, caught.value.event_type) == (lifecycle_fault(kind), kind)
        assert caught.value.ids == ids
        with lenient():
            agui_body = encode(AguiEncoder(), events)
            repairing = AiSdkEncoder()
            lenient_bodies.append(encode(repairing, events))
        assert repairing.repairs.counts == {lifecycle_fault(kind).value: 1}
        jobs.append((f"{i}@agui", "agui", agui_body))
        jobs += [(f"{i}@{c}", c, lenient_bodies[-1]) for c in AI_SDK_CLIENTS]
    results = replay(jobs)
    for i, (events, at) in enumerate(runs):
        kind = events[at].type.value
        verdict = results[f"{i}@agui"]
        assert not verdict["accepted"] and kind in str(verdict["error"]), verdict  # the client
        for client in AI_SDK_CLIENTS:
            result = results[f"{i}@{client}"]
            assert result["accepted"], (client, result["error"])
            (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
            sent = texts(message)
            deltas = [e.delta for e in events if isinstance(e, TextMessageContentEvent)]
            assert all(d in sent for d in deltas), (client, sent)
            calls = {p["toolCallId"]: p for p in message["parts"] if "toolCallId" in p}
            assert calls["c1"]["input"] == {"q": "x"}
            assert calls["c1"]["output"] == {"hits": 1}
            if isinstance(events[at], ToolCallArgsEvent):  # args of an unopened call: opened
                assert calls["ghost-call"]["input"] == json.loads(events[at].delta)
