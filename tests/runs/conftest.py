"""Fixtures for the run-core tests: a store + broker stack over SQLite + in-process and over
PostgreSQL + Redis (the two deployments)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.broker import InProcessBroker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))  # run_backends

from run_backends import ManualClock, make_broker, make_store

from .helpers import Stack


@pytest.fixture(
    params=[("sqlite", "memory"), ("postgresql", "redis")],
    ids=["sqlite+memory", "postgresql+redis"],
)
async def stack(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stack]:
    store_kind, broker_kind = request.param
    clock = ManualClock()
    async with make_store(store_kind, tmp_path, clock) as store, make_broker(broker_kind) as broker:
        yield Stack(f"{store_kind}+{broker_kind}", store, broker, clock)


@pytest.fixture
async def memory_stack(tmp_path: Path) -> AsyncIterator[Stack]:
    clock = ManualClock()
    async with make_store("sqlite", tmp_path, clock) as store:
        yield Stack("sqlite+memory", store, InProcessBroker(), clock)
