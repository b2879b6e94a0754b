"""Retries where the client cannot see them, and only there (issue 19 item 1).

Scripted failures from a mocked upstream (respx). Error bodies and stream events follow the
providers' documented shapes: OpenAI ``{"error": {"message", "type", "param", "code"}}``,
Anthropic ``{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}``
(Messages API "Errors" and "Streaming Messages": an ``error`` event may arrive mid-stream),
``Retry-After`` per RFC 9110 §10.2.3. The AG-UI messages a retry carries have the shape of the
AG-UI "Messages" reference (assistant ``toolCalls`` + a ``tool`` message with ``toolCallId``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import (
    ANTHROPIC_BASE,
    CHAT_REQUEST,
    FAST,
    OPENAI_BASE,
    OPENAI_URL,
    RUN_INPUT,
    GatedStream,
    anthropic_sse,
    chunk,
    drive,
    sse,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness
from resilience import (
    ANSWER,
    CARRIED,
    MESSAGE_START,
    OVERLOADED,
    TOOL_STEP,
    agui_sse,
    anthropic_text,
    build,
    scripted,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, events_of, running

AGENT_URL = "https://agent.test/run"

ROUTES = f"""
[[routes]]
name = "gpt"
upstream_url = "{OPENAI_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}

[[routes]]
name = "claude"
upstream_url = "{ANTHROPIC_BASE}"
protocol = "anthropic"
model = "claude-sonnet-4-5"
auth = {{ type = "header", header = "x-api-key", env = "TEST_ANTHROPIC_KEY" }}

