"""agui_codecs.ui: compile tool-result ``ui_hints`` into A2UI v0.9 surfaces (sans-I/O).

Data flow::

    TOOL_CALL_RESULT ──tool_output()──► output ─┐
    route config / result / metadata hints ─────┼─► UiSchemaCompiler.compile() ─► ui_schema
                                                │        (cached tree + per-call projection)
    ui_schema ──ui_events()──► AG-UI events (activity | metadata | seed profile)
              ──ai_sdk_ui_chunk()──► AI SDK ``data-ui-schema`` chunk

:class:`UiStage` packages the first two lines as one event-stream step per run.

See ``README.md`` in this folder for the hints format with an example and the surface it
produces; ``ui_hints.v1.schema.json`` is the published JSON Schema of the hints.
"""

from __future__ import annotations

from .a2ui import (
    A2UI_BASIC_CATALOG_ID,
    A2UI_VERSION,
    CATALOG_PROFILES,
    COPILOTKIT_CATALOG_ID,
    catalog_id_for,
    check_tree,
    schema_errors,
)
from .compiler import DEFAULT_PROFILE, UiSchema, UiSchemaCompiler, UiStats, surface_id_for
from .delivery import (
    DEFAULT_METADATA_MAX_BYTES,
    DELIVERY_PROFILES,
    UI_ACTIVITY_TYPE,
    Delivery,
    ai_sdk_ui_chunk,
    attach_ui,
    select_hints,
    tool_output,
    ui_activity_event,
    ui_events,
    ui_schema_of,
    wire_ui_schema,
)
from .hints import (
    UiHints,
    UiHintsConfigError,
    UiHintsError,
    hints_from_metadata,
    hints_from_output,
    hints_schema,
    parse_hints,
    validate_route_hints,
)
from .locale import normalize_locale, pick_label, resolve_locale
from .stage import UiStage

__all__ = [
    "A2UI_BASIC_CATALOG_ID",
    "A2UI_VERSION",
    "CATALOG_PROFILES",
    "COPILOTKIT_CATALOG_ID",
    "DEFAULT_METADATA_MAX_BYTES",
    "DEFAULT_PROFILE",
    "DELIVERY_PROFILES",
    "UI_ACTIVITY_TYPE",
    "Delivery",
    "UiHints",
    "UiHintsConfigError",
    "UiHintsError",
    "UiSchema",
    "UiSchemaCompiler",
    "UiStage",
    "UiStats",
    "ai_sdk_ui_chunk",
    "attach_ui",
    "catalog_id_for",
    "check_tree",
    "hints_from_metadata",
    "hints_from_output",
    "hints_schema",
    "normalize_locale",
    "parse_hints",
    "pick_label",
    "resolve_locale",
    "schema_errors",
    "select_hints",
    "surface_id_for",
    "tool_output",
    "ui_activity_event",
    "ui_events",
    "ui_schema_of",
    "validate_route_hints",
    "wire_ui_schema",
]
