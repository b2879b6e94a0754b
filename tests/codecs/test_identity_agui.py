"""Identity (issue 11, kind 1) for the ``agui`` passthrough decoder: reused upstream ids never
merge or drop a second entity.

Hypothesis draws AG-UI runtime streams whose ids are reused at random: a ``toolCallId`` reused
by a later call after that call's TOOL_CALL_END (or one the thread's history holds), a
``messageId`` reused by a new text message after its END, one id shared by a reasoning message,
a text message, a tool call and a result message, ids of the thread's history; each item as
START/CONTENT/END events or as ``*_CHUNK`` events (AG-UI 1.0 ``TEXT_MESSAGE_CHUNK`` /
``TOOL_CALL_CHUNK`` / ``REASONING_MESSAGE_CHUNK``), inside STEP_STARTED/STEP_FINISHED pairs;
reasoning spans (REASONING_START / REASONING_END) with their message's id or another one;
activities (ACTIVITY_SNAPSHOT, maybe patched by ACTIVITY_DELTA; a snapshot naming an activity
of the run again updates it) whose ids other entities use; and, at the end, the runtime's own
MESSAGES_SNAPSHOT of the thread under its ids (the history and each entity it sent: the same
entities, AG-UI 1.0 "MessagesSnapshot", which ``@ag-ui/client`` 1.0.0 replaces by id and
drops the unlisted ones of). The property: every text byte, argument byte and tool result of the input reaches both wires
exactly once, as its own entity: the AG-UI SSE (through the real ``@ag-ui/client`` 1.0.0, which
already holds the thread's history) and the AI SDK UIMessageChunk SSE (through the real ``ai``
7 client); every AG-UI entity id (spans and activities included) is unique in the thread,
every activity holds its latest content; and the next request built from what
the AG-UI client holds (``RunAgentInput`` forwarded to the runtime as bytes, or converted) gives
the runtime its own ids back (:func:`agui_codecs.identity.provider_body`).

Expected values come from the drawn input (what the upstream sent), never from our output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson
from ag_ui.core import Event, RunAgentInput
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from agui_codecs.identity import derived_id, message_ids, provider_body, provider_id
from agui_codecs.protocols._request import ClientRequest
from agui_codecs.protocols.agui.decoder import AguiDecoder
from agui_codecs.protocols.agui.request import build_request, run_input_wire

SETTINGS = settings(
    deadline=None,
    max_examples=4,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
PRIOR_CALL = "call_0"
"""A tool call id the thread's history already holds (answered in the previous turn)."""
PRIOR_MESSAGE = "msg_prior"
PRIOR_RESULT = "tool-1"
MESSAGE_IDS = ["m1", "m2", "call_1", PRIOR_MESSAGE]
"""Upstream ids of text and reasoning messages: shared by both kinds, by a tool call (the
client names a call's message after the call) and by the history."""
CALL_IDS = [PRIOR_CALL, "call_1"]
RESULT_IDS = ["res_1", PRIOR_RESULT, "m1"]
SEPARATOR = {"type": "CUSTOM", "name": "separator", "value": 0}
"""Ends a chunk item: the next chunk with the same id opens a new entity (transform.ts closes
a chunk lane on any other event)."""


