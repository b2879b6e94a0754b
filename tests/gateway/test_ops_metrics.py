"""Operations metrics (issue 16 item 2): every metric of ``gateway.metrics`` moves when the thing
it counts happens, read back from ``GET /metrics`` as Prometheus parses it
(``prometheus_client.parser``), as deltas (the metrics are process-wide)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    call,
    chat_events,
    events_of,
    eventually,
    frames,
    resume_attached,
    resume_count,
    run_input,
    running,
)

from gateway.app import create_app
from gateway.broker.redis_streams import RedisStreamsBroker
from gateway.config import Settings
from gateway.store.engine import create_engine
from gateway.types import Cursor

pytestmark = pytest.mark.timeout(120)

Labels = dict[str, str]


async def scrape(app: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``GET /metrics``: (name, sorted labels) -> value."""
    reply = await call(app, "GET", "/metrics")
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/plain; version=0.0.4")
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(reply.body.decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


class Delta:
    """Samples before and after a block: ``delta(name, **labels)``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.before: dict[Any, float] = {}
        self.after: dict[Any, float] = {}

    async def __aenter__(self) -> Delta:
        self.before = await scrape(self.app)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.after = await scrape(self.app)

    def __call__(self, name: str, **labels: str) -> float:
        return value(self.after, name, **labels) - value(self.before, name, **labels)


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Callable[..., Any]:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def mock_upstream(router: respx.MockRouter, *responses: httpx.Response) -> None:
    router.post(OPENAI_URL).mock(side_effect=list(responses))


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


def turn_with_usage() -> list[bytes]:
    parts = chat_events(text=["Hel", "lo"])
    return [*parts[:-1], USAGE, parts[-1]]  # usage chunk before [DONE], as OpenAI sends it


async def test_requests_are_counted_by_endpoint_route_and_status(app_factory: Any) -> None:
    app = app_factory()
    async with running(app), Delta(app) as delta:
        assert (await call(app, "GET", "/healthz")).status == 200
        assert (await call(app, "GET", "/healthz")).status == 200
        assert (await call(app, "GET", "/no/such/path")).status == 404
        assert (await call(app, "POST", "/v1/agui/nope", run_input("t", "r"))).status == 404
    ok = {"method": "GET", "endpoint": "/healthz", "route": "", "status": "200"}
    assert delta("agui_gateway_http_requests_total", **ok) == 2
    missing = {"method": "GET", "endpoint": "other", "route": "", "status": "404"}
    assert delta("agui_gateway_http_requests_total", **missing) == 1
    unknown_route = {"method": "POST", "endpoint": "/v1/agui/{route}", "route": "", "status": "404"}
    assert delta("agui_gateway_http_requests_total", **unknown_route) == 1
    assert (
        delta("agui_gateway_http_request_duration_seconds_count", method="GET", endpoint="/healthz")
        == 2
    )


async def test_a_finished_run_moves_run_event_upstream_token_store_and_broker_metrics(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, httpx.Response(200, stream=GatedStream(turn_with_usage())))
    app = app_factory()
    async with running(app), Delta(app) as delta:
        posted = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        await asyncio.sleep(0)
    events = events_of(posted.body)
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert delta("agui_gateway_runs_total", route="gpt", outcome="finished", code="") == 1
    assert (
        delta(
            "agui_gateway_http_requests_total",
            method="POST",
            endpoint="/v1/agui/{route}",
            route="gpt",
            status="200",
        )
        == 1
    )
    # tokens: what the upstream reported (prompt 11, completion 7), by route and model
    model = finished["metadata"]["model"]
    assert delta("agui_gateway_tokens_total", route="gpt", model=model, kind="input") == 11
    assert delta("agui_gateway_tokens_total", route="gpt", model=model, kind="output") == 7
    cost = finished["metadata"].get("cost")
    assert isinstance(cost, float) and cost > 0  # genai-prices knows gpt-4o-mini
    assert delta("agui_gateway_cost_usd_total", route="gpt", model=model) == pytest.approx(cost)
    # events in (out of the pipeline) and out (to this client), by type
    texts = sum(1 for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert texts == 2
    assert delta("agui_gateway_events_in_total", type="TEXT_MESSAGE_CONTENT") == texts
    assert (
        delta("agui_gateway_events_out_total", type="TEXT_MESSAGE_CONTENT", encoder="agui") == texts
    )
    assert delta("agui_gateway_events_out_total", type="RUN_FINISHED", encoder="agui") == 1
    # upstream timings: one request
    assert (
        delta("agui_gateway_upstream_ttfb_seconds_count", route="gpt", protocol="openai-chat") == 1
    )
    assert (
        delta("agui_gateway_upstream_duration_seconds_count", route="gpt", protocol="openai-chat")
        == 1
    )
    # the gateway's own time per event, both stages, one observation per event
    assert delta("agui_gateway_event_latency_seconds_count", stage="decode") >= len(events) - 1
    assert delta("agui_gateway_event_latency_seconds_count", stage="publish") >= len(events) - 1
    # the store wrote, the broker published
    assert delta("agui_gateway_store_operation_seconds_count", operation="INSERT") > 0
    assert delta("agui_gateway_store_operation_seconds_count", operation="SELECT") > 0
    assert delta("agui_gateway_broker_operation_seconds_count", operation="publish") > 0


async def test_active_gauges_count_open_streams_readers_and_runs(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    mock_upstream(router, httpx.Response(200, stream=GatedStream([*parts[:2], gate, *parts[2:]])))
    app = app_factory()
    seen: dict[str, float] = {}

    async def on_chunk(_chunk: bytes) -> None:
        if not seen:
            samples = await scrape(app)
            for name in ("active_streams", "active_readers", "active_runs"):
                seen[name] = value(samples, f"agui_gateway_{name}")
            gate.set()

    async with running(app):
        before = await scrape(app)
        await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"), on_chunk=on_chunk)

        async def back_to_before() -> bool:  # the run's own task ends after the stream does
            after = await scrape(app)
            return all(
                value(after, f"agui_gateway_{name}") == value(before, f"agui_gateway_{name}")
                for name in ("active_streams", "active_readers", "active_runs")
            )

        await eventually(back_to_before, what="the gauges back to their values before")
    for name in ("active_streams", "active_readers", "active_runs"):
        assert seen[name] == value(before, f"agui_gateway_{name}") + 1, name


@pytest.mark.parametrize(
    ("response", "outcome", "code"),
    [
        (httpx.Response(400, text="bad"), "error", "UPSTREAM_HTTP_400"),  # not retried
        (
            httpx.Response(401, json={"error": {"code": "invalid_api_key", "message": "no"}}),
            "error",
            "invalid_api_key",
        ),
    ],
)
async def test_failed_runs_are_counted_with_their_error_code(
    app_factory: Any, router: respx.MockRouter, response: httpx.Response, outcome: str, code: str
) -> None:
    mock_upstream(router, response)
    app = app_factory()
    async with running(app), Delta(app) as delta:
        posted = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
    assert events_of(posted.body)[-1]["code"] == code  # what the client was told
    assert delta("agui_gateway_runs_total", route="gpt", outcome=outcome, code=code) == 1


async def test_cancelled_and_interrupted_runs_are_counted(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()  # never set: both runs wait on their upstream
    parts = chat_events(text=["Hel"])
    mock_upstream(
        router,
        httpx.Response(200, stream=GatedStream([*parts[:2], gate])),
        httpx.Response(200, stream=GatedStream([*parts[:2], gate])),
    )
    app = app_factory()
    probe = app_factory()  # a second app reads the metrics after the first one stopped
    async with running(probe), Delta(probe) as delta:
        async with running(app):
            await call(
                app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
            )
            await call(
                app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t2", "r2")}
            )
            cancelled = await call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=r1")
            assert cancelled.status == 200
            ended = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
            assert events_of(ended.body)[-1]["code"] == "RUN_CANCELED"
        # leaving the lifespan ended r2 with RUN_INTERRUPTED
    assert (
        delta("agui_gateway_runs_total", route="gpt", outcome="cancelled", code="RUN_CANCELED") == 1
    )
    assert (
        delta("agui_gateway_runs_total", route="gpt", outcome="interrupted", code="RUN_INTERRUPTED")
        == 1
    )


async def test_resumes_and_rejoins_are_counted_by_kind(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    mock_upstream(
        router,
        httpx.Response(200, stream=GatedStream(parts)),
        httpx.Response(200, stream=GatedStream([*parts[:2], gate, *parts[2:]])),
    )
    app = app_factory()
    async with running(app), Delta(app) as delta:
        posted = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        cursor = frames(posted.body)[1].id or ""
        resumed = await call(
            app, "GET", "/api/v1/agent/runs/t1/events?runId=r1", headers={"last-event-id": cursor}
        )
        assert resumed.status == 200
        snap = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1&replay=snapshot")
        assert snap.status == 200
        full = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")  # not a resume
        assert full.status == 200
        chat = {
            "id": "c1",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        }
        first = await call(app, "POST", "/v1/ai-sdk/gpt", chat, stop=lambda reply: True)
        assert first.status == 200
        before = resume_count("ai_sdk")
        rejoin_task = asyncio.create_task(call(app, "GET", "/v1/ai-sdk/gpt/c1/stream"))
        await resume_attached("ai_sdk", before)  # attached while the run is live (else a 204)
        gate.set()
        rejoined = await rejoin_task
        assert rejoined.status == 200
    assert delta("agui_gateway_resumes_total", kind="last_event_id") == 1
    assert delta("agui_gateway_resumes_total", kind="snapshot") == 1
    assert delta("agui_gateway_resumes_total", kind="ai_sdk") == 1


AGUI_ROUTES = """
[[routes]]
name = "runtime"
upstream_url = "https://agent.test/run"
protocol = "agui"
"""


async def test_normalizer_repairs_are_counted_by_route_and_repair(tmp_path: Path) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text(AGUI_ROUTES, encoding="utf-8")
    # an AG-UI runtime that skips RUN_STARTED and TEXT_MESSAGE_START (both repaired)
    body = b"".join(
        b"data: " + orjson.dumps(e) + b"\n\n"
        for e in (
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
        )
    )
    router = respx.MockRouter(assert_all_called=False)
    router.post("https://agent.test/run").mock(return_value=httpx.Response(200, content=body))
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=routes, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    async with running(app), Delta(app) as delta:
        posted = await call(app, "POST", "/v1/agui/runtime", run_input("t1", "r1"))
    repairs = events_of(posted.body)[-1]["metadata"]["repairs"]  # what the decoder reported
    assert repairs  # the scripted stream needs repairs
    for repair, count in repairs.items():
        assert delta("agui_gateway_repairs_total", route="runtime", repair=repair) == count


async def test_store_errors_are_counted_by_statement(tmp_path: Path) -> None:
    from gateway import metrics
    from gateway.metrics import REGISTRY

    engine = create_engine(f"sqlite:///{tmp_path}/x.db")
    before = (
        REGISTRY.get_sample_value("agui_gateway_store_errors_total", {"operation": "SELECT"}) or 0
    )
    try:
        async with engine.connect() as conn:
            with pytest.raises(Exception, match="no such table"):
                await conn.exec_driver_sql("SELECT * FROM no_such_table")
    finally:
        await engine.dispose()
    after = REGISTRY.get_sample_value("agui_gateway_store_errors_total", {"operation": "SELECT"})
    assert after == before + 1
    assert metrics.STORE_ERRORS is not None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_broker_errors_are_counted_when_redis_is_unreachable() -> None:
    from gateway.metrics import REGISTRY

    broker = RedisStreamsBroker.from_url(f"redis://127.0.0.1:{_closed_port()}/0")
    labels = {"operation": "publish"}
    before = REGISTRY.get_sample_value("agui_gateway_broker_errors_total", labels) or 0
    try:
        assert await broker.publish("run-1", Cursor(1, 1), {"type": "RUN_STARTED"}) is False
        async with broker.subscribe("run-1") as sub:
            assert await sub.receive(0.05) == []
    finally:
        await broker.close()
    assert REGISTRY.get_sample_value("agui_gateway_broker_errors_total", labels) == before + 1
    assert (
        REGISTRY.get_sample_value("agui_gateway_broker_errors_total", {"operation": "read"}) or 0
    ) >= 1


_WORKER = """
import sys
from gateway import metrics
metrics.RUNS.labels("gpt", "finished", "").inc(int(sys.argv[1]))
metrics.ACTIVE_STREAMS.inc()
"""

_SCRAPE = """
from agui_codecs.ui import UiStats
from gateway.metrics import render_metrics
print(render_metrics(UiStats()).decode())
"""


def test_multiprocess_mode_adds_up_the_workers(tmp_path: Path) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    # two workers; the second ends as the app's lifespan ends, marking itself dead
    subprocess.run([sys.executable, "-c", _WORKER, "2"], env=env, check=True, timeout=120)
    dead = _WORKER + "metrics.mark_process_dead()\n"
    subprocess.run([sys.executable, "-c", dead, "3"], env=env, check=True, timeout=120)
    text = subprocess.run(
        [sys.executable, "-c", _SCRAPE],
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    ).stdout
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    # counters add up across workers; a live-sum gauge counts the live workers only
    assert value(samples, "agui_gateway_runs_total", route="gpt", outcome="finished", code="") == 5
    assert value(samples, "agui_gateway_active_streams") == 1
