"""Readiness: can this replica serve runs now? The checks behind ``GET /readyz``.

Three checks, run concurrently, each bounded by :data:`CHECK_TIMEOUT` seconds:

=============  =====================================================  =========================
check          how                                                    fails when
=============  =====================================================  =========================
``store``      ``SELECT 1`` through the run store's engine            the database is
                                                                      unreachable or refuses
``migrations`` the database's alembic revision (``alembic_version``)  it is not
               against :data:`gateway.migrations.HEAD`                :data:`~gateway.
                                                                      migrations.HEAD`
``broker``     ``PING`` on the Redis broker's connection (the         Redis is unreachable
               in-process broker is always ready)
=============  =====================================================  =========================

Without the app's lifespan (no store open) the replica is not ready (``runs``). Liveness
(``/healthz``) asks none of this: a replica whose database is down is alive and must not be
restarted for it, only taken out of the load balancer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext

from .migrations import HEAD

if TYPE_CHECKING:
    from .runs import RunManager

__all__ = ["CHECK_TIMEOUT", "Check", "Readiness", "check_readiness"]

CHECK_TIMEOUT: Final[float] = 2.0
"""Seconds one check may take before it counts as failed."""

_DETAIL_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class Check:
    """One check's result.

    Attributes:
        ok: passed.
        detail: what was found (``{"backend": "postgresql"}``, ``{"revision": "0003"}``) or,
            failed, ``{"error": "<ExceptionType>: <message, at most 200 characters>"}``.
    """

    ok: bool
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Readiness:
    """All checks. ``ready`` when every one passed; ``failing`` names the others."""

    checks: dict[str, Check]

    @property
    def ready(self) -> bool:
        """Every check passed."""
        return all(check.ok for check in self.checks.values())

    @property
    def failing(self) -> list[str]:
        """Names of the failed checks, sorted."""
        return sorted(name for name, check in self.checks.items() if not check.ok)

    def to_json(self) -> dict[str, Any]:
        """``{"status": "ready"|"unavailable", "failing": [...], "checks": {name: {"status":
        "ok"|"failing", ...detail}}}``: the ``/readyz`` body."""
        return {
            "status": "ready" if self.ready else "unavailable",
            "failing": self.failing,
            "checks": {
                name: {"status": "ok" if check.ok else "failing", **check.detail}
                for name, check in self.checks.items()
            },
        }


def _error(exc: BaseException) -> Check:
    if isinstance(exc, TimeoutError):
        return Check(False, {"error": f"no answer within {CHECK_TIMEOUT:g} s"})
    text = f"{type(exc).__name__}: {exc}".strip()
    return Check(False, {"error": text[:_DETAIL_CHARS]})


async def _bounded(check: Awaitable[Check]) -> Check:
    try:
        return await asyncio.wait_for(check, CHECK_TIMEOUT)
    except Exception as exc:
        return _error(exc)


def _engine(store: Any) -> Any:
    engine = getattr(store, "engine", None)
    if engine is None:
        raise RuntimeError(f"{type(store).__name__} exposes no SQL engine to check")
    return engine


async def _store(store: Any) -> Check:
    engine = _engine(store)
    async with engine.connect() as conn:
        await conn.execute(sa.text("SELECT 1"))
    return Check(True, {"backend": engine.dialect.name})


def _revision(connection: sa.Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def _migrations(store: Any) -> Check:
    async with _engine(store).connect() as conn:
        revision = await conn.run_sync(_revision)
    return Check(revision == HEAD, {"revision": revision, "head": HEAD})


async def _broker(broker: Any) -> Check:
    client = getattr(broker, "client", None)
    if client is None or not hasattr(client, "ping"):
        return Check(True, {"backend": "in-process"})
    await client.ping()
    return Check(True, {"backend": "redis"})


async def check_readiness(manager: RunManager | None) -> Readiness:
    """Run the checks against ``manager``'s store and broker (None: the lifespan is not
    running, so nothing can be served: ``runs`` fails)."""
    if manager is None:
        return Readiness({"runs": Check(False, {"error": "the run store is not open"})})
    store, broker = manager.store, manager.broker
    results = await asyncio.gather(
        _bounded(_store(store)), _bounded(_migrations(store)), _bounded(_broker(broker))
    )
    return Readiness(dict(zip(("store", "migrations", "broker"), results, strict=True)))
