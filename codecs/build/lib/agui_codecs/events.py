"""The canonical event model: AG-UI 1.0 events from ``ag_ui.core`` (ag-ui-protocol 1.0).

There are no home-made event classes: every decoder yields ``ag_ui.core`` events and every
encoder consumes them. This module re-exports the union type and adds the two conversions the
codecs need on the hot path:

* :func:`event_to_wire` gives the wire dict (camelCase keys, optional fields omitted, never
  ``null``), the form ``@ag-ui/client`` 1.0 validates (``spec/1.0/schema.json``);
* :func:`parse_event` validates a wire dict back into its ``ag_ui.core`` class.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    Event,
    EventType,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    TokenUsage,
    ToolCallArgsEvent,
)
from pydantic import TypeAdapter

__all__ = ["Event", "EventType", "TokenUsage", "event_to_wire", "parse_event"]

_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def event_to_wire(event: Event) -> dict[str, Any]:
    """Return the AG-UI wire form of ``event``: a JSON-ready dict with camelCase keys.

    Optional fields without a value are omitted (``ag_ui.core``'s base model does this, because
    TypeScript clients reject ``null`` for optional fields).

    The three delta events (most of any stream) take a fast path that builds the same dict
    directly when no optional field is set; ``tests/codecs/test_events.py`` checks it against
    ``model_dump`` for arbitrary values.
    """
    cls = type(event)
    if cls in _DELTA_FIELDS and not _has_optional(event):
        key, attr = _DELTA_FIELDS[cls]
        return {"type": event.type.value, key: getattr(event, attr), "delta": event.delta}  # type: ignore[union-attr]
    return event.model_dump(mode="json", by_alias=True)


_DELTA_FIELDS: dict[type, tuple[str, str]] = {
    TextMessageContentEvent: ("messageId", "message_id"),
    ReasoningMessageContentEvent: ("messageId", "message_id"),
    ToolCallArgsEvent: ("toolCallId", "tool_call_id"),
}


def _has_optional(event: Event) -> bool:
    return (
        event.timestamp is not None
        or event.raw_event is not None
        or event.metadata is not None
        or event.subagent_run_id is not None  # type: ignore[union-attr]
        or bool(event.__pydantic_extra__)
    )


def parse_event(data: dict[str, Any]) -> Event:
    """Validate an AG-UI wire dict into its ``ag_ui.core`` event class.

    Raises:
        pydantic.ValidationError: unknown ``type`` or a malformed known field.
    """
    return _EVENT_ADAPTER.validate_python(data)