[[routes]]
name = "agent"
upstream_url = "{AGENT_URL}"
protocol = "agui"
"""

TEXT_OK = sse(
    chunk({"role": "assistant", "content": "Hel"}),
    chunk({"content": "lo"}),
    chunk({}, finish="stop"),
    "[DONE]",
)


def types(events: list[Any]) -> list[str]:
    return [e["type"] for e in events if isinstance(e, dict)]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def assert_one_clean_run(events: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = types(events)
    assert kinds[0] == "RUN_STARTED" and kinds.count("RUN_STARTED") == 1, kinds
    assert kinds[-1] == "RUN_FINISHED" and "RUN_ERROR" not in kinds, kinds
    return events[-1]


def openai_error(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"error": {"message": "try later", "type": code, "param": None, "code": code}}
    return httpx.Response(status, json=body, headers=headers)


@pytest.fixture
def gw(tmp_path: Path, router: respx.MockRouter, keys: None) -> Any:
    return build(tmp_path, router, ROUTES)


async def agui(gw: Any, route: str = "gpt", body: Any = None) -> list[dict[str, Any]]:
    result = await drive(gw.app, f"/v1/agui/{route}", body or RUN_INPUT)
    assert result.status == 200 and result.complete
    return result.data()


async def test_429_with_retry_after_seconds_then_success_is_one_clean_run(
    gw: Any, router: respx.MockRouter
) -> None:
    route = router.post(OPENAI_URL).mock(
        side_effect=scripted(
            openai_error(429, "rate_limit_exceeded", **{"retry-after": "2"}),
            httpx.Response(200, content=TEXT_OK),
        )
    )
    events = await agui(gw)
    end = assert_one_clean_run(events)
    assert text_of(events) == "Hello"
    assert route.call_count == 2
    assert gw.sleeps == [2.0]  # the upstream's wait, longer than the first backoff (<= 0.5 s)
    attempts = end["metadata"]["attempts"]
    assert [(a["outcome"], a.get("status"), a.get("retryAfter")) for a in attempts] == [
        ("error", 429, 2.0),
        ("success", 200, None),
    ]
    assert attempts[0]["code"] == "rate_limit_exceeded" and attempts[1]["waited"] == 2.0
    assert [r.outcome for r in gw.attempts] == ["error", "success"]


async def test_retry_after_http_date_is_honoured(gw: Any, router: respx.MockRouter) -> None:
    # RFC 9110 §5.6.7 IMF-fixdate, ~4 s ahead of now (whole seconds)
    when = formatdate(time.time() + 4, usegmt=True)
    router.post(OPENAI_URL).mock(
        side_effect=scripted(
            httpx.Response(503, text="busy", headers={"retry-after": when}),
            httpx.Response(200, content=TEXT_OK),
        )
    )
    assert_one_clean_run(await agui(gw))
    assert len(gw.sleeps) == 1 and 2.0 <= gw.sleeps[0] <= 4.0


async def test_503_on_the_first_attempt_then_a_clean_run(gw: Any, router: respx.MockRouter) -> None:
    router.post(OPENAI_URL).mock(
        side_effect=scripted(
            httpx.Response(503, text="<html>busy</html>"), httpx.Response(200, content=TEXT_OK)
        )
    )
    events = await agui(gw)
    assert_one_clean_run(events)
    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert len(gw.sleeps) == 1 and 0.25 <= gw.sleeps[0] <= 0.5  # equal jitter of 0.5 s


async def test_connect_error_then_success(gw: Any, router: respx.MockRouter) -> None:
    router.post(OPENAI_URL).mock(
        side_effect=scripted(httpx.ConnectError("refused"), httpx.Response(200, content=TEXT_OK))
    )
    assert_one_clean_run(await agui(gw))


async def test_anthropic_overloaded_mid_stream_before_content_is_retried(
    gw: Any, router: respx.MockRouter
) -> None:
    route = router.post(f"{ANTHROPIC_BASE}/messages").mock(
        side_effect=scripted(
            httpx.Response(200, content=anthropic_sse(MESSAGE_START, OVERLOADED)),
            httpx.Response(200, content=anthropic_text("Bonjour")),
        )
    )
    events = await agui(gw, "claude")
    end = assert_one_clean_run(events)
    assert text_of(events) == "Bonjour" and route.call_count == 2
    assert end["metadata"]["attempts"][0]["code"] == "overloaded_error"


async def test_provider_error_after_text_is_not_retried(gw: Any, router: respx.MockRouter) -> None:
    partial = anthropic_sse(
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        OVERLOADED,
    )
    route = router.post(f"{ANTHROPIC_BASE}/messages").mock(
        return_value=httpx.Response(200, content=partial)
    )
    events = await agui(gw, "claude")
    assert types(events)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert events[-1]["code"] == "overloaded_error"
    assert route.call_count == 1 and gw.sleeps == []
    assert [a["outcome"] for a in events[-1]["metadata"]["attempts"]] == ["error"]


async def test_not_retryable_error_is_not_retried(gw: Any, router: respx.MockRouter) -> None:
    route = router.post(OPENAI_URL).mock(return_value=openai_error(401, "invalid_api_key"))
    events = await agui(gw)
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "invalid_api_key" and route.call_count == 1


async def test_attempts_are_bounded_with_growing_backoff(gw: Any, router: respx.MockRouter) -> None:
    route = router.post(OPENAI_URL).mock(side_effect=httpx.ConnectError("refused"))
    events = await agui(gw)
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "UPSTREAM_UNAVAILABLE"
    assert route.call_count == 3  # the default: 3 attempts
    assert len(gw.sleeps) == 2
    assert 0.25 <= gw.sleeps[0] <= 0.5 and 0.5 <= gw.sleeps[1] <= 1.0
    assert [a["attempt"] for a in events[-1]["metadata"]["attempts"]] == [1, 2, 3]


async def test_retry_after_longer_than_allowed_is_not_waited(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    gw = build(
        tmp_path,
        router,
        ROUTES.replace(
            'model = "gpt-4o-mini"', 'model = "gpt-4o-mini"\nretry = { max_retry_after = 5 }', 1
        ),
    )
    route = router.post(OPENAI_URL).mock(
        return_value=openai_error(429, "rate_limit_exceeded", **{"retry-after": "60"})
    )
    events = await agui(gw)
    assert events[-1]["code"] == "rate_limit_exceeded" and route.call_count == 1
    assert gw.sleeps == []


async def test_failure_at_a_step_boundary_retries_with_the_completed_step(
    gw: Any, router: respx.MockRouter
) -> None:
    first = GatedStream([agui_sse(*TOOL_STEP)], raise_at_end=httpx.ReadError("reset"))
    route = router.post(AGENT_URL).mock(
        side_effect=scripted(
            httpx.Response(200, stream=first), httpx.Response(200, content=agui_sse(*ANSWER))
        )
    )
    events = await agui(gw, "agent")
    assert_one_clean_run(events)
    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert route.call_count == 2
    retried = orjson.loads(route.calls[1].request.content)
    assert retried["messages"] == [RUN_INPUT["messages"][0], *CARRIED]
    # the tool ran once: its call and result were sent once, and only carried afterwards
    assert types(events).count("TOOL_CALL_RESULT") == 1


async def test_failure_inside_an_unfinished_tool_call_is_not_retried(
    gw: Any, router: respx.MockRouter
) -> None:
    cut = GatedStream([agui_sse(*TOOL_STEP[:3])], raise_at_end=httpx.ReadError("reset"))
    route = router.post(AGENT_URL).mock(return_value=httpx.Response(200, stream=cut))
    events = await agui(gw, "agent")
    assert types(events)[-2:] == ["TOOL_CALL_END", "RUN_ERROR"]
    assert events[-1]["code"] == "UPSTREAM_DISCONNECTED" and route.call_count == 1


async def test_text_after_the_boundary_makes_the_failure_final(
    gw: Any, router: respx.MockRouter
) -> None:
    step = [*TOOL_STEP, *ANSWER[1:3]]
    cut = GatedStream([agui_sse(*step)], raise_at_end=httpx.ReadError("reset"))
    route = router.post(AGENT_URL).mock(return_value=httpx.Response(200, stream=cut))
    events = await agui(gw, "agent")
    assert types(events)[-1] == "RUN_ERROR" and route.call_count == 1


async def test_durable_run_records_one_clean_run(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    gw = build(tmp_path, router, ROUTES, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    first = GatedStream([agui_sse(*TOOL_STEP)], raise_at_end=httpx.ReadError("reset"))
    router.post(AGENT_URL).mock(
        side_effect=scripted(
            httpx.Response(503, text="busy"),
            httpx.Response(200, stream=first),
            httpx.Response(200, content=agui_sse(*ANSWER)),
        )
    )
    async with running(gw.app):
        posted = await call(gw.app, "POST", "/v1/agui/agent", RUN_INPUT)
        stored = await call(gw.app, "GET", "/api/v1/agent/runs/thread-1/events?runId=run-1")
    live, replayed = events_of(posted.body), events_of(stored.body)
    assert live == replayed
    assert types(live) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert [a["outcome"] for a in live[-1]["metadata"]["attempts"]] == ["error", "error", "success"]


# -- the kind: any number of transient failures before content, any limit --------------------

FAILURES = {
    "429": lambda: openai_error(429, "rate_limit_exceeded", **{"retry-after": "1"}),
    "500": lambda: httpx.Response(500, text="oops"),
    "503": lambda: openai_error(503, "server_error"),
    "connect": lambda: httpx.ConnectError("refused"),
    "reset": lambda: httpx.Response(
        200, stream=GatedStream([b""], raise_at_end=httpx.RemoteProtocolError("peer closed"))
    ),
    "truncated": lambda: httpx.Response(200, content=sse(chunk({"role": "assistant"}))),
}


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    failures=st.lists(st.sampled_from(sorted(FAILURES)), max_size=5),
    attempts=st.integers(min_value=1, max_value=5),
    wire=st.sampled_from(["agui", "ai-sdk"]),
)
def test_transient_failures_before_content_are_invisible_within_the_limit(
    tmp_path: Path, keys: None, failures: list[str], attempts: int, wire: str
) -> None:
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
    toml = ROUTES.replace(
        'model = "gpt-4o-mini"', f'model = "gpt-4o-mini"\nretry = {{ attempts = {attempts} }}', 1
    )
    gw = build(tmp_path, router, toml)
    script = [FAILURES[name]() for name in failures] + [httpx.Response(200, content=TEXT_OK)]
    route = router.post(OPENAI_URL).mock(side_effect=scripted(*script))
    path, body = ("/v1/agui/gpt", RUN_INPUT) if wire == "agui" else ("/v1/ai-sdk/gpt", CHAT_REQUEST)
    result = asyncio.run(drive(gw.app, path, body))
    assert route.call_count == min(len(failures) + 1, attempts)
    data = [d for d in result.data() if isinstance(d, dict)]
    if wire == "agui":
        kinds = types(data)
        assert kinds.count("RUN_STARTED") == 1 and kinds[0] == "RUN_STARTED"
        assert kinds.count("RUN_FINISHED") + kinds.count("RUN_ERROR") == 1
        if len(failures) < attempts:
            assert kinds[-1] == "RUN_FINISHED" and text_of(data) == "Hello"
        else:
            assert kinds == ["RUN_STARTED", "RUN_ERROR"]
        end = data[-1]
        assert len(end["metadata"]["attempts"]) == route.call_count
    else:
        kinds = [d["type"] for d in data]
        assert kinds.count("start") == 1 and kinds.count("finish") == 1
        if len(failures) < attempts:
            assert "error" not in kinds
            assert "".join(d["delta"] for d in data if d["type"] == "text-delta") == "Hello"
        else:
            assert "error" in kinds and "text-delta" not in kinds


# -- the real clients accept what a retried run sends ----------------------------------------


def test_real_clients_accept_retried_runs(tmp_path: Path, keys: None) -> None:
    require_harness()

    async def run() -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for wire, path, body in (
            ("agui", "/v1/agui", RUN_INPUT),
            ("sdk", "/v1/ai-sdk", CHAT_REQUEST),
        ):
            router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
            gw = build(tmp_path, router, ROUTES)
            router.post(OPENAI_URL).mock(
                side_effect=scripted(
                    openai_error(429, "rate_limit_exceeded", **{"retry-after": "1"}),
                    httpx.Response(503, text="busy"),
                    httpx.Response(200, content=TEXT_OK),
                )
            )
            out[f"{wire}-retried"] = (await drive(gw.app, f"{path}/gpt", body)).body
            first = GatedStream([agui_sse(*TOOL_STEP)], raise_at_end=httpx.ReadError("reset"))
            router.post(AGENT_URL).mock(
                side_effect=scripted(
                    httpx.Response(200, stream=first),
                    httpx.Response(200, content=agui_sse(*ANSWER)),
                )
            )
            out[f"{wire}-boundary"] = (await drive(gw.app, f"{path}/agent", body)).body
            router.post(OPENAI_URL).mock(side_effect=httpx.ConnectError("refused"))
            out[f"{wire}-exhausted"] = (await drive(gw.app, f"{path}/gpt", body)).body
        return out

    bodies = asyncio.run(run())
    jobs: list[Any] = []
    for key, body in bodies.items():
        clients = ("agui",) if key.startswith("agui") else ("ai-v7", "ai-v6", "ai-v5")
        jobs += [(f"{key}-{client}", client, body) for client in clients]
    results = replay(jobs)
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        if "exhausted" in job_id:
            assert res["streamError"], job_id
        else:
            assert res["streamError"] is None, (job_id, res["streamError"])
    agent = results["agui-boundary-agui"]["messages"]
    assert [m["role"] for m in agent] == ["assistant", "tool", "assistant"]
    sdk = results["sdk-boundary-ai-v7"]["messages"][-1]["parts"]
    tool = [p for p in sdk if p["type"].startswith(("tool-", "dynamic-tool"))]
    assert [p["state"] for p in tool] == ["output-available"]
    assert any(p["type"] == "text" and p["text"] == "It is sunny." for p in sdk)


async def test_no_attempt_starts_past_max_elapsed(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    limited = 'model = "gpt-4o-mini"\nretry = { attempts = 5, max_elapsed = 1 }'
    gw = build(tmp_path, router, ROUTES.replace('model = "gpt-4o-mini"', limited, 1))
    route = router.post(OPENAI_URL).mock(
        return_value=openai_error(503, "server_error", **{"retry-after": "2"})
    )
    events = await agui(gw)
    assert events[-1]["code"] == "server_error"
    assert route.call_count == 1 and gw.sleeps == []  # waiting 2 s would pass the 1 s budget
