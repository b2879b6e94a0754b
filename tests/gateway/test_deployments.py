"""Several deployments per route (issue 19 item 3): weights, round-robin or least-busy, a
cooldown after repeated failures, each behaviour checked for the in-process pool and for the
state kept in Redis (``tests/support/pools.py``). Round-robin is the smooth weighted algorithm of
nginx's ``upstream`` module (weights 5, 1, 1 give ``a a b a c a a``, ngx_http_upstream_round_robin.c)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import CHAT_REQUEST, RUN_INPUT, chunk, drive, sse
from hypothesis import given
from hypothesis import strategies as st
from pools import KINDS, PoolKit
from real_clients import replay, require_harness
from resilience import build

from gateway.config import load_routes
from gateway.deployments import DeploymentPool, Deployments
from gateway.errors import ConfigError
from gateway.route_policy import CooldownConfig

TEXT_OK = sse(chunk({"role": "assistant", "content": "Hi"}), chunk({}, finish="stop"), "[DONE]")
EAST, WEST = "https://east.test/v1", "https://west.test/v1"


@pytest.fixture(params=KINDS)
async def kit(request: pytest.FixtureRequest) -> AsyncIterator[PoolKit]:
    """Pools kept in this process, then the same tests with the state in Redis."""
    opened = await PoolKit.open(request.param)
    yield opened
    await opened.close()


async def cycle(pool: Deployments, n: int) -> list[int]:
    picks = []
    for _ in range(n):
        index = await pool.acquire()
        await pool.release(index, failed=False)
        picks.append(index)
    return picks


async def test_smooth_weighted_round_robin_matches_nginx(kit: PoolKit) -> None:
    pool = kit.make([5, 1, 1])
    assert "".join("abc"[i] for i in await cycle(pool, 7)) == "aabacaa"


@given(st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=5))
def test_round_robin_gives_each_its_weight_per_cycle(weights: list[int]) -> None:
    pool = DeploymentPool(weights)
    picks = asyncio.run(cycle(pool, sum(weights) * 3))
    assert [picks.count(i) for i in range(len(weights))] == [w * 3 for w in weights]


async def test_least_busy_takes_the_idlest_then_the_heavier(kit: PoolKit) -> None:
    pool = kit.make([1, 3], balance="least-busy")
    assert await pool.acquire() == 1  # tie at 0 in flight: the heavier
    assert await pool.acquire() == 0
    assert await pool.acquire() == 1
    await pool.release(1, failed=False)
    await pool.release(1, failed=False)
    assert await pool.acquire() == 1


async def test_cooldown_after_repeated_failures_then_back(kit: PoolKit) -> None:
    pool = kit.make([1, 1], balance="least-busy", cooldown=CooldownConfig(failures=2, seconds=30))
    for _ in range(2):
        await pool.release(await pool.acquire(tried=[1]), failed=True)
    assert await pool.cooling() == [0]
    assert [await pool.acquire() for _ in range(3)] == [1, 1, 1]
    await kit.advance(31)
    assert await pool.cooling() == []
    assert await pool.acquire() == 0


async def test_a_success_resets_the_failure_count(kit: PoolKit) -> None:
    pool = kit.make([1], cooldown=CooldownConfig(failures=2))
    await pool.release(await pool.acquire(), failed=True)
    await pool.release(await pool.acquire(), failed=False)
    await pool.release(await pool.acquire(), failed=True)
    assert await pool.cooling() == []


async def test_everyone_cooling_uses_the_one_back_soonest(kit: PoolKit) -> None:
    pool = kit.make([1, 1], cooldown=CooldownConfig(failures=1, seconds=10))
    first = await pool.acquire()
    await pool.release(first, failed=True)  # cools down until 10
    await kit.advance(5)
    second = await pool.acquire()
    await pool.release(second, failed=True)  # until 15
    assert first != second and sorted(await pool.cooling()) == [0, 1]
    assert await pool.acquire() == first


async def test_a_retry_prefers_an_untried_deployment(kit: PoolKit) -> None:
    pool = kit.make([9, 1])
    assert await pool.acquire(tried=[0]) == 1


ROUTES = f"""
[[routes]]
name = "gpt"
upstream_url = "{EAST}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
weight = 2
cooldown = {{ failures = 1, seconds = 60 }}

