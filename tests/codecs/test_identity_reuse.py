"""Identity (issue 11, kind 1): reused upstream ids never merge or drop a second entity.

Hypothesis draws AI SDK UIMessageChunk streams (the upstream of the ``ai-sdk`` decoder) whose
ids are reused at random: a ``toolCallId`` of an earlier step (or of the thread's history)
again in a later step, one part id shared by a text and a reasoning part and reused by the next
step, a ``start.messageId`` that is an earlier message of the thread (an AI SDK continuation).
The property: every text byte, argument byte, tool result and signature of the input reaches
both wires exactly once, as its own entity: the AG-UI SSE (through the real ``@ag-ui/client``
1.0.0) and the AI SDK UIMessageChunk SSE (through the real ``ai`` 7 client); every AG-UI entity
id is unique in the thread; and the next request built from what the AG-UI client holds gives
the provider its own ids back (:func:`agui_codecs.identity.provider_body`).

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
from agui_codecs.identity import message_ids, provider_body, provider_id
from agui_codecs.protocols._request import ClientRequest
from agui_codecs.protocols.ai_sdk.decoder import AiSdkUpstreamDecoder
from agui_codecs.protocols.ai_sdk.request import build_request as ai_sdk_request
from agui_codecs.protocols.openai_chat.request import build_request as openai_chat_request

SETTINGS = settings(
    deadline=None,
    max_examples=3,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
PRIOR_CALL = "call_0"
"""A tool call id the thread's history already holds (answered in the previous turn)."""
PRIOR_MESSAGE = "msg_prior"


