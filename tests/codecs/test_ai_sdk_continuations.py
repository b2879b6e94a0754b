"""Continuations and steps (issue 11, kind 4): nothing of an AI SDK upstream is lost on either wire.

An AI SDK stream may continue an earlier assistant message: after the user answered a tool
approval (ai v6/v7 ``addToolApprovalResponse``) the chat sends ``sendMessage()`` with the
assistant message last, and ``streamText`` answers with the earlier calls' outcomes
(``tool-output-available`` / ``tool-output-denied`` / ``tool-output-error``) right after
``start``, before its first ``start-step`` (``ai`` 7.0.173 ``src/generate-text/stream-text.ts``,
the approved tools' execution stream), then its steps. The client attaches them to the parts of
the message it continues (``src/ui/process-ui-message-stream.ts`` ``getToolInvocation`` searches
the whole message; ``createStreamingUIMessageState`` starts from the last assistant message).

Hypothesis draws such streams (random earlier calls and their outcomes, random step splits of
text, reasoning and tool calls, random byte splits of the body), decodes them with the
``ai-sdk`` decoder and encodes the run for both wires. Properties: every text byte, argument
byte and result reaches the AG-UI SSE and the AI SDK SSE exactly once, the upstream's steps stay
its steps on the AI SDK output, the kit (told the stream continues the message) finds no error,
and the real clients (``tests/harness``: ``@ag-ui/client`` 1.0.0 with the earlier assistant
message in ``initialMessages``, ``ai`` 7 / 6 / 5 with it as the chat's last message) accept both
and end with every part in the expected state: on the AI SDK side the very message (parts,
``step-start`` parts, states) the same client builds from the upstream's own stream.

A second generator puts AG-UI step boundaries anywhere in a run (inside an open text message or
a streaming tool call): the AI SDK output keeps every byte and the clients accept it (ai v5 and
v6 forget open text parts at ``finish-step``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson
from ag_ui.core import (
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
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
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.ai_sdk.decoder import AiSdkUpstreamDecoder
from conformance import check_bytes

SETTINGS = settings(
    deadline=None,
    max_examples=3,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
WORD = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
MESSAGE_ID = "msg-earlier"
OUTCOMES = ("available", "denied", "error")
MAJOR_OF = {"ai-v7": 7, "ai-v6": 6, "ai-v5": None}  # ai v5 gets the portable output


@dataclass
class Case:
    """One continuation: the upstream chunks and what must come out of them."""

    chunks: list[dict[str, Any]]
    earlier: dict[str, tuple[str, dict[str, Any]]]  # call id -> (tool name, input)
    outcomes: dict[str, tuple[str, Any]]  # every call's outcome: (kind, output | errorText)
    texts: list[str] = field(default_factory=list)  # text parts, in order
    reasoning: list[str] = field(default_factory=list)
    args: dict[str, str] = field(default_factory=dict)  # new calls' argument text
    steps: int = 0
    cuts: list[int] = field(default_factory=list)

    def body(self) -> bytes:
        frames = [b"data: " + orjson.dumps(c) + b"\n\n" for c in self.chunks]
        return b"".join(frames) + b"data: [DONE]\n\n"


def _outcome_chunk(call_id: str, kind: str, value: Any) -> dict[str, Any]:
    if kind == "available":
        return {"type": "tool-output-available", "toolCallId": call_id, "output": value}
    if kind == "denied":
        return {"type": "tool-output-denied", "toolCallId": call_id}
    return {"type": "tool-output-error", "toolCallId": call_id, "errorText": value}


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(OUTCOMES))
    if kind == "available":
        return kind, {"value": draw(TEXT)}
    return kind, draw(WORD) if kind == "error" else None


@st.composite
def continuations(draw: st.DrawFn) -> Case:
    """``start``, the earlier calls' outcomes (before the first step, or inside one), then
    1-3 steps holding text, reasoning and new tool calls (input streamed in pieces, then its
    output), ``finish``."""
    steps = draw(st.integers(1, 3))
    earlier: dict[str, tuple[str, dict[str, Any]]] = {}
    case = Case([{"type": "start", "messageId": MESSAGE_ID}], earlier, {}, steps=steps)
    placed: dict[int, list[dict[str, Any]]] = {s: [] for s in range(-1, steps)}
    for i in range(draw(st.integers(0, 3))):
        call_id = f"earlier-{i}"
        earlier[call_id] = (f"tool{i}", {"q": draw(TEXT)})
        kind, value = draw(outcomes())
        case.outcomes[call_id] = (kind, value)
        where = draw(st.sampled_from([-1, -1, *range(steps)]))  # mostly where streamText puts it
        placed[where].append(_outcome_chunk(call_id, kind, value))
    items: list[tuple[int, list[dict[str, Any]]]] = []
    for n in range(draw(st.integers(0, 5))):
        what = draw(st.sampled_from(("text", "reasoning", "tool")))
        if what == "tool":
            call_id = f"call-{n}"
            args = orjson.dumps(draw(st.dictionaries(TEXT, TEXT, max_size=2))).decode()
            cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=3)))
            pieces = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)], strict=True)]
            output = {"n": n, "value": draw(TEXT)}
            case.args[call_id] = args
            case.outcomes[call_id] = ("available", output)
            chunks: list[dict[str, Any]] = [
                {"type": "tool-input-start", "toolCallId": call_id, "toolName": f"new{n}"}
            ]
            chunks += [
                {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": p}
                for p in pieces
                if p
            ]
            chunks.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": call_id,
                    "toolName": f"new{n}",
                    "input": json.loads(args),
                }
            )
            chunks.append(_outcome_chunk(call_id, "available", output))
        else:
            deltas = draw(st.lists(WORD, min_size=1, max_size=3))
            (case.texts if what == "text" else case.reasoning).append("".join(deltas))
            part = f"{what}-{n}"
            chunks = [{"type": f"{what}-start", "id": part}]
            chunks += [{"type": f"{what}-delta", "id": part, "delta": d} for d in deltas]
            chunks.append({"type": f"{what}-end", "id": part})
        items.append((draw(st.integers(0, steps - 1)), chunks))
    case.chunks += placed[-1]
    for step in range(steps):
        case.chunks.append({"type": "start-step"})
        case.chunks += placed[step]
        for item_step, chunks in items:
            if item_step == step:
                case.chunks += chunks
        case.chunks.append({"type": "finish-step"})
    case.chunks.append({"type": "finish", "finishReason": "stop"})
    # text and reasoning parts in stream order (items were drawn in order, placed by step)
    case.texts, case.reasoning = (
        _parts_in_order(case.chunks, "text"),
        _parts_in_order(case.chunks, "reasoning"),
    )
    size = len(case.body())
    case.cuts = sorted(set(draw(st.lists(st.integers(1, max(1, size - 1)), max_size=6))))
    return case


def _parts_in_order(chunks: list[dict[str, Any]], kind: str) -> list[str]:
    """The text of each ``kind`` part, in the order the parts start; a part restarted under the
    same id (after a ``finish-step``) is a new part."""
    parts: list[list[str]] = []
    current: dict[str, list[str]] = {}
    for chunk in chunks:
        if chunk["type"] == f"{kind}-start":
            current[chunk["id"]] = []
            parts.append(current[chunk["id"]])
        elif chunk["type"] == f"{kind}-delta":
            current[chunk["id"]].append(chunk["delta"])
    return ["".join(p) for p in parts]


def decode(case: Case) -> list[Event]:
    decoder = AiSdkUpstreamDecoder(thread_id="thread-1", run_id="run-1")
    body = case.body()
    events: list[Event] = []
    for a, b in zip([0, *case.cuts], [*case.cuts, len(body)], strict=True):
        events += decoder.feed(body[a:b])
    return events + decoder.close()


def sse_payloads(body: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(block[6:])
        for block in body.decode().split("\n\n")
        if block.startswith("data: ") and block[6:] != "[DONE]"
    ]


def encode_agui(events: list[Event]) -> bytes:
    encoder = AguiEncoder()
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def encode_ai_sdk(events: list[Event], case: Case, major: int | None) -> bytes:
    encoder = AiSdkEncoder(message_id=MESSAGE_ID, ai_sdk_major=major, continues=case.earlier)
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


# -- the AG-UI wire --------------------------------------------------------------------------
def check_agui_wire(case: Case, wire: list[dict[str, Any]]) -> None:
    texts: dict[str, list[str]] = {}
    args: dict[str, list[str]] = {}
    for event in wire:
        if event["type"] == "TEXT_MESSAGE_CONTENT":
            texts.setdefault(event["messageId"], []).append(event["delta"])
        elif event["type"] == "TOOL_CALL_ARGS":
            args.setdefault(event["toolCallId"], []).append(event["delta"])
    assert ["".join(t) for t in texts.values()] == case.texts
    assert {k: "".join(v) for k, v in args.items()} == case.args
    reasoning = [
        e["delta"] for e in wire if e["type"] in ("REASONING_MESSAGE_CONTENT", "REASONING_CONTENT")
    ]
    assert "".join(reasoning) == "".join(case.reasoning)
    results = [e for e in wire if e["type"] == "TOOL_CALL_RESULT"]
    assert sorted(r["toolCallId"] for r in results) == sorted(case.outcomes)  # each once
    for result in results:
        kind, value = case.outcomes[result["toolCallId"]]
        meta = result.get("metadata") or {}
        if kind == "available":
            assert json.loads(result["content"]) == value
        elif kind == "denied":
            assert meta.get("denied") is True
        else:
            assert (result["content"], meta.get("isError")) == (value, True)
    assert [e["type"] for e in wire].count("STEP_STARTED") == case.steps


# -- the AI SDK wire -------------------------------------------------------------------------
def check_ai_sdk_wire(case: Case, chunks: list[dict[str, Any]], major: int | None) -> None:
    assert _parts_in_order(chunks, "text") == case.texts
    assert _parts_in_order(chunks, "reasoning") == case.reasoning
    args: dict[str, str] = {}
    for chunk in chunks:
        if chunk["type"] == "tool-input-delta":
            args[chunk["toolCallId"]] = args.get(chunk["toolCallId"], "") + chunk["inputTextDelta"]
    assert args == case.args
    kinds = [c["type"] for c in chunks]
    assert kinds.count("start-step") == kinds.count("finish-step") == case.steps  # kept steps
    outputs = [c for c in chunks if c["type"].startswith("tool-output-")]
    assert sorted(c["toolCallId"] for c in outputs) == sorted(case.outcomes)  # each once
    for chunk in outputs:
        kind, value = case.outcomes[chunk["toolCallId"]]
        if kind == "available":
            assert (chunk["type"], chunk["output"]) == ("tool-output-available", value)
        elif kind == "error":
            assert (chunk["type"], chunk["errorText"]) == ("tool-output-error", value)
        elif major is None:  # ai v5 has no tool-output-denied
            assert chunk["output"] == {"type": "execution-denied"}
        else:
            assert chunk["type"] == "tool-output-denied"


def agui_history(case: Case) -> list[dict[str, Any]]:
    calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arg)}}
        for cid, (name, arg) in case.earlier.items()
    ]
    return [
        {"id": "user-1", "role": "user", "content": "go"},
        {"id": MESSAGE_ID, "role": "assistant", "toolCalls": calls},
    ]


def ai_sdk_history(case: Case, client: str) -> list[dict[str, Any]]:
    """The chat's messages before the continuation: the earlier calls await their outcome
    (v6/v7: the approval was answered; v5 has no approvals: input available)."""
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    for cid, (name, arg) in case.earlier.items():
        part: dict[str, Any] = {"type": f"tool-{name}", "toolCallId": cid, "input": arg}
        if client == "ai-v5":
            part["state"] = "input-available"
        else:
            approved = case.outcomes[cid][0] != "denied"
            part.update(
                state="approval-responded", approval={"id": f"a-{cid}", "approved": approved}
            )
        parts.append(part)
    return [
        {"id": "user-1", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        {"id": MESSAGE_ID, "role": "assistant", "parts": parts},
    ]


def expected_state(case: Case, cid: str, client: str) -> tuple[str, Any]:
    kind, value = case.outcomes[cid]
    if kind == "available":
        return "output-available", value
    if kind == "error":
        return "output-error", value
    if client == "ai-v5":
        return "output-available", {"type": "execution-denied"}
    return "output-denied", None


@settings(SETTINGS, max_examples=60)
@given(case=continuations())
def test_a_continuation_keeps_every_byte_and_its_steps_on_both_wires(case: Case) -> None:
    """The codec half of the property, over more examples (no client)."""
    events = decode(case)
    check_agui_wire(case, sse_payloads(encode_agui(events)))
    for major in (None, 6, 7):
        body = encode_ai_sdk(events, case, major)
        check_ai_sdk_wire(case, sse_payloads(body), major)
        for kit_major in (5, 6, 7) if major is None else (major,):
            report = check_bytes(body, protocol="ai-sdk", major=kit_major, continues=case.earlier)
            assert not report.errors and not report.warnings, report.violations


def same_message(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without the ``id`` of reasoning parts: the decoder names AG-UI reasoning
    messages itself (``RunBuilder``), so the upstream's reasoning part ids do not come back."""
    return [
        {
            **m,
            "parts": [
                {k: v for k, v in p.items() if p["type"] != "reasoning" or k != "id"}
                for p in m["parts"]
            ],
        }
        for m in messages
    ]


