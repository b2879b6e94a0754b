"""Internal detail stays in the operator's log, never in what end users see (docs/protocols.md §3.3
rule 5: mask internal error text): the name of a route's key variable, an upstream server's error
text (5xx), and upstream bytes quoted by the decoders (malformed or oversized events). A 4xx
provider message is kept (it tells the developer what to fix), and error codes follow one rule: the
upstream's own code / type / status when its body is JSON, else ``UPSTREAM_HTTP_<status>``."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import ANTHROPIC_BASE, OPENAI_BASE, drive, sse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, events_of, running

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
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}
SECRET_SNIPPET = "sk-live-SECRET-in-a-broken-chunk"
FIRST = sse(
    {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}],
    }
)


async def run_error(app: Any, path: str = "/v1/agui/gpt") -> dict[str, Any]:
    result = await drive(app, path, RUN_INPUT)
    assert result.status == 200
    events = result.data()
    assert events[-1]["type"] == "RUN_ERROR", events
    return events[-1]


async def ai_sdk_error_text(app: Any) -> str:
    chunks = (await drive(app, "/v1/ai-sdk/gpt", CHAT_REQUEST)).data()
    return next(c["errorText"] for c in chunks if isinstance(c, dict) and c["type"] == "error")


# -- the key variable ----------------------------------------------------------------------


async def test_missing_key_does_not_name_the_variable_to_the_client(
    make_app: Any,
    router: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("TEST_OPENAI_KEY", raising=False)
    caplog.set_level(logging.WARNING, logger="gateway.upstream")
    end = await run_error(make_app())
    assert end["code"] == "UPSTREAM_AUTH_MISSING"
    assert end["message"] == "upstream credentials for route 'gpt' are not configured"
    assert "TEST_OPENAI_KEY" not in await ai_sdk_error_text(make_app())
    assert "TEST_OPENAI_KEY" in caplog.text  # the operator learns which variable to set
    assert not router.calls


# -- upstream HTTP errors ------------------------------------------------------------------


async def test_5xx_error_text_is_replaced_and_logged(
    make_app: Any, router: respx.MockRouter, keys: None, caplog: pytest.LogCaptureFixture
) -> None:
    body = {
        "error": {
            "message": "Traceback (most recent call last): db-7.internal:5432 refused",
            "type": "server_error",
            "code": None,
        }
    }
    router.post(OPENAI_URL).mock(return_value=httpx.Response(500, json=body))
    caplog.set_level(logging.WARNING, logger="gateway.upstream")
    end = await run_error(make_app())
    assert end["code"] == "server_error"  # the upstream's own type, kept
    assert end["message"] == "upstream server error (HTTP 500)"
    assert "db-7" not in await ai_sdk_error_text(make_app())
    assert "db-7.internal" in caplog.text


async def test_5xx_anthropic_overloaded_keeps_its_type_not_its_text(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded xyz"}}
    router.post(f"{ANTHROPIC_BASE}/messages").mock(return_value=httpx.Response(529, json=body))
    end = await run_error(make_app(), "/v1/agui/claude")
    assert end["code"] == "overloaded_error"
    assert end["message"] == "upstream server error (HTTP 529)"


async def test_5xx_html_body_is_not_sent_and_is_logged_truncated(
    make_app: Any, router: respx.MockRouter, keys: None, caplog: pytest.LogCaptureFixture
) -> None:
    html = b"<html>proxy at 10.0.0.7 failed</html>" + b"x" * 100_000
    router.post(OPENAI_URL).mock(return_value=httpx.Response(502, content=html))
    caplog.set_level(logging.WARNING, logger="gateway.upstream")
    end = await run_error(make_app())
    assert end == {
        **end,
        "code": "UPSTREAM_HTTP_502",
        "message": "upstream server error (HTTP 502)",
    }
    logged = [r.getMessage() for r in caplog.records if "10.0.0.7" in r.getMessage()]
    assert logged and all(len(m) < 5000 for m in logged)


@pytest.mark.parametrize(
    ("status", "body", "code", "text"),
    [
        (
            401,
            {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}},
            "invalid_api_key",
            "Incorrect API key provided",
        ),
        (
            404,
            {"error": {"message": "model not found", "type": "invalid_request_error", "code": None}},
            "invalid_request_error",
            "model not found",
        ),
        (
            400,
            [{"error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}}],
            "INVALID_ARGUMENT",
            "API key not valid",
        ),
        (403, {"error": "Forbidden by policy"}, "UPSTREAM_HTTP_403", "Forbidden by policy"),
        (404, {"detail": "Not Found"}, "UPSTREAM_HTTP_404", "Not Found"),
        (429, b"slow down", "UPSTREAM_HTTP_429", None),
    ],
)  # fmt: skip
async def test_4xx_keeps_the_provider_message_and_codes_follow_one_rule(
    make_app: Any,
    router: respx.MockRouter,
    keys: None,
    status: int,
    body: Any,
    code: str,
    text: str | None,
) -> None:
    reply = (
        httpx.Response(status, content=body)
        if isinstance(body, bytes)
        else httpx.Response(status, json=body)
    )
    router.post(OPENAI_URL).mock(return_value=reply)
    end = await run_error(make_app())
    assert end["code"] == code
    assert end["message"].startswith(f"upstream returned HTTP {status}")
    if text is not None:
        assert text in end["message"]
    else:
        assert "slow down" not in end["message"]


# -- upstream bytes quoted by the decoders -------------------------------------------------


async def test_malformed_chunk_is_not_echoed_to_clients_only_logged(
    make_app: Any, router: respx.MockRouter, keys: None, caplog: pytest.LogCaptureFixture
) -> None:
    broken = FIRST + b'data: {"token": "' + SECRET_SNIPPET.encode() + b'", oops\n\n'
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=broken))
    caplog.set_level(logging.WARNING, logger="gateway.upstream")
    end = await run_error(make_app())
    assert end["code"] == "UPSTREAM_MALFORMED"
    assert end["message"] == "the upstream sent a malformed stream"
    error_text = await ai_sdk_error_text(make_app())
    assert "UPSTREAM_MALFORMED" in error_text and SECRET_SNIPPET not in error_text
    assert SECRET_SNIPPET in caplog.text


async def test_any_decoder_shape_error_quoting_upstream_values_is_masked(
    make_app: Any, router: respx.MockRouter, keys: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agui_codecs.errors import MalformedUpstreamError
    from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder

    def quoting(self: Any, frame: Any) -> None:
        raise MalformedUpstreamError(f"unexpected value {SECRET_SNIPPET!r} in a chunk")

    monkeypatch.setattr(OpenAIChatDecoder, "handle", quoting)
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=FIRST))
    end = await run_error(make_app())
    assert end["code"] == "UPSTREAM_MALFORMED"
    assert end["message"] == "the upstream sent a malformed stream"


async def test_a_decoder_bug_is_an_internal_error_logged_counted_and_not_blamed_on_upstream(
    make_app: Any,
    router: respx.MockRouter,
    keys: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder

    def buggy(self: Any, frame: Any) -> None:
        raise KeyError(SECRET_SNIPPET)  # our own bug, whatever the upstream sent

    monkeypatch.setattr(OpenAIChatDecoder, "handle", buggy)
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=FIRST))
    caplog.set_level(logging.WARNING)
    app = make_app()
    before = (await drive(app, "/metrics", method="GET")).body.decode()
    end = await run_error(app)
    assert end["code"] == "INTERNAL_DECODER_ERROR"
    assert end["message"] == "internal gateway error"
    error_text = await ai_sdk_error_text(make_app())
    assert "INTERNAL_DECODER_ERROR" in error_text and SECRET_SNIPPET not in error_text
    assert "KeyError" not in error_text
    records = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert {r.name for r in records} >= {"agui_codecs", "gateway.upstream"}
    assert any(r.exc_info and r.exc_info[0] is KeyError for r in records)  # the traceback
    assert not [r for r in caplog.records if "UPSTREAM_MALFORMED" in r.getMessage()]
    after = (await drive(app, "/metrics", method="GET")).body.decode()

    def count(body: str) -> int:
        line = 'agui_gateway_decoder_internal_errors_total{decoder="openai-chat"} '
        return int(next(x for x in body.splitlines() if x.startswith(line)).rsplit(" ", 1)[1])

    assert count(after) - count(before) == 2  # the AG-UI and the AI SDK request
    assert 'agui_gateway_decoder_internal_errors_total{decoder="gemini"}' in after


async def test_oversized_event_message_is_fixed(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    big = FIRST + sse({"choices": [{"index": 0, "delta": {"content": "x" * 5000}}]})
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=big))
    end = await run_error(make_app(max_event_size=1024))
    assert end["code"] == "UPSTREAM_EVENT_TOO_LARGE"
    assert end["message"] == "the upstream sent an event larger than the gateway accepts"


async def test_recorded_run_keeps_the_masked_message(
    make_app: Any, router: respx.MockRouter, keys: None, tmp_path: Path
) -> None:
    broken = FIRST + b'data: {"token": "' + SECRET_SNIPPET.encode() + b'", oops\n\n'
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=broken))
    app = make_app(database_url=f"sqlite:///{tmp_path}/runs.db")
    async with running(app):
        created = await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": RUN_INPUT}
        )
        assert created.status == 201
        replay = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
        history = await call(app, "GET", "/api/v1/agent/history?threadId=t1")
    assert events_of(replay.body)[-1]["message"] == "the upstream sent a malformed stream"
    assert SECRET_SNIPPET not in replay.body.decode() + history.body.decode()


async def test_a_client_that_disconnects_mid_body_logs_no_traceback(
    make_app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # issue 12: the half-read body raised ClientDisconnect, logged with its traceback.
    app = make_app()
    messages = [
        {"type": "http.request", "body": b'{"threadId": "t", "runId"', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/agui/gpt",
        "raw_path": b"/v1/agui/gpt",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"200")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    with caplog.at_level(logging.DEBUG):
        await app(scope, receive, send)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert any("disconnected" in r.getMessage() for r in caplog.records)