@dataclass
class Drawn:
    """One drawn upstream stream and what it carries (in upstream order)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (upstream id, text)
    reasoning: list[str] = field(default_factory=list)
    calls: list[tuple[str, str, Any]] = field(default_factory=list)  # (upstream id, name, args)
    results: list[tuple[str, str, Any]] = field(default_factory=list)  # (message id, call, out)
    spans: list[str] = field(default_factory=list)  # REASONING_START upstream ids
    activities: dict[str, Any] = field(default_factory=dict)  # upstream id -> latest content
    snapshot: list[dict[str, Any]] = field(default_factory=list)  # the runtime's messages


def _message(draw: st.DrawFn, out: Drawn, kind: str) -> None:
    mid = draw(st.sampled_from(MESSAGE_IDS))
    deltas = draw(st.lists(TEXT, min_size=1, max_size=3))
    prefix = "TEXT_MESSAGE" if kind == "text" else "REASONING_MESSAGE"
    if draw(st.booleans()):
        out.events += [{"type": f"{prefix}_CHUNK", "messageId": mid, "delta": d} for d in deltas]
        out.events.append(SEPARATOR)
    else:
        span = kind == "reasoning" and draw(st.booleans())
        sid = draw(st.sampled_from([mid, *MESSAGE_IDS]))  # its message's id, or another
        if span:
            out.events.append({"type": "REASONING_START", "messageId": sid})
            out.spans.append(sid)
        start: dict[str, Any] = {"type": f"{prefix}_START", "messageId": mid}
        start["role"] = "assistant" if kind == "text" else "reasoning"
        out.events.append(start)
        out.events += [{"type": f"{prefix}_CONTENT", "messageId": mid, "delta": d} for d in deltas]
        out.events.append({"type": f"{prefix}_END", "messageId": mid})
        if span:
            out.events.append({"type": "REASONING_END", "messageId": sid})
    if kind == "text":
        out.texts.append((mid, "".join(deltas)))
        out.snapshot.append({"id": mid, "role": "assistant", "content": "".join(deltas)})
    else:
        out.reasoning.append("".join(deltas))
        out.snapshot.append({"id": mid, "role": "reasoning", "content": "".join(deltas)})


def _activity(draw: st.DrawFn, out: Drawn) -> None:
    """An ACTIVITY_SNAPSHOT (and maybe an ACTIVITY_DELTA patching it): a snapshot naming an
    activity of this run again updates it (``@ag-ui/client`` 1.0.0 ``ACTIVITY_SNAPSHOT``)."""
    aid = draw(st.sampled_from([*MESSAGE_IDS, "act_1"]))
    content = {"step": draw(st.integers(0, 9))}
    out.events.append(
        {"type": "ACTIVITY_SNAPSHOT", "messageId": aid, "activityType": "plan", "content": content}
    )
    if draw(st.booleans()):
        step = draw(st.integers(0, 9))
        patch = [{"op": "replace", "path": "/step", "value": step}]
        out.events.append(
            {"type": "ACTIVITY_DELTA", "messageId": aid, "activityType": "plan", "patch": patch}
        )
        content = {"step": step}
    out.activities[aid] = content


def _call(draw: st.DrawFn, out: Drawn) -> None:
    cid = draw(st.sampled_from(CALL_IDS))
    name = draw(st.sampled_from(["lookup", "search"]))
    args = {"q": draw(TEXT), "n": draw(st.integers(0, 9))}
    text = json.dumps(args, ensure_ascii=False)
    cut = draw(st.integers(1, len(text)))
    pieces = [p for p in (text[:cut], text[cut:]) if p]
    if draw(st.booleans()):
        out.events.append(
            {"type": "TOOL_CALL_CHUNK", "toolCallId": cid, "toolCallName": name, "delta": pieces[0]}
        )
        out.events += [
            {"type": "TOOL_CALL_CHUNK", "toolCallId": cid, "delta": p} for p in pieces[1:]
        ]
        out.events.append(SEPARATOR)
    else:
        out.events.append({"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": name})
        out.events += [{"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": p} for p in pieces]
        out.events.append({"type": "TOOL_CALL_END", "toolCallId": cid})
    out.calls.append((cid, name, args))
    rid = draw(st.sampled_from(RESULT_IDS))
    output = {"hits": draw(st.integers(0, 99))}
    out.events.append(
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": rid,
            "toolCallId": cid,
            "content": json.dumps(output),
            "role": "tool",
        }
    )
    out.results.append((rid, cid, output))
    call = {"id": cid, "type": "function", "function": {"name": name, "arguments": text}}
    out.snapshot.append({"id": cid, "role": "assistant", "toolCalls": [call]})
    out.snapshot.append(
        {"id": rid, "role": "tool", "toolCallId": cid, "content": json.dumps(output)}
    )


@st.composite
def streams(draw: st.DrawFn) -> Drawn:
    out = Drawn()
    out.events.append({"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"})
    for step in range(draw(st.integers(1, 3))):
        out.events.append({"type": "STEP_STARTED", "stepName": f"step{step}"})
        for _part in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["text", "reasoning", "tool", "activity"]))
            if kind == "tool":
                _call(draw, out)
            elif kind == "activity":
                _activity(draw, out)
            else:
                _message(draw, out, kind)
        out.events.append({"type": "STEP_FINISHED", "stepName": f"step{step}"})
    if draw(st.booleans()):  # the runtime's messages, its own ids (AG-UI 1.0 MessagesSnapshot)
        messages = [*PRIOR_MESSAGES, *out.snapshot]
        out.events.append({"type": "MESSAGES_SNAPSHOT", "messages": messages})
    out.events.append({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r2"})
    return out


PRIOR_MESSAGES: list[dict[str, Any]] = [
    {"id": "u1", "role": "user", "content": "hi"},
    {
        "id": PRIOR_MESSAGE,
        "role": "assistant",
        "content": "before",
        "toolCalls": [
            {
                "id": PRIOR_CALL,
                "type": "function",
                "function": {"name": "lookup", "arguments": "{}"},
            }
        ],
    },
    {"id": PRIOR_RESULT, "role": "tool", "toolCallId": PRIOR_CALL, "content": "{}"},
]


def _run_input(messages: list[dict[str, Any]]) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r2",
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
            "messages": messages,
        }
    )


PRIOR_IDS = frozenset(message_ids(_run_input(PRIOR_MESSAGES).messages))


def decode(drawn: Drawn) -> list[Event]:
    decoder = AguiDecoder(thread_id="t1", run_id="r2")
    decoder.run.reserve(message_ids(_run_input(PRIOR_MESSAGES).messages))
    body = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in drawn.events)
    events = decoder.feed(body) + decoder.close()
    assert decoder.error is None, decoder.error
    return events


def wires(events: list[Event]) -> tuple[bytes, bytes]:
    agui, ai_sdk = AguiEncoder(), AiSdkEncoder()
    return (
        b"".join(agui.encode(e) for e in events) + agui.close(),
        b"".join(ai_sdk.encode(e) for e in events) + ai_sdk.close(),
    )


def check_events(drawn: Drawn, events: list[Event]) -> None:
    """The AG-UI events: each entity once, unique ids, every byte once (from the input)."""
    wire = [event_to_wire(e) for e in events]
    assert wire[-1]["type"] == "RUN_FINISHED", wire[-1]
    texts: dict[str, list[str]] = {}
    reasoning: dict[str, list[str]] = {}
    args: dict[str, list[str]] = {}
    ids: list[str] = []
    for e in wire:
        kind = e["type"]
        if kind == "TEXT_MESSAGE_START":
            ids.append(e["messageId"])
            texts[e["messageId"]] = []
        elif kind == "TEXT_MESSAGE_CONTENT":
            texts[e["messageId"]].append(e["delta"])
        elif kind == "REASONING_MESSAGE_START":
            ids.append(e["messageId"])
            reasoning[e["messageId"]] = []
        elif kind == "REASONING_MESSAGE_CONTENT":
            reasoning[e["messageId"]].append(e["delta"])
        elif kind == "TOOL_CALL_START":
            ids.append(e["toolCallId"])
            args[e["toolCallId"]] = []
        elif kind == "TOOL_CALL_ARGS":
            args[e["toolCallId"]].append(e["delta"])
        elif kind == "TOOL_CALL_RESULT":
            ids.append(e["messageId"])
    assert len(ids) == len(set(ids)), ids  # unique in the run
    assert not set(ids) & PRIOR_IDS, ids  # and in the thread
    # a reasoning span is its own entity (it may share its id with its reasoning message)
    spans = [e["messageId"] for e in wire if e["type"] == "REASONING_START"]
    assert [provider_id(s) for s in spans] == drawn.spans
    others = {
        e.get("messageId") or e["toolCallId"]
        for e in wire
        if e["type"] in ("TEXT_MESSAGE_START", "TOOL_CALL_START", "TOOL_CALL_RESULT")
    }
    assert len(spans) == len(set(spans)) and not set(spans) & (others | PRIOR_IDS), spans
    # an activity: one entity per upstream id of the run, an id of no other entity
    activities = list(
        dict.fromkeys(e["messageId"] for e in wire if e["type"] == "ACTIVITY_SNAPSHOT")
    )
    assert [provider_id(a) for a in activities] == list(drawn.activities)
    assert not set(activities) & (set(ids) | set(spans) | PRIOR_IDS), activities
    assert [(provider_id(k), "".join(v)) for k, v in texts.items()] == drawn.texts
    assert ["".join(v) for v in reasoning.values()] == drawn.reasoning
    starts = [e for e in wire if e["type"] == "TOOL_CALL_START"]
    assert [(provider_id(e["toolCallId"]), e["toolCallName"]) for e in starts] == [
        (c[0], c[1]) for c in drawn.calls
    ]
    assert [json.loads("".join(v)) for v in args.values()] == [c[2] for c in drawn.calls]
    results = [e for e in wire if e["type"] == "TOOL_CALL_RESULT"]
    # each result answers the call drawn with it (the latest one with its upstream id)
    assert [e["toolCallId"] for e in results] == [e["toolCallId"] for e in starts]
    assert [provider_id(e["messageId"]) for e in results] == [r[0] for r in drawn.results]
    assert [json.loads(e["content"]) for e in results] == [r[2] for r in drawn.results]


def check_agui_client(drawn: Drawn, result: dict[str, Any]) -> list[dict[str, Any]]:
    """What the real ``@ag-ui/client`` holds after the run; returns the run's new messages."""
    assert result["accepted"], result["error"]
    messages = result["messages"]
    assert messages[: len(PRIOR_MESSAGES)] == PRIOR_MESSAGES  # the history is untouched
    new = messages[len(PRIOR_MESSAGES) :]
    calls = [c for m in new if m["role"] == "assistant" for c in m.get("toolCalls") or ()]
    assert [(provider_id(c["id"]), c["function"]["name"]) for c in calls] == [
        (c[0], c[1]) for c in drawn.calls
    ]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [c[2] for c in drawn.calls]
    tools = [m for m in new if m["role"] == "tool"]
    assert [m["toolCallId"] for m in tools] == [c["id"] for c in calls]
    assert [json.loads(m["content"]) for m in tools] == [r[2] for r in drawn.results]
    texts = [
        (provider_id(m["id"]), m["content"])
        for m in new
        if m["role"] == "assistant" and m.get("content")
    ]
    assert texts == drawn.texts
    thoughts = [m["content"] for m in new if m["role"] == "reasoning"]
    assert thoughts == drawn.reasoning
    activities = [(provider_id(m["id"]), m["content"]) for m in new if m["role"] == "activity"]
    assert activities == list(drawn.activities.items())
    for ids in ([m["id"] for m in messages], [c["id"] for c in calls]):
        assert len(ids) == len(set(ids)), ids
    return list(new)


