"""UiStage: the event-stream step that adds UI after tool results (sans-I/O, one per run).

Sits between a decoder and the store/encoders: ``for e in batch: out += stage.process(e)``.
It remembers each TOOL_CALL_START's tool name (TOOL_CALL_RESULT carries only the id), and for
every TOOL_CALL_RESULT calls :func:`~.delivery.attach_ui` with the route's hints for that tool.
Results flagged ``metadata.isError`` (ARCHITECTURE.md, tool errors) and results that already
carry a ui_schema pass through; so do all other events, upstream ``a2ui-surface`` / ``mcp-apps``
activities included.
"""

from __future__ import annotations

from collections.abc import Mapping

from ag_ui.core import Event, ToolCallResultEvent, ToolCallStartEvent

from .compiler import DEFAULT_PROFILE, UiSchemaCompiler
from .delivery import DEFAULT_METADATA_MAX_BYTES, Delivery, attach_ui, ui_schema_of
from .hints import UiHints
from .locale import DEFAULT_LOCALE

__all__ = ["UiStage"]

_MAX_TRACKED = 1024  # tool names remembered per run


class UiStage:
    """Adds the UI events of one run.

    Args:
        compiler: the process-wide compiler (caches and counters are shared across runs).
        route_hints: ``{tool name: UiHints}`` from the route config
            (:func:`~.hints.validate_route_hints` at start-up).
        locale: the run's locale (:func:`~.locale.resolve_locale`).
        profile: client catalog profile (``copilotkit``, ``a2ui`` or a catalog id).
        delivery: AG-UI delivery profile (``activity``, ``metadata``, ``seed``).
        metadata_max_bytes: size cap of the ``metadata`` profile.
    """

    def __init__(
        self,
        compiler: UiSchemaCompiler,
        *,
        route_hints: Mapping[str, UiHints] | None = None,
        locale: str = DEFAULT_LOCALE,
        profile: str = DEFAULT_PROFILE,
        delivery: Delivery = "activity",
        metadata_max_bytes: int = DEFAULT_METADATA_MAX_BYTES,
    ) -> None:
        self.compiler = compiler
        self.route_hints = route_hints or {}
        self.locale = locale
        self.profile = profile
        self.delivery: Delivery = delivery
        self.metadata_max_bytes = metadata_max_bytes
        self._names: dict[str, str] = {}

    def process(self, event: Event) -> list[Event]:
        """The events to emit for ``event``: itself, or a result followed by its UI."""
        if isinstance(event, ToolCallStartEvent):
            if len(self._names) >= _MAX_TRACKED:
                self._names.pop(next(iter(self._names)))
            self._names[event.tool_call_id] = event.tool_call_name
            return [event]
        if not isinstance(event, ToolCallResultEvent):
            return [event]
        if ui_schema_of(event) is not None:
            return [event]
        name = self._names.get(event.tool_call_id)
        return attach_ui(
            self.compiler,
            event,
            route_hints=self.route_hints.get(name) if name is not None else None,
            tool_name=name,
            locale=self.locale,
            profile=self.profile,
            delivery=self.delivery,
            metadata_max_bytes=self.metadata_max_bytes,
        )
