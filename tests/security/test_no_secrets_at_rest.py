"""No secret at rest or in the logs (issue 15 §4): after runs on every route kind, where the
upstream refuses the key and quotes it back (a 4xx message, a 5xx body) or answers nothing,
and clients authenticate with an API key and a scoped token, no configured secret (upstream
keys, the client's API key and its secret part, the token, ``GATEWAY_SECRET``) appears in any
row of any table of the store nor in any log record (every logger, DEBUG level, message and
fields)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa
from durable_support import call, running
from gwtest import FAST
from run_backends import STORES, ManualClock, make_broker, make_store

from gateway.app import create_app
from gateway.auth import new_api_key
from gateway.config import Settings
from gateway.store.schema import metadata

pytestmark = pytest.mark.timeout(120)

ROUTE_KINDS: dict[str, tuple[str, str]] = {
    # name -> (protocol, auth table)
    "openai-chat": ("openai-chat", 'auth = { type = "bearer", env = "SEC_OPENAI" }'),
    "openai-responses": ("openai-responses", 'auth = { type = "bearer", env = "SEC_RESPONSES" }'),
    "anthropic": (
        "anthropic",
        'auth = { type = "header", header = "x-api-key", env = "SEC_ANTHROPIC" }',
    ),
    "gemini": (
        "gemini",
        'auth = { type = "header", header = "x-goog-api-key", env = "SEC_GEMINI" }',
    ),
    "ai-sdk": ("ai-sdk", 'auth = { type = "bearer", env = "SEC_AISDK" }'),
    "agui": ("agui", 'auth = { type = "bearer", env = "SEC_AGUI" }'),
}

GATEWAY_SECRET = "gw-server-SECRET-7f6e5d4c3b2a1908"

UPSTREAM_SECRETS = {
    "SEC_OPENAI": "sk-openai-SECRET-0a1b2c3d4e5f",
    "SEC_RESPONSES": "sk-responses-SECRET-6a7b8c9d",
    "SEC_ANTHROPIC": "sk-ant-SECRET-1f2e3d4c5b6a",
    "SEC_GEMINI": "AIzaSECRET-gemini-998877",
    "SEC_AISDK": "app-token-SECRET-554433",
    "SEC_AGUI": "agent-token-SECRET-221100",
}


def routes_toml() -> str:
    out = []
    for name, (protocol, auth) in ROUTE_KINDS.items():
        model = 'model = "m-1"\n' if protocol not in ("ai-sdk", "agui") else ""
        out.append(
            f'[[routes]]\nname = "{name}"\nprotocol = "{protocol}"\n'
            f'upstream_url = "https://{name}.upstream.test/v1"\n{model}{auth}\n'
        )
    return "\n".join(out)


def _presented_key(request: httpx.Request) -> str:
    for header in ("authorization", "x-api-key", "x-goog-api-key"):
        value = request.headers.get(header)
        if value:
            return value.removeprefix("Bearer ")
    return ""


def upstream(request: httpx.Request) -> httpx.Response:
    """Refuses the key and quotes it (4xx), or fails quoting it (5xx), or answers nothing."""
    key = _presented_key(request)
    mode = (
        orjson.loads(request.content).get("forwardedProps", {}).get("mode")
        if request.url.host.startswith("agui")
        else None
    )
    text = request.content.decode()
    if "mode-401" in text or mode == "401":
        body = {
            "error": {"message": f"Incorrect API key provided: {key}", "code": "invalid_api_key"}
        }
        return httpx.Response(401, json=body)
    if "mode-500" in text or mode == "500":
        return httpx.Response(500, text=f"traceback ... key={key} ... host=internal")
    return httpx.Response(200, content=b"")


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _log_text(records: list[logging.LogRecord]) -> Iterator[str]:
    for record in records:
        yield record.getMessage()
        yield repr(record.__dict__)
        if record.exc_info:
            yield logging.Formatter().formatException(record.exc_info)


@pytest.mark.parametrize("store_kind", STORES)
async def test_no_secret_in_the_store_or_the_logs(
    store_kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in UPSTREAM_SECRETS.items():
        monkeypatch.setenv(name, value)
    routes = tmp_path / "routes.toml"
    routes.write_text(routes_toml(), encoding="utf-8")
    capture = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    client = httpx.AsyncClient(transport=httpx.MockTransport(upstream))
    try:
        async with (
            make_store(store_kind, tmp_path, ManualClock()) as store,
            make_broker("memory") as broker,
        ):
            app = create_app(
                Settings(config=routes, auth="required", secret=GATEWAY_SECRET, **FAST),
                store=store,
                broker=broker,
                http_client=client,
            )
            record, api_key = new_api_key("acme", now=store.now())
            await store.create_api_key(record)
            auth = {"authorization": f"Bearer {api_key}"}
            async with running(app):
                for route in ROUTE_KINDS:
                    for mode in ("mode-401", "mode-500", "mode-empty"):
                        await _run_both_endpoints(app, route, mode, auth)
                thread, run = "t-openai-chat-mode-401", "r-openai-chat-mode-401"
                minted = await call(
                    app, "POST", f"/api/v1/agent/runs/{thread}/token?runId={run}", headers=auth
                )
                token = minted.json()["token"]
                reply = await call(app, "GET", minted.json()["eventsUrl"])
                assert reply.status == 200
            rows = await _all_rows(store)
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)
        await client.aclose()
    assert len(rows) > 50  # runs, events and history of every run were stored
    secrets = [*UPSTREAM_SECRETS.values(), GATEWAY_SECRET, api_key, api_key.split("_", 2)[2], token]
    leaks = [(s, row[:200]) for row in rows for s in secrets if s in row]
    assert leaks == []
    logged = list(_log_text(capture.records))
    assert any("invalid_api_key" in line or "HTTP 500" in line for line in logged)
    leaks = [(s, line[:200]) for line in logged for s in secrets if s in line]
    assert leaks == []


async def _run_both_endpoints(app: Any, route: str, mode: str, auth: dict[str, str]) -> None:
    run = {
        "threadId": f"t-{route}-{mode}",
        "runId": f"r-{route}-{mode}",
        "messages": [{"id": f"m-{route}-{mode}", "role": "user", "content": mode}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {"mode": mode.removeprefix("mode-")},
    }
    reply = await call(app, "POST", f"/v1/agui/{route}", run, headers=auth)
    assert reply.status == 200, reply.body[:300]
    assert b"RUN_ERROR" in reply.body
    chat = {
        "id": f"c-{route}-{mode}",
        "messages": [
            {"id": f"u-{route}-{mode}", "role": "user", "parts": [{"type": "text", "text": mode}]}
        ],
    }
    reply = await call(app, "POST", f"/v1/ai-sdk/{route}", chat, headers=auth)
    assert reply.status == 200, reply.body[:300]
    assert b'"type":"error"' in reply.body


async def _all_rows(store: Any) -> list[str]:
    out: list[str] = []
    async with store.engine.connect() as conn:
        for table in metadata.sorted_tables:
            for row in (await conn.execute(sa.select(table))).all():
                out.append(repr(tuple(row)))
    return out
