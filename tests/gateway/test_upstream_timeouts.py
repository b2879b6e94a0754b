"""Per-route upstream timeouts (issue 19 item 5): connect, first byte, idle gap between
upstream events, total. Each ends the attempt with RUN_ERROR ``UPSTREAM_TIMEOUT`` naming the
timeout (message and ``metadata.timeout``); before content it is retried like any transient
failure. The limits are a few tenths of a second so the scripted upstreams can outlast them;
nothing here measures speed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import CHAT_REQUEST, OPENAI_BASE, OPENAI_URL, RUN_INPUT, GatedStream, chunk, drive, sse
from real_clients import replay, require_harness
from resilience import build, scripted

TEXT_OK = sse(chunk({"role": "assistant", "content": "Hi"}), chunk({}, finish="stop"), "[DONE]")


def routes(timeouts: str, attempts: int = 1) -> str:
    return f"""
[[routes]]
name = "gpt"
upstream_url = "{OPENAI_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
timeouts = {{ {timeouts} }}
retry = {{ attempts = {attempts} }}
"""


class Ticking(httpx.AsyncByteStream):
    """A body that sends ``first`` then ``each`` every ``period`` seconds, forever."""

    def __init__(self, first: bytes, each: bytes, period: float = 0.03) -> None:
        self.first, self.each, self.period = first, each, period
        self.closed = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        while True:
            await asyncio.sleep(self.period)
            yield self.each

    async def aclose(self) -> None:
        self.closed.set()


def types(events: list[Any]) -> list[str]:
    return [e["type"] for e in events if isinstance(e, dict)]


async def run(gw: Any, path: str = "/v1/agui/gpt", body: Any = RUN_INPUT) -> Any:
    result = await drive(gw.app, path, body)
    assert result.status == 200 and result.complete
    return result


def assert_timeout(events: list[dict[str, Any]], which: str) -> None:
    end = events[-1]
    assert end["type"] == "RUN_ERROR" and end["code"] == "UPSTREAM_TIMEOUT", end
    assert end["metadata"]["timeout"] == which
    assert f"({which})" in end["message"]
    assert end["metadata"]["attempts"][-1]["timeout"] == which


async def test_connect_timeout(tmp_path: Path, router: respx.MockRouter, keys: None) -> None:
    gw = build(tmp_path, router, routes("connect = 0.2"))
    router.post(OPENAI_URL).mock(side_effect=httpx.ConnectTimeout("connect timed out"))
    events = (await run(gw)).data()
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert_timeout(events, "connect")


async def test_first_byte_timeout(tmp_path: Path, router: respx.MockRouter, keys: None) -> None:
    gw = build(tmp_path, router, routes("first_byte = 0.2"))
    never = GatedStream([asyncio.Event()])
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=never))
    events = (await run(gw)).data()
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert_timeout(events, "first_byte")
    assert never.closed.is_set()


async def test_first_byte_counts_events_not_bytes(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    gw = build(tmp_path, router, routes("first_byte = 0.2"))
    pings = Ticking(b": ping\n\n", b": ping\n\n")  # SSE comments: bytes, no event
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=pings))
    assert_timeout((await run(gw)).data(), "first_byte")


async def test_first_byte_timeout_is_retried(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    gw = build(tmp_path, router, routes("first_byte = 0.2", attempts=2))
    route = router.post(OPENAI_URL).mock(
        side_effect=scripted(
            httpx.Response(200, stream=GatedStream([asyncio.Event()])),
            httpx.Response(200, content=TEXT_OK),
        )
    )
    events = (await run(gw)).data()
    assert types(events)[-1] == "RUN_FINISHED" and route.call_count == 2
    assert [a.get("timeout") for a in events[-1]["metadata"]["attempts"]] == ["first_byte", None]


async def test_idle_gap_between_events(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    gw = build(tmp_path, router, routes("idle = 0.25", attempts=3))
    # text, then only keep-alive comments: bytes keep coming (httpx's read timeout would not
    # fire), events do not
    body = Ticking(sse(chunk({"role": "assistant", "content": "Hel"})), b": ping\n\n")
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=body))
    events = (await run(gw)).data()
    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]
    assert_timeout(events, "idle")
    assert route.call_count == 1  # text was sent: no retry
    assert body.closed.is_set()


async def test_total_timeout(tmp_path: Path, router: respx.MockRouter, keys: None) -> None:
    gw = build(tmp_path, router, routes("idle = 5, total = 0.3"))
    delta = sse(chunk({"content": "."}))
    body = Ticking(sse(chunk({"role": "assistant", "content": "a"})), delta)
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=body))
    events = (await run(gw)).data()
    assert types(events)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert_timeout(events, "total")


@pytest.mark.parametrize("kind", ["read", "write", "pool"])
async def test_httpx_timeouts_are_named(
    tmp_path: Path, router: respx.MockRouter, keys: None, kind: str
) -> None:
    gw = build(tmp_path, router, routes("read = 1"))
    error = {"read": httpx.ReadTimeout, "write": httpx.WriteTimeout, "pool": httpx.PoolTimeout}
    router.post(OPENAI_URL).mock(side_effect=error[kind]("timed out"))
    end = (await run(gw)).data()[-1]
    assert end["code"] == "UPSTREAM_TIMEOUT" and end["metadata"]["timeout"] == kind


def test_real_clients_accept_a_timed_out_run(tmp_path: Path, keys: None) -> None:
    require_harness()

    async def bodies() -> dict[str, bytes]:
        out = {}
        for wire, path, body in (
            ("agui", "/v1/agui/gpt", RUN_INPUT),
            ("sdk", "/v1/ai-sdk/gpt", CHAT_REQUEST),
        ):
            router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
            gw = build(tmp_path, router, routes("idle = 0.2"))
            tick = Ticking(sse(chunk({"role": "assistant", "content": "Hel"})), b": ping\n\n")
            router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=tick))
            out[wire] = (await run(gw, path, body)).body
        return out

    got = asyncio.run(bodies())
    results = replay(
        [("agui", "agui", got["agui"])]
        + [(f"sdk-{c}", c, got["sdk"]) for c in ("ai-v7", "ai-v6", "ai-v5")]
    )
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        assert res["streamError"] and "timed out" in res["streamError"], job_id
