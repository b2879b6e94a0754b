"""Chat Completions tool calls whose ids do not identify them (issue 11, kind 1).

Compatible hosts stream ``delta.tool_calls[]`` in ways the reference does not: an ``id`` that
changes on every chunk of one call, calls with neither ``id`` nor ``index`` (each named piece
is the next call), every call at ``index`` 0 with its own id, one id (``call_0``) for every call.
Hypothesis draws a list of calls and a host style, splits each call's arguments at random; the
property: every call reaches both wires once, as its own entity, with its name and every
argument byte (its input), under an AG-UI id unique in the run, through the real
``@ag-ui/client`` 1.0.0 and ``ai`` 7 clients. Expected values are the drawn calls.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from ag_ui.core import Event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder

SETTINGS = settings(
    deadline=None,
    max_examples=3,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
STYLES = ("churning-id", "no-id-no-index", "all-at-index-0", "one-id-for-all", "reference")

Call = tuple[str, dict[str, Any]]


@st.composite
def hosts(draw: st.DrawFn) -> tuple[str, list[Call], list[dict[str, Any]]]:
    style = draw(st.sampled_from(STYLES))
    calls: list[Call] = [
        (draw(st.sampled_from(["lookup", "search"])), {"q": draw(st.text(max_size=5))})
        for _ in range(draw(st.integers(1, 3)))
    ]
    chunks: list[dict[str, Any]] = [
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    ]
    serial = 0
    for n, (name, args) in enumerate(calls):
        text = json.dumps(args, ensure_ascii=False)
        cuts = sorted(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=2)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        pieces = [p for p in pieces if p]
        for k, piece in enumerate(pieces):
            call: dict[str, Any] = {"function": {"arguments": piece}}
            if k == 0:
                call["function"]["name"] = name
                call["type"] = "function"
            if style == "churning-id":
                serial += 1
                call |= {"index": n, "id": f"call_{serial}"}
            elif style == "all-at-index-0":
                call["index"] = 0
                if k == 0:
                    call["id"] = f"call_{n}"
            elif style == "one-id-for-all":
                call["index"] = n
                if k == 0:
                    call["id"] = "call_0"
            elif style == "reference":
                call["index"] = n
                if k == 0:
                    call["id"] = f"call_{n}"
            chunks.append(
                {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
            )
    chunks.append(
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    )
    return style, calls, chunks


def decode(chunks: list[dict[str, Any]]) -> list[Event]:
    decoder = OpenAIChatDecoder(thread_id="t", run_id="r")
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    events = decoder.feed(body) + decoder.close()
    assert decoder.error is None, decoder.error
    return events


def check_events(calls: list[Call], events: list[Event]) -> list[str]:
    wire = [event_to_wire(e) for e in events]
    starts = [e for e in wire if e["type"] == "TOOL_CALL_START"]
    ids = [e["toolCallId"] for e in starts]
    assert len(set(ids)) == len(ids), ids
    assert [e["toolCallName"] for e in starts] == [c[0] for c in calls]
    args = {i: "" for i in ids}
    for e in wire:
        if e["type"] == "TOOL_CALL_ARGS":
            args[e["toolCallId"]] += e["delta"]
    assert [json.loads(args[i]) for i in ids] == [c[1] for c in calls]
    return ids


@SETTINGS
@given(drawn=st.lists(hosts(), min_size=8, max_size=10))
def test_every_call_is_its_own_entity_on_both_real_clients(
    drawn: list[tuple[str, list[Call], list[dict[str, Any]]]],
) -> None:
    require_harness()
    jobs: list[Any] = []
    for i, (_style, calls, chunks) in enumerate(drawn):
        events = decode(chunks)
        check_events(calls, events)
        agui, ai_sdk = AguiEncoder(), AiSdkEncoder()
        jobs.append((f"{i}@agui", "agui", b"".join(map(agui.encode, events)) + agui.close()))
        jobs.append((f"{i}@ai-v7", "ai-v7", b"".join(map(ai_sdk.encode, events)) + ai_sdk.close()))
    results = replay(jobs)
    for i, (style, calls, _chunks) in enumerate(drawn):
        agui_result, ai_result = results[f"{i}@agui"], results[f"{i}@ai-v7"]
        assert agui_result["accepted"], (style, agui_result["error"])
        held = [
            c
            for m in agui_result["messages"]
            if m["role"] == "assistant"
            for c in m.get("toolCalls") or ()
        ]
        assert [
            (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in held
        ] == calls
        assert ai_result["accepted"], (style, ai_result["error"])
        (message,) = [m for m in ai_result["messages"] if m["role"] == "assistant"]
        parts = [p for p in message["parts"] if p["type"].startswith("tool-")]
        assert [(p["type"][5:], p["input"]) for p in parts] == calls, style
