"""A stop sent right after the POST that starts a run, before the run is recorded, stops that
run (``docs/runs.md`` §2, ``Services.run_of``): the upstream request is already out (the early
stream, issue 13 item 2), so a ``404`` there would lose the stop and the run would go on.

The store's ``create_run`` is held by the test, so the order is seen, not timed: the cancel
arrives while the run is not recorded, waits, and once the run is recorded and its pump started
answers ``200`` with ``cancelRequested``; the run ends ``RUN_CANCELED`` and the upstream response
is closed. A start that fails answers the waiting stop ``404``; a run nobody is starting is
``404`` at once. Found by the browser test of the HttpAgent page's Stop
(``tests/gateway/test_browser_clients.py``), which failed when the stop won the race.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream, HeldCreates

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, chat_events, events_of, run_input, running, true_when

from gateway.store import StoreUnavailableError

pytestmark = pytest.mark.timeout(120)

TURN = chat_events(text=["Hello ", "world."])


@pytest.fixture
def app(make_app: Any, tmp_path: Path, keys: None) -> Any:
    return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)


async def test_a_stop_before_the_run_is_recorded_stops_it(
    app: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    stream = GatedStream([TURN[0], gate, *TURN[1:]])
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))
    async with running(app):
        held = HeldCreates(app.state.services.manager.store)
        post = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        await true_when(lambda: held.entered == 1 and route.call_count == 1)
        cancel = asyncio.create_task(call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=r1"))
        await asyncio.sleep(0.05)
        assert not cancel.done()  # waiting for the run, not a 404
        held.release.set()
        stopped = await cancel
        reply = await post
        await asyncio.wait_for(stream.closed.wait(), 5)
    assert stopped.status == 200
    assert orjson.loads(stopped.body)["cancelRequested"] is True
    events = events_of(reply.body)
    assert events[0]["type"] == "RUN_STARTED"
    assert (events[-1]["type"], events[-1].get("code")) == ("RUN_ERROR", "RUN_CANCELED")
    assert stream.sent < len(TURN)  # closed at its gate: the rest was never read


async def test_a_stop_waiting_for_a_start_that_fails_is_a_404(
    app: Any, router: respx.MockRouter
) -> None:
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=GatedStream(TURN)))
    async with running(app):
        held = HeldCreates(app.state.services.manager.store)
        held.error = StoreUnavailableError("the run store is unreachable")
        post = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        await true_when(lambda: held.entered == 1)
        cancel = asyncio.create_task(call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=r1"))
        await asyncio.sleep(0.05)
        assert not cancel.done()
        held.release.set()
        stopped = await cancel
        reply = await post
    assert reply.status == 503
    assert stopped.status == 404
    assert orjson.loads(stopped.body)["error"]["code"] == "RUN_NOT_FOUND"


async def test_a_stop_of_a_run_nobody_is_starting_is_a_404_at_once(app: Any) -> None:
    async with running(app):
        stopped = await asyncio.wait_for(
            call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=nope"), 5
        )
    assert stopped.status == 404
    assert app.state.services._starting == {}
