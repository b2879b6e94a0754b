"""The HTTP side's two seams (issue 10 §6, for the auth and operations issues): every endpoint
of the URL table passes :func:`gateway.routes.admit` before its handler runs, and every
request leaves one access record on the ``gateway.access`` logger."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, OPENAI_URL, RUN_INPUT, GatedStream, drive
from starlette.requests import Request
from starlette.routing import Route

import gateway.routes._endpoint as door
from gateway.errors import RequestError
from gateway.routes import ACCESS_LOGGER, ANONYMOUS, Caller

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, chat_events, running

pytestmark = pytest.mark.timeout(60)


def concrete(path: str) -> str:
    """A request path for a route pattern (every ``{param}`` filled in)."""
    return re.sub(r"\{[^}]+\}", "x", path)


def table(app: Any) -> list[tuple[str, str]]:
    """``(method, path)`` of every endpoint route of ``app`` (the demo mount excluded)."""
    return [
        (method, concrete(route.path))
        for route in app.routes
        if isinstance(route, Route)
        for method in sorted(set(route.methods or ()) - {"HEAD"})
    ]


async def test_every_endpoint_is_behind_the_caller_door(
    make_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    async def refuse(request: Request, services: Any, **_kind: bool) -> Caller:
        seen.append(request.url.path)
        raise RequestError("no credentials", code="UNAUTHENTICATED", status=401)

    monkeypatch.setattr(door, "admit", refuse)
    app = make_app()
    endpoints = table(app)
    assert len(endpoints) == 20  # the URL table of gateway.routes
    for method, path in endpoints:
        reply = await drive(app, path, RUN_INPUT, method=method)
        assert reply.status == 401, (method, path)
        assert reply.json() == {"error": {"code": "UNAUTHENTICATED", "message": "no credentials"}}
    assert seen == [path for _method, path in endpoints]


async def test_the_admitted_caller_is_the_one_passed_on(
    make_app: Any, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    request = Request({"type": "http", "method": "GET", "path": "/healthz", "headers": []})
    services = make_app().state.services
    assert await door.admit(request, services) is ANONYMOUS  # GATEWAY_AUTH=off (tests/conftest)
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    tenant = Caller(tenant="acme", subject="key-1")

    async def admit(request: Request, services: Any, **_kind: bool) -> Caller:
        return tenant

    monkeypatch.setattr(door, "admit", admit)
    reply = await drive(make_app(), "/healthz", method="GET")
    assert reply.status == 200
    assert [(r["tenant"], r["subject"]) for r in access_records(caplog)] == [("acme", "key-1")]


def access_records(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [r.access for r in caplog.records if r.name == ACCESS_LOGGER]  # type: ignore[attr-defined]


async def test_one_access_record_per_request(
    make_app: Any, tmp_path: Path, router: respx.MockRouter, keys: None, caplog: Any
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    router.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, stream=GatedStream(chat_events(text=["Hel", "lo"])))
    )
    app = make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    async with running(app):
        streamed = await call(app, "POST", "/v1/agui/gpt", RUN_INPUT)
        missing = await call(app, "GET", "/nowhere")
        refused = await call(app, "POST", "/v1/agui/nope", RUN_INPUT)
    records = access_records(caplog)
    assert [(r["method"], r["path"], r["status"]) for r in records] == [
        ("POST", "/v1/agui/gpt", 200),
        ("GET", "/nowhere", 404),
        ("POST", "/v1/agui/nope", 404),
    ]
    first = records[0]
    assert first["bytes"] == len(streamed.body) > 0  # written after the stream's last byte
    assert first["route"] == "gpt" and first["run_id"] == "run-1" and first["tenant"] is None
    assert records[1]["bytes"] == len(missing.body) and "route" not in records[1]
    assert records[2]["bytes"] == len(refused.body)
    assert all(isinstance(r["duration_ms"], float) for r in records)