[[routes.deployments]]
upstream_url = "{WEST}"
auth = {{ type = "bearer", env = "TEST_WEST_KEY" }}

[[routes.deployments]]
auth = {{ type = "bearer", env = "TEST_EAST_KEY_2" }}
weight = 2
"""


@pytest.fixture
def gw(tmp_path: Path, router: respx.MockRouter, keys: None, monkeypatch: Any) -> Any:
    monkeypatch.setenv("TEST_WEST_KEY", "sk-west")
    monkeypatch.setenv("TEST_EAST_KEY_2", "sk-east-2")
    return build(tmp_path, router, ROUTES)


def key_and_host(request: httpx.Request) -> str:
    return f"{request.url.host} {request.headers['authorization'].removeprefix('Bearer ')}"


async def test_requests_follow_the_weights(gw: Any, router: respx.MockRouter) -> None:
    router.post(f"{EAST}/chat/completions").mock(return_value=httpx.Response(200, content=TEXT_OK))
    router.post(f"{WEST}/chat/completions").mock(return_value=httpx.Response(200, content=TEXT_OK))
    for _ in range(5):
        assert (await drive(gw.app, "/v1/agui/gpt", RUN_INPUT)).data()[-1]["type"] == (
            "RUN_FINISHED"
        )
    seen = [key_and_host(c.request) for c in router.calls]
    # weights 2, 1, 2 (smooth round-robin: a c b a c)
    assert seen == [
        "east.test sk-test-openai",
        "east.test sk-east-2",
        "west.test sk-west",
        "east.test sk-test-openai",
        "east.test sk-east-2",
    ]


async def test_a_failed_deployment_is_retried_elsewhere_and_cools_down(
    gw: Any, router: respx.MockRouter
) -> None:
    def east(request: httpx.Request) -> httpx.Response:
        if request.headers["authorization"] == "Bearer sk-test-openai":
            return httpx.Response(503, text="down")
        return httpx.Response(200, content=TEXT_OK)

    router.post(f"{EAST}/chat/completions").mock(side_effect=east)
    router.post(f"{WEST}/chat/completions").mock(return_value=httpx.Response(200, content=TEXT_OK))
    end = (await drive(gw.app, "/v1/agui/gpt", RUN_INPUT)).data()[-1]
    assert end["type"] == "RUN_FINISHED"
    assert [(a["deployment"], a["outcome"]) for a in end["metadata"]["attempts"]] == [
        (0, "error"),
        (2, "success"),
    ]
    for _ in range(4):  # deployment 0 cools down for 60 s: never asked again
        await drive(gw.app, "/v1/agui/gpt", RUN_INPUT)
    keys = [c.request.headers["authorization"] for c in router.calls]
    assert keys.count("Bearer sk-test-openai") == 1


def test_deployment_url_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES.replace(WEST, "ftp://west.test"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"deployments\[0\].upstream_url"):
        load_routes(path)


def test_real_clients_accept_a_run_moved_to_another_deployment(
    tmp_path: Path, keys: None, monkeypatch: Any
) -> None:
    require_harness()
    monkeypatch.setenv("TEST_WEST_KEY", "sk-west")
    monkeypatch.setenv("TEST_EAST_KEY_2", "sk-east-2")

    async def bodies() -> dict[str, bytes]:
        out = {}
        for wire, path, body in (
            ("agui", "/v1/agui/gpt", RUN_INPUT),
            ("sdk", "/v1/ai-sdk/gpt", CHAT_REQUEST),
        ):
            router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
            gw = build(tmp_path, router, ROUTES)
            router.post(f"{EAST}/chat/completions").mock(
                side_effect=[httpx.Response(503), httpx.Response(200, content=TEXT_OK)]
            )
            out[wire] = (await drive(gw.app, path, body)).body
        return out

    got = asyncio.run(bodies())
    results = replay(
        [("agui", "agui", got["agui"])] + [(c, c, got["sdk"]) for c in ("ai-v7", "ai-v6", "ai-v5")]
    )
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        assert res["streamError"] is None, job_id
