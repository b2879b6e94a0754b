"""Helpers shared by the Gemini decoder tests (``tests/codecs/test_gemini*.py``).

Decoding whole or split; the corpus files parsed independently of the decoder; builders of
``GenerateContentResponse`` bodies and their SSE framing; the parsed arguments of each tool
call; and the AG-UI TokenUsage expected for a Gemini ``usageMetadata``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from ag_ui.core import Event
from decoder_checks import wire

from agui_codecs.protocols.gemini.decoder import GeminiDecoder

__all__ = [
    "call_args",
    "decode",
    "expected_usage",
    "of_type",
    "response",
    "sse",
    "upstream",
]


def decode(data: bytes, cuts: Iterable[int] = (), **options: Any) -> list[Event]:
    """Feed ``data`` split at ``cuts`` (byte offsets), then close."""
    decoder = GeminiDecoder(**options)
    out: list[Event] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    return out + decoder.feed(data[start:]) + decoder.close()


def of_type(events: list[Event], *types: str) -> list[dict[str, Any]]:
    return [w for w in wire(events) if w["type"] in types]


def upstream(path: Path) -> list[dict[str, Any]]:
    """The GenerateContentResponse objects of a corpus file, parsed without the decoder."""
    text = path.read_text("utf-8")
    if path.suffix == ".json":
        return list(json.loads(text))
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def response(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    rid: str = "resp-1",
    **candidate: Any,
) -> dict[str, Any]:
    """A GenerateContentResponse with one candidate (REST v1beta shape)."""
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    cand.update(candidate)
    body: dict[str, Any] = {"candidates": [cand], "modelVersion": "gemini-test", "responseId": rid}
    if usage:
        body["usageMetadata"] = usage
    return body


def sse(*bodies: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(b) + b"\r\n\r\n" for b in bodies)


def call_args(events: list[Event]) -> dict[str, Any]:
    """toolCallId -> parsed concatenation of its ARGS (checked at END by the run checks)."""
    args: dict[str, str] = {}
    for w in wire(events):
        if w["type"] == "TOOL_CALL_START":
            args[w["toolCallId"]] = ""
        elif w["type"] == "TOOL_CALL_ARGS":
            args[w["toolCallId"]] += w["delta"]
    return {k: json.loads(v) if v else None for k, v in args.items()}


def expected_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """AG-UI TokenUsage (wire) for a Gemini usageMetadata, by the accounting rules."""
    prompt = usage.get("promptTokenCount", 0) + usage.get("toolUsePromptTokenCount", 0)
    output = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    out = {
        "provider": "google",
        "inputTokens": prompt,
        "outputTokens": output,
        "totalTokens": usage["totalTokenCount"],
    }
    if "thoughtsTokenCount" in usage:
        out["reasoningTokens"] = usage["thoughtsTokenCount"]
    if "cachedContentTokenCount" in usage:
        out["cachedInputTokens"] = usage["cachedContentTokenCount"]
    return out
