"""What the operations instrumentation costs: the same runs through the whole app with it off and
on, in one process, rounds interleaved (issue 16 item 7).

Each run is one ``POST /v1/agui/gpt`` through the ASGI app (auth off, a SQLite run store in a
temporary directory, the in-process broker) whose upstream is an in-memory OpenAI Chat stream
of ``--deltas`` text deltas, one network chunk each (``httpx.MockTransport``): request parsing,
run recording, the pump, the store writes, the reader, the encoder: every instrumented path.

Configurations (``--rounds`` x ``--runs`` runs each, one run of each configuration in turn,
the first of each turn rotating, so drift of a shared machine spreads over all of them):

* ``off``: prometheus-client's ``inc`` / ``dec`` / ``observe`` / ``labels`` replaced by no-ops
  (what is left is the gateway's calls into them), no log handler, tracing off;
* ``metrics``: the real metrics, no log handler, tracing off (the default deployment without
  ``serve``'s logging);
* ``metrics+logs``: plus ``configure_logging`` in JSON to a null stream (one access line per
  request: what ``serve`` does);
* ``all``: plus tracing (OpenTelemetry SDK spans, batch processor, an exporter that drops them:
  the cost in the gateway, not the network's).

Printed per configuration: median wall and CPU milliseconds per run, and the overhead against
``off`` (CPU time is the steadier figure on a shared machine).

Run: ``python bench/instrumentation.py [--runs 40] [--rounds 5] [--deltas 200]`` (the run
store batches deltas every 5 ms here, ``GATEWAY_BATCH_INTERVAL=0.005``, so wall time is not
mostly the batch timer).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from prometheus_client import metrics as prometheus_metrics

from gateway import tracing
from gateway.app import create_app
from gateway.config import Settings
from gateway.logs import configure_logging

ROUTES = """
[[routes]]
name = "gpt"
upstream_url = "https://openai.test/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"
"""

CONFIGS = ("off", "metrics", "metrics+logs", "all")


def chat_stream(deltas: int) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + orjson.dumps(body) + b"\n\n"

    usage = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [],
        "usage": {"prompt_tokens": 12, "completion_tokens": deltas, "total_tokens": 12 + deltas},
    }
    parts = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"content": f"word{i} "}) for i in range(deltas)]
    parts += [chunk({}, "stop"), b"data: " + orjson.dumps(usage) + b"\n\n", b"data: [DONE]\n\n"]
    return parts


class Chunks(httpx.AsyncByteStream):
    def __init__(self, parts: Sequence[bytes]) -> None:
        self.parts = parts

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            yield part


class Dropping(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def post(app: Any, body: bytes) -> int:
    """One POST through the ASGI app; returns the body bytes received."""
    received = 0
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        nonlocal received
        if message["type"] == "http.response.body":
            received += len(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/agui/gpt",
        "raw_path": b"/v1/agui/gpt",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"bench")],
        "server": ("bench", 80),
        "client": ("127.0.0.1", 5000),
    }
    await app(scope, receive, send)
    return received


_NOOPS: list[tuple[type, str]] = [
    (prometheus_metrics.Counter, "inc"),
    (prometheus_metrics.Gauge, "inc"),
    (prometheus_metrics.Gauge, "dec"),
    (prometheus_metrics.Histogram, "observe"),
]


_PROVIDER: TracerProvider | None = None


def _provider() -> TracerProvider:
    """One SDK provider for the whole bench (its batch thread started once, as in a server)."""
    global _PROVIDER
    if _PROVIDER is None:
        _PROVIDER = TracerProvider()
        _PROVIDER.add_span_processor(BatchSpanProcessor(Dropping()))
    return _PROVIDER


@contextmanager
def configuration(name: str) -> Iterator[None]:
    saved: list[tuple[type, str, Any]] = []
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        if name == "off":
            for cls, attr in _NOOPS:
                saved.append((cls, attr, cls.__dict__[attr]))
                setattr(cls, attr, lambda self, *a, **k: None)
            base = prometheus_metrics.MetricWrapperBase
            saved.append((base, "labels", base.__dict__["labels"]))
            base.labels = lambda self, *a, **k: self  # type: ignore[method-assign]
        if name in ("metrics+logs", "all"):
            configure_logging(stream=_Null(), fmt="json", level="INFO")
        if name == "all":
            tracing.configure(_provider())
        yield
    finally:
        for cls, attr, original in saved:
            setattr(cls, attr, original)
        root.handlers[:] = handlers
        root.setLevel(level)
        tracing.configure(None)


class _Null(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)

    def isatty(self) -> bool:
        return False


async def measure(
    app: Any, runs: int, counter: Callable[[], int]
) -> tuple[list[float], list[float]]:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        n = counter()
        body = orjson.dumps(
            {
                "threadId": f"t{n}",
                "runId": f"r{n}",
                "messages": [{"id": f"m{n}", "role": "user", "content": "hi"}],
                "tools": [],
                "context": [],
                "state": None,
                "forwardedProps": {},
            }
        )
        wall, cpu = time.perf_counter(), time.process_time()
        received = await post(app, body)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert received > 0
    return walls, cpus


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=200)
    args = parser.parse_args()
    parts = chat_stream(args.deltas)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Chunks(parts))

    with tempfile.TemporaryDirectory() as folder:
        routes = Path(folder) / "routes.toml"
        routes.write_text(ROUTES, encoding="utf-8")
        settings = Settings(
            config=routes,
            database_url=f"sqlite:///{folder}/runs.db",
            auth="off",
            retention_seconds=0,
            batch_interval=0.005,
        )
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        app = create_app(settings, http_client=client)
        seq = iter(range(10**9))
        results: dict[str, tuple[list[float], list[float]]] = {c: ([], []) for c in CONFIGS}
        async with app.router.lifespan_context(app):
            await measure(app, 5, lambda: next(seq))  # warm up: caches, pool, first imports
            for i in range(args.rounds * args.runs):
                shift = i % len(CONFIGS)  # each configuration first in turn: no drift bias
                for name in CONFIGS[shift:] + CONFIGS[:shift]:
                    with configuration(name):
                        walls, cpus = await measure(app, 1, lambda: next(seq))
                    results[name][0].extend(walls)
                    results[name][1].extend(cpus)
        await client.aclose()
    events = args.deltas + 5
    print(
        f"{args.rounds * args.runs} runs per configuration, interleaved, "
        f"{events} AG-UI events per run (POST /v1/agui/gpt, SQLite store, in-process broker)"
    )
    base_wall = statistics.median(results["off"][0])
    base_cpu = statistics.median(results["off"][1])
    print(
        f"{'configuration':<14} {'wall ms/run':>12} {'cpu ms/run':>11} {'wall +%':>8} {'cpu +%':>7} {'cpu µs/event':>13}"
    )
    for name in CONFIGS:
        wall = statistics.median(results[name][0])
        cpu = statistics.median(results[name][1])
        print(
            f"{name:<14} {wall * 1000:>12.2f} {cpu * 1000:>11.2f} "
            f"{(wall / base_wall - 1) * 100:>+8.1f} {(cpu / base_cpu - 1) * 100:>+7.1f} "
            f"{(cpu - base_cpu) / events * 1e6:>+13.2f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
