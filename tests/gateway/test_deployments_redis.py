"""Deployment state shared through Redis (issue 19 item 3): replicas see each other's
cooldowns, failure counts, round-robin credits and attempts in flight
(:mod:`gateway.deployments_redis`), the shared pool behaves as the in-process model
(:class:`gateway.deployments.DeploymentPool`), and an unreachable Redis falls back to the
local state with one log line per outage. Redis: ``GATEWAY_TEST_REDIS_URL`` or the machine's
(skipped without it locally, required under ``CI=true``)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
import respx
from ag_ui.core import RunAgentInput
from gwtest import RUN_INPUT, chunk, drive, sse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pools import KINDS, REDIS_URL, Clock, PoolKit, redis_or_skip, require_redis
from resilience import build
from tcp_proxy import TcpProxy

from agui_codecs.protocols import ClientRequest
from gateway.attempts import RunPlan, run_attempts
from gateway.config import RouteConfig
from gateway.deployments import DeploymentPool
from gateway.deployments_redis import Outage, RedisDeploymentPool
from gateway.route_policy import CooldownConfig
from gateway.upstream import Upstream, build_body

LOGGER = "gateway.deployments_redis"


@pytest.fixture
async def kit() -> AsyncIterator[PoolKit]:
    opened = await PoolKit.open("redis")
    yield opened
    await opened.close()


async def test_failures_through_a_cool_the_deployment_down_for_b(kit: PoolKit) -> None:
    cooldown = CooldownConfig(failures=2, seconds=30)
    a = kit.make([1, 1], balance="least-busy", cooldown=cooldown)
    b = kit.make([1, 1], balance="least-busy", cooldown=cooldown)
    await a.release(await a.acquire(tried=[1]), failed=True)
    await a.release(await a.acquire(tried=[1]), failed=True)
    assert await b.cooling() == [0]
    assert [await b.acquire() for _ in range(3)] == [1, 1, 1]


async def test_a_success_anywhere_resets_the_count(kit: PoolKit) -> None:
    cooldown = CooldownConfig(failures=2, seconds=30)
    a = kit.make([1], cooldown=cooldown)
    b = kit.make([1], cooldown=cooldown)
    await a.release(await a.acquire(), failed=True)
    await b.release(await b.acquire(), failed=False)
    await a.release(await a.acquire(), failed=True)
    assert await a.cooling() == [] and await b.cooling() == []
    await b.release(await b.acquire(), failed=True)  # the second in a row, from B
    assert await a.cooling() == [0]


async def test_round_robin_credits_are_shared(kit: PoolKit) -> None:
    replicas = [kit.make([5, 1, 1]), kit.make([5, 1, 1])]
    picks = []
    for turn in range(14):  # the replicas take turns: together, nginx's sequence twice
        pool = replicas[turn % 2]
        index = await pool.acquire()
        await pool.release(index, failed=False)
        picks.append("abc"[index])
    assert "".join(picks) == "aabacaa" * 2


async def test_least_busy_counts_every_replica_and_a_dead_one_expires(kit: PoolKit) -> None:
    a = kit.make([1, 1], balance="least-busy")
    b = kit.make([1, 1], balance="least-busy")
    assert await a.acquire() == 0  # A holds 0 and dies without releasing it
    assert await b.acquire() == 1
    assert isinstance(b, RedisDeploymentPool)
    assert await b.in_flight() == [1, 1]
    await b.release(1, failed=False)
    assert await b.acquire() == 1  # 0 is still busy with A's attempt
    await b.release(1, failed=False)
    assert kit.client is not None  # A's lease ends: its attempt stops counting
    await kit.client.zadd(f"{kit.prefix}route:0:busy", {m: 0 for m in await _members(kit, 0)})
    assert await b.in_flight() == [0, 0]
    assert await b.acquire() == 0


async def _members(kit: PoolKit, index: int) -> list[bytes]:
    assert kit.client is not None
    members: list[bytes] = await kit.client.zrange(f"{kit.prefix}route:{index}:busy", 0, -1)
    return members


async def test_every_key_has_a_ttl(kit: PoolKit) -> None:
    pool = kit.make([1, 2], cooldown=CooldownConfig(failures=2, seconds=30))
    held = await pool.acquire()
    await pool.release(await pool.acquire(), failed=True)
    await pool.release(await pool.acquire(), failed=True)
    await pool.release(await pool.acquire(), failed=True)
    assert kit.client is not None
    keys = [key async for key in kit.client.scan_iter(match=f"{kit.prefix}*")]
    assert {k.decode().rsplit(":", 1)[-1] for k in keys} >= {"credits", "busy", "cool"}
    for key in keys:
        assert await kit.client.pttl(key) > 0, key
    await pool.release(held, failed=False)


# One step of a run on the pool: acquire (avoiding ``tried``), or release the oldest attempt
# held, failed or not.
STEP = st.one_of(
    st.tuples(st.just("acquire"), st.frozensets(st.integers(0, 3), max_size=3)),
    st.tuples(st.just("release"), st.booleans()),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    weights=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    balance=st.sampled_from(["round-robin", "least-busy"]),
    failures=st.integers(1, 3),
    steps=st.lists(STEP, max_size=30),
)
def test_shared_state_equals_the_in_process_model(
    weights: list[int], balance: Any, failures: int, steps: list[Any]
) -> None:
    cooldown = CooldownConfig(failures=failures, seconds=600)

    async def check() -> None:
        client = await redis_or_skip()
        key = f"test-deploy:{uuid.uuid4().hex[:12]}:"
        model = DeploymentPool(weights, balance=balance, cooldown=cooldown, clock=Clock())
        shared = RedisDeploymentPool(client, key, weights, balance=balance, cooldown=cooldown)
        held: list[int] = []
        try:
            for kind, arg in steps:
                if kind == "acquire":
                    if len(await model.cooling()) == len(weights):
                        continue  # all cooling: "soonest" needs distinct times (tested above)
                    tried = [i for i in arg if i < len(weights)]
                    index = await model.acquire(tried)
                    assert await shared.acquire(tried) == index
                    held.append(index)
                elif held:
                    index = held.pop(0)
                    await model.release(index, failed=arg)
                    await shared.release(index, failed=arg)
                assert await shared.cooling() == await model.cooling()
                assert await shared.in_flight() == model.in_flight()
            assert not shared.outage.active  # never fell back
        finally:
            keys = [k async for k in client.scan_iter(match=f"{key}*")]
            if keys:
                await client.delete(*keys)
            await client.aclose()

    asyncio.run(check())


async def test_redis_down_falls_back_to_local_state_and_logs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = aioredis.from_url("redis://127.0.0.1:1/0")  # nothing listens on port 1
    clock = Clock()
    outage = Outage(clock=clock)
    pool = RedisDeploymentPool(
        client, "down:", [1, 1], cooldown=CooldownConfig(failures=1, seconds=30), outage=outage
    )
    other = RedisDeploymentPool(client, "down-too:", [1], outage=outage)  # another route
    with caplog.at_level(logging.INFO, logger=LOGGER):
        first = await pool.acquire()
        await pool.release(first, failed=True)  # counted locally: 0 cools down here
        assert await pool.cooling() == [first]
        for _ in range(3):
            clock.now += 5  # past retry_after: Redis is asked again, and still fails
            index = await pool.acquire()
            assert index != first
            await pool.release(index, failed=False)
            await other.release(await other.acquire(), failed=True)
    await client.aclose()
    records = [r for r in caplog.records if r.name == LOGGER]
    assert [r.levelno for r in records] == [logging.WARNING]
    assert "unreachable" in records[0].getMessage()


async def test_a_cut_redis_falls_back_then_shares_again(caplog: pytest.LogCaptureFixture) -> None:
    await require_redis()
    host, port = REDIS_URL.removeprefix("redis://").split("/")[0].split(":")
    async with TcpProxy(host, int(port)) as proxy:
        client = aioredis.from_url(f"redis://127.0.0.1:{proxy.port}/0")
        clock = Clock()
        key = f"test-deploy:{uuid.uuid4().hex[:12]}:"
        cooldown = CooldownConfig(failures=1, seconds=30)
        pool = RedisDeploymentPool(
            client, key, [1, 1], cooldown=cooldown, outage=Outage(clock=clock)
        )
        with caplog.at_level(logging.INFO, logger=LOGGER):
            assert await pool.acquire() == 0
            await pool.release(0, failed=False)
            await proxy.cut()
            index = await pool.acquire()  # local state: its own round-robin
            await pool.release(index, failed=False)
            clock.now += 5
            await pool.release(await pool.acquire(), failed=False)
            proxy.restore()
            clock.now += 5
            assert await pool.acquire() == 1  # shared credits again: 0 then 1
            await pool.release(1, failed=True)
            assert await pool.cooling() == [1]
        messages = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]
        assert [level for level, _ in messages] == [logging.WARNING, logging.INFO]
        keys = [k async for k in client.scan_iter(match=f"{key}*")]
        await client.delete(*keys)
        await client.aclose()


TEXT_OK = sse(chunk({"role": "assistant", "content": "Hi"}), chunk({}, finish="stop"), "[DONE]")
EAST, WEST = "https://east.test/v1", "https://west.test/v1"
ROUTES = f"""
[[routes]]
name = "gpt"
upstream_url = "{EAST}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
cooldown = {{ failures = 1, seconds = 60 }}

