"""Traces (issue 16 item 3) with the SDK's InMemorySpanExporter: a SERVER span per request
(child of the caller's ``traceparent``), a CLIENT span for the upstream call with the GenAI
semantic-convention attributes, ``store.write`` spans, the upstream span's ``traceparent`` sent
upstream (W3C Trace Context: ``00-<trace id>-<span id>-<flags>``); nothing when off."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, chat_events, run_input, running

from gateway import tracing

pytestmark = pytest.mark.timeout(120)

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"  # the W3C Trace Context example

USAGE = (
    b"data: "
    + orjson.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": "gpt-4o-mini",
            "choices": [],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
    )
    + b"\n\n"
)


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracing.configure(provider)
    yield memory
    tracing.configure(None)
    provider.shutdown()


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def spans_named(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


async def test_request_upstream_and_store_spans_in_the_callers_trace(
    app_factory: Any, router: respx.MockRouter, exporter: InMemorySpanExporter
) -> None:
    parts = chat_events(text=["Hel", "lo"])
    upstream = router.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, stream=GatedStream([*parts[:-1], USAGE, parts[-1]]))
    )
    app = app_factory()
    async with running(app):
        reply = await call(
            app, "POST", "/v1/agui/gpt", run_input("t1", "r1"), headers={"traceparent": TRACEPARENT}
        )
    assert reply.status == 200
    spans = exporter.get_finished_spans()
    [server] = spans_named(spans, "POST ")
    assert server.name == "POST /v1/agui/{route}" and server.kind is SpanKind.SERVER
    assert server.context.trace_id == int(CALLER_TRACE, 16)
    assert server.parent is not None and server.parent.span_id == int(CALLER_SPAN, 16)
    attrs = dict(server.attributes or {})
    assert attrs["http.request.method"] == "POST" and attrs["http.route"] == "/v1/agui/{route}"
    assert attrs["http.response.status_code"] == 200 and attrs["agui.route"] == "gpt"
    assert attrs["agui.run_id"] == "r1" and attrs["url.path"] == "/v1/agui/gpt"

    [client] = spans_named(spans, "chat ")
    assert client.name == "chat gpt-4o-mini" and client.kind is SpanKind.CLIENT
    assert client.context.trace_id == server.context.trace_id
    assert client.parent is not None and client.parent.span_id == server.context.span_id
    gen = dict(client.attributes or {})
    assert gen["gen_ai.operation.name"] == "chat"
    assert gen["gen_ai.provider.name"] == "openai"
    assert gen["gen_ai.request.model"] == "gpt-4o-mini"
    assert gen["gen_ai.usage.input_tokens"] == 11 and gen["gen_ai.usage.output_tokens"] == 7
    assert tuple(gen["gen_ai.response.finish_reasons"]) == ("stop",)
    assert gen["server.address"] == "openai.test" and gen["server.port"] == 443
    assert gen["http.response.status_code"] == 200

    # the upstream was sent the CLIENT span's context
    sent = upstream.calls.last.request.headers["traceparent"]
    version, trace_id, span_id, flags = sent.split("-")
    assert (version, flags) == ("00", "01")
    assert (
        int(trace_id, 16) == client.context.trace_id and int(span_id, 16) == client.context.span_id
    )

    writes = spans_named(spans, "store.write")
    assert writes and all(w.context.trace_id == server.context.trace_id for w in writes)
    assert sum(int((w.attributes or {})["agui.events"]) for w in writes) >= 5  # the run's events


async def test_a_failed_upstream_call_is_an_error_span(
    app_factory: Any, router: respx.MockRouter, exporter: InMemorySpanExporter
) -> None:
    router.post(OPENAI_URL).mock(return_value=httpx.Response(400, text="bad"))  # not retried
    app = app_factory()
    async with running(app):
        await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
    [client] = spans_named(exporter.get_finished_spans(), "chat ")
    assert client.status.status_code is StatusCode.ERROR
    assert (client.attributes or {})["error.type"] == "UPSTREAM_HTTP_400"
    assert (client.attributes or {})["http.response.status_code"] == 400


async def test_off_by_default_no_spans_and_no_traceparent(
    app_factory: Any, router: respx.MockRouter
) -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))  # not given to the gateway
    upstream = router.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, content=b"".join(chat_events(text=["hi"])))
    )
    app = app_factory()
    assert not tracing.enabled()
    async with running(app):
        await call(
            app, "POST", "/v1/agui/gpt", run_input("t1", "r1"), headers={"traceparent": TRACEPARENT}
        )
    assert "traceparent" not in upstream.calls.last.request.headers
    assert memory.get_finished_spans() == ()


def test_configured_from_the_otlp_environment_only() -> None:
    assert tracing.configure_from_env({}) is None
    assert (
        tracing.configure_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "", "GATEWAY_TRACING": "0"})
        is None
    )
    assert (
        tracing.configure_from_env(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}
        )
        is None
    )
    assert not tracing.enabled()


def test_on_with_an_otlp_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracing.trace, "set_tracer_provider", lambda provider: None)  # no global
    provider = tracing.configure_from_env(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SERVICE_NAME": "gw-test"}
    )
    try:
        assert provider is not None and tracing.enabled()
        assert provider.resource.attributes["service.name"] == "gw-test"
    finally:
        tracing.configure(None)
        if provider is not None:
            provider.shutdown()
