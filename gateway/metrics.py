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
    agui_gateway_decoder_internal_errors_total{decoder="..."}
                                                     runs ended by a decoder's own bug
                                                     (INTERNAL_DECODER_ERROR), by decoder

Every reason of ``agui_codecs.ui`` and every registered decoder is listed with 0 before it
first happens, so alerts on ``rate(agui_gateway_ui_rejected_total[5m])`` or on
``agui_gateway_decoder_internal_errors_total > 0`` work from the start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from agui_codecs import DECODERS
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


def _counter(
    name: str, help_text: str, samples: list[tuple[str, int]], prefix: str = _PREFIX
) -> list[str]:
    lines = [f"# HELP {prefix}{name} {help_text}", f"# TYPE {prefix}{name} counter"]
    lines += [f"{prefix}{name}{labels} {value}" for labels, value in samples]
    return lines


def _label(value: str, name: str = "reason") -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{{{name}="{escaped}"}}'


def render_metrics(ui: UiStats, decoder_errors: Mapping[str, int] | None = None) -> bytes:
    """The ``/metrics`` body (see the module docstring).

    Args:
        ui: the compiler counters.
        decoder_errors: internal decoder errors by decoder name
            (``agui_codecs.protocols.base.INTERNAL_ERRORS``); ``None`` counts none.
    """
    internal = {name: 0 for name in DECODERS}
    internal.update(decoder_errors or {})
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
        *_counter(
            "decoder_internal_errors_total",
            "Runs ended by a decoder's own bug (INTERNAL_DECODER_ERROR), by decoder.",
            [(_label(name, "decoder"), count) for name, count in sorted(internal.items())],
            prefix="agui_gateway_",
        ),
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")
