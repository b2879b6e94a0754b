"""AG-UI re-join (issue 14 item 1): ``POST /v1/agui/{route}`` naming a run of its thread that
exists joins it (snapshot prelude, then the live tail) instead of calling the upstream again;
the same ids with new input are ``409 RUN_ID_TAKEN``.

What the client ends up with is judged by the real ``@ag-ui/client`` 1.0.0 (the harness): the
re-joined stream, applied on top of what the client held when its connection was cut, leaves
the same messages as the uninterrupted run, at every cut point.
"""

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
    run_input,
    running,
)

pytestmark = pytest.mark.timeout(180)

TURN = chat_events(
    text=["Let me ", "check."],
    tool=("c1", "weather", ['{"ci', 'ty": ', '"Paris"}']),
)


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def upstream(router: respx.MockRouter, *streams: GatedStream) -> respx.Route:
    return router.post(OPENAI_URL).mock(
        side_effect=[httpx.Response(200, stream=stream) for stream in streams]
    )


async def test_a_retried_post_of_an_ended_run_replays_it_without_a_second_upstream_call(
    app_factory: Any, router: respx.MockRouter
) -> None:
    route = upstream(router, GatedStream(TURN), GatedStream(chat_events(text=["again"])))
    app = app_factory()
    async with running(app):
        first = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        again = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        runs = await app.state.services.manager.store.list_runs("t1")
    assert route.call_count == 1
    assert [r.public_run_id for r in runs] == ["r1"]
    assert again.status == 200 and agui_errors(again.body) == []
    joined = events_of(again.body)
    assert [e["type"] for e in joined] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert joined[0]["runId"] == "r1"
    require_harness()
    given = {"initial_messages": run_input("t1", "r1")["messages"]}
    results = replay([("full", "agui", first.body, given), ("joined", "agui", again.body, given)])
    assert results["joined"]["accepted"], results["joined"]["error"]
    assert results["joined"]["messages"] == results["full"]["messages"]


async def test_rejoin_mid_run_at_every_cut_leaves_the_messages_of_the_uninterrupted_run(
    app_factory: Any, router: respx.MockRouter
) -> None:
    """A client re-joins after each upstream event (the POST ``HttpAgent`` sends again); the
    prelude of that moment and the live tail after it, applied by the real client on top of
    the input messages, give the messages of the run seen whole; the upstream is called once."""
    gates = [asyncio.Event() for _ in TURN]
    parts: list[bytes | asyncio.Event] = []
    for gate, part in zip(gates, TURN, strict=True):
        parts += [gate, part]
    route = upstream(router, GatedStream(parts))
    app = app_factory()
    async with running(app):
        store = app.state.services.manager.store
        live = asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
        joins = []
        for gate in gates:
            gate.set()
            await asyncio.sleep(0.05)
            joins.append(
                asyncio.create_task(call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1")))
            )
        first = await live
        bodies = [(await join).body for join in joins]
        await eventually(lambda: _terminal(store), what="the run ended")
    assert route.call_count == 1
    for body in bodies:
        assert agui_errors(body) == [], body
        assert events_of(body)[0]["type"] == "RUN_STARTED"
    require_harness()
    given = {"initial_messages": run_input("t1", "r1")["messages"]}
    jobs: list[Any] = [("full", "agui", first.body, given)]
    jobs += [(f"cut{index}", "agui", body, given) for index, body in enumerate(bodies)]
    results = replay(jobs)
    full = results["full"]
    assert full["accepted"], full["error"]
    assert any(m.get("toolCalls") for m in full["messages"])
    for index in range(len(bodies)):
        result = results[f"cut{index}"]
        assert result["accepted"], (index, result["error"])
        assert result["messages"] == full["messages"], index


async def _terminal(store: Any) -> bool:
    runs = await store.list_runs("t1")
    return bool(runs) and all(r.is_terminal for r in runs)


@pytest.mark.parametrize(
    ("path", "change"),
    [
        ("/v1/agui/gpt", "new user message"),
        ("/v1/agui/gpt", "client tool result"),
        ("/v1/agui/demo", "other route"),
    ],
)
async def test_a_taken_run_id_with_new_input_is_409_run_id_taken(
    app_factory: Any, router: respx.MockRouter, path: str, change: str
) -> None:
    route = upstream(router, GatedStream(TURN), GatedStream(chat_events(text=["two"])))
    app = app_factory()
    second = run_input("t1", "r1")
    if change == "new user message":
        second["messages"].append({"id": "u-new", "role": "user", "content": "and Rome?"})
    elif change == "client tool result":
        second["messages"] += [
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": "{}"},
                    }
                ],
            },
            {"id": "t-res", "role": "tool", "toolCallId": "c1", "content": "sunny"},
        ]
    async with running(app):
        first = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        refused = await call(app, "POST", path, second)
        other_thread = await call(app, "POST", "/v1/agui/gpt", run_input("t2", "r1"))
    assert first.status == 200
    assert refused.status == 409, refused.body
    assert refused.json()["error"]["code"] == "RUN_ID_TAKEN"
    assert other_thread.status == 200  # a run id is scoped to its thread
    assert route.call_count == 2  # r1 of t1 once, r1 of t2 once; nothing for the refusal


async def test_a_join_echoing_the_runs_own_messages_is_a_retry(
    app_factory: Any, router: respx.MockRouter
) -> None:
    """What ``HttpAgent`` posts after the run: input plus the run's assistant and tool
    messages (ids from the stream) joins; assistant messages the store does not know (deltas
    not yet written) never refuse."""
    route = upstream(router, GatedStream(TURN))
    app = app_factory()
    async with running(app):
        first = await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        require_harness()
        given = {"initial_messages": run_input("t1", "r1")["messages"]}
        messages = replay([("full", "agui", first.body, given)])["full"]["messages"]
        echoed = run_input("t1", "r1")
        echoed["messages"] = [*messages, {"id": "a-unknown", "role": "assistant", "content": "x"}]
        again = await call(app, "POST", "/v1/agui/gpt", echoed)
    assert again.status == 200, again.body
    assert route.call_count == 1
    assert events_of(again.body)[-1]["type"] == "RUN_FINISHED"


async def test_a_retry_before_the_runs_first_event_is_stored_joins_it(app_factory: Any) -> None:
    """A retried POST can arrive after the first POST recorded the run and its input but before
    the run's first event is stored (the prelude is still empty): it is a retry, not new input."""
    from ag_ui.core import RunAgentInput

    from gateway.auth import ANONYMOUS
    from gateway.errors import RunIdTakenError

    app = app_factory()
    async with running(app):
        services = app.state.services
        route = services.route("gpt")
        body = run_input("t1", "r1")
        await services.manager.create_run(
            thread_id=ANONYMOUS.thread_key("t1"),
            run_id=ANONYMOUS.run_key("t1", "r1"),
            route=route.name,
            upstream=route.upstream_url,
            input_messages=body["messages"],
            tenant=ANONYMOUS.tenant,
        )
        joined = await services.rejoin(ANONYMOUS, route, RunAgentInput.model_validate(body))
        assert joined is not None
        run, prelude = joined
        assert run.route == route.name and prelude.events == []
        other = run_input("t1", "r1", content="something else")
        other["messages"][0]["id"] = "u-new"
        with pytest.raises(RunIdTakenError, match="u-new"):
            await services.rejoin(ANONYMOUS, route, RunAgentInput.model_validate(other))
