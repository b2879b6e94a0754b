"""Several deployments per route (issue 19 item 3): weights, round-robin or least-busy, a
cooldown after repeated failures, per process. Round-robin is the smooth weighted algorithm of
nginx's ``upstream`` module (weights 5, 1, 1 give ``a a b a c a a``, ngx_http_upstream_round_robin.c)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import CHAT_REQUEST, RUN_INPUT, chunk, drive, sse
from hypothesis import given
from hypothesis import strategies as st
from real_clients import replay, require_harness
from resilience import build

from gateway.config import load_routes
from gateway.deployments import DeploymentPool
from gateway.errors import ConfigError
from gateway.route_policy import CooldownConfig

TEXT_OK = sse(chunk({"role": "assistant", "content": "Hi"}), chunk({}, finish="stop"), "[DONE]")
EAST, WEST = "https://east.test/v1", "https://west.test/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_smooth_weighted_round_robin_matches_nginx() -> None:
    pool = DeploymentPool([5, 1, 1])
    picks = []
    for _ in range(7):
        index = pool.acquire()
        pool.release(index, failed=False)
        picks.append("abc"[index])
    assert "".join(picks) == "aabacaa"


@given(st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=5))
def test_round_robin_gives_each_its_weight_per_cycle(weights: list[int]) -> None:
    pool = DeploymentPool(weights)
    counts = [0] * len(weights)
    for _ in range(sum(weights) * 3):
        index = pool.acquire()
        pool.release(index, failed=False)
        counts[index] += 1
    assert counts == [w * 3 for w in weights]


def test_least_busy_takes_the_idlest_then_the_heavier() -> None:
    pool = DeploymentPool([1, 3], balance="least-busy")
    assert pool.acquire() == 1  # tie at 0 in flight: the heavier
    assert pool.acquire() == 0
    assert pool.acquire() == 1
    pool.release(1, failed=False)
    pool.release(1, failed=False)
    assert pool.acquire() == 1


def test_cooldown_after_repeated_failures_then_back() -> None:
    clock = Clock()
    pool = DeploymentPool(
        [1, 1], balance="least-busy", cooldown=CooldownConfig(failures=2, seconds=30), clock=clock
    )
    for _ in range(2):
        pool.release(pool.acquire(tried=[1]), failed=True)
    assert pool.cooling() == [0]
    assert [pool.acquire() for _ in range(3)] == [1, 1, 1]
    clock.now = 31
    assert pool.cooling() == []
    assert pool.acquire() == 0


def test_a_success_resets_the_failure_count() -> None:
    pool = DeploymentPool([1], cooldown=CooldownConfig(failures=2))
    pool.release(pool.acquire(), failed=True)
    pool.release(pool.acquire(), failed=False)
    pool.release(pool.acquire(), failed=True)
    assert pool.cooling() == []


def test_everyone_cooling_uses_the_one_back_soonest() -> None:
    clock = Clock()
    pool = DeploymentPool([1, 1], cooldown=CooldownConfig(failures=1, seconds=10), clock=clock)
    first = pool.acquire()
    pool.release(first, failed=True)  # cools down until 10
    clock.now = 5
    second = pool.acquire()
    pool.release(second, failed=True)  # until 15
    assert first != second and sorted(pool.cooling()) == [0, 1]
    assert pool.acquire() == first


def test_a_retry_prefers_an_untried_deployment() -> None:
    pool = DeploymentPool([9, 1])
    assert pool.acquire(tried=[0]) == 1


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
