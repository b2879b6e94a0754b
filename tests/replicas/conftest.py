"""Fixtures of the replica tests: PostgreSQL (a private schema per test, migrated before the
replicas start and dropped afterwards), Redis (a private key prefix, deleted afterwards), the
slow upstream, and two ``agui-gateway serve`` replicas sharing them.

The services come from ``GATEWAY_TEST_DATABASE_URL`` / ``GATEWAY_TEST_REDIS_URL`` (default: the
ones on 127.0.0.1). Missing services skip these tests locally and fail them under ``CI=true``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus import require_service

sys.path.insert(0, str(Path(__file__).resolve().parent))  # durable_support, replica_processes, ...

from replica_processes import Pair, Process, replica_env, start_gateways, start_upstream
from replica_services import ServiceMissing, delete_prefix, drop_schema, new_prefix, new_schema


@pytest.fixture
def schema() -> Iterator[str]:
    """A migrated private PostgreSQL schema."""
    try:
        name = new_schema("replicas")
    except ServiceMissing as exc:
        require_service(False, str(exc))
    yield name
    drop_schema(name)


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A private Redis key prefix (its keys are deleted afterwards)."""
    try:
        prefix = new_prefix("replicas")
    except ServiceMissing as exc:
        require_service(False, str(exc))
    yield prefix
    delete_prefix(prefix)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    process = start_upstream(tmp_path_factory.mktemp("upstream"))
    yield process
    process.stop()


@pytest.fixture
def pair(tmp_path: Path, upstream: Process, schema: str, redis_prefix: str) -> Iterator[Pair]:
    routes = tmp_path / "routes.toml"
    routes.write_text(
        "[[routes]]\n"
        'name = "slow"\n'
        f'upstream_url = "{upstream.url}/v1"\n'
        'protocol = "openai-chat"\n'
        'model = "slow-1"\n',
        encoding="utf-8",
    )
    replicas = start_gateways(("a", "b"), tmp_path, routes, replica_env(schema, redis_prefix))
    yield Pair(replicas[0], replicas[1], schema, redis_prefix)
    for replica in replicas:
        replica.stop()
