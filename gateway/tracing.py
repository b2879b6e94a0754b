"""OpenTelemetry traces: a span per request, child spans for the upstream call and store writes.

Off unless configured: :func:`configure_from_env` (``agui-gateway serve`` calls it) turns
tracing on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is
set (or ``GATEWAY_TRACING=1``), exporting over OTLP/HTTP (``opentelemetry-exporter-otlp-proto-
http``, which reads the standard ``OTEL_EXPORTER_OTLP_*`` variables: endpoint, headers,
timeout) with a batch span processor; ``OTEL_SERVICE_NAME`` names the service (default
``agui-gateway``). Off, every helper here is a no-op that costs one ``None`` check.

Spans (names and attributes after the OpenTelemetry semantic conventions, HTTP and GenAI
``gen_ai.*`` v1.37 "development" status):

* ``{method} {http.route}`` (kind SERVER), one per HTTP request, from the request's arrival to
  its last byte; the parent is the caller's ``traceparent`` when it sent one. Attributes
  ``http.request.method``, ``url.path``, ``http.route``, ``http.response.status_code``,
  ``agui.route``, ``agui.run_id``.
* ``chat {gen_ai.request.model}`` (kind CLIENT), the upstream call, from the request sent to
  the end of its stream: ``gen_ai.operation.name`` = ``chat``, ``gen_ai.provider.name``
  (``openai``, ``anthropic``, ``gcp.gemini``, ``aws.bedrock``, or the protocol name),
  ``gen_ai.request.model``, ``server.address`` / ``server.port``,
  ``http.response.status_code``, and from the terminal event ``gen_ai.response.model``,
  ``gen_ai.response.finish_reasons``, ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.output_tokens``, ``error.type`` (the RUN_ERROR code). The W3C
  ``traceparent`` of this span is sent to the upstream.
* ``store.write`` (kind INTERNAL), one per durable write of a run's events: ``agui.run_id``,
  ``agui.events`` (events written).

A run's pump runs in a task started while its request was served, so its spans are children
of that request's span even when they outlive it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import urlsplit

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

__all__ = [
    "PROVIDER_NAMES",
    "configure",
    "configure_from_env",
    "enabled",
    "extract",
    "inject",
    "record_terminal",
    "server_span",
    "span",
    "tracer",
    "upstream_span",
]

PROVIDER_NAMES: Final[Mapping[str, str]] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "bedrock-converse": "aws.bedrock",
}
"""``gen_ai.provider.name`` by route protocol (others: the protocol's own name)."""

_INSTRUMENTATION: Final = "agui_gateway"
_tracer: Tracer | None = None


def configure(provider: TracerProvider | None) -> None:
    """Trace into ``provider`` from now on (``None``: tracing off). Tests pass a provider with
    an ``InMemorySpanExporter``; the process-wide OpenTelemetry provider is not touched."""
    global _tracer
    _tracer = provider.get_tracer(_INSTRUMENTATION) if provider is not None else None


def configure_from_env(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """Turn tracing on when the environment asks for it (see the module docstring).

    Returns:
        The provider (also set as OpenTelemetry's global one), or None when tracing stays off.
    """
    env = os.environ if environ is None else environ
    wanted = (
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or env.get("GATEWAY_TRACING", "").strip().lower() in ("1", "true", "yes", "on")
    )
    if not wanted or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "agui-gateway"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    configure(provider)
    return provider


def enabled() -> bool:
    """Whether spans are recorded."""
    return _tracer is not None


def tracer() -> Tracer | None:
    """The gateway's tracer, or None when tracing is off."""
    return _tracer


def extract(headers: Sequence[tuple[bytes, bytes]]) -> Context:
    """The trace context a request's raw ASGI ``headers`` carry (``traceparent``)."""
    carrier = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
    return propagate.extract(carrier)


def inject(headers: MutableMapping[str, str], span: Span | None = None) -> None:
    """Add the ``traceparent`` (and ``tracestate``) of ``span`` (default: the current span) to
    ``headers`` (no-op when tracing is off)."""
    if _tracer is None:
        return
    context = trace.set_span_in_context(span) if span is not None else None
    propagate.inject(headers, context=context)


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span | None]:
    """An INTERNAL span named ``name`` (None when tracing is off); an exception out of it
    marks the span as failed."""
    if _tracer is None:
        yield None
        return
    with _tracer.start_as_current_span(name, attributes=_clean(attributes)) as current:
        yield current


def upstream_span(protocol: str, model: str | None, url: str) -> Span | None:
    """Start the CLIENT span of an upstream call (current until :func:`end_upstream`); None
    when tracing is off."""
    if _tracer is None:
        return None
    parts = urlsplit(url)
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER_NAMES.get(protocol, protocol),
        "gen_ai.request.model": model,
        "server.address": parts.hostname,
        "server.port": parts.port or (443 if parts.scheme == "https" else 80),
    }
    name = f"chat {model}" if model else "chat"
    return _tracer.start_span(name, kind=SpanKind.CLIENT, attributes=_clean(attributes))


def record_terminal(current: Span | None, event: Any) -> None:
    """Put a terminal event's usage, finish reason, model and error code on ``current``."""
    if current is None:
        return
    usage = getattr(event, "usage", None) or []
    inputs = sum(getattr(u, "input_tokens", None) or 0 for u in usage)
    outputs = sum(getattr(u, "output_tokens", None) or 0 for u in usage)
    if usage:
        current.set_attribute("gen_ai.usage.input_tokens", inputs)
        current.set_attribute("gen_ai.usage.output_tokens", outputs)
    meta = getattr(event, "metadata", None)
    meta = meta if isinstance(meta, Mapping) else {}
    if isinstance(meta.get("model"), str):
        current.set_attribute("gen_ai.response.model", meta["model"])
    if isinstance(meta.get("finishReason"), str):
        current.set_attribute("gen_ai.response.finish_reasons", [meta["finishReason"]])
    code = getattr(event, "code", None)
    if getattr(event, "type", None) == "RUN_ERROR" or code is not None:
        current.set_attribute("error.type", str(code or "RUN_ERROR"))
        current.set_status(Status(StatusCode.ERROR, getattr(event, "message", None)))


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if v is not None}


def server_span(scope: Mapping[str, Any]) -> Any:
    """The SERVER span of one HTTP request (a context manager; the caller names it when the
    route is known), child of the ``traceparent`` the request carries."""
    assert _tracer is not None
    method = scope.get("method", "")
    return _tracer.start_as_current_span(
        method or "HTTP",
        context=extract(scope.get("headers", ())),
        kind=SpanKind.SERVER,
        attributes={"http.request.method": method, "url.path": scope.get("path", "")},
        record_exception=True,
        set_status_on_exception=True,
    )