def check_ai_sdk_client(drawn: Drawn, result: dict[str, Any]) -> None:
    assert result["accepted"], result["error"]
    (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
    parts = message["parts"]
    assert [p["text"] for p in parts if p["type"] == "text"] == [t[1] for t in drawn.texts]
    assert [p["text"] for p in parts if p["type"] == "reasoning"] == drawn.reasoning
    tools = [p for p in parts if p["type"].startswith("tool-")]
    assert [(provider_id(p["toolCallId"]), p["type"][5:]) for p in tools] == [
        (c[0], c[1]) for c in drawn.calls
    ]
    assert [p["input"] for p in tools] == [c[2] for c in drawn.calls]
    assert [p["state"] for p in tools] == ["output-available"] * len(tools)
    assert [p["output"] for p in tools] == [r[2] for r in drawn.results]
    assert len({p["toolCallId"] for p in tools}) == len(tools)


def next_request_ids(drawn: Drawn, new: list[dict[str, Any]]) -> None:
    """The next turn, built from what the AG-UI client holds: the runtime's own ids, in the
    body forwarded byte for byte (an AG-UI client) and in the converted one (an AI SDK
    client)."""
    run_input = _run_input(PRIOR_MESSAGES + new)
    raw = orjson.dumps(run_input_wire(run_input))
    forwarded = provider_body(
        build_request(ClientRequest(run_input, wire="agui", raw=raw), model="", params={})
    )
    assert isinstance(forwarded, bytes)
    converted = provider_body(
        build_request(ClientRequest(run_input, wire="ai-sdk"), model="", params={})
    )
    assert isinstance(converted, dict)
    for body in (orjson.loads(forwarded), converted):
        messages = body["messages"]
        sent = [
            c["id"] for m in messages if m["role"] == "assistant" for c in m.get("toolCalls") or ()
        ]
        assert sent == [PRIOR_CALL] + [c[0] for c in drawn.calls]
        tools = [m for m in messages if m["role"] == "tool"]
        assert [m["toolCallId"] for m in tools] == [PRIOR_CALL] + [r[1] for r in drawn.results]
        assert [m["id"] for m in tools] == [PRIOR_RESULT] + [r[0] for r in drawn.results]
        texts = [m["id"] for m in messages if m["role"] == "assistant" and m.get("content")]
        assert texts == [PRIOR_MESSAGE] + [t[0] for t in drawn.texts]


def test_derived_ids_for_each_kind_of_reuse() -> None:
    """One fixed stream per kind of reuse (issue 11 kind 1), the ids from the identity rule."""
    events: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"},
        {"type": "REASONING_MESSAGE_START", "messageId": "m1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "m1", "delta": "think"},
        {"type": "REASONING_MESSAGE_END", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},  # shared id
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "f",
            "parentMessageId": "m1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "c1", "content": "1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},  # a new call
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "c1", "content": "2"},
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "tool-call",
            "entityId": "c1",
            "encryptedValue": "sig",
        },
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},  # after its END
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "TOOL_CALL_START", "toolCallId": PRIOR_CALL, "toolCallName": "f"},  # history
        {"type": "TOOL_CALL_END", "toolCallId": PRIOR_CALL},
        {"type": "TOOL_CALL_RESULT", "messageId": "r3", "toolCallId": PRIOR_CALL, "content": "3"},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r2"},
    ]
    decoder = AguiDecoder(thread_id="t1", run_id="r2")
    decoder.run.reserve(message_ids(_run_input(PRIOR_MESSAGES).messages))
    body = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)
    out = [event_to_wire(e) for e in decoder.feed(body) + decoder.close()]
    m2, m3 = derived_id("m1", 2), derived_id("m1", 3)
    c2, r2, p2 = derived_id("c1", 2), derived_id("r1", 2), derived_id(PRIOR_CALL, 2)
    opened = [
        (e["type"], e.get("messageId") or e.get("toolCallId"))
        for e in out
        if e["type"].endswith("_START") and e["type"] not in ("RUN_STARTED", "STEP_STARTED")
    ]
    assert opened == [
        ("REASONING_MESSAGE_START", "m1"),
        ("TEXT_MESSAGE_START", m2),
        ("TOOL_CALL_START", "c1"),
        ("TOOL_CALL_START", c2),
        ("TEXT_MESSAGE_START", m3),
        ("TOOL_CALL_START", p2),
    ]
    contents = [(e["messageId"], e["delta"]) for e in out if e["type"].endswith("_CONTENT")]
    assert contents == [("m1", "think"), (m2, "a"), (m3, "b")]
    assert [e["parentMessageId"] for e in out if "parentMessageId" in e] == [m2]
    results = [
        (e["messageId"], e["toolCallId"], e["content"])
        for e in out
        if e["type"] == "TOOL_CALL_RESULT"
    ]
    assert results == [("r1", "c1", "1"), (r2, c2, "2"), ("r3", p2, "3")]
    # a signature naming the call's upstream id goes to the latest call with it
    assert [e["entityId"] for e in out if e["type"] == "REASONING_ENCRYPTED_VALUE"] == [c2]
    assert out[-1]["type"] == "RUN_FINISHED"
    assert out[-1]["metadata"]["repairs"]["id-derived"] == 5


