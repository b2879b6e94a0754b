"""What choosing a deployment costs per attempt: in this process, or shared through Redis.

One attempt takes a deployment and gives it back (:meth:`Deployments.acquire` then
:meth:`Deployments.release`, a success). Timed over ``-n`` attempts, best of ``--repeat``, for:

* ``local``: :class:`gateway.deployments.DeploymentPool` (no I/O);
* ``redis``: :class:`gateway.deployments_redis.RedisDeploymentPool` on ``--redis`` (two Lua
  scripts: two round trips per attempt, one each way).

Printed: microseconds per attempt, wall clock (the Redis round trips are waiting, not CPU) and
CPU (``time.process_time``), for ``round-robin`` and ``least-busy`` over 3 deployments. Keys go
under a unique prefix and are deleted afterwards.

Run: ``python bench/deployment_state.py [-n 500] [--repeat 2] [--redis redis://127.0.0.1:6379/0]``
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid

import redis.asyncio as aioredis

from gateway.deployments import DeploymentPool, Deployments
from gateway.deployments_redis import RedisDeploymentPool
from gateway.route_policy import Balance


async def _time(pool: Deployments, n: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        await pool.release(await pool.acquire(), failed=False)
    return (time.perf_counter() - wall) / n * 1e6, (time.process_time() - cpu) / n * 1e6


async def main(n: int, repeat: int, url: str) -> None:
    client = aioredis.from_url(url)
    prefix = f"bench-deploy:{uuid.uuid4().hex[:8]}:"
    balances: tuple[Balance, ...] = ("round-robin", "least-busy")
    try:
        for balance in balances:
            for kind in ("local", "redis"):
                pool: Deployments = (
                    DeploymentPool([2, 1, 1], balance=balance)
                    if kind == "local"
                    else RedisDeploymentPool(
                        client, f"{prefix}{balance}:", [2, 1, 1], balance=balance
                    )
                )
                await _time(pool, min(n, 100))  # warm-up: script load, connection
                best = min([await _time(pool, n) for _ in range(repeat)])
                print(f"{balance:12} {kind:6} {best[0]:8.1f} us/attempt wall {best[1]:8.1f} us CPU")
    finally:
        keys = [k async for k in client.scan_iter(match=f"{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    asyncio.run(main(args.n, args.repeat, args.redis))
