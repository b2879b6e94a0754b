"""Helpers shared by the upstream AI SDK decoder tests (``tests/codecs/test_ai_sdk_decoder*``).

Decoding whole or split, the wire form of ``createUIMessageStreamResponse`` (a whole run or
loose chunks) and the argument text of each tool call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
from ag_ui.core import Event
from decoder_checks import wire

from agui_codecs.protocols.ai_sdk.decoder import AiSdkUpstreamDecoder

__all__ = [
    "call_args",
    "decode",
    "of_type",
    "run",
    "sse",
]


def decode(data: bytes, cuts: Iterable[int] = (), **options: Any) -> list[Event]:
    decoder = AiSdkUpstreamDecoder(**options)
    out: list[Event] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    return out + decoder.feed(data[start:]) + decoder.close()


def of_type(events: list[Event], *types: str) -> list[dict[str, Any]]:
    return [w for w in wire(events) if w["type"] in types]


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """The wire form of ``createUIMessageStreamResponse``: ``data: <json>`` + ``[DONE]``."""
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def run(*chunks: dict[str, Any]) -> bytes:
    """A complete stream: start, start-step, ``chunks``, finish-step, finish, [DONE]."""
    return sse(
        {"type": "start", "messageId": "msg-1"},
        {"type": "start-step"},
        *chunks,
        {"type": "finish-step"},
        {"type": "finish"},
    )


def call_args(events: list[Event]) -> dict[str, str]:
    args: dict[str, str] = {}
    for w in wire(events):
        if w["type"] == "TOOL_CALL_START":
            args[w["toolCallId"]] = ""
        elif w["type"] == "TOOL_CALL_ARGS":
            args[w["toolCallId"]] += w["delta"]
    return args
