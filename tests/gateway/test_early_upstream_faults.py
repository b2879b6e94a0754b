"""The early upstream request (``gateway/early_stream.py`` from ``Services.start_run``)
under faults, through the HTTP endpoints (a fresh reviewer's attack, kept).

README: ``POST /api/v1/agent/runs`` answers ``409 RUN_EXISTS`` when ``runId`` is taken ("a
retried create never starts a second run": that endpoint has no existence check before its
create, so its upstream request waits for the run to be recorded); docs/runs.md §2: the
upstream request goes out "once the existence check says the run is new". Also: a create
refused while the first step retries an upstream 503, the first step's log records, complete
streams with a slow create (AG-UI and AI SDK), a pump stopped before its feeder ran, a cancel
and a server shutdown while the first step waits for its first chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    agui_errors,
    call,
    chat_events,
    events_of,
    eventually,
    run_input,
    running,
    true_when,
)

from gateway.store import RunExistsError

pytestmark = pytest.mark.timeout(120)

TURN = chat_events(text=["Hello ", "world."])


@pytest.fixture
def app(make_app: Any, tmp_path: Path, keys: None) -> Any:
    return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)


async def test_a_retried_create_of_a_taken_run_id_does_not_call_the_upstream_again(
    app: Any, router: respx.MockRouter
) -> None:
    """``POST /api/v1/agent/runs`` twice with one runId: the second is 409 RUN_EXISTS and must
    not reach the upstream (no existence check precedes the early request on this route)."""
    route = router.post(OPENAI_URL).mock(
        side_effect=lambda request: httpx.Response(200, stream=GatedStream(TURN))
    )
    body = {"route": "gpt", "input": run_input("t1", "r1")}
    async with running(app):
        first = await call(app, "POST", "/api/v1/agent/runs", body)
        assert first.status == 201
        store = app.state.services.manager.store

        async def ended() -> bool:
            return (await store.get_run(_key(app, "t1", "r1"))).is_terminal

        await eventually(ended, within=10)
        calls_before = route.call_count
        retry = await call(app, "POST", "/api/v1/agent/runs", body)
        await asyncio.sleep(0.2)
        calls_after = route.call_count
    assert calls_before == 1
    assert retry.status == 409, retry.body
    assert calls_after == calls_before, (
        f"the retried create (409) sent {calls_after - calls_before} upstream request(s)"
    )


def _key(app: Any, thread: str, run: str) -> str:
    from gateway.auth import ANONYMOUS

    return ANONYMOUS.run_key(thread, run)


async def test_a_create_refused_as_taken_while_the_first_step_is_retrying_closes_cleanly(
    app: Any, router: respx.MockRouter
) -> None:
    """The first step is in a retry backoff (upstream 503, retried) when the create fails with
    RUN_EXISTS: the client gets 409, no further upstream attempt is made afterwards, and no
    task is left running the first step."""
    hold = asyncio.Event()
    calls: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(503, json={"error": {"message": "busy"}})

    router.post(OPENAI_URL).mock(side_effect=answer)
    async with running(app):
        store = app.state.services.manager.store
        real = store.create_run

        async def held(**kwargs: Any) -> Any:
            await hold.wait()
            raise RunExistsError("taken")

        store.create_run = held
        # the AG-UI endpoint (its re-join check found no run: the upstream request is early)
        post = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        await true_when(lambda: len(calls) >= 1)
        hold.set()
        reply = await post
        n = len(calls)
        await asyncio.sleep(0.3)  # past any backoff (0.01-0.02 s)
        store.create_run = real
        leftover = [
            t
            for t in asyncio.all_tasks()
            if t is not asyncio.current_task() and "_step" in repr(t.get_coro())
        ]
    assert reply.status == 409, reply.body
    assert len(calls) == n, "an upstream attempt went out after the create failed"
    assert leftover == []


async def test_the_first_steps_log_records_carry_the_run_not_the_request(
    app: Any, router: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    """An upstream failure logged during the early first step names the run (run_id, route,
    upstream_host) as the pump's records do."""
    from gateway.logs import ContextFilter

    router.post(OPENAI_URL).mock(return_value=httpx.Response(400, json={"error": {"message": "x"}}))
    records: list[logging.LogRecord] = []

    class Grab(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Grab(level=logging.DEBUG)
    handler.addFilter(ContextFilter())
    root = logging.getLogger("gateway")
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.DEBUG)
    try:
        async with running(app):
            reply = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    assert reply.status == 200
    upstream = [r for r in records if r.name == "gateway.upstream" and "gpt" in r.getMessage()]
    assert upstream, [r.getMessage() for r in records]
    for record in upstream:
        assert getattr(record, "run_id", None) == "r1", record.__dict__
        assert getattr(record, "route", None) == "gpt", record.__dict__
        assert getattr(record, "upstream_host", None) == "openai.test", record.__dict__


