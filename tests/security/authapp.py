"""An app with client auth on, over a real run store and broker, for the security tests:
routes ``gpt`` and ``claude`` (OpenAI Chat upstream mocked, answering a short text), API keys
made straight in the store, and a request helper sending ``Authorization: Bearer``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import respx
from durable_support import Reply, call, running
from gwtest import FAST, chunk, sse
from run_backends import ManualClock, make_broker, make_store
from starlette.applications import Starlette

from gateway.app import create_app
from gateway.auth import new_api_key
from gateway.config import Settings

UPSTREAM = "https://openai.test/v1"

ROUTES = f"""
[[routes]]
name = "gpt"
upstream_url = "{UPSTREAM}"
protocol = "openai-chat"
model = "m"

[[routes]]
name = "claude"
upstream_url = "{UPSTREAM}"
protocol = "openai-chat"
model = "m2"
"""

BACKENDS = [("sqlite", "memory"), ("postgresql", "redis")]
"""(store, broker) pairs: the embedded default and the replicated deployment."""


def answer(text: str) -> bytes:
    """An OpenAI Chat stream answering ``text``."""
    return sse(chunk({"role": "assistant", "content": text}), chunk({}, "stop"), "[DONE]")


@dataclass
class AuthApp:
    """The app, its store, and the helpers the tests use."""

    app: Starlette
    store: Any

    async def key(
        self,
        tenant: str,
        *,
        routes: Sequence[str] | None = None,
        expires_at: datetime | None = None,
    ) -> str:
        """A fresh API key of ``tenant`` (stored hashed), as a client sends it."""
        record, key = new_api_key(
            tenant, now=self.store.now(), routes=routes, expires_at=expires_at
        )
        await self.store.create_api_key(record)
        return key

    async def request(
        self,
        method: str,
        target: str,
        body: Any = None,
        *,
        key: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """One request, with ``Authorization: Bearer <key>`` when ``key`` is given."""
        sent = dict(headers or {})
        if key is not None:
            sent["authorization"] = f"Bearer {key}"
        return await call(self.app, method, target, body, headers=sent)


@asynccontextmanager
async def auth_app(
    tmp_path: Path,
    store_kind: str = "sqlite",
    broker_kind: str = "memory",
    *,
    upstream_text: str = "hello",
    upstream: Callable[[httpx.Request], httpx.Response] | None = None,
    **settings: Any,
) -> AsyncIterator[AuthApp]:
    """An app with ``GATEWAY_AUTH=required`` (settings overridable), running its lifespan;
    ``upstream`` answers the upstream requests (default: a stream of ``upstream_text``)."""
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES, encoding="utf-8")
    router = respx.MockRouter(assert_all_called=False)
    router.post(f"{UPSTREAM}/chat/completions").mock(
        side_effect=upstream or (lambda request: httpx.Response(200, content=answer(upstream_text)))
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    clock = ManualClock()
    clock.now = datetime.now(clock.now.tzinfo)
    merged = {"auth": "required", **FAST, **settings}
    try:
        async with (
            make_store(store_kind, tmp_path, clock) as store,
            make_broker(broker_kind) as broker,
        ):
            app = create_app(
                Settings(config=routes, **merged), store=store, broker=broker, http_client=client
            )
            async with running(app):
                yield AuthApp(app, store)
    finally:
        await client.aclose()


def run_input(thread_id: str, run_id: str, text: str = "hi", message: str = "m1") -> dict[str, Any]:
    """An AG-UI RunAgentInput with one user message."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": message, "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }
