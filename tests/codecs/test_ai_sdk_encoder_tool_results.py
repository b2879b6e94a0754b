"""AI SDK encoder: a tool result is held until its call's input is complete (issue 11, kind 2).

AG-UI lets a TOOL_CALL_RESULT come at any time after its TOOL_CALL_START (``@ag-ui/client``
1.0.0 ``src/verify/verify.ts`` has no rule on it), e.g. while the call's arguments still stream
(parallel calls, a runtime answering early). The AI SDK client attaches ``tool-output-available``
to the call's tool part (``ai`` 7.0.173 ``src/ui/process-ui-message-stream.ts``), and every
``tool-input-delta`` after the input was closed is an error there (no partial tool call). So
the encoder holds the result and sends it right after the call's ``tool-input-available``:
never before, never dropped, and the arguments after the result are all kept.

Hypothesis draws interleavings of parallel calls' START / ARGS / END / RESULT (with text between
them); each stream must hold every argument byte and every result exactly once, in that order,
and be accepted by the real ``ai`` 7, 6 and 5 clients (``tests/harness``), whose tool parts must
end ``output-available`` with the call's input and output.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from ag_ui.core import (
    Event,
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

from agui_codecs.encoders.ai_sdk import AiSdkEncoder

SETTINGS = settings(
    deadline=None,
    max_examples=4,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)


@st.composite
def call_events(draw: st.DrawFn, index: int) -> list[Event]:
    """One call's events in its own order: START, ARGS..., END, with its RESULT anywhere after
    START (before END: the result comes while the arguments still stream)."""
    call_id = f"call-{index}"
    args = orjson.dumps(draw(st.dictionaries(TEXT, TEXT, max_size=3))).decode()
    cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=4)))
    pieces = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
    events: list[Event] = [ToolCallStartEvent(tool_call_id=call_id, tool_call_name=f"tool{index}")]
    events += [ToolCallArgsEvent(tool_call_id=call_id, delta=p) for p in pieces if p]
    events.append(ToolCallEndEvent(tool_call_id=call_id))
    result = ToolCallResultEvent(
        message_id=f"result-{index}",
        tool_call_id=call_id,
        content=json.dumps({"call": index, "value": draw(TEXT)}),
    )
    events.insert(draw(st.integers(1, len(events))), result)
    return events


@st.composite
def interleavings(draw: st.DrawFn) -> list[Event]:
    """A run with 1-4 parallel calls (and a text message) interleaved at random."""
    lanes = [draw(call_events(i)) for i in range(draw(st.integers(1, 4)))]
    lanes.append(
        [
            TextMessageStartEvent(message_id="text-1", role="assistant"),
            TextMessageContentEvent(message_id="text-1", delta="calling"),
            TextMessageEndEvent(message_id="text-1"),
        ]
    )
    order = draw(st.permutations([i for i, lane in enumerate(lanes) for _ in lane]))
    positions = [0] * len(lanes)
    body: list[Event] = []
    for lane in order:
        body.append(lanes[lane][positions[lane]])
        positions[lane] += 1
    return [
        RunStartedEvent(thread_id="t", run_id="r"),
        *body,
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]


def encode(events: list[Event]) -> bytes:
    encoder = AiSdkEncoder()
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def chunks(body: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(block[6:])
        for block in body.decode().split("\n\n")
        if block.startswith("data: ") and block[6:] != "[DONE]"
    ]


def expected_calls(events: list[Event]) -> dict[str, tuple[str, Any, bool]]:
    """toolCallId -> (its arguments, its output, its result came before its END)."""
    args: dict[str, list[str]] = {}
    results: dict[str, Any] = {}
    early: dict[str, bool] = {}
    for event in events:
        if isinstance(event, ToolCallStartEvent):
            args[event.tool_call_id] = []
        elif isinstance(event, ToolCallArgsEvent):
            args[event.tool_call_id].append(event.delta)
        elif isinstance(event, ToolCallEndEvent):
            early.setdefault(event.tool_call_id, False)
        elif isinstance(event, ToolCallResultEvent):
            results[event.tool_call_id] = json.loads(event.content)
            early.setdefault(event.tool_call_id, True)
    return {tid: ("".join(a), results[tid], early[tid]) for tid, a in args.items()}


def check_chunks(events: list[Event], sent: list[dict[str, Any]]) -> None:
    for tid, (args, output, early) in expected_calls(events).items():
        mine = [(i, c) for i, c in enumerate(sent) if c.get("toolCallId") == tid]
        kinds = [c["type"] for _, c in mine]
        assert kinds[0] == "tool-input-start"
        deltas = "".join(c["inputTextDelta"] for _, c in mine if c["type"] == "tool-input-delta")
        assert deltas == args  # every argument byte, once, in order
        assert kinds.count("tool-input-available") == 1
        assert kinds.count("tool-output-available") == 1  # the result, exactly once
        (available,) = [i for i, c in mine if c["type"] == "tool-input-available"]
        (output_at,) = [i for i, c in mine if c["type"] == "tool-output-available"]
        assert sent[available]["input"] == json.loads(args)
        assert sent[output_at]["output"] == output
        assert output_at > available  # never before the input is complete
        if early:  # a held result goes out right after the input
            assert output_at == available + 1


@SETTINGS
@given(runs=st.lists(interleavings(), min_size=8, max_size=12))
def test_a_result_during_streaming_arguments_is_held_until_the_input_is_available(
    runs: list[list[Event]],
) -> None:
    require_harness()
    bodies = [encode(events) for events in runs]
    for events, body in zip(runs, bodies, strict=True):
        check_chunks(events, chunks(body))
    jobs = [(f"{i}@{c}", c, body) for i, body in enumerate(bodies) for c in AI_SDK_CLIENTS]
    results = replay(jobs)
    for i, events in enumerate(runs):
        for client in AI_SDK_CLIENTS:
            result = results[f"{i}@{client}"]
            assert result["accepted"], (client, result["error"])
            (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
            for tid, (args, output, _early) in expected_calls(events).items():
                (part,) = [p for p in message["parts"] if p.get("toolCallId") == tid]
                assert part["state"] == "output-available", (client, part)
                assert part["input"] == json.loads(args)
                assert part["output"] == output
