"""Deployment choice state in Redis, shared by every replica (issue 19 item 3).

:class:`RedisDeploymentPool` is the :class:`~gateway.deployments.Deployments` of a route when
the gateway has Redis (``GATEWAY_REDIS_URL``; the app uses its broker's client and key
prefix). It runs the algorithm of :class:`~gateway.deployments.DeploymentPool` on shared
state, so replica B avoids a deployment cooled down by replica A and a success on any replica
resets the failure count. Keys, all under ``<prefix>deploy:<route>:<fingerprint>:`` (the
fingerprint hashes the deployments' URLs and weights, so replicas with different deployment
lists during a roll-out do not share indexes) and all with a TTL:

* ``credits``: hash of the smooth weighted round-robin credits (field: deployment index);
  TTL ``state_ttl`` from the last acquire. Shared, so the weights hold across replicas;
* ``<i>:fail``: consecutive retryable failures of deployment ``i``; TTL ``state_ttl`` from
  the last failure (unlike the in-process count, a count left alone that long is forgotten);
* ``<i>:cool``: present while deployment ``i`` cools down, ``SET ... PX cooldown.seconds``:
  the key's TTL *is* the cooldown, on Redis's clock, so replicas need no common clock; when
  every candidate cools down, the smallest ``PTTL`` is the one back soonest;
* ``<i>:busy``: sorted set of the attempts in flight on ``i``, one member per attempt, score
  its lease end (Redis ``TIME`` + ``lease`` ms). Least-busy counts the members whose lease has
  not ended, so the attempts of a killed replica stop counting after ``lease`` seconds (and
  an attempt streaming longer than that stops counting too: least-busy is a heuristic).

``acquire`` is one Lua script (one round trip, atomic: two replicas never take the same
round-robin credit); ``release`` is another. Redis runs scripts one at a time
(https://redis.io/docs/latest/develop/interact/programmability/eval-intro/).

Redis unreachable or slower than ``timeout``: the call uses this process's own
:class:`~gateway.deployments.DeploymentPool` instead (so runs never fail because of Redis),
the outage is logged once for all the app's routes (:class:`Outage`: a warning when it starts,
an info line when Redis answers again), and Redis is asked again after ``retry_after``
seconds. The local state is only this process's view during the outage; the shared state
takes over when Redis is back.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .deployments import DeploymentPool
from .route_policy import Balance, CooldownConfig

if TYPE_CHECKING:
    from .config import RouteConfig

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_STATE_TTL",
    "Outage",
    "RedisDeploymentPool",
    "fingerprint",
    "redis_pools",
]

DEFAULT_LEASE = 600.0
"""Seconds an attempt counts as in flight without being released (a killed replica's)."""

DEFAULT_STATE_TTL = 3600.0
"""Seconds the round-robin credits and failure counts live after their last change."""

_log = logging.getLogger(__name__)

# KEYS: credits, cool_1..cool_n, busy_1..busy_n.
# ARGV: balance, n, state_ttl_ms, lease_ms, member, tried ("0"/"1" per index), weight_1..n.
# Returns the chosen index (0-based). Mirrors DeploymentPool.acquire.
_ACQUIRE = """
local n = tonumber(ARGV[2])
local state_ttl = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local tried = ARGV[6]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local weight, left = {}, {}
for i = 1, n do
  weight[i] = tonumber(ARGV[6 + i])
  left[i] = redis.call('PTTL', KEYS[1 + i])
end
local cands = {}
for i = 1, n do
  if left[i] <= 0 and string.sub(tried, i, i) ~= '1' then cands[#cands + 1] = i end
end
if #cands == 0 then
  for i = 1, n do if left[i] <= 0 then cands[#cands + 1] = i end end
end
if #cands == 0 then
  local soonest = 1
  for i = 2, n do if left[i] < left[soonest] then soonest = i end end
  cands = {soonest}
end
local chosen = nil
if ARGV[1] == 'least-busy' then
  local busy = {}
  for _, i in ipairs(cands) do
    redis.call('ZREMRANGEBYSCORE', KEYS[1 + n + i], '-inf', now)
    busy[i] = redis.call('ZCARD', KEYS[1 + n + i])
    if chosen == nil or busy[i] < busy[chosen]
        or (busy[i] == busy[chosen] and weight[i] > weight[chosen]) then
      chosen = i
    end
  end
else
  local total, best = 0, nil
  for _, i in ipairs(cands) do
    total = total + weight[i]
    local credit = redis.call('HINCRBY', KEYS[1], tostring(i - 1), weight[i])
    if chosen == nil or credit > best then chosen, best = i, credit end
  end
  redis.call('HINCRBY', KEYS[1], tostring(chosen - 1), -total)
  redis.call('PEXPIRE', KEYS[1], state_ttl)
end
local busy_key = KEYS[1 + n + chosen]
redis.call('ZREMRANGEBYSCORE', busy_key, '-inf', now)
redis.call('ZADD', busy_key, now + lease, ARGV[5])
redis.call('PEXPIRE', busy_key, lease)
return chosen - 1
"""

# KEYS: fail, cool, busy. ARGV: failed ("1"/"0"), failures, cooldown_ms, state_ttl_ms, member.
# Returns 1 when the deployment starts cooling down. Mirrors DeploymentPool.release.
_RELEASE = """
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[3], ARGV[5]) end
if ARGV[1] ~= '1' then
  redis.call('DEL', KEYS[1])
  return 0
end
local count = redis.call('INCR', KEYS[1])
if count >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  return 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 0
"""

_UNREACHABLE = (RedisError, OSError, asyncio.TimeoutError)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class Outage:
    """Whether Redis is out for the pools sharing this object (all of one app's routes), so
    the outage is logged once, not once per route or per attempt.

    Args:
        retry_after: seconds after a failed call during which Redis is not asked.
        clock: monotonic seconds (tests pass a fake); local time only decides when to ask
            Redis again, never a cooldown.
    """

    def __init__(
        self, *, retry_after: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.retry_after = retry_after
        self._clock = clock
        self._until: float | None = None

    @property
    def active(self) -> bool:
        """True from a failed call until one succeeds again."""
        return self._until is not None

    def usable(self) -> bool:
        """Whether to ask Redis now (no outage, or ``retry_after`` passed since the last try)."""
        return self._until is None or self._clock() >= self._until

    def failed(self, exc: BaseException) -> None:
        """A call failed: warn when an outage starts, and wait ``retry_after`` to try again."""
        if self._until is None:
            _log.warning(
                "deployment state: Redis unreachable (%s); each process uses its own state "
                "until it answers",
                exc or type(exc).__name__,
            )
        self._until = self._clock() + self.retry_after

    def ok(self) -> None:
        """A call succeeded: the outage, if any, is over (logged once)."""
        if self._until is not None:
            self._until = None
            _log.info("deployment state: Redis answers again; the state is shared again")


class RedisDeploymentPool:
    """:class:`~gateway.deployments.Deployments` whose state lives in Redis (module docstring).

    Args:
        client: a ``redis.asyncio.Redis`` (``decode_responses`` either way), e.g. the
            broker's.
        key: the pool's key prefix, e.g. ``agui:deploy:gpt:1a2b3c4d:`` (:func:`redis_pools`).
        weights: one positive weight per deployment (index 0: the route itself).
        balance: ``"round-robin"`` or ``"least-busy"``.
        cooldown: failures before a cooldown, and its length in seconds.
        lease: seconds an unreleased attempt counts as in flight.
        state_ttl: seconds the credits and failure counts live after their last change.
        timeout: seconds one Redis call may take before the local state is used.
        outage: the outage state shared with the other pools on ``client`` (default: its
            own, retrying Redis a second after a failure).

    Raises:
        ValueError: no weight, or a weight below 1.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        key: str,
        weights: Sequence[int],
        *,
        balance: Balance = "round-robin",
        cooldown: CooldownConfig | None = None,
        lease: float = DEFAULT_LEASE,
        state_ttl: float = DEFAULT_STATE_TTL,
        timeout: float = 0.5,
        outage: Outage | None = None,
    ) -> None:
        self.local = DeploymentPool(weights, balance=balance, cooldown=cooldown)
        """The fallback while Redis is unreachable (this process's view)."""
        self.client = client
        self.key = key
        self.weights = list(weights)
        self.balance: Balance = balance
        self.cooldown = self.local.cooldown
        self.lease = lease
        self.state_ttl = state_ttl
        self.timeout = timeout
        self.outage = outage or Outage()
        self._acquire = client.register_script(_ACQUIRE)
        self._release = client.register_script(_RELEASE)
        self._members: dict[int, deque[str | None]] = {}  # None: acquired locally

    def __len__(self) -> int:
        return len(self.weights)

    def _keys(self, index: int) -> tuple[str, str, str]:
        base = f"{self.key}{index}:"
        return base + "fail", base + "cool", base + "busy"

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        async with asyncio.timeout(self.timeout):
            return await script(keys=keys, args=args)

    async def acquire(self, tried: Collection[int] = ()) -> int:
        """Choose a deployment (one Lua script; :class:`~gateway.deployments.Deployments`)."""
        if self.outage.usable():
            n = len(self.weights)
            member = uuid.uuid4().hex
            keys = [self.key + "credits"]
            keys += [self._keys(i)[1] for i in range(n)]
            keys += [self._keys(i)[2] for i in range(n)]
            mask = "".join("1" if i in tried else "0" for i in range(n))
            args: list[Any] = [
                self.balance,
                n,
                _ms(self.state_ttl),
                _ms(self.lease),
                member,
                mask,
                *self.weights,
            ]
            try:
                index = int(await self._call(self._acquire, keys, args))
            except _UNREACHABLE as exc:
                self.outage.failed(exc)
            else:
                self.outage.ok()
                self._members.setdefault(index, deque()).append(member)
                return index
        index = await self.local.acquire(tried)
        self._members.setdefault(index, deque()).append(None)
        return index

    async def release(self, index: int, *, failed: bool) -> None:
        """End one attempt (one Lua script; :class:`~gateway.deployments.Deployments`)."""
        held = self._members.get(index)
        member = held.popleft() if held else None
        if member is None:  # acquired locally: release locally (Redis too, if back)
            await self.local.release(index, failed=failed)
        if self.outage.usable():
            fail, cool, busy = self._keys(index)
            args = [
                "1" if failed else "0",
                self.cooldown.failures,
                _ms(self.cooldown.seconds),
                _ms(self.state_ttl),
                member or "",
            ]
            try:
                await self._call(self._release, [fail, cool, busy], args)
            except _UNREACHABLE as exc:
                self.outage.failed(exc)
            else:
                self.outage.ok()
                return
        if member is not None:
            await self.local.release(index, failed=failed)

    async def cooling(self) -> list[int]:
        """Indexes cooling down now (Redis ``PTTL``; the local view while Redis is out)."""
        if self.outage.usable():
            try:
                async with asyncio.timeout(self.timeout):
                    async with self.client.pipeline(transaction=False) as pipe:
                        for i in range(len(self.weights)):
                            pipe.pttl(self._keys(i)[1])
                        left = await pipe.execute()
            except _UNREACHABLE as exc:
                self.outage.failed(exc)
            else:
                self.outage.ok()
                return [i for i, ms in enumerate(left) if int(ms) > 0]
        return await self.local.cooling()

    async def in_flight(self) -> list[int]:
        """Attempts in flight per deployment, every replica's (leases not ended).

        Raises:
            RedisError, OSError: Redis cannot be reached (an inspection call: no fallback).
        """
        now = _redis_ms(await self.client.time())
        async with self.client.pipeline(transaction=False) as pipe:
            for i in range(len(self.weights)):
                pipe.zcount(self._keys(i)[2], f"({now}", "+inf")
            counts = await pipe.execute()
        return [int(c) for c in counts]


def _redis_ms(reply: Any) -> int:
    seconds, micros = reply
    return int(seconds) * 1000 + int(micros) // 1000


def fingerprint(route: RouteConfig) -> str:
    """8 hex digits naming ``route``'s deployment list (URLs and weights, in order)."""
    parts = [
        f"{target.upstream_url}|{weight}"
        for target, weight in zip(route.deployment_routes(), route.weights(), strict=True)
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def redis_pools(
    client: aioredis.Redis, prefix: str, **kwargs: Any
) -> Callable[[RouteConfig], RedisDeploymentPool]:
    """A :data:`~gateway.deployments.PoolFactory` keeping every route's state in Redis under
    ``<prefix>deploy:<route>:<fingerprint>:``; ``kwargs`` as for :class:`RedisDeploymentPool`
    (the pools share one :class:`Outage`)."""

    kwargs.setdefault("outage", Outage())  # one per app: one log line per outage

    def make(route: RouteConfig) -> RedisDeploymentPool:
        key = f"{prefix}deploy:{route.name}:{fingerprint(route)}:"
        return RedisDeploymentPool(
            client,
            key,
            route.weights(),
            balance=route.balance,
            cooldown=route.cooldown,
            **kwargs,
        )

    return make
