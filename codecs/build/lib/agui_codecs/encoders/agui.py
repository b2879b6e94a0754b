"""AG-UI SSE encoder: one ``data: <compact JSON>`` event per AG-UI event, LF framing.

Wire rules (``@ag-ui/client`` 1.0 ``src/transform/sse.ts`` and ``spec/1.0/schema.json``; see
``docs/protocols.md`` §1.2, §2.1): events split on ``\\n\\n`` only, so LF framing; camelCase
keys; optional fields omitted, never ``null``; compact JSON (no raw newlines). ``id:`` and
``event:`` lines are optional (the client ignores them; the durable-run endpoints add them).
"""

from __future__ import annotations

from typing import ClassVar

import orjson
from ag_ui.core import Event

from ..events import event_to_wire

__all__ = ["AguiEncoder"]


class AguiEncoder:
    """Encode AG-UI events as AG-UI SSE bytes.

    Args:
        event_lines: also write ``event: <TYPE>`` lines (off by default).
    """

    name: ClassVar[str] = "agui"
    media_type: ClassVar[str] = "text/event-stream"
    headers: ClassVar[dict[str, str]] = {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
    }

    def __init__(self, *, event_lines: bool = False) -> None:
        self.event_lines = event_lines

    def encode(self, event: Event, *, id: str | None = None) -> bytes:
        """Return the SSE bytes of one event (``id`` adds an ``id:`` line)."""
        wire = event_to_wire(event)
        head = b""
        if self.event_lines:
            head += b"event: " + wire["type"].encode() + b"\n"
        if id is not None:
            head += b"id: " + id.encode() + b"\n"
        return head + b"data: " + orjson.dumps(wire) + b"\n\n"

    def close(self) -> bytes:
        """Bytes to send at end of stream: none for AG-UI."""
        return b""
