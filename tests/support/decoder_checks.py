"""Shared assertions for decoder tests: a decoded run must be a legal AG-UI 1.0 run."""

from __future__ import annotations

import random
from typing import Any

import orjson
from ag_ui.core import Event

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire

__all__ = ["assert_well_formed_run", "decode_all", "decode_split", "wire"]


def wire(events: list[Event]) -> list[dict[str, Any]]:
    return [event_to_wire(e) for e in events]


def decode_all(name: str, data: bytes, **options: Any) -> list[Event]:
    d = get_decoder(name, **options)
    return d.feed(data) + d.close()


def decode_split(name: str, data: bytes, cuts: list[int], **options: Any) -> list[Event]:
    d = get_decoder(name, **options)
    out: list[Event] = []
    prev = 0
    for cut in sorted({c for c in cuts if 0 < c < len(data)}):
        out += d.feed(data[prev:cut])
        prev = cut
    return out + d.feed(data[prev:]) + d.close()


def random_cuts(data: bytes, seed: int, n: int = 40) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(1, max(2, len(data))) for _ in range(n)]


def assert_well_formed_run(events: list[Event]) -> None:
    """Check the AG-UI 1.0 verify rules (docs/protocols.md §2.3) our decoders promise, plus hygiene:
    runs in sequence, each opened by RUN_STARTED and closed by exactly one terminal event, the
    stream ends with a terminal event, balanced START/END per id, ARGS parse as JSON at END."""
    evs = wire(events)
    assert evs, "no events"
    assert evs[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), evs[-1]
    active = False
    for i, e in enumerate(evs):
        if e["type"] == "RUN_STARTED":
            assert not active, f"event {i}: RUN_STARTED while a run is active"
            assert e.get("protocolVersion") == "1.0"
            active = True
        else:
            assert active, f"event {i}: {e['type']} outside a run"
            if e["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                active = False
    text: set[str] = set()
    reasoning: set[str] = set()
    spans: set[str] = set()
    tools: dict[str, list[str]] = {}
    for i, e in enumerate(evs):
        t = e["type"]
        assert None not in e.values(), f"null field in event {i}: {e}"
        if t == "TEXT_MESSAGE_START":
            assert e["messageId"] not in text, f"event {i}: text {e['messageId']} already open"
            text.add(e["messageId"])
        elif t in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"):
            assert e["messageId"] in text, f"event {i}: {t} for closed text {e['messageId']}"
            if t == "TEXT_MESSAGE_END":
                text.discard(e["messageId"])
        elif t == "REASONING_START":
            assert e["messageId"] not in spans
            spans.add(e["messageId"])
        elif t == "REASONING_END":
            assert e["messageId"] in spans
            spans.discard(e["messageId"])
        elif t == "REASONING_MESSAGE_START":
            assert e["messageId"] not in reasoning
            reasoning.add(e["messageId"])
        elif t in ("REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END"):
            assert e["messageId"] in reasoning, f"event {i}: {t} for closed reasoning"
            if t == "REASONING_MESSAGE_END":
                reasoning.discard(e["messageId"])
        elif t == "TOOL_CALL_START":
            assert e["toolCallId"] not in tools, f"event {i}: tool call already open"
            tools[e["toolCallId"]] = []
        elif t == "TOOL_CALL_ARGS":
            assert e["toolCallId"] in tools, f"event {i}: ARGS for a closed call"
            tools[e["toolCallId"]].append(e["delta"])
        elif t == "TOOL_CALL_END":
            assert e["toolCallId"] in tools, f"event {i}: END for a closed call"
            args = "".join(tools.pop(e["toolCallId"]))
            if args:
                orjson.loads(args)  # concatenated ARGS parse as JSON at END
        elif t == "RUN_FINISHED":
            assert not (text or reasoning or spans or tools), "RUN_FINISHED with parts open"
        elif t == "RUN_ERROR":
            assert e.get("code"), "RUN_ERROR without a code"
            assert not (text or reasoning or spans or tools), "RUN_ERROR with parts left open"