@SETTINGS
@given(cases=st.lists(continuations(), min_size=6, max_size=8))
def test_a_continuation_reaches_both_wires_and_the_real_clients_accept_it(
    cases: list[Case],
) -> None:
    require_harness()
    jobs: list[Any] = []
    for i, case in enumerate(cases):
        events = decode(case)
        agui_body = encode_agui(events)
        check_agui_wire(case, sse_payloads(agui_body))
        assert not check_bytes(agui_body, protocol="agui").errors
        jobs.append((f"{i}@agui", "agui", agui_body, {"initial_messages": agui_history(case)}))
        for client, major in MAJOR_OF.items():
            body = encode_ai_sdk(events, case, major)
            check_ai_sdk_wire(case, sse_payloads(body), major)
            for kit_major in (5, 6, 7) if major is None else (major,):
                report = check_bytes(
                    body, protocol="ai-sdk", major=kit_major, continues=case.earlier
                )
                assert not report.errors, (kit_major, report.errors)
                assert not report.warnings, (kit_major, report.warnings)
            history = {"initial_messages": ai_sdk_history(case, client)}
            jobs.append((f"{i}@{client}", client, body, history))
            if client != "ai-v5" or "denied" not in {k for k, _ in case.outcomes.values()}:
                # the upstream's own stream through the same client: what ours must give
                jobs.append((f"{i}@{client}/upstream", client, case.body(), history))
    results = replay(jobs)
    for i, case in enumerate(cases):
        agui = results[f"{i}@agui"]
        assert agui["accepted"], agui["error"]
        tool_messages = [m for m in agui["messages"] if m["role"] == "tool"]
        assert sorted(m["toolCallId"] for m in tool_messages) == sorted(case.outcomes)
        for client in MAJOR_OF:
            result = results[f"{i}@{client}"]
            assert result["accepted"], (client, result["error"])
            (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
            assert message["id"] == MESSAGE_ID  # continued, not a second message
            parts = message["parts"]
            for cid in case.outcomes:
                (part,) = [p for p in parts if p.get("toolCallId") == cid]
                state, value = expected_state(case, cid, client)
                assert part["state"] == state, (client, part)
                if state == "output-available":
                    assert part["output"] == value
                elif state == "output-error":
                    assert part["errorText"] == value
            texts = [p["text"] for p in parts if p["type"] == "text"]
            assert texts == case.texts, client
            upstream = results.get(f"{i}@{client}/upstream")
            if upstream is not None:  # the same message, steps included, as from the upstream
                assert upstream["accepted"], (client, upstream["error"])
                assert same_message(result["messages"]) == same_message(upstream["messages"])


def test_a_result_of_a_call_the_stream_did_not_announce_needs_continues() -> None:
    """Without ``continues`` the client has no part for the call (it would reject the chunk);
    with it, the result goes out."""
    events: list[Event] = [
        RunStartedEvent(thread_id="t", run_id="r"),
        ToolCallResultEvent(message_id="m", tool_call_id="earlier-1", content='{"ok":true}'),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    plain = AiSdkEncoder(message_id=MESSAGE_ID)
    continued = AiSdkEncoder(message_id=MESSAGE_ID, continues=["earlier-1"])
    sent = [c for e in events for c in plain.chunks(e)]
    assert "tool-output-available" not in [c["type"] for c in sent]
    sent = [c for e in events for c in continued.chunks(e)]
    assert {"type": "tool-output-available", "toolCallId": "earlier-1", "output": {"ok": True}} in (
        sent
    )


# -- AG-UI steps anywhere ----------------------------------------------------------------------
@st.composite
def stepped_runs(draw: st.DrawFn) -> list[Event]:
    """A run of text messages and tool calls interleaved at random, with step boundaries
    (STEP_FINISHED, then maybe STEP_STARTED of the next) at random places, also inside an
    open text message or a streaming tool call."""
    lanes: list[list[Event]] = []
    for i in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            mid = f"text-{i}"
            lane: list[Event] = [TextMessageStartEvent(message_id=mid, role="assistant")]
            lane += [
                TextMessageContentEvent(message_id=mid, delta=d)
                for d in draw(st.lists(WORD, min_size=1, max_size=3))
            ]
            lane.append(TextMessageEndEvent(message_id=mid))
        else:
            cid = f"call-{i}"
            args = orjson.dumps(draw(st.dictionaries(TEXT, TEXT, max_size=2))).decode()
            half = draw(st.integers(0, len(args)))
            lane = [ToolCallStartEvent(tool_call_id=cid, tool_call_name=f"tool{i}")]
            lane += [
                ToolCallArgsEvent(tool_call_id=cid, delta=p)
                for p in (args[:half], args[half:])
                if p
            ]
            lane.append(ToolCallEndEvent(tool_call_id=cid))
            lane.append(
                ToolCallResultEvent(
                    message_id=f"r-{i}", tool_call_id=cid, content=json.dumps({"i": i})
                )
            )
        lanes.append(lane)
    order = draw(st.permutations([i for i, lane in enumerate(lanes) for _ in lane]))
    positions = [0] * len(lanes)
    body: list[Event] = []
    step = 1
    body.append(StepStartedEvent(step_name="step-1"))
    open_step = True
    for lane in order:
        if draw(st.integers(0, 3)) == 0:  # a boundary here
            if open_step:
                body.append(StepFinishedEvent(step_name=f"step-{step}"))
                open_step = False
            if draw(st.booleans()):
                step += 1
                body.append(StepStartedEvent(step_name=f"step-{step}"))
                open_step = True
        body.append(lanes[lane][positions[lane]])
        positions[lane] += 1
    if open_step:
        body.append(StepFinishedEvent(step_name=f"step-{step}"))
    return [
        RunStartedEvent(thread_id="t", run_id="r"),
        *body,
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]


@SETTINGS
@given(runs=st.lists(stepped_runs(), min_size=6, max_size=8))
def test_ag_ui_steps_anywhere_keep_every_byte_on_the_ai_sdk_wire(runs: list[list[Event]]) -> None:
    require_harness()
    jobs: list[Any] = []
    for i, events in enumerate(runs):
        wire = [event_to_wire(e) for e in events]
        encoder = AiSdkEncoder()
        body = b"".join(encoder.encode(e) for e in events) + encoder.close()
        assert not encoder.repairs.total, encoder.repairs  # legal AG-UI: nothing to repair
        chunks = sse_payloads(body)
        texts: dict[str, str] = {}
        for chunk in chunks:
            if chunk["type"] == "text-delta":
                texts[chunk["id"]] = texts.get(chunk["id"], "") + chunk["delta"]
        expected: dict[str, str] = {}
        for w in wire:
            if w["type"] == "TEXT_MESSAGE_CONTENT":
                expected[w["messageId"]] = expected.get(w["messageId"], "") + w["delta"]
        assert texts == expected
        args = "".join(c["inputTextDelta"] for c in chunks if c["type"] == "tool-input-delta")
        assert args == "".join(w["delta"] for w in wire if w["type"] == "TOOL_CALL_ARGS")
        outputs = [c["toolCallId"] for c in chunks if c["type"] == "tool-output-available"]
        assert sorted(outputs) == sorted(
            w["toolCallId"] for w in wire if w["type"] == "TOOL_CALL_RESULT"
        )
        for major in (5, 6, 7):
            report = check_bytes(body, protocol="ai-sdk", major=major)
            assert not report.errors and not report.warnings, (major, report.violations)
        jobs.append((f"{i}@agui", "agui", encode_agui(events)))
        jobs += [(f"{i}@{c}", c, body) for c in MAJOR_OF]
    results = replay(jobs)
    for i, events in enumerate(runs):
        for client in ("agui", *MAJOR_OF):
            result = results[f"{i}@{client}"]
            assert result["accepted"], (i, client, result["error"])
        for client in MAJOR_OF:
            (message,) = [m for m in results[f"{i}@{client}"]["messages"]]
            # parts carry no id: interleaved messages are compared as the characters they hold
            text = "".join(p["text"] for p in message["parts"] if p["type"] == "text")
            deltas = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
            assert sorted(text) == sorted(deltas), client
