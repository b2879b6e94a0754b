"""Helpers shared by the openai-responses decoder tests (``tests/codecs/test_openai_responses*``).

SSE bodies framed the way api.openai.com frames them, builders of ``response.*`` events and
items, the recorded corpus read without our framing code, and the decoded corpus files (cached).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import orjson
from corpus import CORPUS_DIR, require_corpus
from decoder_checks import decode_all, wire

from agui_codecs.encoders.ai_sdk import AiSdkEncoder

__all__ = [
    "FAMILY",
    "FUNCTION_CALL_ITEM",
    "MESSAGE_ITEM",
    "NAME",
    "REFUSAL",
    "ai_sdk_chunks",
    "cfile",
    "completed",
    "created",
    "decoded",
    "of_type",
    "refusal_body",
    "response",
    "sse",
    "upstream_payloads",
]

NAME = "openai-responses"
FAMILY = CORPUS_DIR / "openai-responses"


def sse(*events: dict[str, Any]) -> bytes:
    """An SSE body the way api.openai.com frames it: ``event: <type>`` + ``data: <json>``."""
    out = b""
    for e in events:
        out += b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
    return out


def response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": "gpt-4o-2024-08-06",
        "output": [],
        "usage": None,
    }
    body.update(extra)
    return body


def created(rid: str = "resp_1") -> dict[str, Any]:
    return {"type": "response.created", "response": response(id=rid)}


def completed(usage: dict[str, Any] | None = None, rid: str = "resp_1") -> dict[str, Any]:
    return {"type": "response.completed", "response": response("completed", id=rid, usage=usage)}


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def upstream_payloads(path: Path) -> list[dict[str, Any]]:
    """The recorded events, read without our framing code (``data:`` lines or JSON lines)."""
    out = []
    for line in path.read_bytes().splitlines():
        line = line.strip()
        if line.startswith(b"data:"):
            line = line[5:].strip()
        if line.startswith(b"{"):
            out.append(orjson.loads(line))
    return out


def cfile(name: str) -> Path:
    """A corpus file (skips locally, fails under CI=true, when the corpus is absent)."""
    require_corpus("openai-responses")
    return FAMILY / name


@functools.cache
def decoded(path: Path) -> list[dict[str, Any]]:
    return wire(decode_all(NAME, path.read_bytes()))


def ai_sdk_chunks(events: list[Any]) -> list[dict[str, Any]]:
    encoder = AiSdkEncoder()
    return [c for e in events for c in encoder.chunks(e)]


FUNCTION_CALL_ITEM = {
    "type": "function_call",
    "id": "fc_67e554a1de488191af0831d35cbe082e",
    "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
    "name": "get_capital",
    "arguments": "",
    "status": "in_progress",
}


REFUSAL = "I'm sorry, but I can't help with that."
MESSAGE_ITEM = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}


def refusal_body() -> bytes:
    part = {"type": "refusal", "refusal": REFUSAL}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "refusal", "refusal": ""},
        },
        {"type": "response.refusal.delta", **where, "delta": REFUSAL[:10]},
        {"type": "response.refusal.delta", **where, "delta": REFUSAL[10:]},
        {"type": "response.refusal.done", **where, "refusal": REFUSAL},
        {"type": "response.content_part.done", **where, "part": part},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "status": "completed", "content": [part]},
        },
        completed({"input_tokens": 10, "output_tokens": 9, "total_tokens": 19}),
    )
