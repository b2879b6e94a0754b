"""AG-UI SSE encoder: one ``data: <compact JSON>`` event per AG-UI event, LF framing.

Wire rules (``@ag-ui/client`` 1.0 ``src/transform/sse.ts`` and ``spec/1.0/schema.json``; see
``docs/protocols.md`` §1.2, §2.1): events split on ``\\n\\n`` only, so LF framing; camelCase
keys; optional fields omitted, never ``null``; compact JSON (no raw newlines). ``id:`` and
``event:`` lines are optional (the client ignores them; the durable-run endpoints add them:
the ``id:`` is the event's cursor, ``docs/runs.md`` §1).

The frame is the wire dict as it is (:mod:`agui_codecs.encoders.base`), so a stored event is
framed from its dict, or from its JSON when the caller passes it.

Lifecycle (``agui_codecs.core.illegal``): the encoder keeps no open/close bookkeeping of its
own. In strict mode (``AGUI_CODECS_STRICT=1``) it checks each event against the AG-UI
transition tables (a ``TransitionGuard``: ``@ag-ui/client`` 1.0.0 ``verifyEvents``, chunks
expanded first) and raises ``IllegalEventError`` naming the rule instead of framing an event
the client would reject; checking starts at the first RUN_STARTED, since a stream resumed from
a cursor (``docs/runs.md`` §1) begins inside a run. Outside strict mode every event is framed
as it is (the decoders and the run writer make the stream legal; nothing is repaired here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import orjson
from ag_ui.core import Event

from ..core.illegal import guard
from ..errors import LocalProtocolError
from ..events import event_json, event_to_wire
from ..sse import encode_data, encode_json
from .base import Encoder, WireEvent

__all__ = ["AguiEncoder"]


def _type(event: Event) -> str:
    """The event's wire ``type`` (its ``EventType`` value)."""
    return str(event.type.value)


class AguiEncoder(Encoder):
    """Encode AG-UI events as AG-UI SSE bytes; stateless apart from :meth:`close`.

    Args:
        event_lines: also write ``event: <TYPE>`` lines (off by default).

    Raises:
        IllegalEventError: from ``encode`` / ``encode_wire``, strict mode only (see the
            module docstring).
    """

    name: ClassVar[str] = "agui"
    headers: ClassVar[dict[str, str]] = {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
    }
    writes_ids: ClassVar[bool] = True

    def __init__(self, *, event_lines: bool = False) -> None:
        self.event_lines = event_lines
        self._closed = False
        self._guard = guard(from_run_started=True)

    def encode(self, event: Event, *, id: str | None = None) -> bytes:
        """The SSE frame of one event (``id`` adds an ``id:`` line)."""
        if self._closed:
            raise LocalProtocolError("AguiEncoder.encode() called after close()")
        if self._guard is None:  # one serialization, no wire dict (``events.event_json``)
            data = event_json(event)
            if id is None and not self.event_lines:
                return encode_json(data)
            return encode_data(data, event=_type(event) if self.event_lines else None, id=id)
        wire = event_to_wire(event)
        self._guard.check(wire)
        if id is None and not self.event_lines:
            return encode_json(orjson.dumps(wire))
        return encode_data(
            orjson.dumps(wire), event=wire["type"] if self.event_lines else None, id=id
        )

    def encode_wire(
        self, wire: WireEvent, *, id: str | None = None, json: bytes | None = None
    ) -> bytes:
        """The SSE frame of one wire event: ``[event: <type>]``, ``[id: <id>]``, ``data:``."""
        if self._closed:
            raise LocalProtocolError("AguiEncoder.encode() called after close()")
        if self._guard is not None:
            self._guard.check(wire)
        if json is None:
            data = orjson.dumps(wire)
            if id is None and not self.event_lines:
                return encode_json(data)
        else:
            data = json  # the caller's bytes: checked by encode_data
        return encode_data(data, event=wire["type"] if self.event_lines else None, id=id)

    def encode_serialized(
        self,
        event_type: str,
        json: bytes,
        load: Callable[[], WireEvent],
        *,
        id: str | None = None,
    ) -> bytes:
        """The SSE frame of one event given by its type and JSON (``Encoder.encode_serialized``):
        ``json`` framed as it is, never parsed (outside strict mode, whose guard reads
        ``load()``)."""
        if self._closed:
            raise LocalProtocolError("AguiEncoder.encode() called after close()")
        if self._guard is not None:
            self._guard.check(load())
        return encode_data(json, event=event_type if self.event_lines else None, id=id)

    def close(self) -> bytes:
        """Bytes to send at end of stream: none for AG-UI."""
        self._closed = True
        return b""
