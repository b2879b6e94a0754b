"""Fixtures running each contract test over every store and every broker implementation."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.broker import Broker
from gateway.store import SqlRunStore

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends, shared with tests/runs

from run_backends import BROKERS, STORES, ManualClock, make_broker, make_store


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=STORES)
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock
) -> AsyncIterator[SqlRunStore]:
    async with make_store(request.param, tmp_path, clock) as s:
        yield s


@pytest.fixture(params=BROKERS)
def broker_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def broker(broker_kind: str) -> AsyncIterator[Broker]:
    async with make_broker(broker_kind) as b:
        yield b
