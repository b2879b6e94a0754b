"""Helpers shared by the Anthropic decoder tests (``tests/codecs/test_anthropic*.py``).

Decoding whole, split or byte by byte; Anthropic-style SSE and the stream event builders
(``message_start``, content blocks, deltas, the ending); the corpus files parsed independently
of the decoder; and :func:`assert_complete_run`, the AG-UI 1.0 verify rules
(``docs/protocols.md`` §2.3) as data.
They are asked of the conformance kit, plus one promise of the Anthropic decoder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ag_ui.core import Event, EventType
from corpus import require_corpus
from decoder_checks import assert_legal_run

from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.anthropic.decoder import AnthropicDecoder

__all__ = [
    "MESSAGE_START",
    "T",
    "ai_sdk_chunks",
    "assert_complete_run",
    "corpus_file",
    "decode",
    "decode_bytewise",
    "delta",
    "ending",
    "of_type",
    "sse",
    "start",
    "stop",
    "text_block",
    "upstream_events",
]

T = EventType


def decode(data: bytes, cuts: Iterable[int] = (), **options: Any) -> list[Event]:
    """Feed ``data`` split at ``cuts`` (byte offsets), then close."""
    decoder = AnthropicDecoder(**options)
    out: list[Event] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    out += decoder.feed(data[start:])
    return out + decoder.close()


def decode_bytewise(data: bytes) -> list[Event]:
    decoder = AnthropicDecoder()
    out: list[Event] = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    return out + decoder.close()


def of_type(events: list[Event], *types: EventType) -> list[dict[str, Any]]:
    return [event_to_wire(e) for e in events if e.type in types]


def sse(*payloads: dict[str, Any], crlf: bool = False) -> bytes:
    """Anthropic-style SSE: ``event: <type>`` + ``data: <json>`` per payload."""
    nl = "\r\n" if crlf else "\n"
    return "".join(
        f"event: {p['type']}{nl}data: {json.dumps(p)}{nl}{nl}" for p in payloads
    ).encode()


def upstream_events(path: Path) -> list[dict[str, Any]]:
    """The upstream payloads of a corpus file, parsed independently of the decoder."""
    text = path.read_text("utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def ai_sdk_chunks(events: list[Event]) -> list[Any]:
    """The AI SDK encoder's output, parsed back into chunk objects (``"[DONE]"`` kept)."""
    encoder = AiSdkEncoder()
    body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    out: list[Any] = []
    for block in body.decode().split("\n\n"):
        if block.startswith("data: "):
            data = block[6:]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def text_block(index: int, *deltas: str) -> list[dict[str, Any]]:
    return [
        start(index, {"type": "text", "text": ""}),
        *(delta(index, "text_delta", text=d) for d in deltas),
        stop(index),
    ]


def ending(stop_reason: str = "end_turn", **usage: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage or {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]


def assert_complete_run(events: list[Event]) -> None:
    """One legal run (the conformance kit, :func:`decoder_checks.assert_legal_run`: AG-UI
    verify rules, ARGS that parse as JSON at END...) with exactly one terminal event, and the
    Anthropic decoder's own promise: a signature (REASONING_ENCRYPTED_VALUE on a reasoning
    message) arrives while that reasoning message is still open."""
    assert_legal_run(events)
    assert events and events[0].type == T.RUN_STARTED
    assert sum(e.type in (T.RUN_FINISHED, T.RUN_ERROR) for e in events) == 1
    reasoning: set[str] = set()
    for e in events:
        w = event_to_wire(e)
        if e.type == T.REASONING_MESSAGE_START:
            reasoning.add(w["messageId"])
        elif e.type == T.REASONING_MESSAGE_END:
            reasoning.discard(w["messageId"])
        elif e.type == T.REASONING_ENCRYPTED_VALUE and w["subtype"] == "message":
            assert w["entityId"] in reasoning, f"signature after its reasoning ended: {w}"


def corpus_file(name: str) -> Path:
    files = {p.name: p for p in require_corpus("anthropic")}
    return files[name]
