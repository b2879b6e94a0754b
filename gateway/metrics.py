"""``GET /metrics``: the gateway's Prometheus metrics (``prometheus-client``), owned here.

Every metric the gateway exports is defined in this module; the code that sees a thing happen
calls one of the small ``record_*`` / ``track_*`` helpers below. Exposed (text format 0.0.4)::

    agui_gateway_http_requests_total{method,endpoint,route,status}   requests answered
    agui_gateway_http_request_duration_seconds{method,endpoint}      request to last byte
    agui_gateway_runs_total{route,outcome,code}      runs ended: outcome finished | error |
                                                     cancelled | interrupted; code = the
                                                     RUN_ERROR code ("" when finished)
    agui_gateway_active_runs                         runs pumped by this process now
    agui_gateway_active_streams                      SSE responses open now
    agui_gateway_active_readers                      run readers (store + broker) open now
    agui_gateway_events_in_total{type}               AG-UI events out of the upstream
                                                     pipeline (decoder + UI stage), by type
    agui_gateway_events_out_total{type,encoder}      events encoded for clients, by type
    agui_gateway_upstream_ttfb_seconds{route,protocol}       request sent -> first body byte
    agui_gateway_upstream_duration_seconds{route,protocol}   request sent -> stream ended
    agui_gateway_event_latency_seconds{stage}        the gateway's own time per event:
                                                     stage="decode" (upstream chunk in ->
                                                     its events out of the decoder),
                                                     stage="publish" (event out of the
                                                     pipeline -> published to readers)
    agui_gateway_tokens_total{route,model,kind}      tokens of ended runs (AG-UI ``usage``
                                                     entries): kind input | output |
                                                     reasoning | cached_input |
                                                     cache_write_input
    agui_gateway_cost_usd_total{route,model}         priced cost (``metadata.cost``, USD)
    agui_gateway_store_operation_seconds{operation}  SQL statements (SELECT, INSERT, ...)
    agui_gateway_store_errors_total{operation}       SQL statements that raised
    agui_gateway_broker_operation_seconds{operation} broker publish / read round trips
    agui_gateway_broker_errors_total{operation}      broker calls that failed
    agui_gateway_resumes_total{kind}                 streams resumed or re-joined: kind
                                                     last_event_id | snapshot | ai_sdk |
                                                     start_index (``WorkflowChatTransport``)
    agui_gateway_repairs_total{route,repair}         repairs by the AG-UI normalizer
                                                     (terminal ``metadata.repairs``) and by
                                                     the store guard (the pump)

and, per app, the ui_schema compiler's and the decoders' counters (:func:`render_metrics`)::

    agui_gateway_ui_compiled_total                   A2UI surfaces compiled from ui_hints
    agui_gateway_ui_rejected_total{reason="..."}     tool results that got no UI, by reason
    agui_gateway_ui_cache_hits_total / _misses_total component-tree cache
    agui_gateway_ui_validations_total                trees checked against the A2UI v0.9 schema
    agui_gateway_decoder_internal_errors_total{decoder="..."}
                                                     runs ended by a decoder's own bug
                                                     (INTERNAL_DECODER_ERROR), by decoder

Every reason of ``agui_codecs.ui`` and every registered decoder is listed with 0 before it
first happens, so alerts on ``rate(agui_gateway_ui_rejected_total[5m])`` or on
``agui_gateway_decoder_internal_errors_total > 0`` work from the start.

Several worker processes (``uvicorn --workers``, gunicorn): set ``PROMETHEUS_MULTIPROC_DIR``
to an empty, writable directory before the processes start; prometheus-client then keeps
the values in memory-mapped files there and ``/metrics`` (any worker) adds them up
(``prometheus_client.multiprocess``; gauges count live processes only: ``livesum``). The
per-app compiler counters are the answering worker's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import prometheus_client
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as _multiprocess

from agui_codecs import DECODERS
from agui_codecs.ui import UiStats

__all__ = [
    "ACTIVE_READERS",
    "ACTIVE_RUNS",
    "ACTIVE_STREAMS",
    "BROKER_ERRORS",
    "BROKER_SECONDS",
    "COST",
    "EVENTS_IN",
    "EVENTS_OUT",
    "EVENT_LATENCY",
    "METRICS_CONTENT_TYPE",
    "REPAIRS",
    "REQUESTS",
    "REQUEST_SECONDS",
    "RESUMES",
    "RUNS",
    "STORE_ERRORS",
    "STORE_SECONDS",
    "TOKENS",
    "UI_REJECT_REASONS",
    "UPSTREAM_SECONDS",
    "UPSTREAM_TTFB",
    "broker_call",
    "count_event_in",
    "count_event_out",
    "mark_process_dead",
    "multiprocess_enabled",
    "record_terminal",
    "render_metrics",
]

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created

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

_NS: Final = "agui_gateway"
_LATENCY_BUCKETS: Final = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    1.0,
)
_UPSTREAM_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

REQUESTS: Final = Counter(
    "http_requests",
    "HTTP requests answered, by endpoint (path template), gateway route and status.",
    ["method", "endpoint", "route", "status"],
    namespace=_NS,
)
REQUEST_SECONDS: Final = Histogram(
    "http_request_duration_seconds",
    "Seconds from a request's arrival to its last byte (a stream: its whole life).",
    ["method", "endpoint"],
    namespace=_NS,
    buckets=_UPSTREAM_BUCKETS,
)
RUNS: Final = Counter(
    "runs",
    "Runs ended, by route, outcome (finished, error, cancelled, interrupted) and error code.",
    ["route", "outcome", "code"],
    namespace=_NS,
)
ACTIVE_RUNS: Final = Gauge(
    "active_runs", "Runs pumped by this process now.", namespace=_NS, multiprocess_mode="livesum"
)
ACTIVE_STREAMS: Final = Gauge(
    "active_streams", "SSE responses open now.", namespace=_NS, multiprocess_mode="livesum"
)
ACTIVE_READERS: Final = Gauge(
    "active_readers",
    "Run readers (store replay + broker subscription) open now.",
    namespace=_NS,
    multiprocess_mode="livesum",
)
EVENTS_IN: Final = Counter(
    "events_in",
    "AG-UI events out of the upstream pipeline (decoder and UI stage), by type.",
    ["type"],
    namespace=_NS,
)
EVENTS_OUT: Final = Counter(
    "events_out",
    "Events encoded for clients, by AG-UI type and encoder.",
    ["type", "encoder"],
    namespace=_NS,
)
UPSTREAM_TTFB: Final = Histogram(
    "upstream_ttfb_seconds",
    "Seconds from sending the upstream request to its first body byte.",
    ["route", "protocol"],
    namespace=_NS,
    buckets=_UPSTREAM_BUCKETS,
)
UPSTREAM_SECONDS: Final = Histogram(
    "upstream_duration_seconds",
    "Seconds from sending the upstream request to the end of its stream.",
    ["route", "protocol"],
    namespace=_NS,
    buckets=_UPSTREAM_BUCKETS,
)
EVENT_LATENCY: Final = Histogram(
    "event_latency_seconds",
    "The gateway's own time per event: decode (chunk in -> events out of the decoder), "
    "publish (event out of the pipeline -> published to readers).",
    ["stage"],
    namespace=_NS,
    buckets=_LATENCY_BUCKETS,
)
TOKENS: Final = Counter(
    "tokens",
    "Tokens of ended runs (AG-UI usage entries), by route, model and kind.",
    ["route", "model", "kind"],
    namespace=_NS,
)
COST: Final = Counter(
    "cost_usd",
    "Priced cost of ended runs in USD (RUN_FINISHED / RUN_ERROR metadata.cost).",
    ["route", "model"],
    namespace=_NS,
)
STORE_SECONDS: Final = Histogram(
    "store_operation_seconds",
    "Seconds per SQL statement of the run store, by statement (SELECT, INSERT, ...).",
    ["operation"],
    namespace=_NS,
    buckets=_LATENCY_BUCKETS,
)
STORE_ERRORS: Final = Counter(
    "store_errors", "SQL statements of the run store that raised.", ["operation"], namespace=_NS
)
BROKER_SECONDS: Final = Histogram(
    "broker_operation_seconds",
    "Seconds per broker call (publish, read).",
    ["operation"],
    namespace=_NS,
    buckets=_LATENCY_BUCKETS,
)
BROKER_ERRORS: Final = Counter(
    "broker_errors", "Broker calls that failed (publish, read).", ["operation"], namespace=_NS
)
RESUMES: Final = Counter(
    "resumes",
    "Streams resumed (last_event_id, snapshot, start_index) or re-joined (ai_sdk).",
    ["kind"],
    namespace=_NS,
)
REPAIRS: Final = Counter(
    "repairs",
    "Repairs made by the AG-UI normalizer (terminal metadata.repairs) and the store guard, "
    "by route and repair.",
    ["route", "repair"],
    namespace=_NS,
)

_TOKEN_KINDS: Final = (
    ("inputTokens", "input"),
    ("outputTokens", "output"),
    ("reasoningTokens", "reasoning"),
    ("cachedInputTokens", "cached_input"),
    ("cacheWriteInputTokens", "cache_write_input"),
)
_OUTCOMES: Final = {"RUN_CANCELED": "cancelled", "RUN_INTERRUPTED": "interrupted"}

# Children per label value: ``labels()`` takes a lock and builds a tuple on each call; the
# per-event counters are on the hot path. Keyed by the kind as given: an ``EventType`` member is
# a ``str`` equal to its value (same hash), so either finds the child, and the enum's ``.value``
# (a property call) is read only when a child is bound.
_events_in: dict[str, Any] = {}
_events_out: dict[tuple[str, str], Any] = {}


def count_event_in(kind: Any) -> None:
    """Count one event of type ``kind`` (an ``EventType`` or its value) out of the upstream
    pipeline."""
    child = _events_in.get(kind)
    if child is None:
        child = _events_in[kind] = EVENTS_IN.labels(getattr(kind, "value", kind))
    child.inc()


def count_event_out(kind: Any, encoder: str, count: int = 1) -> None:
    """Count ``count`` events of type ``kind`` (an ``EventType`` or its value) encoded by
    ``encoder`` (its registry name)."""
    key = (kind, encoder)
    child = _events_out.get(key)
    if child is None:
        child = _events_out[key] = EVENTS_OUT.labels(getattr(kind, "value", kind), encoder)
    child.inc(count)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value >= 0 else None


def record_terminal(event: Mapping[str, Any], *, route: str | None, model: str | None) -> None:
    """Count a run's terminal wire event (RUN_FINISHED / RUN_ERROR): the run's outcome, its
    tokens (``usage[]``), cost (``metadata.cost``) and normalizer repairs (``metadata.repairs``).

    Args:
        event: the AG-UI wire dict, as stored.
        route: the run's route (``""`` when unknown).
        model: the run's model when the event names none.
    """
    route = route or ""
    finished = event.get("type") == "RUN_FINISHED"
    code = "" if finished else str(event.get("code") or "")
    outcome = "finished" if finished else _OUTCOMES.get(code, "error")
    RUNS.labels(route, outcome, code).inc()
    meta = event.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    run_model = meta.get("model") if isinstance(meta.get("model"), str) else model
    usage = event.get("usage")
    for entry in usage if isinstance(usage, list) else ():
        if not isinstance(entry, Mapping):
            continue
        entry_model = entry.get("model")
        label = entry_model if isinstance(entry_model, str) else (run_model or "")
        for key, kind in _TOKEN_KINDS:
            count = _number(entry.get(key))
            if count:
                TOKENS.labels(route, label, kind).inc(count)
    cost = _number(meta.get("cost"))
    if cost:
        COST.labels(route, run_model or "").inc(cost)
    repairs = meta.get("repairs")
    for repair, times in repairs.items() if isinstance(repairs, Mapping) else ():
        count = _number(times)
        if count:
            REPAIRS.labels(route, str(repair)).inc(count)


@contextmanager
def broker_call(operation: str) -> Iterator[None]:
    """Time one broker call as ``operation``; an exception out of it counts as an error."""
    started = time.perf_counter()
    try:
        yield
    except Exception:
        BROKER_ERRORS.labels(operation).inc()
        raise
    finally:
        BROKER_SECONDS.labels(operation).observe(time.perf_counter() - started)


def multiprocess_enabled() -> bool:
    """Whether ``PROMETHEUS_MULTIPROC_DIR`` names the directory of a multi-process setup."""
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def mark_process_dead(pid: int | None = None) -> None:
    """Multi-process mode: drop this (or ``pid``'s) live gauges (called at shutdown)."""
    if multiprocess_enabled():
        pid = os.getpid() if pid is None else pid
        _multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def _counter(
    name: str, help_text: str, samples: list[tuple[str, int]], prefix: str = "agui_gateway_ui_"
) -> list[str]:
    lines = [f"# HELP {prefix}{name} {help_text}", f"# TYPE {prefix}{name} counter"]
    lines += [f"{prefix}{name}{labels} {value}" for labels, value in samples]
    return lines


def _label(value: str, name: str = "reason") -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{{{name}="{escaped}"}}'


def _app_counters(ui: UiStats, decoder_errors: Mapping[str, int] | None) -> bytes:
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


def render_metrics(ui: UiStats, decoder_errors: Mapping[str, int] | None = None) -> bytes:
    """The ``/metrics`` body (see the module docstring): the process's metrics (all workers'
    in multi-process mode), then the app's compiler and decoder counters.

    Args:
        ui: the compiler counters.
        decoder_errors: internal decoder errors by decoder name
            (``agui_codecs.protocols.base.INTERNAL_ERRORS``); ``None`` counts none.
    """
    if multiprocess_enabled():
        registry = CollectorRegistry()
        _multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        process = generate_latest(registry)
    else:
        process = generate_latest(REGISTRY)
    return process + _app_counters(ui, decoder_errors)
