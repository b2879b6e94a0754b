"""A live gateway for the inspector tests: uvicorn on 127.0.0.1 port 0, in the test's own event
loop (so the test paces the upstream with ``asyncio.Event``s), over a fresh SQLite run store,
with one AG-UI passthrough route ``agent`` whose upstream is scripted per run id.

The upstream is an AG-UI runtime mocked at the transport (``httpx.MockTransport``): a run whose
``runId`` is in :attr:`LiveGateway.scripts` gets that script as its SSE body (bytes sent as
they come, an ``asyncio.Event`` waited for), so the test decides when each event leaves. The
route also has ``ui_hints`` for the tool ``get_order`` (a ``record`` card), so a result of that
tool gets an A2UI surface from the gateway itself.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
from gwtest import FAST, GatedStream

from gateway.app import create_app
from gateway.auth import new_api_key
from gateway.config import Settings
from gateway.server import GatewayServer, build_server
from gateway.store import RunStore

AGENT_URL = "https://agent.test/agent"

ROUTES = f"""
[[routes]]
name = "agent"
upstream_url = "{AGENT_URL}"
protocol = "agui"

[routes.ui_hints.get_order]
kind = "record"
title = "Order"
fields = [
  {{ key = "id", label = "Order" }},
  {{ key = "status", label = "Status" }},
]
"""

Part = bytes | asyncio.Event


def frame(event: dict[str, Any]) -> bytes:
    """One AG-UI SSE frame, as an AG-UI runtime sends it."""
    return b"data: " + orjson.dumps(event) + b"\n\n"


def run_input(thread_id: str, run_id: str, text: str = "hi") -> dict[str, Any]:
    """An AG-UI RunAgentInput with one user message."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": f"u-{run_id}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }


@dataclass
class LiveGateway:
    """The running gateway and what the tests do with it."""

    base: str
    server: GatewayServer
    app: Any
    scripts: dict[str, Sequence[Part]] = field(default_factory=dict)

    @property
    def store(self) -> RunStore:
        manager = self.app.state.services.manager
        assert manager is not None, "the app lifespan is not running"
        store: RunStore = manager.store
        return store

    async def key(self, tenant: str) -> str:
        """A fresh API key of ``tenant``, as a client sends it."""
        record, key = new_api_key(tenant, now=self.store.now())
        await self.store.create_api_key(record)
        return key

    async def start(
        self, thread_id: str, run_id: str, script: Sequence[Part], *, key: str | None = None
    ) -> None:
        """Start a run on ``agent`` with no client attached (``POST /api/v1/agent/runs``)."""
        self.scripts[run_id] = script
        headers = {"authorization": f"Bearer {key}"} if key else {}
        async with httpx.AsyncClient(base_url=self.base, timeout=10) as client:
            reply = await client.post(
                "/api/v1/agent/runs",
                json={"route": "agent", "input": run_input(thread_id, run_id)},
                headers=headers,
            )
        assert reply.status_code == 201, reply.text

    async def wait_ended(self, thread_id: str, run_id: str, key: str | None = None) -> None:
        """Read the run's events until it ends (so everything is stored)."""
        headers = {"authorization": f"Bearer {key}"} if key else {}
        url = f"/api/v1/agent/runs/{thread_id}/events?runId={run_id}"
        async with httpx.AsyncClient(base_url=self.base, timeout=20) as client:
            async with client.stream("GET", url, headers=headers) as reply:
                assert reply.status_code == 200
                async for _ in reply.aiter_bytes():
                    pass


@asynccontextmanager
async def live_gateway(tmp_path: Path, **settings: Any) -> AsyncIterator[LiveGateway]:
    """The gateway on ``http://127.0.0.1:<port>`` (``settings`` override, e.g. ``auth``)."""
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES, encoding="utf-8")
    scripts: dict[str, Sequence[Part]] = {}

    async def upstream(request: httpx.Request) -> httpx.Response:
        body = orjson.loads(request.content)
        script = scripts.get(body["runId"], ())
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=GatedStream(script)
        )

    merged = {"auth": "off", **FAST, **settings}
    database = f"sqlite+aiosqlite:///{tmp_path / 'runs.db'}"
    client = httpx.AsyncClient(transport=httpx.MockTransport(upstream))
    app = create_app(Settings(config=routes, database_url=database, **merged), http_client=client)
    server = build_server(app, "127.0.0.1", 0, out=io.StringIO(), log_level="warning")
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(20):
            while server.bound_port is None:
                assert not task.done(), "uvicorn did not start"
                await asyncio.sleep(0.02)
        yield LiveGateway(f"http://127.0.0.1:{server.bound_port}", server, app, scripts)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
        await client.aclose()
