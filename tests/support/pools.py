"""Deployment pools for the tests of :mod:`gateway.deployments` and
:mod:`gateway.deployments_redis`: the same behaviour over both homes.

:class:`PoolKit` makes pools of one kind (``"local"`` or ``"redis"``) and moves their time on:
a fake clock for the in-process pool; for Redis the cooldown keys' ``PTTL`` shortened by the
same amount (the cooldown *is* the key's TTL, so that is what time passing does to it). The
Redis pools live under a unique key prefix on ``GATEWAY_TEST_REDIS_URL`` (default the
machine's ``127.0.0.1:6379``), deleted afterwards; without Redis the test is skipped, or fails
under ``CI=true`` (:func:`corpus.require_service`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from corpus import require_service

from gateway.deployments import DeploymentPool, Deployments
from gateway.deployments_redis import RedisDeploymentPool
from gateway.route_policy import Balance, CooldownConfig

__all__ = ["KINDS", "REDIS_URL", "Clock", "PoolKit", "redis_or_skip", "require_redis"]

REDIS_URL = os.environ.get("GATEWAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
KINDS = ("local", "redis")


class Clock:
    """A fake monotonic clock (seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def redis_or_skip() -> aioredis.Redis:
    """A client of the test Redis, or skip (fail under ``CI=true``) when it does not answer."""
    client = aioredis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (OSError, aioredis.RedisError) as exc:
        await client.aclose()
        require_service(False, f"Redis unreachable at {REDIS_URL}: {exc}")
    return client


async def require_redis() -> None:
    """Skip (fail under ``CI=true``) when the test Redis does not answer."""
    await (await redis_or_skip()).aclose()


class PoolKit:
    """Pools of one ``kind`` sharing one fake clock / one Redis key prefix.

    Use ``await PoolKit.open(kind)`` and ``await kit.close()``.
    """

    def __init__(self, kind: str, client: aioredis.Redis | None) -> None:
        self.kind = kind
        self.client = client
        self.clock = Clock()
        self.prefix = f"test-deploy:{uuid.uuid4().hex[:12]}:"
        self.pools: list[Deployments] = []

    @classmethod
    async def open(cls, kind: str) -> PoolKit:
        return cls(kind, await redis_or_skip() if kind == "redis" else None)

    def make(
        self,
        weights: Sequence[int],
        *,
        balance: Balance = "round-robin",
        cooldown: CooldownConfig | None = None,
        name: str = "route",
        **redis_kwargs: Any,
    ) -> Deployments:
        """A pool; two Redis pools of the same ``name`` share their state (two replicas)."""
        pool: Deployments
        if self.client is None:
            pool = DeploymentPool(weights, balance=balance, cooldown=cooldown, clock=self.clock)
        else:
            pool = RedisDeploymentPool(
                self.client,
                f"{self.prefix}{name}:",
                weights,
                balance=balance,
                cooldown=cooldown,
                **redis_kwargs,
            )
        self.pools.append(pool)
        return pool

    async def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass for the cooldowns."""
        self.clock.now += seconds
        if self.client is None:
            return
        async for key in self.client.scan_iter(match=f"{self.prefix}*:cool"):
            left = await self.client.pttl(key)
            if left > seconds * 1000:
                await self.client.pexpire(key, int(left - seconds * 1000))
            else:
                await self.client.delete(key)

    async def close(self) -> None:
        if self.client is None:
            return
        keys = [key async for key in self.client.scan_iter(match=f"{self.prefix}*")]
        if keys:
            await self.client.delete(*keys)
        await self.client.aclose()