@dataclass
class Drawn:
    """One drawn upstream stream and what it carries (in upstream order)."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[tuple[str, str, Any]] = field(default_factory=list)  # (provider id, name, input)
    results: list[tuple[str, Any]] = field(default_factory=list)  # (provider id, output)
    signatures: list[str] = field(default_factory=list)
    message_id: str = ""


@st.composite
def streams(draw: st.DrawFn) -> Drawn:
    out = Drawn()
    out.message_id = draw(st.sampled_from([PRIOR_MESSAGE, "msg_new"]))
    out.chunks.append({"type": "start", "messageId": out.message_id})
    signatures = iter(range(1000))
    for _step in range(draw(st.integers(1, 3))):
        out.chunks.append({"type": "start-step"})
        for _part in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["text", "reasoning", "tool"]))
            if kind in ("text", "reasoning"):
                part_id = draw(st.sampled_from(["0", "1"]))  # shared by both kinds and steps
                deltas = draw(st.lists(TEXT, min_size=1, max_size=3))
                out.chunks.append({"type": f"{kind}-start", "id": part_id})
                for delta in deltas:
                    out.chunks.append({"type": f"{kind}-delta", "id": part_id, "delta": delta})
                end: dict[str, Any] = {"type": f"{kind}-end", "id": part_id}
                if kind == "reasoning" and draw(st.booleans()):
                    sig = f"sig-r{next(signatures)}"
                    out.signatures.append(sig)
                    end["providerMetadata"] = {"anthropic": {"signature": sig}}
                out.chunks.append(end)
                (out.texts if kind == "text" else out.reasoning).append("".join(deltas))
                continue
            call_id = draw(st.sampled_from([PRIOR_CALL, "call_1"]))
            name = draw(st.sampled_from(["lookup", "search"]))
            args = {"q": draw(TEXT), "n": draw(st.integers(0, 9))}
            text = json.dumps(args, ensure_ascii=False)
            cut = draw(st.integers(0, len(text)))
            out.chunks.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name})
            for piece in (text[:cut], text[cut:]):
                if piece:
                    out.chunks.append(
                        {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": piece}
                    )
            available: dict[str, Any] = {
                "type": "tool-input-available",
                "toolCallId": call_id,
                "toolName": name,
                "input": args,
            }
            if draw(st.booleans()):
                sig = f"sig-t{next(signatures)}"
                out.signatures.append(sig)
                available["providerMetadata"] = {"google": {"thoughtSignature": sig}}
            out.chunks.append(available)
            out.calls.append((call_id, name, args))
            output = {"hits": draw(st.integers(0, 99))}
            out.chunks.append(
                {"type": "tool-output-available", "toolCallId": call_id, "output": output}
            )
            out.results.append((call_id, output))
        out.chunks.append({"type": "finish-step"})
    out.chunks.append({"type": "finish", "finishReason": "stop"})
    return out


PRIOR_INPUT = RunAgentInput.model_validate(
    {
        "threadId": "t1",
        "runId": "r2",
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "messages": [
            {"id": "u1", "role": "user", "content": "hi"},
            {
                "id": PRIOR_MESSAGE,
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": PRIOR_CALL,
                        "type": "function",
                        "function": {"name": "lookup", "arguments": "{}"},
                    }
                ],
            },
            {"id": "tool-1", "role": "tool", "toolCallId": PRIOR_CALL, "content": "{}"},
        ],
    }
)
PRIOR_IDS = frozenset(message_ids(PRIOR_INPUT.messages))


def decode(drawn: Drawn) -> list[Event]:
    decoder = AiSdkUpstreamDecoder(thread_id="t1", run_id="r2")
    decoder.run.reserve(message_ids(PRIOR_INPUT.messages))
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in drawn.chunks)
    events = decoder.feed(body + b"data: [DONE]\n\n") + decoder.close()
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
    assert ["".join(v) for v in texts.values()] == drawn.texts
    assert ["".join(v) for v in reasoning.values()] == drawn.reasoning
    starts = [e for e in wire if e["type"] == "TOOL_CALL_START"]
    assert [(provider_id(e["toolCallId"]), e["toolCallName"]) for e in starts] == [
        (c[0], c[1]) for c in drawn.calls
    ]
    assert [json.loads("".join(v)) for v in args.values()] == [c[2] for c in drawn.calls]
    results = [e for e in wire if e["type"] == "TOOL_CALL_RESULT"]
    # each result answers the call drawn with it (the latest one with its provider id)
    assert [e["toolCallId"] for e in results] == [e["toolCallId"] for e in starts]
    assert [json.loads(e["content"]) for e in results] == [r[1] for r in drawn.results]
    sigs = [e["encryptedValue"] for e in wire if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert sigs == drawn.signatures


def check_agui_client(drawn: Drawn, result: dict[str, Any]) -> None:
    assert result["accepted"], result["error"]
    messages = result["messages"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("toolCalls") or ()]
    assert [(provider_id(c["id"]), c["function"]["name"]) for c in calls] == [
        (c[0], c[1]) for c in drawn.calls
    ]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [c[2] for c in drawn.calls]
    tools = [m for m in messages if m["role"] == "tool"]
    assert [m["toolCallId"] for m in tools] == [c["id"] for c in calls]
    assert [json.loads(m["content"]) for m in tools] == [r[1] for r in drawn.results]
    texts = [m["content"] for m in messages if m["role"] == "assistant" and m.get("content")]
    assert texts == drawn.texts
    thoughts = [m["content"] for m in messages if m["role"] == "reasoning"]
    assert thoughts == drawn.reasoning
    # (a call without a parent text is held by a message the client names after the call)
    for ids in ([m["id"] for m in messages], [c["id"] for c in calls]):
        assert len(ids) == len(set(ids)), ids


def check_ai_sdk_client(drawn: Drawn, result: dict[str, Any]) -> None:
    assert result["accepted"], result["error"]
    (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
    parts = message["parts"]
    assert [p["text"] for p in parts if p["type"] == "text"] == drawn.texts
    assert [p["text"] for p in parts if p["type"] == "reasoning"] == drawn.reasoning
    tools = [p for p in parts if p["type"].startswith("tool-")]
    assert [(provider_id(p["toolCallId"]), p["type"][5:]) for p in tools] == [
        (c[0], c[1]) for c in drawn.calls
    ]
    assert [p["input"] for p in tools] == [c[2] for c in drawn.calls]
    assert [p["state"] for p in tools] == ["output-available"] * len(tools)
    assert [p["output"] for p in tools] == [r[1] for r in drawn.results]
    assert len({p["toolCallId"] for p in tools}) == len(tools)
    sent = json.dumps(parts)
    for sig in drawn.signatures:
        assert sent.count(json.dumps(sig)) == 1, sig


def next_request_ids(drawn: Drawn, agui_messages: list[dict[str, Any]]) -> None:
    """The next turn, built from what the AG-UI client holds: the provider's own ids."""
    history = [m for m in PRIOR_INPUT.model_dump(by_alias=True, exclude_none=True)["messages"]]
    run_input = PRIOR_INPUT.model_copy(
        update={
            "messages": RunAgentInput.model_validate(
                {**PRIOR_INPUT.model_dump(by_alias=True), "messages": history + agui_messages}
            ).messages
        }
    )
    body = provider_body(openai_chat_request(ClientRequest(run_input), model="m", params={}))
    sent = [
        c["id"]
        for m in body["messages"]
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    ]
    assert sent == [PRIOR_CALL] + [c[0] for c in drawn.calls]
    answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert answered == [PRIOR_CALL] + [r[0] for r in drawn.results]
    chat = provider_body(ai_sdk_request(ClientRequest(run_input), model="", params={}))
    assert isinstance(chat, dict)
    parts = [p for m in chat["messages"] for p in m["parts"] if "toolCallId" in p]
    assert [p["toolCallId"] for p in parts] == [PRIOR_CALL] + [c[0] for c in drawn.calls]


@SETTINGS
@given(runs=st.lists(streams(), min_size=6, max_size=8))
def test_reused_ids_reach_both_real_clients_once_each_and_go_back_as_the_providers(
    runs: list[Drawn],
) -> None:
    require_harness()
    decoded = [decode(drawn) for drawn in runs]
    bodies = [wires(events) for events in decoded]
    for drawn, events in zip(runs, decoded, strict=True):
        check_events(drawn, events)
    jobs: list[Any] = []
    for i, (agui, ai_sdk) in enumerate(bodies):
        jobs.append((f"{i}@agui", "agui", agui))
        jobs.append((f"{i}@ai-v7", "ai-v7", ai_sdk))
    results = replay(jobs)
    for i, drawn in enumerate(runs):
        check_agui_client(drawn, results[f"{i}@agui"])
        check_ai_sdk_client(drawn, results[f"{i}@ai-v7"])
        next_request_ids(drawn, results[f"{i}@agui"]["messages"])
