"""A durable run's upstream request goes out while the run is recorded (issue 13 item 2,
``docs/runs.md`` §2), not after: ``gateway/early_stream.py`` from ``Services.start_run``.

The store's ``create_run`` is held by the test, so the order is seen, not timed: the upstream
is called while the run is not yet recorded, nothing reaches the client before the run and
its RUN_STARTED are durable, and the stream is the whole run, once. A create that fails closes
the upstream response it had started (503 to the client); a second POST of a run this process
is starting waits and re-joins it; two POSTs of one new runId racing past the existence check
(as on two replicas) both reach the upstream, and the one whose create loses closes its
response and re-joins the winner's run.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream, HeldCreates

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    agui_errors,
    call,
    chat_events,
    events_of,
    run_input,
    running,
    true_when,
)

from gateway.store import StoreUnavailableError

pytestmark = pytest.mark.timeout(120)

TURN = chat_events(text=["Hello ", "world."])


@pytest.fixture
def app(make_app: Any, tmp_path: Path, keys: None) -> Any:
    return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)


async def test_the_upstream_is_called_while_the_run_is_recorded(
    app: Any, router: respx.MockRouter
) -> None:
    stream = GatedStream(TURN)
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))
    async with running(app):
        store = app.state.services.manager.store
        held = HeldCreates(store)
        seen: list[bytes] = []
        post = asyncio.create_task(
            call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"), on_chunk=seen.append)
        )
        await true_when(lambda: held.entered == 1 and route.call_count == 1)
        await asyncio.sleep(0.05)  # the upstream's events are there: none may go out yet
        assert seen == [] and not post.done()
        held.release.set()
        reply = await post
        runs = await store.list_runs("t1")
    assert reply.status == 200 and agui_errors(reply.body) == []
    events = events_of(reply.body)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == (
        "Hello world."
    )
    assert route.call_count == 1
    assert [r.public_run_id for r in runs] == ["r1"]


async def test_a_failed_create_closes_the_upstream_response_it_started(
    app: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    stream = GatedStream([TURN[0], gate, *TURN[1:]])
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))
    async with running(app):
        held = HeldCreates(app.state.services.manager.store)
        held.error = StoreUnavailableError("the run store is unreachable")
        post = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        await true_when(lambda: route.call_count == 1)
        held.release.set()
        reply = await post
        await asyncio.wait_for(stream.closed.wait(), 5)
    assert reply.status == 503
    assert stream.sent == 1  # closed at its gate: the rest was never read


class PastTheCheck:
    """Wraps ``Services.rejoin``: its first ``count`` calls (the POSTs' existence checks) wait
    until all of them arrived and find no run, as two POSTs do on two replicas (in one process
    the later check finds the earlier start under way and waits, ``Services.run_of``); later
    calls (the loser's re-join) are the real one."""

    def __init__(self, services: Any, count: int) -> None:
        self.real = services.rejoin
        self.count = count
        self.entered = 0
        self.all_in = asyncio.Event()
        services.rejoin = self

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.entered += 1
        if self.entered > self.count:
            return await self.real(*args, **kwargs)
        if self.entered == self.count:
            self.all_in.set()
        await self.all_in.wait()
        return None


def _kind(reply: Any) -> str:
    """A whole run answered to a POST: ``rejoined`` when it opens with the re-join's snapshot
    prelude (MESSAGES_SNAPSHOT after RUN_STARTED), else ``streamed``."""
    assert reply.status == 200 and agui_errors(reply.body) == [], reply.body
    events = events_of(reply.body)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    return "rejoined" if events[1]["type"] == "MESSAGES_SNAPSHOT" else "streamed"


async def test_a_post_of_a_run_being_started_waits_and_rejoins_it(
    app: Any, router: respx.MockRouter
) -> None:
    """In one process the second POST's existence check finds the first's start under way
    (``Services.run_of``): it waits for the run and re-joins it; one upstream request."""
    route = router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=GatedStream(TURN)))
    async with running(app):
        store = app.state.services.manager.store
        held = HeldCreates(store)
        first = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        await true_when(lambda: held.entered == 1 and route.call_count == 1)
        second = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        await asyncio.sleep(0.05)
        assert held.entered == 1 and not second.done()  # waiting, not a second start
        held.release.set()
        replies = await asyncio.gather(first, second)
        runs = await store.list_runs("t1")
    assert [r.public_run_id for r in runs] == ["r1"]
    assert route.call_count == 1
    kinds = [_kind(reply) for reply in replies]
    assert kinds == ["streamed", "rejoined"]


async def test_two_posts_of_one_new_run_racing_give_one_run_and_a_rejoin(
    app: Any, router: respx.MockRouter
) -> None:
    gates = [asyncio.Event(), asyncio.Event()]
    streams = [GatedStream([TURN[0], gate, *TURN[1:]]) for gate in gates]
    route = router.post(OPENAI_URL).mock(
        side_effect=[httpx.Response(200, stream=stream) for stream in streams]
    )
    async with running(app):
        store = app.state.services.manager.store
        PastTheCheck(app.state.services, 2)  # both checks find no run
        held = HeldCreates(store)
        posts = [
            asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
            for _ in range(2)
        ]
        await true_when(lambda: held.entered == 2 and route.call_count == 2)
        held.release.set()
        # the loser's create is refused (RUN_EXISTS): its upstream response is closed at once
        await true_when(lambda: any(s.closed.is_set() for s in streams))
        loser = next(s for s in streams if s.closed.is_set())
        assert loser.sent == 1  # closed at its gate: the rest was never read
        for gate in gates:
            gate.set()
        replies = await asyncio.gather(*posts)
        runs = await store.list_runs("t1")
    assert [r.public_run_id for r in runs] == ["r1"]
    assert route.call_count == 2
    kinds = [_kind(reply) for reply in replies]
    assert sorted(kinds) == ["rejoined", "streamed"]  # the re-join's prelude, once
    streamed = replies[kinds.index("streamed")]
    text = "".join(
        e["delta"] for e in events_of(streamed.body) if e["type"] == "TEXT_MESSAGE_CONTENT"
    )
    assert text == "Hello world."
