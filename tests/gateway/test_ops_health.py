"""Health (issue 16 item 5): ``/healthz`` is liveness only; ``/readyz`` checks the store (a
query), the migrations (alembic revision at head) and the broker (a ping), and answers 503
naming the failing part: shown with a PostgreSQL and a Redis of the test's own, stopped
mid-test (tests/support/own_servers.py; the machine's servers are never touched). Also the
start-up banner and the default SQLite path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from own_servers import own_postgres, own_redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, running

from gateway.config import Settings, load_routes
from gateway.migrations import HEAD
from gateway.server import runtime_lines
from gateway.store.engine import data_dir, default_database_url

pytestmark = pytest.mark.timeout(240)


async def readyz(app: Any) -> tuple[int, dict[str, Any]]:
    reply = await call(app, "GET", "/readyz")
    return reply.status, reply.json()


async def test_ready_with_the_embedded_store_and_in_process_broker(
    make_app: Any, tmp_path: Path
) -> None:
    app = make_app(database_url=f"sqlite:///{tmp_path}/runs.db")
    async with running(app):
        status, body = await readyz(app)
        assert (await call(app, "GET", "/healthz")).status == 200
    assert status == 200, body
    assert body["status"] == "ready" and body["failing"] == []
    assert body["checks"]["store"] == {"status": "ok", "backend": "sqlite"}
    assert body["checks"]["migrations"] == {"status": "ok", "revision": HEAD, "head": HEAD}
    assert body["checks"]["broker"] == {"status": "ok", "backend": "in-process"}


async def test_not_ready_without_the_lifespan_but_alive(make_app: Any) -> None:
    app = make_app()
    status, body = await readyz(app)
    assert status == 503 and body["failing"] == ["runs"]
    assert (await call(app, "GET", "/healthz")).status == 200


async def test_migrations_behind_head_are_not_ready(make_app: Any, tmp_path: Path) -> None:
    app = make_app(database_url=f"sqlite:///{tmp_path}/runs.db")
    async with running(app):
        engine = app.state.services.manager.store.engine
        async with engine.begin() as conn:
            await conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0001'")
        status, body = await readyz(app)
    assert status == 503 and body["failing"] == ["migrations"]
    assert body["checks"]["migrations"] == {"status": "failing", "revision": "0001", "head": HEAD}


async def test_readyz_flips_to_503_when_postgresql_stops(make_app: Any) -> None:
    with own_postgres() as pg:
        app = make_app(database_url=pg.url)
        async with running(app):
            status, body = await readyz(app)
            assert status == 200, body
            assert body["checks"]["store"]["backend"] == "postgresql"
            pg.stop()
            status, body = await readyz(app)
            assert (await call(app, "GET", "/healthz")).status == 200  # alive all the same
    assert status == 503
    assert body["status"] == "unavailable"
    assert "store" in body["failing"] and "broker" not in body["failing"]
    assert body["checks"]["store"]["status"] == "failing" and body["checks"]["store"]["error"]


async def test_readyz_flips_to_503_when_redis_stops(make_app: Any, tmp_path: Path) -> None:
    with own_redis() as redis:
        app = make_app(database_url=f"sqlite:///{tmp_path}/runs.db", redis_url=redis.url)
        async with running(app):
            status, body = await readyz(app)
            assert status == 200, body
            assert body["checks"]["broker"] == {"status": "ok", "backend": "redis"}
            redis.stop()
            status, body = await readyz(app)
    assert status == 503 and body["failing"] == ["broker"]
    assert body["checks"]["broker"]["status"] == "failing" and body["checks"]["broker"]["error"]


def test_default_sqlite_file_is_in_the_data_dir_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GATEWAY_DATABASE_URL", raising=False)
    monkeypatch.setenv("GATEWAY_DATA_DIR", str(tmp_path / "data"))
    assert Settings().database_url == f"sqlite+aiosqlite:///{tmp_path}/data/agui-gateway.db"
    monkeypatch.delenv("GATEWAY_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # platformdirs on Linux
    first = default_database_url()
    monkeypatch.chdir(tmp_path)
    assert default_database_url() == first  # the same wherever the process starts
    if sys.platform.startswith("linux"):
        assert data_dir() == tmp_path / "xdg" / "agui-gateway"
    assert not first.startswith("sqlite+aiosqlite:///./")


def test_banner_names_store_broker_auth_and_routes(tmp_path: Path) -> None:
    routes = load_routes(None)
    sqlite = Settings(database_url=f"sqlite:///{tmp_path}/runs.db", auth="off")
    text = "\n".join(runtime_lines(sqlite, routes))
    assert f"store:   sqlite {tmp_path}/runs.db" in text
    assert "broker:  in-process" in text and "auth:    off" in text
    assert f"routes:  {', '.join(routes)} ({len(routes)})" in text
    assert "http:    httptools (GATEWAY_HTTP_PROTOCOL=auto)" in text
    pg = Settings(
        database_url="postgresql://agui:s3cret@db.internal:5432/agui",
        redis_url="redis://:hunter2@cache.internal:6379/0",
        auth="required",
    )
    text = "\n".join(runtime_lines(pg.model_copy(update={"http_protocol": "h11"}), routes))
    assert "http:    h11 (GATEWAY_HTTP_PROTOCOL=h11)" in text
    assert "s3cret" not in text and "hunter2" not in text  # passwords never printed
    assert "postgresql://agui:***@db.internal:5432/agui" in text
    assert "broker:  redis redis://cache.internal:6379/0 (prefix agui:)" in text
    prefixed = pg.model_copy(update={"redis_prefix": "tenant-a:"})
    assert "(prefix tenant-a:)" in "\n".join(runtime_lines(prefixed, routes))
    assert "auth:    required (API keys)" in text
