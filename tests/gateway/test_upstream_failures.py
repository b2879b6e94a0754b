"""Upstream failures end the stream with a terminal error event carrying a code, never a hang
or a bare 500, and whatever was open is closed first (docs/protocols.md §2.3 rule 4, §3.3 rule 5).

Error bodies follow the providers' documented shapes: OpenAI ``{"error": {"message", "type",
"param", "code"}}`` (API reference "Error codes"), Anthropic ``{"type": "error", "error":
{"type", "message"}}`` (Messages API "Errors").
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import respx
from gwtest import (
    ANTHROPIC_BASE,
    CHAT_REQUEST,
    OPENAI_URL,
    RUN_INPUT,
    GatedStream,
    chunk,
    drive,
    sse,
)

TEXT_START = sse(chunk({"role": "assistant", "content": "Hel"}), chunk({"content": "lo"}))


def types(events: list[Any]) -> list[str]:
    return [e["type"] for e in events if isinstance(e, dict)]


async def agui_events(app: Any) -> list[dict[str, Any]]:
    result = await drive(app, "/v1/agui/gpt", RUN_INPUT)
    assert result.status == 200
    assert result.complete
    return result.data()


def assert_error_end(events: list[dict[str, Any]], code: str) -> dict[str, Any]:
    assert types(events)[0] == "RUN_STARTED"
    assert types(events)[-1] == "RUN_ERROR"
    assert types(events).count("RUN_ERROR") == 1
    assert events[-1]["code"] == code, events[-1]
    return events[-1]


async def test_http_401_openai_json_error_maps_to_its_code(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    error = {
        "error": {
            "message": "Incorrect API key provided: sk-test.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    router.post(OPENAI_URL).mock(return_value=httpx.Response(401, json=error))
    events = await agui_events(make_app())
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    end = assert_error_end(events, "invalid_api_key")
    assert "HTTP 401" in end["message"] and "Incorrect API key" in end["message"]


async def test_http_401_anthropic_json_error_maps_to_its_type(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    error = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    router.post(f"{ANTHROPIC_BASE}/messages").mock(return_value=httpx.Response(401, json=error))
    result = await drive(make_app(), "/v1/agui/claude", RUN_INPUT)
    end = assert_error_end(result.data(), "authentication_error")
    assert "invalid x-api-key" in end["message"]


async def test_http_500_html_maps_to_status_code(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    html = b"<html><body><h1>500 Internal Server Error</h1></body></html>"
    router.post(OPENAI_URL).mock(
        return_value=httpx.Response(500, content=html, headers={"content-type": "text/html"})
    )
    end = assert_error_end(await agui_events(make_app()), "UPSTREAM_HTTP_500")
    assert "<html>" not in end["message"]


async def test_error_body_is_read_bounded(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    bodies: list[GatedStream] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(GatedStream([b"x" * 65536] * 100))
        return httpx.Response(502, stream=bodies[-1])

    router.post(OPENAI_URL).mock(side_effect=answer)
    assert_error_end(await agui_events(make_app()), "UPSTREAM_HTTP_502")
    assert len(bodies) == 3  # a 502 is retried (issue 19): each attempt's body read bounded
    for body in bodies:
        assert body.sent <= 2
        assert body.closed.is_set()


async def test_connect_error_is_unavailable(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    router.post(OPENAI_URL).mock(side_effect=httpx.ConnectError("connection refused"))
    assert_error_end(await agui_events(make_app()), "UPSTREAM_UNAVAILABLE")


@pytest.mark.parametrize("error", [httpx.ConnectTimeout("t"), httpx.ReadTimeout("t")])
async def test_timeout_before_response(
    make_app: Any, router: respx.MockRouter, keys: None, error: Exception
) -> None:
    router.post(OPENAI_URL).mock(side_effect=error)
    assert_error_end(await agui_events(make_app()), "UPSTREAM_TIMEOUT")


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (httpx.ReadTimeout("idle"), "UPSTREAM_TIMEOUT"),
        (httpx.ReadError("connection reset"), "UPSTREAM_DISCONNECTED"),
        (httpx.RemoteProtocolError("peer closed"), "UPSTREAM_DISCONNECTED"),
    ],
)
async def test_failure_mid_stream_closes_the_open_message_first(
    make_app: Any, router: respx.MockRouter, keys: None, error: Exception, code: str
) -> None:
    upstream = GatedStream([TEXT_START], raise_at_end=error)
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=upstream))
    events = await agui_events(make_app())
    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]
    assert events[-1]["code"] == code
    assert upstream.closed.is_set()


async def test_malformed_bytes_mid_stream(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    upstream = GatedStream([TEXT_START, b"data: {this is not json\n\n", sse("[DONE]")])
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=upstream))
    events = await agui_events(make_app())
    assert types(events)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert events[-1]["code"] == "UPSTREAM_MALFORMED"


async def test_event_larger_than_max_event_size(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    big = sse(chunk({"role": "assistant", "content": "x" * 5000}, "stop"), "[DONE]")
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=big))
    assert_error_end(await agui_events(make_app(max_event_size=1024)), "UPSTREAM_EVENT_TOO_LARGE")


async def test_empty_upstream_body(make_app: Any, router: respx.MockRouter, keys: None) -> None:
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=b""))
    assert_error_end(await agui_events(make_app()), "UPSTREAM_EMPTY")


async def test_missing_key_variable_is_a_terminal_error_not_a_crash(
    make_app: Any, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_OPENAI_KEY", raising=False)
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=b""))
    end = assert_error_end(await agui_events(make_app()), "UPSTREAM_AUTH_MISSING")
    assert "TEST_OPENAI_KEY" not in end["message"] and "'gpt'" in end["message"]
    assert not route.called


@pytest.mark.parametrize("key", ["sk-a\r\nx-injected: 1", "sk-b\nx", "sk-d\x7f"])
async def test_a_key_variable_that_is_no_header_value_has_its_own_code(
    make_app: Any, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    # issue 12: a key holding CRLF was reported as UPSTREAM_UNAVAILABLE (RFC 9110 §5.5:
    # a field value has no CR, LF, NUL or other control character).
    monkeypatch.setenv("TEST_OPENAI_KEY", "  " + key)
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=b""))
    end = assert_error_end(await agui_events(make_app()), "UPSTREAM_AUTH_INVALID")
    assert "TEST_OPENAI_KEY" not in end["message"] and "sk" not in end["message"]
    assert not route.called


async def test_transport_failures_never_name_an_exception_class(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    router.post(OPENAI_URL).mock(side_effect=httpx.ConnectError("refused"))
    end = assert_error_end(await agui_events(make_app()), "UPSTREAM_UNAVAILABLE")
    assert end["message"] == "upstream is unreachable"


async def test_ai_sdk_failure_mid_stream_closes_text_then_error_finish_done(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    upstream = GatedStream([TEXT_START], raise_at_end=httpx.ReadTimeout("idle"))
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=upstream))
    result = await drive(make_app(), "/v1/ai-sdk/gpt", CHAT_REQUEST)
    chunks = result.data()
    assert types(chunks)[-3:] == ["text-end", "error", "finish"]
    assert chunks[-2] == {"type": "finish", "finishReason": "error"}
    assert "UPSTREAM_TIMEOUT" in chunks[-3]["errorText"]
    assert chunks[-1] == "[DONE]"


async def test_ai_sdk_http_error(make_app: Any, router: respx.MockRouter, keys: None) -> None:
    router.post(OPENAI_URL).mock(
        return_value=httpx.Response(
            429,
            json={
                "error": {
                    "message": "Rate limit reached",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
        )
    )
    chunks = (await drive(make_app(), "/v1/ai-sdk/gpt", CHAT_REQUEST)).data()
    assert types(chunks) == ["start", "start-step", "error", "finish"]
    assert chunks[2]["errorText"].startswith("rate_limit_exceeded")
    assert chunks[-1] == "[DONE]"


async def test_upstream_body_still_decodes_when_split_byte_by_byte(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    body = sse(chunk({"role": "assistant", "content": "héllo"}), chunk({}, "stop"), "[DONE]")
    parts = [body[i : i + 1] for i in range(len(body))]
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=GatedStream(parts)))
    events = await agui_events(make_app())
    assert types(events)[-1] == "RUN_FINISHED"
    assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == "héllo"


async def test_no_terminal_chunk_is_ever_missing_after_a_gateway_bug(
    make_app: Any, router: respx.MockRouter, keys: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder

    def broken(self: Any, data: bytes) -> list[Any]:
        raise RuntimeError("bug")

    monkeypatch.setattr(OpenAIChatDecoder, "feed", broken)
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=TEXT_START))
    end = assert_error_end(await agui_events(make_app()), "INTERNAL_ERROR")
    assert "bug" not in end["message"]  # internal details are masked