def test_a_chunk_after_its_ids_end_is_a_new_message() -> None:
    """A TEXT_MESSAGE_CHUNK / REASONING_MESSAGE_CHUNK naming a message whose END the upstream
    sent starts a new message (AG-UI 1.0 chunk events: a chunk whose id has no open message
    opens one), so it gets its own id; its text is not appended to the ended one's, which the
    late-content hold of that END did before (found by the property below)."""
    for prefix in ("TEXT_MESSAGE", "REASONING_MESSAGE"):
        role = "assistant" if prefix == "TEXT_MESSAGE" else "reasoning"
        events: list[dict[str, Any]] = [
            {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"},
            {"type": f"{prefix}_START", "messageId": "m1", "role": role},
            {"type": f"{prefix}_CONTENT", "messageId": "m1", "delta": "a"},
            {"type": f"{prefix}_END", "messageId": "m1"},
            {"type": f"{prefix}_CHUNK", "messageId": "m1", "delta": "b"},
            {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r2"},
        ]
        decoder = AguiDecoder(thread_id="t1", run_id="r2")
        body = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)
        out = [event_to_wire(e) for e in decoder.feed(body) + decoder.close()]
        assert decoder.error is None, decoder.error
        contents = [(e["messageId"], e["delta"]) for e in out if e["type"].endswith("_CONTENT")]
        assert contents == [("m1", "a"), (derived_id("m1", 2), "b")], prefix
        ends = [e["messageId"] for e in out if e["type"] == f"{prefix}_END"]
        assert ends == ["m1", derived_id("m1", 2)], prefix


@SETTINGS
@given(runs=st.lists(streams(), min_size=6, max_size=8))
def test_reused_agui_ids_reach_both_real_clients_once_each_and_go_back_as_the_runtimes(
    runs: list[Drawn],
) -> None:
    require_harness()
    decoded = [decode(drawn) for drawn in runs]
    for drawn, events in zip(runs, decoded, strict=True):
        check_events(drawn, events)
    jobs: list[Any] = []
    for i, (agui, ai_sdk) in enumerate(wires(events) for events in decoded):
        jobs.append((f"{i}@agui", "agui", agui, {"initial_messages": PRIOR_MESSAGES}))
        jobs.append((f"{i}@ai-v7", "ai-v7", ai_sdk))
    results = replay(jobs)
    for i, drawn in enumerate(runs):
        new = check_agui_client(drawn, results[f"{i}@agui"])
        check_ai_sdk_client(drawn, results[f"{i}@ai-v7"])
        next_request_ids(drawn, new)
