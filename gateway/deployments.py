"""Choosing one of a route's deployments, with cooldowns (issue 19 item 3).

A route's deployments are its own ``upstream_url`` / ``auth`` (index 0) and each
``[[routes.deployments]]`` (:meth:`gateway.config.RouteConfig.deployment_routes`). Every
attempt of a run takes one (:meth:`Deployments.acquire`) and gives it back with its outcome
(:meth:`Deployments.release`):

* ``round-robin``: smooth weighted round-robin (the nginx ``upstream`` algorithm,
  ``ngx_http_upstream_round_robin.c``): over a cycle of ``sum(weights)`` requests each
  deployment gets ``weight`` of them, interleaved;
* ``least-busy``: the deployment with the fewest attempts in flight, ties broken by the
  larger weight, then by order;
* cooldown: after ``cooldown.failures`` consecutive retryable failures a deployment is not
  chosen for ``cooldown.seconds`` (a success resets the count); when every candidate is cooling
  down, the one whose cooldown ends first is used rather than failing the run. A retry prefers
  a deployment the run has not tried yet.

One interface (:class:`Deployments`), two homes, as for the broker: :class:`DeploymentPool`
keeps the state in this process (the default; replicas balance and cool down independently),
:class:`gateway.deployments_redis.RedisDeploymentPool` keeps it in Redis when the gateway has
one (``GATEWAY_REDIS_URL``), so every replica sees the same failure counts, cooldowns,
round-robin credits and attempts in flight (that module says what differs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .route_policy import Balance, CooldownConfig

if TYPE_CHECKING:
    from .config import RouteConfig

__all__ = ["DeploymentPool", "Deployments", "PoolFactory", "local_pool"]


class Deployments(Protocol):
    """The deployments of one route and their choice state (module docstring).

    Attributes:
        balance: ``"round-robin"`` or ``"least-busy"``.
        cooldown: failures before a cooldown, and its length in seconds.
    """

    balance: Balance
    cooldown: CooldownConfig

    def __len__(self) -> int:
        """Number of deployments (index 0: the route itself)."""
        ...

    async def acquire(self, tried: Collection[int] = ()) -> int:
        """Choose a deployment for one attempt (its index) and count it in flight.

        Args:
            tried: deployments this run already used; avoided while others are available.
        """
        ...

    async def release(self, index: int, *, failed: bool) -> None:
        """End one attempt on ``index``: ``failed`` counts towards its cooldown (a transient
        upstream failure), a success resets the count. Never raises."""
        ...

    async def cooling(self) -> list[int]:
        """Indexes of the deployments cooling down now, ascending."""
        ...


PoolFactory = Callable[["RouteConfig"], Deployments]
"""Makes the :class:`Deployments` of a route (:func:`local_pool`, or
:func:`gateway.deployments_redis.redis_pools`)."""


@dataclass(slots=True)
class _State:
    weight: int
    current: int = 0  # smooth weighted round-robin credit
    in_flight: int = 0
    failures: int = 0  # consecutive retryable failures
    cool_until: float = 0.0


class DeploymentPool:
    """:class:`Deployments` kept in this process (the default home).

    Args:
        weights: one positive weight per deployment (index 0: the route itself).
        balance: ``"round-robin"`` or ``"least-busy"``.
        cooldown: failures before a cooldown, and its length in seconds.
        clock: monotonic seconds (tests pass a fake).

    Raises:
        ValueError: no weight, or a weight below 1.
    """

    def __init__(
        self,
        weights: Sequence[int],
        *,
        balance: Balance = "round-robin",
        cooldown: CooldownConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not weights or any(w <= 0 for w in weights):
            raise ValueError("a pool needs at least one deployment, each with a weight > 0")
        self._states = [_State(weight=w) for w in weights]
        self.balance: Balance = balance
        self.cooldown = cooldown or CooldownConfig()
        self._clock = clock

    def __len__(self) -> int:
        return len(self._states)

    async def cooling(self) -> list[int]:
        """Indexes of the deployments cooling down now."""
        now = self._clock()
        return [i for i, s in enumerate(self._states) if s.cool_until > now]

    def in_flight(self) -> list[int]:
        """Attempts in flight per deployment (this process's count)."""
        return [s.in_flight for s in self._states]

    async def acquire(self, tried: Collection[int] = ()) -> int:
        """Choose a deployment for one attempt and count it in flight (:class:`Deployments`)."""
        now = self._clock()
        states = self._states
        every = range(len(states))
        candidates = [i for i in every if i not in tried and states[i].cool_until <= now]
        if not candidates:
            candidates = [i for i in every if states[i].cool_until <= now]
        if not candidates:  # everyone cools down: the one back soonest
            candidates = [min(every, key=lambda i: states[i].cool_until)]
        if self.balance == "least-busy":
            index = min(candidates, key=lambda i: (states[i].in_flight, -states[i].weight, i))
        else:
            total = sum(states[i].weight for i in candidates)
            for i in candidates:
                states[i].current += states[i].weight
            index = max(candidates, key=lambda i: (states[i].current, -i))
            states[index].current -= total
        states[index].in_flight += 1
        return index

    async def release(self, index: int, *, failed: bool) -> None:
        """End one attempt on ``index`` (:class:`Deployments`)."""
        state = self._states[index]
        state.in_flight = max(0, state.in_flight - 1)
        if not failed:
            state.failures = 0
            return
        state.failures += 1
        if state.failures >= self.cooldown.failures:
            state.failures = 0
            state.cool_until = self._clock() + self.cooldown.seconds


def local_pool(route: RouteConfig) -> DeploymentPool:
    """The in-process :class:`DeploymentPool` of ``route`` (its weights, balance, cooldown)."""
    return DeploymentPool(route.weights(), balance=route.balance, cooldown=route.cooldown)
