"""Per-tenant quotas (issue 15 §3): the store-growth attack (big requests to an unreachable
upstream) stops at the storage quota with a typed 429 and nothing stored lost; a run that
streams past its share ends with RUN_ERROR ``STORAGE_QUOTA_EXCEEDED`` keeping what it stored;
the request rate and the concurrent runs are capped with 429s."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from authapp import auth_app, run_input
from durable_support import events_of, eventually
from gwtest import chunk, sse

pytestmark = pytest.mark.timeout(180)


def unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


async def test_the_store_growth_attack_stops_at_the_quota_and_loses_nothing(
    tmp_path: Path,
) -> None:
    quota = 400_000
    async with auth_app(
        tmp_path, upstream=unreachable, quota_stored_bytes=quota, quota_rate=""
    ) as gw:
        key = await gw.key("attacker")
        victim = await gw.key("victim")
        blob = "x" * 20_000
        accepted, sent = [], 0
        refusal = None
        for n in range(100):
            body = run_input("t", f"r{n}", blob, message=f"m{n}")
            reply = await gw.request("POST", "/v1/agui/gpt", body, key=key)
            sent += len(blob)
            if reply.status == 429:
                refusal = reply.json()["error"]
                break
            assert reply.status == 200
            assert events_of(reply.body)[-1]["code"] == "UPSTREAM_UNAVAILABLE"
            accepted.append(f"r{n}")
        assert refusal is not None and refusal["code"] == "STORAGE_QUOTA_EXCEEDED"
        usage = await gw.store.tenant_usage("attacker")
        assert usage.stored_bytes <= quota
        assert (
            len(accepted) >= quota // 50_000
        )  # each run stores its 20 kB input twice (content, parts)
        # nothing stored was lost: every accepted run is whole, its input in the history
        history = (
            await gw.request("GET", "/api/v1/agent/history?threadId=t&limit=200", key=key)
        ).json()
        assert {i["id"] for i in history["items"] if i["role"] == "user"} == {
            f"m{r[1:]}" for r in accepted
        }
        for run in accepted:
            reply = await gw.request("GET", f"/api/v1/agent/runs/t/events?runId={run}", key=key)
            types = [e["type"] for e in events_of(reply.body)]
            assert types[0] == "RUN_STARTED" and types[-1] == "RUN_ERROR"
        # another tenant is not affected
        other = await gw.request("POST", "/v1/agui/gpt", run_input("t", "r0"), key=victim)
        assert other.status == 200
        print(
            f"\nstore-growth attack: {sent} bytes sent, {len(accepted)} runs accepted, "
            f"{usage.stored_bytes} bytes stored for a quota of {quota}"
        )


async def test_a_run_past_its_share_ends_typed_and_keeps_what_it_stored(tmp_path: Path) -> None:
    deltas = [chunk({"role": "assistant", "content": ""})]
    deltas += [chunk({"content": "y" * 200}) for _ in range(2_000)]
    body = sse(*deltas, chunk({}, "stop"), "[DONE]")
    async with auth_app(
        tmp_path,
        upstream=lambda request: httpx.Response(200, content=body),
        quota_stored_bytes=100_000,
    ) as gw:
        key = await gw.key("acme")
        live = await gw.request("POST", "/v1/agui/gpt", run_input("t1", "r1"), key=key)
        got = events_of(live.body)
        assert got[-1]["type"] == "RUN_ERROR" and got[-1]["code"] == "STORAGE_QUOTA_EXCEEDED"
        replay = await gw.request("GET", "/api/v1/agent/runs/t1/events?runId=r1", key=key)
        assert events_of(replay.body) == got  # everything the client saw is stored
        text = "".join(e["delta"] for e in got if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert 0 < len(text) < 100_000
        assert (await gw.store.tenant_usage("acme")).stored_bytes < 100_000 + 2_000


async def test_request_rate_is_a_429_with_retry_after(tmp_path: Path) -> None:
    async with auth_app(tmp_path, quota_rate="3/minute") as gw:
        key = await gw.key("acme")
        other = await gw.key("other")
        for _ in range(3):
            assert (
                await gw.request("GET", "/api/v1/agent/history?threadId=t", key=key)
            ).status == 200
        reply = await gw.request("GET", "/api/v1/agent/history?threadId=t", key=key)
        assert reply.status == 429 and reply.json()["error"]["code"] == "RATE_LIMITED"
        assert 1 <= int(reply.headers["retry-after"]) <= 60
        assert (
            await gw.request("GET", "/api/v1/agent/history?threadId=t", key=other)
        ).status == 200


async def test_concurrent_runs_are_capped(tmp_path: Path) -> None:
    gate = asyncio.Event()

    class Gated(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[no-untyped-def]
            yield sse(chunk({"role": "assistant", "content": "a"}))
            await gate.wait()
            yield sse(chunk({}, "stop"), "[DONE]")

    async with auth_app(
        tmp_path,
        upstream=lambda request: httpx.Response(200, stream=Gated()),
        quota_concurrent_runs=1,
    ) as gw:
        key = await gw.key("acme")
        first = await gw.request(
            "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t", "r1")}, key=key
        )
        assert first.status == 201
        second = await gw.request(
            "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t", "r2")}, key=key
        )
        assert second.status == 429 and second.json()["error"]["code"] == "TOO_MANY_RUNS"
        assert second.headers["retry-after"] == "1"
        gate.set()

        async def free() -> bool:
            return (await gw.store.tenant_usage("acme")).active_runs == 0

        await eventually(free)
        third = await gw.request(
            "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t", "r3")}, key=key
        )
        assert third.status == 201
