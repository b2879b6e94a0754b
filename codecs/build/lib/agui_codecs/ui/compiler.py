"""The ui_schema compiler: ui_hints + tool output → an A2UI v0.9 surface (sans-I/O).

Output (a plain JSON-ready dict, :data:`UiSchema`)::

    {"format": "a2ui", "version": "v0.9", "catalogId": ..., "surfaceId": "tool-<toolCallId>",
     "toolCallId": ..., "messages": [createSurface, updateComponents, updateDataModel]}

Cost model. Three LRU-cached steps, then one per-call step:

1. hints → :class:`~.hints.UiHints` (JSON Schema validation), keyed by the canonical JSON of the
   hints; invalid hints are cached too, so a tool that always returns bad hints costs one
   warning per call, not one validation;
2. (hints, locale) → :class:`~.plan.Plan` (labels resolved);
3. (hints, locale, profile, catalogId, variant) → component list, checked once against the
   vendored A2UI v0.9 JSON Schema and for tree integrity (root, references, cycles);
4. per call: :func:`~.project.project` (data model) and three small message dicts. The cached
   component list is shared between calls: treat ui_schema values as read-only.

Never fails a run: any problem returns None, logs a warning on ``agui_codecs.ui`` and counts it
in :attr:`UiSchemaCompiler.stats` (``rejected[reason]``). Reasons: ``invalid_hints``,
``data_not_found``, ``data_mismatch``, ``unsafe_url``, ``too_many_items``, ``too_large``,
``schema_invalid`` (a compiler bug: the tree failed the A2UI schema; logged as an error).

Why not PyPI ``a2ui-core`` (0.4.0) for the message models: its package ``__init__`` imports
its RPC layer, which imports ``asyncio`` and ``concurrent.futures`` (codecs/ is sans-I/O); it
pulls ``babel`` and ``regex``; and it is a renderer-side engine (signals, data contexts,
23k lines) whose pydantic models would cost more per call than the three dicts we emit. We
validate against the same published JSON Schemas instead.

Not thread-safe (one compiler per event loop / worker, like the codecs).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .a2ui import A2UI_VERSION, catalog_id_for, check_tree, schema_errors
from .hints import UiHints, UiHintsError, canonical_key, parse_hints
from .layout import build_components, with_link_url
from .locale import DEFAULT_LOCALE, normalize_locale
from .plan import Plan, build_plan
from .project import UiDataError, project

__all__ = ["DEFAULT_PROFILE", "UiSchema", "UiSchemaCompiler", "UiStats", "surface_id_for"]

logger = logging.getLogger("agui_codecs.ui")

UiSchema = dict[str, Any]
"""``{format, version, catalogId, surfaceId, toolCallId, messages}`` (see the module docstring)."""

DEFAULT_PROFILE: Final = "copilotkit"


def surface_id_for(tool_call_id: str) -> str:
    """The A2UI surfaceId of the surface compiled for ``tool_call_id``."""
    return f"tool-{tool_call_id}"


@dataclass(slots=True)
class UiStats:
    """Counters (monotonic; export them as metrics).

    Attributes:
        compiled: surfaces produced.
        cache_hits / cache_misses: component-tree cache lookups.
        validations: component trees validated against the A2UI schema (one per cache miss).
        rejected: calls that produced no UI, by reason.
    """

    compiled: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    validations: int = 0
    rejected: dict[str, int] = field(default_factory=dict)

    def reject(self, reason: str) -> None:
        """Count one call without UI for ``reason``."""
        self.rejected[reason] = self.rejected.get(reason, 0) + 1


class _Lru:
    __slots__ = ("_data", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class _Rejected:
    """A cached negative result (invalid hints or a tree that failed validation)."""

    __slots__ = ("detail", "reason")

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail


class UiSchemaCompiler:
    """Compiles ui_hints + tool output into a ui_schema; owns the caches and the counters.

    Args:
        cache_size: entries per cache (hints, plans, trees); least recently used evicted.
        validate: check each new component tree against the A2UI v0.9 JSON Schema (keep on;
            off only for benchmarks of the cold path).
    """

    def __init__(self, *, cache_size: int = 512, validate: bool = True) -> None:
        self.stats = UiStats()
        self._validate = validate
        self._hints = _Lru(cache_size)
        self._plans = _Lru(cache_size)
        self._trees = _Lru(cache_size)

    def hints(self, raw: UiHints | Any) -> UiHints | UiHintsError:
        """Parse (cached) ``raw`` hints; an invalid one is returned as its error, not raised."""
        if isinstance(raw, UiHints):
            return raw
        try:
            key = canonical_key(raw)
        except UiHintsError as exc:
            return exc
        cached = self._hints.get(key)
        if cached is None:
            try:
                cached = parse_hints(raw, cache_key=key)
            except UiHintsError as exc:
                cached = exc
            self._hints.put(key, cached)
        result: UiHints | UiHintsError = cached
        return result

    def _plan(self, hints: UiHints, locale: str) -> Plan:
        key = (hints.cache_key, locale)
        plan = self._plans.get(key)
        if plan is None:
            plan = build_plan(hints, locale)
            self._plans.put(key, plan)
        result: Plan = plan
        return result

    def _tree(
        self, plan: Plan, profile: str, catalog_id: str, variant: tuple[bool, bool, tuple[str, ...]]
    ) -> list[dict[str, Any]] | _Rejected:
        key = (plan.hints.cache_key, plan.locale, profile, catalog_id, variant)
        tree = self._trees.get(key)
        if tree is not None:
            self.stats.cache_hits += 1
            result: list[dict[str, Any]] | _Rejected = tree
            return result
        self.stats.cache_misses += 1
        components = build_components(plan, variant)
        if self._validate:
            self.stats.validations += 1
            problems = check_tree(components) + schema_errors(
                _messages("validation", catalog_id, components, {})
            )
            if problems:
                logger.error(
                    "compiled A2UI tree failed validation (kind %s): %s",
                    plan.kind,
                    "; ".join(problems),
                )
                rejected = _Rejected("schema_invalid", problems[0])
                self._trees.put(key, rejected)
                return rejected
        self._trees.put(key, components)
        return components

    def compile(
        self,
        hints: UiHints | Any,
        output: Any,
        *,
        tool_call_id: str,
        locale: str = DEFAULT_LOCALE,
        profile: str = DEFAULT_PROFILE,
        tool_name: str | None = None,
    ) -> UiSchema | None:
        """Compile one tool result.

        Args:
            hints: validated :class:`UiHints` (route config) or raw decoded hints (per call).
            output: the decoded tool output (JSON value, or the raw string if not JSON).
            tool_call_id: the AG-UI toolCallId; names the surface.
            locale: request locale (see :func:`~.locale.resolve_locale`); normalized here.
            profile: ``copilotkit`` (default), ``a2ui``, or an explicit catalog id.
            tool_name: only for log messages.

        Returns:
            the ui_schema dict, or None (warning logged, ``stats.rejected`` counted).

        Raises:
            ValueError: ``profile`` is not a known profile nor a catalog id (a caller bug).
        """
        catalog_id = catalog_id_for(profile)
        parsed = self.hints(hints)
        if isinstance(parsed, UiHintsError):
            return self._reject("invalid_hints", str(parsed), tool_name, tool_call_id)
        plan = self._plan(parsed, normalize_locale(locale) or DEFAULT_LOCALE)
        try:
            projection = project(plan, output, tool_call_id=tool_call_id)
        except UiDataError as exc:
            return self._reject(exc.reason, exc.detail, tool_name, tool_call_id)
        tree = self._tree(plan, profile, catalog_id, projection.variant)
        if isinstance(tree, _Rejected):
            return self._reject(tree.reason, tree.detail, tool_name, tool_call_id)
        components = tree if projection.url is None else with_link_url(tree, projection.url)
        surface_id = surface_id_for(tool_call_id)
        self.stats.compiled += 1
        return {
            "format": "a2ui",
            "version": A2UI_VERSION,
            "catalogId": catalog_id,
            "surfaceId": surface_id,
            "toolCallId": tool_call_id,
            "messages": _messages(surface_id, catalog_id, components, projection.data),
        }

    def _reject(
        self, reason: str, detail: str, tool_name: str | None, tool_call_id: str
    ) -> UiSchema | None:
        self.stats.reject(reason)
        logger.warning(
            "no UI for tool %s (toolCallId %s): %s: %s",
            tool_name or "?",
            tool_call_id,
            reason,
            detail,
        )
        return None


def _messages(
    surface_id: str, catalog_id: str, components: list[dict[str, Any]], data: Mapping[str, Any]
) -> list[dict[str, Any]]:
    return [
        {
            "version": A2UI_VERSION,
            "createSurface": {"surfaceId": surface_id, "catalogId": catalog_id},
        },
        {
            "version": A2UI_VERSION,
            "updateComponents": {"surfaceId": surface_id, "components": components},
        },
        {
            "version": A2UI_VERSION,
            "updateDataModel": {"surfaceId": surface_id, "path": "/", "value": data},
        },
    ]
