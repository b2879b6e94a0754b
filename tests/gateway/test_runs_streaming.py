"""The streaming endpoints record their runs (issue 3 §1): ``POST /v1/agui/{route}`` and
``/v1/ai-sdk/{route}`` answer from a reader of a recorded run, so the run outlives the
connection (``on_disconnect = "continue"``) or ends as cancelled (``"cancel"``); a shutdown
ends this replica's runs with RUN_INTERRUPTED."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream
from real_clients import replay, require_harness

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    agui_errors,
    call,
    chat_events,
    events_of,
    eventually,
    frames,
    run_input,
    running,
)

from gateway.tenancy import run_key

pytestmark = pytest.mark.timeout(120)

CHAT_REQUEST: dict[str, Any] = {
    "id": "t1",
    "trigger": "submit-message",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}
ENDPOINTS = [("/v1/agui/gpt", run_input("t1", "r1")), ("/v1/ai-sdk/gpt", CHAT_REQUEST)]


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def mock_upstream(router: respx.MockRouter, *streams: GatedStream) -> None:
    router.post(OPENAI_URL).mock(
        side_effect=[httpx.Response(200, stream=stream) for stream in streams]
    )


async def only_run(app: Any) -> Any:
    runs = await app.state.services.manager.store.list_runs("t1")
    assert len(runs) == 1
    return runs[0]


async def wait_terminal(app: Any) -> Any:
    manager = app.state.services.manager

    async def ended() -> bool:
        runs = await manager.store.list_runs("t1")
        return bool(runs) and all(r.is_terminal for r in runs)

    await eventually(ended, what="run terminal")
    return await only_run(app)


async def test_agui_stream_is_a_recorded_run_with_resume_ids(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, GatedStream(chat_events(text=["Hel", "lo"], tool=("c1", "f", ["{}"]))))
    app = app_factory()
    async with running(app):
        posted = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        replayed = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
        resumed = await call(
            app,
            "GET",
            "/api/v1/agent/runs/t1/events?runId=r1",
            headers={"last-event-id": frames(posted.body)[2].id or ""},
        )
    sent = frames(posted.body)
    assert all(f.id is not None and f.event is None for f in sent)  # id lines, no event lines
    assert [f.id for f in sent] == [f.id for f in frames(replayed.body)]
    assert events_of(posted.body) == events_of(replayed.body)
    assert events_of(resumed.body) == events_of(posted.body)[3:]
    assert agui_errors(posted.body) == []
    require_harness()
    result = replay([("post", "agui", posted.body)])["post"]
    assert result["accepted"], result["error"]


@pytest.mark.parametrize(("path", "body"), ENDPOINTS)
async def test_client_gone_the_run_continues_by_default(
    app_factory: Any, router: respx.MockRouter, path: str, body: dict[str, Any]
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    upstream = GatedStream([*parts[:2], gate, *parts[2:]])
    mock_upstream(router, upstream)
    app = app_factory()
    async with running(app):
        first = await call(app, "POST", path, body, stop=lambda reply: True)
        assert first.status == 200 and not first.complete
        assert not upstream.closed.is_set()  # the client left, the upstream did not
        assert not (await only_run(app)).is_terminal
        gate.set()
        run = await wait_terminal(app)
        assert run.status == "completed"
        rest = await call(app, "GET", f"/api/v1/agent/runs/t1/events?runId={run.public_run_id}")
    text = "".join(e["delta"] for e in events_of(rest.body) if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Hello"
    assert upstream.closed.is_set()


@pytest.mark.parametrize(("path", "body"), ENDPOINTS)
async def test_client_gone_cancels_the_run_with_on_disconnect_cancel(
    app_factory: Any, router: respx.MockRouter, path: str, body: dict[str, Any]
) -> None:
    never = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    upstream = GatedStream([*parts[:2], never, *parts[2:]])
    mock_upstream(router, upstream)
    app = app_factory(on_disconnect="cancel")
    async with running(app):
        await call(app, "POST", path, body, stop=lambda reply: True)
        run = await wait_terminal(app)
        rest = await call(app, "GET", f"/api/v1/agent/runs/t1/events?runId={run.public_run_id}")
    assert run.status == "cancelled"
    assert upstream.closed.is_set()
    last = events_of(rest.body)[-1]
    assert (last["type"], last["code"]) == ("RUN_ERROR", "RUN_CANCELED")
    assert agui_errors(rest.body) == []


async def test_cancel_mode_leaves_a_run_alone_when_the_client_stays(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, GatedStream(chat_events(text=["ok"])))
    app = app_factory(on_disconnect="cancel")
    async with running(app):
        reply = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        run = await wait_terminal(app)
    assert run.status == "completed"
    assert events_of(reply.body)[-1]["type"] == "RUN_FINISHED"


async def test_shutdown_ends_the_local_runs_as_interrupted(
    app_factory: Any, router: respx.MockRouter
) -> None:
    never = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    mock_upstream(router, GatedStream([*parts[:2], never]))
    app = app_factory()
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        store = app.state.services.manager.store
        await eventually(lambda: _stored_at_least(store, 2), what="the run's first events")
    assert app.state.services.manager is None
    later = app_factory()  # the next process over the same database
    async with running(later):
        reply = await call(later, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
        run = await later.state.services.manager.get_run(run_key(None, "t1", "r1"))
    assert run.status == "interrupted"
    last = events_of(reply.body)[-1]
    assert (last["type"], last["code"]) == ("RUN_ERROR", "RUN_INTERRUPTED")
    assert agui_errors(reply.body) == []


async def _stored_at_least(store: Any, n: int) -> bool:
    return len(await store.read_events(run_key(None, "t1", "r1"))) >= n


async def test_without_the_lifespan_streams_are_not_recorded(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, GatedStream(chat_events(text=["ok"])))
    app = app_factory()
    reply = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
    assert reply.status == 200
    assert events_of(reply.body)[-1]["type"] == "RUN_FINISHED"
    assert all(f.id is None for f in frames(reply.body))
