"""``create_app`` is the one composition root (issue 10 §6): it takes an injected store, broker
and upstream client and uses them without closing them (the caller owns what it injects), and
closes what it opened itself; two apps over one injected store and broker are two replicas.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream

import gateway.app
from gateway.app import create_app
from gateway.broker import InProcessBroker, open_broker
from gateway.config import Settings
from gateway.runs import RunManager
from gateway.store import open_store
from gateway.tenancy import run_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, chat_events, events_of, eventually, run_input, running

pytestmark = pytest.mark.timeout(120)

CREATE = {"route": "gpt", "input": run_input("t1", "r1")}


def mock_upstream(router: respx.MockRouter, runs: int = 1) -> respx.Route:
    return router.post(OPENAI_URL).mock(
        side_effect=[
            httpx.Response(200, stream=GatedStream(chat_events(text=["Hel", "lo"])))
            for _ in range(runs)
        ]
    )


def settings_for(routes_file: Path, tmp_path: Path) -> Settings:
    """Settings whose own database is a file the test can check was never created."""
    return Settings(config=routes_file, database_url=f"sqlite:///{tmp_path}/unused.db", **FAST)


async def finished(app: Any, run_id: str) -> None:
    manager = app.state.services.manager

    async def ended() -> bool:
        return bool((await manager.get_run(run_key(None, "t1", run_id))).is_terminal)

    await eventually(ended, what=f"run {run_id} terminal")


async def test_injected_store_broker_and_client_are_used_and_left_open(
    routes_file: Path, tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    upstream = mock_upstream(router)
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/injected.db")
    broker = InProcessBroker()
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    app = create_app(
        settings_for(routes_file, tmp_path), store=store, broker=broker, http_client=client
    )
    try:
        async with running(app):
            manager = app.state.services.manager
            assert manager.store is store and manager.broker is broker
            created = await call(app, "POST", "/api/v1/agent/runs", CREATE)
            assert created.status == 201
            await finished(app, "r1")
        assert app.state.services.manager is None
        assert upstream.call_count == 1  # the injected client carried the upstream request
        assert not client.is_closed
        assert not (tmp_path / "unused.db").exists()  # GATEWAY_DATABASE_URL was not opened
        run = await store.get_run(run_key(None, "t1", "r1"))  # the store answers after the lifespan
        assert run.status == "completed"
        # The ended run's tail is released (all durable), but the broker still knows the run:
        # its last cursor fences a replay (close() would have forgotten it).
        stored = await store.read_events(run_key(None, "t1", "r1"))
        assert stored[-1].type == "RUN_FINISHED"
        first = stored[0]
        assert not await broker.publish(run_key(None, "t1", "r1"), first.cursor, first.event)
        assert broker.usage().runs == 1
    finally:
        await client.aclose()
        await broker.close()
        await store.close()


async def test_what_the_app_opens_it_closes(
    routes_file: Path,
    tmp_path: Path,
    router: respx.MockRouter,
    keys: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[str] = []
    opened: dict[str, Any] = {}

    async def spy_store(*args: Any, **kwargs: Any) -> Any:
        store = await open_store(*args, **kwargs)
        real_close = store.close

        async def close() -> None:
            closed.append("store")
            await real_close()

        store.close = close  # type: ignore[method-assign]
        opened["store"] = store
        return store

    def spy_broker(*args: Any, **kwargs: Any) -> Any:
        broker = open_broker(*args, **kwargs)
        real_close = broker.close

        async def close() -> None:
            closed.append("broker")
            await real_close()

        broker.close = close  # type: ignore[method-assign]
        opened["broker"] = broker
        return broker

    real_aclose = RunManager.aclose

    async def spy_aclose(self: RunManager) -> None:
        closed.append("manager")
        await real_aclose(self)

    monkeypatch.setattr(gateway.app, "open_store", spy_store)
    monkeypatch.setattr(gateway.app, "open_broker", spy_broker)
    monkeypatch.setattr(RunManager, "aclose", spy_aclose)
    settings = Settings(config=routes_file, database_url=f"sqlite:///{tmp_path}/own.db", **FAST)
    app = create_app(settings)
    upstream_client = app.state.services.pipeline.upstream.client
    self_client = app.state.services.pipeline.upstream.self_client
    async with running(app):
        manager = app.state.services.manager
        assert manager.store is opened["store"] and manager.broker is opened["broker"]
        assert closed == []
    assert closed == ["manager", "broker", "store"]  # runs end (interrupted) before closing
    assert upstream_client.is_closed and self_client.is_closed
    assert (tmp_path / "own.db").exists()


async def test_two_apps_over_one_store_and_broker_are_two_replicas(
    routes_file: Path, tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    mock_upstream(router)
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/shared.db")
    broker = InProcessBroker()
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = settings_for(routes_file, tmp_path)
    a = create_app(settings, store=store, broker=broker, http_client=client)
    b = create_app(settings, store=store, broker=broker, http_client=client)
    try:
        async with running(a), running(b):
            assert a.state.services.manager.owner != b.state.services.manager.owner
            created = await call(a, "POST", "/api/v1/agent/runs", CREATE)
            assert created.status == 201
            read = await call(b, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
            history = await call(b, "GET", "/api/v1/agent/history?threadId=t1")
        assert read.status == 200
        types = [e["type"] for e in events_of(read.body)]
        assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
        text = "".join(
            e["delta"] for e in events_of(read.body) if e["type"] == "TEXT_MESSAGE_CONTENT"
        )
        assert text == "Hello"
        assert history.status == 200 and history.json()["total"] == 2  # user + assistant
    finally:
        await client.aclose()
        await broker.close()
        await store.close()