async def test_ai_sdk_and_agui_streams_are_whole_with_a_slow_create(
    app: Any, router: respx.MockRouter
) -> None:
    """The create takes a while (held 0.3 s) while the upstream sends everything at once:
    every event once, in order, for the AG-UI and the AI SDK endpoints."""
    router.post(OPENAI_URL).mock(
        side_effect=lambda request: httpx.Response(200, stream=GatedStream(TURN))
    )
    async with running(app):
        store = app.state.services.manager.store
        real = store.create_run

        async def slow(**kwargs: Any) -> Any:
            await asyncio.sleep(0.3)
            return await real(**kwargs)

        store.create_run = slow
        agui = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        chat = {
            "id": "chat-9",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        }
        sdk = await call(app, "POST", "/v1/ai-sdk/gpt", chat)
    assert agui.status == 200 and agui_errors(agui.body) == []
    events = events_of(agui.body)
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Hello world."
    assert [e["type"] for e in events].count("RUN_STARTED") == 1
    assert sdk.status == 200
    body = sdk.body.decode()
    assert body.count('"type":"text-delta"') == 2 or body.count('"text-delta"') == 2, body
    assert "Hello " in body and "world." in body and body.rstrip().endswith("data: [DONE]")


@pytest.mark.parametrize("quota", [1024**3, 0], ids=["capped", "uncapped"])
async def test_a_pump_stopped_before_its_feeder_ran_closes_the_early_upstream(
    make_app: Any, tmp_path: Path, keys: None, router: respx.MockRouter, quota: int
) -> None:
    """The run's pump is stopped (fenced) before its feeder took a step: the upstream response
    the early first step opened must be closed all the same. With the default storage quota
    the pump reads ``capped(early stream)``, an async generator that never started, whose
    ``aclose`` does nothing."""
    app = make_app(database_url=f"sqlite:///{tmp_path}/runs.db", quota_stored_bytes=quota, **FAST)
    gate = asyncio.Event()
    stream = GatedStream([TURN[0], gate, *TURN[1:]])
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))
    async with running(app):
        manager = app.state.services.manager
        real_start = manager.start

        def start(run: Any, source: Any, **kwargs: Any) -> Any:
            task = real_start(run, source, **kwargs)
            manager._pumps[run.id][0].fence()  # another replica took it over at once
            return task

        manager.start = start
        post = asyncio.create_task(
            call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"), watchdog=5)
        )
        try:
            await asyncio.wait_for(stream.closed.wait(), 3)
            closed = True
        except TimeoutError:
            closed = False
        gate.set()
        post.cancel()
        with contextlib.suppress(BaseException):
            await post
    assert closed, "the early upstream response was left open after its pump stopped"


def _leftover_steps() -> list[asyncio.Task[Any]]:
    return [
        t
        for t in asyncio.all_tasks()
        if t is not asyncio.current_task() and not t.done() and "_step" in repr(t.get_coro())
    ]


async def test_a_cancel_while_the_first_step_waits_ends_the_run_and_the_upstream(
    app: Any, router: respx.MockRouter
) -> None:
    """The upstream answered its head but not its first chunk; the run is created (201) and
    cancelled: RUN_CANCELED, the upstream response closed, no first-step task left."""
    gate = asyncio.Event()
    stream = GatedStream([gate, *TURN])
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))
    async with running(app):
        created = await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        assert created.status == 201
        cancel = await call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=r1")
        assert cancel.status == 200
        await asyncio.wait_for(stream.closed.wait(), 5)
        events = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
        left = _leftover_steps()
    types = [e["type"] for e in events_of(events.body)]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_ERROR"
    assert events_of(events.body)[-1]["code"] == "RUN_CANCELED"
    assert left == []
    assert stream.sent == 0


async def test_shutdown_while_the_first_step_waits_interrupts_the_run_and_closes(
    app: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    stream = GatedStream([gate, *TURN])
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))
    async with running(app):
        created = await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        assert created.status == 201
        store = app.state.services.manager.store
    assert stream.closed.is_set()
    assert _leftover_steps() == []
    async with running(app):
        record = await app.state.services.manager.store.get_run(_key(app, "t1", "r1"))
    assert record.status in ("interrupted", "failed"), record.status
    del store
