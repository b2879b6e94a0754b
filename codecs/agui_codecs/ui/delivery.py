"""Delivery: a TOOL_CALL_RESULT plus its compiled ui_schema → the events / chunks to send.

AG-UI 1.0 profiles (``delivery``):

``activity`` (default)
    TOOL_CALL_RESULT unchanged (the model sees data, not UI), then ``ACTIVITY_SNAPSHOT
    {messageId: "a2ui-surface-<toolCallId>", activityType: "a2ui-surface", content:
    {a2ui_operations: messages}, replace: true}``, the shape ``@ag-ui/a2ui-middleware`` emits
    and CopilotKit renders. ``@ag-ui/client`` 1.0 turns it into a ``role: "activity"`` message
    and never sends activity messages back to the agent. The event ``metadata`` carries the
    ui_schema envelope without ``messages`` (``{"ui_schema": {format, version, catalogId,
    surfaceId, toolCallId}}``) so :func:`ui_schema_of` can rebuild the ui_schema (AI SDK
    encoder, replay) and tell our activities from upstream ``a2ui-surface`` ones.
``metadata``
    The whole ui_schema in TOOL_CALL_RESULT ``metadata.ui_schema``. ``@ag-ui/client`` merges
    event metadata into the tool message, and tool messages are sent back with every later
    request, so the ui_schema is dropped (warning, counter ``metadata_too_large``) above
    ``metadata_max_bytes``.
``seed``
    A top-level ``ui_schema`` on TOOL_CALL_RESULT, as in the seed protocol. Non-portable:
    ``@ag-ui/client`` 1.0 strips unknown top-level fields, so only custom clients see it.

AI SDK (``ai`` 5/6/7 UIMessageChunk): after ``tool-output-available``, ``{"type":
"data-ui-schema", "id": "<toolCallId>", "data": ui_schema}`` (:func:`ai_sdk_ui_chunk`); the
client keeps it as a ``data-ui-schema`` part of the assistant message (same id → replaced).

Upstream ``a2ui-surface`` and ``mcp-apps`` activities are not touched by anything here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, Literal

import orjson
from ag_ui.core import ActivitySnapshotEvent, Event, ToolCallResultEvent

from ..events import event_to_wire
from .compiler import UiSchema, UiSchemaCompiler
from .hints import UiHints, hints_from_metadata, hints_from_output

__all__ = [
    "DEFAULT_METADATA_MAX_BYTES",
    "DELIVERY_PROFILES",
    "UI_ACTIVITY_TYPE",
    "Delivery",
    "ai_sdk_ui_chunk",
    "attach_ui",
    "select_hints",
    "tool_output",
    "ui_activity_event",
    "ui_events",
    "ui_schema_of",
    "wire_ui_schema",
]

logger = logging.getLogger("agui_codecs.ui")

UI_ACTIVITY_TYPE: Final = "a2ui-surface"
DELIVERY_PROFILES: Final = ("activity", "metadata", "seed")
DEFAULT_METADATA_MAX_BYTES: Final = 32 * 1024
Delivery = Literal["activity", "metadata", "seed"]

_ENVELOPE_KEYS: Final = ("format", "version", "catalogId", "surfaceId", "toolCallId")
_ACTIVITY_PREFIX: Final = "a2ui-surface-"


def tool_output(content: str | list[Any]) -> Any:
    """Decode TOOL_CALL_RESULT ``content`` into the tool output the hints point into.

    A string is parsed as JSON, else kept as the raw string (``code``/``diff`` hints can show
    it). A list of content parts (AG-UI 1.0 multimodal) uses its text parts joined.
    """
    if not isinstance(content, str):
        texts = [getattr(p, "text", None) for p in content]
        content = "".join(t for t in texts if isinstance(t, str))
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return content


def select_hints(
    route_hints: UiHints | None, output: Any, metadata: Mapping[str, Any] | None
) -> tuple[UiHints | Any, str] | None:
    """Pick the hints for one result: route config, else ``ui_hints`` in the output, else
    ``metadata.tool_agent_output.ui_hints``. Returns ``(hints, source)`` or None."""
    if route_hints is not None:
        return route_hints, "route"
    found = hints_from_output(output)
    if found is not None:
        return found, "result"
    found = hints_from_metadata(metadata)
    if found is not None:
        return found, "metadata"
    return None


def ui_activity_event(ui_schema: UiSchema) -> ActivitySnapshotEvent:
    """The ACTIVITY_SNAPSHOT carrying ``ui_schema`` (profile ``activity``)."""
    return ActivitySnapshotEvent(
        message_id=_ACTIVITY_PREFIX + ui_schema["toolCallId"],
        activity_type=UI_ACTIVITY_TYPE,
        content={"a2ui_operations": ui_schema["messages"]},
        replace=True,
        metadata={"ui_schema": {k: ui_schema[k] for k in _ENVELOPE_KEYS}},
    )


def ui_events(
    result: ToolCallResultEvent,
    ui_schema: UiSchema,
    *,
    delivery: Delivery = "activity",
    metadata_max_bytes: int = DEFAULT_METADATA_MAX_BYTES,
    compiler: UiSchemaCompiler | None = None,
) -> list[Event]:
    """The events that replace ``result`` on the AG-UI wire for ``delivery``.

    ``compiler`` (optional) receives the ``metadata_too_large`` counter.

    Raises:
        ValueError: unknown ``delivery``.
    """
    if delivery == "activity":
        return [result, ui_activity_event(ui_schema)]
    if delivery == "metadata":
        size = len(orjson.dumps(ui_schema))
        if size > metadata_max_bytes:
            if compiler is not None:
                compiler.stats.reject("metadata_too_large")
            logger.warning(
                "no UI for toolCallId %s: ui_schema is %d bytes, metadata cap is %d",
                result.tool_call_id,
                size,
                metadata_max_bytes,
            )
            return [result]
        metadata = {**(result.metadata or {}), "ui_schema": ui_schema}
        return [result.model_copy(update={"metadata": metadata})]
    if delivery == "seed":
        data = result.model_dump(by_alias=False, exclude_none=True)
        data["ui_schema"] = ui_schema
        return [ToolCallResultEvent(**data)]
    raise ValueError(f"unknown ui delivery profile {delivery!r}; use one of {DELIVERY_PROFILES}")


def attach_ui(
    compiler: UiSchemaCompiler,
    result: ToolCallResultEvent,
    *,
    route_hints: UiHints | None = None,
    tool_name: str | None = None,
    locale: str = "en",
    profile: str = "copilotkit",
    delivery: Delivery = "activity",
    metadata_max_bytes: int = DEFAULT_METADATA_MAX_BYTES,
) -> list[Event]:
    """One call for the gateway: hints lookup + compile + delivery for a TOOL_CALL_RESULT.

    Returns ``[result]`` when there are no hints, the result is a tool error
    (``metadata.isError``, ARCHITECTURE.md) or no UI could be built (never raises for bad hints
    or data), else the events of :func:`ui_events`.
    """
    if (result.metadata or {}).get("isError"):
        return [result]
    output = tool_output(result.content)
    chosen = select_hints(route_hints, output, result.metadata)
    if chosen is None:
        return [result]
    ui_schema = compiler.compile(
        chosen[0],
        output,
        tool_call_id=result.tool_call_id,
        locale=locale,
        profile=profile,
        tool_name=tool_name,
    )
    if ui_schema is None:
        return [result]
    return ui_events(
        result,
        ui_schema,
        delivery=delivery,
        metadata_max_bytes=metadata_max_bytes,
        compiler=compiler,
    )


def ui_schema_of(event: Event) -> UiSchema | None:
    """The ui_schema an event carries in any delivery profile, or None.

    Recognizes our ACTIVITY_SNAPSHOT (metadata envelope + ``a2ui_operations``), TOOL_CALL_RESULT
    ``metadata.ui_schema`` and a top-level ``ui_schema`` extra field. Upstream ``a2ui-surface``
    activities (no envelope) give None. :func:`wire_ui_schema` is the same on a wire dict.
    """
    if isinstance(event, ActivitySnapshotEvent | ToolCallResultEvent):
        return wire_ui_schema(event_to_wire(event))
    return None


def wire_ui_schema(wire: Mapping[str, Any]) -> UiSchema | None:
    """:func:`ui_schema_of` of an AG-UI wire event (camelCase; extra fields at the top level,
    where ``event_to_wire`` puts them)."""
    kind = wire.get("type")
    if kind == "ACTIVITY_SNAPSHOT":
        meta = wire.get("metadata")
        envelope = meta.get("ui_schema") if isinstance(meta, Mapping) else None
        content = wire.get("content")
        ops = content.get("a2ui_operations") if isinstance(content, Mapping) else None
        if (
            wire.get("activityType") == UI_ACTIVITY_TYPE
            and isinstance(envelope, Mapping)
            and isinstance(ops, list)
        ):
            return {**envelope, "messages": ops}
        return None
    if kind == "TOOL_CALL_RESULT":
        meta = wire.get("metadata")
        found = meta.get("ui_schema") if isinstance(meta, Mapping) else None
        if found is None:
            found = wire.get("ui_schema")
        if isinstance(found, Mapping) and found.get("format") == "a2ui":
            return dict(found)
    return None


def ai_sdk_ui_chunk(ui_schema: UiSchema) -> dict[str, Any]:
    """The AI SDK UIMessageChunk for ``ui_schema``: ``{type: "data-ui-schema", id, data}``."""
    return {"type": "data-ui-schema", "id": ui_schema["toolCallId"], "data": ui_schema}
