"""``GET /metrics``: process counters in the Prometheus text exposition format (0.0.4).

Exposed (all counters, since the process started)::

    agui_gateway_ui_compiled_total                   A2UI surfaces compiled from ui_hints
    agui_gateway_ui_rejected_total{reason="..."}     tool results that got no UI, by reason
                                                     (invalid_hints, data_not_found,
                                                     data_mismatch, unsafe_url, too_many_items,
                                                     too_large, schema_invalid,
                                                     metadata_too_large)
    agui_gateway_ui_cache_hits_total                 component-tree cache hits
    agui_gateway_ui_cache_misses_total               component-tree cache misses
    agui_gateway_ui_validations_total                trees checked against the A2UI v0.9 schema

Every reason of ``agui_codecs.ui`` is listed with 0 before it first happens, so alerts on
``rate(agui_gateway_ui_rejected_total[5m])`` work from the start.
"""

from __future__ import annotations

from typing import Final

from agui_codecs.ui import UiStats

__all__ = ["METRICS_CONTENT_TYPE", "UI_REJECT_REASONS", "render_metrics"]

METRICS_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
"""Content type of the Prometheus text format."""

UI_REJECT_REASONS: Final[tuple[str, ...]] = (
    "invalid_hints",
    "data_not_found",
    "data_mismatch",
    "unsafe_url",
    "too_many_items",
    "too_large",
    "schema_invalid",
    "metadata_too_large",
)
"""Reasons ``agui_codecs.ui`` counts in ``UiStats.rejected`` (others are exported as they come)."""

_PREFIX: Final = "agui_gateway_ui_"


def _counter(name: str, help_text: str, samples: list[tuple[str, int]]) -> list[str]:
    lines = [f"# HELP {_PREFIX}{name} {help_text}", f"# TYPE {_PREFIX}{name} counter"]
    lines += [f"{_PREFIX}{name}{labels} {value}" for labels, value in samples]
    return lines


def _label(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{{reason="{escaped}"}}'


def render_metrics(ui: UiStats) -> bytes:
    """The ``/metrics`` body for the compiler counters ``ui`` (see the module docstring)."""
    rejected = {reason: 0 for reason in UI_REJECT_REASONS}
    rejected.update(ui.rejected)
    lines = [
        *_counter("compiled_total", "A2UI surfaces compiled from ui_hints.", [("", ui.compiled)]),
        *_counter(
            "rejected_total",
            "Tool results that got no UI, by reason.",
            [(_label(reason), count) for reason, count in sorted(rejected.items())],
        ),
        *_counter("cache_hits_total", "Component-tree cache hits.", [("", ui.cache_hits)]),
        *_counter("cache_misses_total", "Component-tree cache misses.", [("", ui.cache_misses)]),
        *_counter(
            "validations_total",
            "Component trees validated against the A2UI v0.9 schema.",
            [("", ui.validations)],
        ),
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")
