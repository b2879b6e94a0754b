"""Route settings of upstream resilience (issue 19): retries, deployments, cooldown.

A route's TOML table may carry (all optional; README "Resilience and routing")::

    retry = { attempts = 3, base_delay = 0.5, max_delay = 8, max_elapsed = 60 }
    fallbacks = ["claude"]                              # routes tried in order afterwards
    fallback_on = { context_length_exceeded = ["gpt-long"] }   # error kind or code -> routes
    models = ["gpt-4o-mini", "gpt-4o"]                  # models a request may pick
    balance = "round-robin"                             # or "least-busy"
    cooldown = { failures = 3, seconds = 30 }

    [[routes.deployments]]                              # more keys / endpoints of the route
    upstream_url = "https://eu.example.com/v1"          # default: the route's
    auth = { type = "bearer", env = "EU_KEY" }          # default: the route's
    weight = 2

The route's own ``upstream_url`` / ``auth`` is deployment 0 (weight :attr:`RouteConfig.weight
<gateway.config.RouteConfig>`, default 1); each ``[[routes.deployments]]`` adds one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Balance", "CooldownConfig", "RetryConfig", "TimeoutConfig"]

Balance = Literal["round-robin", "least-busy"]
"""How a request's deployment is chosen: weighted round-robin, or the one with the fewest
requests in flight (ties by weight, then order)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TimeoutConfig(_Strict):
    """Upstream timeouts of one attempt, in seconds. ``connect``, ``read``, ``write`` and
    ``pool`` are httpx's; ``first_byte``, ``idle`` and ``total`` are the gateway's (None: no
    limit). Each one that fires ends the attempt with RUN_ERROR ``UPSTREAM_TIMEOUT``, its name
    in the message and in ``metadata.timeout`` (``connect``, ``first_byte``, ``idle``,
    ``total``, ``read``, ``write``, ``pool``); a timeout is retried like any transient failure.

    Attributes:
        connect: establishing the connection.
        read: longest silence between two received chunks (a streaming model may think).
        write: sending one chunk of the request.
        pool: waiting for a free connection.
        first_byte: from sending the request to the first decoded upstream event (the
            response headers and the time to the model's first token).
        idle: longest gap between two decoded upstream events (keep-alive comments and
            partial frames do not count, unlike ``read``).
        total: longest one attempt may take, from request to its last event.
    """

    connect: float = Field(default=10.0, gt=0)
    read: float = Field(default=300.0, gt=0)
    write: float = Field(default=30.0, gt=0)
    pool: float = Field(default=10.0, gt=0)
    first_byte: float | None = Field(default=None, gt=0)
    idle: float | None = Field(default=None, gt=0)
    total: float | None = Field(default=None, gt=0)

    def httpx_timeouts(self) -> dict[str, float]:
        """The four httpx timeouts (``httpx.Timeout(**...)``)."""
        return {"connect": self.connect, "read": self.read, "write": self.write, "pool": self.pool}


class RetryConfig(_Strict):
    """Retries of one route (:mod:`gateway.retry` says which failures are retried).

    Attributes:
        attempts: upstream requests at most per run on this route, the first included
            (1: no retry). Default 3.
        base_delay: seconds of the first backoff (doubling after each failure, with jitter).
        max_delay: cap in seconds on one backoff.
        max_elapsed: seconds since the run began after which no further attempt starts (the
            run ends with the last failure, or goes to the fallbacks).
        max_retry_after: longest ``Retry-After`` (seconds) honoured; a longer one ends the
            retries on this route at once (the fallbacks are tried).
    """

    attempts: int = Field(default=3, ge=1, le=20)
    base_delay: float = Field(default=0.5, ge=0)
    max_delay: float = Field(default=8.0, ge=0)
    max_elapsed: float = Field(default=60.0, gt=0)
    max_retry_after: float = Field(default=30.0, ge=0)

    @model_validator(mode="after")
    def _check(self) -> RetryConfig:
        if self.max_delay < self.base_delay:
            raise ValueError("max_delay must be at least base_delay")
        return self


class CooldownConfig(_Strict):
    """When a deployment is left out for a while.

    Attributes:
        failures: consecutive retryable failures after which the deployment cools down.
        seconds: how long it is not chosen (unless every deployment is cooling down).
    """

    failures: int = Field(default=3, ge=1)
    seconds: float = Field(default=30.0, gt=0)