[[routes.deployments]]
upstream_url = "{WEST}"
"""


def run_input(run_id: str) -> dict[str, Any]:
    """RUN_INPUT under its own run id (the apps share the broker's run streams too)."""
    return {**RUN_INPUT, "runId": run_id}


async def test_two_apps_on_one_redis_share_a_cooldown(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    await require_redis()
    prefix = f"test-deploy:{uuid.uuid4().hex[:12]}:"
    router.post(f"{EAST}/chat/completions").mock(return_value=httpx.Response(503, text="down"))
    router.post(f"{WEST}/chat/completions").mock(return_value=httpx.Response(200, content=TEXT_OK))
    apps = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        apps.append(
            build(
                folder,
                router,
                ROUTES,
                redis_url=REDIS_URL,
                redis_prefix=prefix,
                database_url=f"sqlite+aiosqlite:///{folder}/runs.db",
            ).app
        )
    a, b = apps
    async with a.router.lifespan_context(a), b.router.lifespan_context(b):  # type: ignore[attr-defined]
        end = (await drive(a, "/v1/agui/gpt", run_input("a"))).data()[-1]
        assert [(x["deployment"], x["outcome"]) for x in end["metadata"]["attempts"]] == [
            (0, "error"),
            (1, "success"),
        ]
        for n in range(3):  # B knows east cools down: it never asks it
            end = (await drive(b, "/v1/agui/gpt", run_input(f"b{n}"))).data()[-1]
            assert [x["deployment"] for x in end["metadata"]["attempts"]] == [1]
        pools = b.state.services.pipeline.pools  # type: ignore[attr-defined]
        assert isinstance(pools["gpt"], RedisDeploymentPool)
    assert [c.request.url.host for c in router.calls].count("east.test") == 1
    client = await redis_or_skip()
    keys_left = [k async for k in client.scan_iter(match=f"{prefix}*")]
    if keys_left:
        await client.delete(*keys_left)
    await client.aclose()


class _Hanging(httpx.AsyncByteStream):
    """The first chunk of a Chat Completions stream, then nothing (the upstream thinks)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield sse(chunk({"role": "assistant", "content": "Hi"})).encode()
        await asyncio.Event().wait()


@pytest.mark.parametrize("kind", KINDS)
async def test_a_run_closed_mid_attempt_gives_its_deployment_back(kind: str) -> None:
    kit = await PoolKit.open(kind)
    route = RouteConfig(
        name="gpt", protocol="openai-chat", upstream_url="https://h.test/v1", model="m"
    )
    pool = kit.make([1], balance="least-busy")
    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=_Hanging()))
    )
    request = ClientRequest(RunAgentInput.model_validate(RUN_INPUT))
    plan = RunPlan(
        route, request, build_body(route, request), {"gpt": route}, {"gpt": pool}, 1 << 20
    )
    run = run_attempts(Upstream(client, environ={}), plan)
    try:
        first = await anext(run)
        assert first and first[0].type == "RUN_STARTED"
        assert await _in_flight(pool) == [1]
        await run.aclose()  # the client went away: the attempt is cancelled
        for _ in range(200):  # the release runs in a task of its own
            if await _in_flight(pool) == [0]:
                break
            await asyncio.sleep(0.01)
        assert await _in_flight(pool) == [0]
    finally:
        await client.aclose()
        await kit.close()


async def _in_flight(pool: Any) -> list[int]:
    counts = pool.in_flight()
    return list(await counts if asyncio.iscoroutine(counts) else counts)
