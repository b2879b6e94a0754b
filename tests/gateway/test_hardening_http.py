"""Cross-site requests: a JSON endpoint refuses bodies not declared JSON (a web page can send
``text/plain``, form and multipart POSTs cross-site without a CORS preflight, so they must not
start paid runs), CORS is off unless ``GATEWAY_CORS_ORIGINS`` lists origins, and the client's
own credentials never reach the upstream."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import OPENAI_BASE, sse
from pydantic import ValidationError

from gateway.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import running

OPENAI_URL = f"{OPENAI_BASE}/chat/completions"
RUN_INPUT: dict[str, Any] = {
    "threadId": "t1",
    "runId": "r1",
    "messages": [{"id": "m1", "role": "user", "content": "hi"}],
    "tools": [],
    "context": [],
    "state": None,
    "forwardedProps": {},
}
CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-1",
    "trigger": "submit-message",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}
REPLY = sse(
    {"id": "c", "object": "chat.completion.chunk", "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
    {"id": "c", "object": "chat.completion.chunk", "model": "m",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    "[DONE]",
)  # fmt: skip
ENDPOINTS = [
    ("/v1/agui/gpt", RUN_INPUT),
    ("/v1/ai-sdk/gpt", CHAT_REQUEST),
    ("/api/v1/agent/runs", {"route": "gpt", "input": RUN_INPUT}),
]


async def send(
    app: Any, method: str, path: str, *, json: Any = None, **kwargs: Any
) -> httpx.Response:
    """One request through the ASGI app (whole body buffered: these replies are short)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return await client.request(method, path, json=json, **kwargs)


@pytest.fixture
def upstream(router: respx.MockRouter) -> respx.Route:
    return router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=REPLY))


@pytest.fixture
def app_with_store(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **settings)

    return make


# -- 415 for bodies not declared JSON ------------------------------------------------------


@pytest.mark.parametrize(("path", "body"), ENDPOINTS)
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ],
)
async def test_cross_site_simple_post_cannot_start_a_run(
    app_with_store: Any,
    upstream: respx.Route,
    path: str,
    body: Any,
    content_type: str | None,
) -> None:
    app = app_with_store()
    headers = {"origin": "https://evil.example"}
    if content_type is not None:
        headers["content-type"] = content_type
    async with running(app):
        reply = await send(app, "POST", path, content=orjson.dumps(body), headers=headers)
    assert reply.status_code == 415
    assert reply.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert "application/json" in reply.json()["error"]["message"]
    assert "access-control-allow-origin" not in reply.headers
    assert not upstream.called


@pytest.mark.parametrize(("path", "body"), ENDPOINTS)
@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/vnd.api+json",
    ],
)
async def test_json_media_types_are_accepted(
    app_with_store: Any, upstream: respx.Route, path: str, body: Any, content_type: str
) -> None:
    app = app_with_store()
    content = orjson.dumps(body)
    async with running(app):
        reply = await send(
            app, "POST", path, content=content, headers={"content-type": content_type}
        )
    assert reply.status_code in (200, 201), reply.text


# -- CORS ----------------------------------------------------------------------------------


async def test_no_cors_headers_and_no_preflight_by_default(
    make_app: Any, upstream: Any, keys: None
) -> None:
    app = make_app()
    preflight = await send(
        app,
        "OPTIONS",
        "/v1/ai-sdk/gpt",
        headers={
            "origin": "http://localhost:3000",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )
    assert preflight.status_code == 405
    assert "access-control-allow-origin" not in preflight.headers
    reply = await send(
        app, "POST", "/v1/agui/gpt", json=RUN_INPUT, headers={"origin": "http://localhost:3000"}
    )
    assert reply.status_code == 200
    assert "access-control-allow-origin" not in reply.headers


async def test_cors_origins_answer_the_preflight_and_mark_responses(
    make_app: Any, upstream: Any, keys: None
) -> None:
    app = make_app(cors_origins="http://localhost:3000, https://app.example.com/")
    preflight = await send(
        app,
        "OPTIONS",
        "/v1/ai-sdk/gpt",
        headers={
            "origin": "https://app.example.com",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, x-vercel-ai-ui-message-stream",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example.com"
    allowed = preflight.headers["access-control-allow-headers"].lower()
    for header in (
        "content-type",
        "last-event-id",
        "authorization",
        "x-vercel-ai-ui-message-stream",
    ):
        assert header in allowed
    assert "access-control-allow-credentials" not in preflight.headers

    reply = await send(
        app, "POST", "/v1/agui/gpt", json=RUN_INPUT, headers={"origin": "http://localhost:3000"}
    )
    assert reply.status_code == 200
    assert reply.headers["access-control-allow-origin"] == "http://localhost:3000"
    # only the headers naming the run are readable by the page (Stop, resume: issue 14), and
    # the two WorkflowChatTransport reads (@workflow/ai 5.0.0 workflow-chat-transport.js)
    exposed = reply.headers["access-control-expose-headers"].lower()
    assert sorted(h.strip() for h in exposed.split(",")) == [
        "x-agui-run-id",
        "x-agui-thread-id",
        "x-workflow-run-id",
        "x-workflow-stream-tail-index",
    ]

    refused = await send(
        app, "POST", "/v1/agui/gpt", json=RUN_INPUT, headers={"origin": "https://evil.example"}
    )
    assert "access-control-allow-origin" not in refused.headers
    bad_preflight = await send(
        app,
        "OPTIONS",
        "/v1/agui/gpt",
        headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
    )
    assert bad_preflight.status_code == 400
    assert "access-control-allow-origin" not in bad_preflight.headers


async def test_cors_still_refuses_text_plain(
    make_app: Any, upstream: respx.Route, keys: None
) -> None:
    app = make_app(cors_origins="*")
    reply = await send(
        app,
        "POST",
        "/v1/agui/gpt",
        content=b'{"threadId":"t"}',
        headers={"origin": "https://any.example", "content-type": "text/plain"},
    )
    assert reply.status_code == 415
    assert reply.headers["access-control-allow-origin"] == "*"
    assert not upstream.called


@pytest.mark.parametrize("value", ["http://localhost:3000/app", "localhost:3000", "ftp//x"])
def test_cors_origin_with_a_path_or_no_scheme_is_a_setting_error(value: str) -> None:
    with pytest.raises(ValidationError, match="not an origin"):
        Settings(cors_origins=value)


def test_cors_origins_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_CORS_ORIGINS", "http://a.test:8080,, https://b.test/")
    assert Settings().cors_origin_list == ["http://a.test:8080", "https://b.test"]
    monkeypatch.delenv("GATEWAY_CORS_ORIGINS")
    assert Settings().cors_origin_list == []


# -- the client's credentials stay at the gateway ------------------------------------------


async def test_client_authorization_and_cookies_are_not_forwarded_upstream(
    make_app: Any, upstream: respx.Route, keys: None
) -> None:
    reply = await send(
        make_app(),
        "POST",
        "/v1/agui/gpt",
        json=RUN_INPUT,
        headers={"authorization": "Bearer client-session-token", "cookie": "session=abc"},
    )
    assert reply.status_code == 200
    sent = upstream.calls.last.request
    assert sent.headers["authorization"] == "Bearer sk-test-openai"  # the route's key variable
    assert "cookie" not in sent.headers
