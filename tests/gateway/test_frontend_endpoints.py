"""What the stock frontends need around a run (issue 14 items 2, 3, 5): an ``EventSource`` that
stops after the run and hears every event with ``onmessage``; a ``useChat`` Stop that cancels
the upstream; history the clients load as it is, checked against the real packages' schemas
(``ai`` 7 ``validateUIMessages``, ``@ag-ui/core`` 1.0.0 ``MessageSchema``,
``tests/harness/check-history.mjs``)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream
from real_clients import HARNESS_DIR, replay, require_harness

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    call,
    chat_events,
    events_of,
    eventually,
    frames,
    resume_attached,
    resume_count,
    run_input,
    running,
)

pytestmark = pytest.mark.timeout(120)

CHAT = {
    "id": "t1",
    "trigger": "submit-message",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def upstream(router: respx.MockRouter, *streams: GatedStream) -> respx.Route:
    return router.post(OPENAI_URL).mock(
        side_effect=[httpx.Response(200, stream=stream) for stream in streams]
    )


def check_shapes(body: dict[str, Any]) -> dict[str, Any]:
    """The real packages' verdict on history arrays (``check-history.mjs``)."""
    require_harness()
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(HARNESS_DIR / "check-history.mjs")],
        input=json.dumps(body).encode(),
        capture_output=True,
        cwd=HARNESS_DIR,
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def _terminal(app: Any, thread: str = "t1") -> bool:
    runs = await app.state.services.manager.store.list_runs(thread)
    return bool(runs) and all(r.is_terminal for r in runs)


# -- EventSource ---------------------------------------------------------------------------


async def test_events_at_the_end_of_an_ended_run_are_204_and_unnamed_frames_have_no_event(
    app_factory: Any, router: respx.MockRouter
) -> None:
    upstream(router, GatedStream(chat_events(text=["Hel", "lo"])))
    app = app_factory()
    async with running(app):
        await call(app, "POST", "/v1/agui/gpt", run_input("t1", "r1"))
        named = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
        unnamed = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1&unnamed=1")
        last = frames(named.body)[-1].id or ""
        before_last = frames(named.body)[-2].id or ""
        at_end = await call(
            app, "GET", "/api/v1/agent/runs/t1/events?runId=r1", headers={"last-event-id": last}
        )
        rest = await call(
            app,
            "GET",
            "/api/v1/agent/runs/t1/events?runId=r1&unnamed=1",
            headers={"last-event-id": before_last},
        )
        bad = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1&unnamed=maybe")
    assert all(f.event == f.data["type"] for f in frames(named.body))
    assert [f.event for f in frames(unnamed.body)] == [None] * len(frames(named.body))
    assert [f.id for f in frames(unnamed.body)] == [f.id for f in frames(named.body)]
    assert events_of(unnamed.body) == events_of(named.body)
    assert (at_end.status, at_end.body) == (204, b"")
    assert rest.status == 200 and [e["type"] for e in events_of(rest.body)] == ["RUN_FINISHED"]
    assert bad.status == 400 and bad.json()["error"]["code"] == "INVALID_PARAMETER"


# -- useChat Stop ----------------------------------------------------------------------------


async def test_ai_sdk_response_names_its_run_and_delete_cancels_the_upstream(
    app_factory: Any, router: respx.MockRouter
) -> None:
    never = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    stream = GatedStream([*parts[:2], never, *parts[2:]])
    upstream(router, stream)
    app = app_factory()
    async with running(app):
        first = await call(app, "POST", "/v1/ai-sdk/gpt", CHAT, stop=lambda reply: True)
        run_id = first.headers["x-agui-run-id"] if first.headers else ""
        assert not stream.closed.is_set()  # stop() alone (the fetch aborted) leaves it running
        stopped = await call(app, "DELETE", "/v1/ai-sdk/gpt/t1/stream")
        await eventually(lambda: _terminal(app), what="the run ended")
        again = await call(app, "DELETE", "/v1/ai-sdk/gpt/t1/stream")
        resumed = await call(app, "GET", "/v1/ai-sdk/gpt/t1/stream")
        runs = await call(app, "GET", "/api/v1/agent/runs?threadId=t1")
    assert first.headers is not None and first.headers["x-agui-thread-id"] == "t1"
    start = next(c for c in events_of(first.body) if c["type"] == "start")
    assert start["messageMetadata"] == {"threadId": "t1", "runId": run_id}
    assert stopped.status == 200
    assert stopped.json() == {
        "threadId": "t1",
        "runId": run_id,
        "status": "running",
        "cancelRequested": True,
    }
    assert stream.closed.is_set()  # the upstream request was cancelled
    assert again.status == 204 and resumed.status == 204
    listed = runs.json()["runs"]
    assert [(r["runId"], r["status"]) for r in listed] == [(run_id, "cancelled")]
    assert listed[0]["error"]["code"] == "RUN_CANCELED"


async def test_ai_sdk_resume_carries_the_run_metadata_and_headers(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    upstream(router, GatedStream([*parts[:2], gate, *parts[2:]]))
    app = app_factory()
    async with running(app):
        first = await call(app, "POST", "/v1/ai-sdk/gpt", CHAT, stop=lambda reply: True)
        before = resume_count("ai_sdk")
        resumed_task = asyncio.create_task(call(app, "GET", "/v1/ai-sdk/gpt/t1/stream"))
        await resume_attached("ai_sdk", before)  # attached while the run is live (else a 204)
        gate.set()
        resumed = await resumed_task
    assert resumed.headers is not None and first.headers is not None
    assert resumed.headers["x-agui-run-id"] == first.headers["x-agui-run-id"]
    start = next(c for c in events_of(resumed.body) if c["type"] == "start")
    assert start["messageMetadata"]["runId"] == first.headers["x-agui-run-id"]
    require_harness()
    result = replay([("resumed", "ai-v7", resumed.body)])["resumed"]
    assert result["accepted"], result["error"]
    assert result["messages"][-1]["metadata"]["runId"] == first.headers["x-agui-run-id"]


# -- history the clients load -----------------------------------------------------------------


async def test_history_formats_are_what_the_clients_load_with_the_streams_ids(
    app_factory: Any, router: respx.MockRouter
) -> None:
    """A client tool round trip over the AI SDK endpoint (call, then the result in the next
    request), then a second thread over the AG-UI endpoint: the ai-sdk history has the
    result inside its tool part and the stream's message id; the agui history equals the
    messages the real ``HttpAgent`` built from the stream."""
    upstream(
        router,
        GatedStream(
            chat_events(text=["Let me check."], tool=("c1", "weather", ['{"city":"Paris"}']))
        ),
        GatedStream(chat_events(text=["Sunny."])),
        GatedStream(chat_events(text=["Hel", "lo"], tool=("c9", "lookup", ["{}"]))),
    )
    app = app_factory()
    async with running(app):
        first = await call(app, "POST", "/v1/ai-sdk/gpt", CHAT)
        require_harness()
        built = replay([("turn", "ai-v7", first.body)])["turn"]["messages"][-1]
        tool = next(p for p in built["parts"] if p["type"] == "tool-weather")
        tool.update(state="output-available", output={"sky": "sunny"})
        follow = {**CHAT, "messages": [*CHAT["messages"], built]}
        await call(app, "POST", "/v1/ai-sdk/gpt", follow)
        await eventually(lambda: _terminal(app), what="the runs ended")
        agui_turn = await call(app, "POST", "/v1/agui/gpt", run_input("t2", "r2"))
        ai_sdk = await call(app, "GET", "/api/v1/agent/history?threadId=t1&format=ai-sdk")
        agui = await call(app, "GET", "/api/v1/agent/history?threadId=t2&format=agui")
        paged = await call(app, "GET", "/api/v1/agent/history?threadId=t1")
        bad = await call(app, "GET", "/api/v1/agent/history?threadId=t1&format=xml")
    messages = ai_sdk.json()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["id"] == built["id"]  # the stream's start.messageId
    tools = [p for p in messages[1]["parts"] if p["type"] == "tool-weather"]
    assert len(tools) == 1
    assert tools[0]["state"] == "output-available" and tools[0]["output"] == {"sky": "sunny"}
    assert tools[0]["input"] == {"city": "Paris"}
    texts = [p["text"] for p in messages[1]["parts"] if p["type"] == "text"]
    assert texts == ["Let me check.", "Sunny."]  # the follow-up after the tool part
    streamed = replay(
        [("agui", "agui", agui_turn.body, {"initial_messages": run_input("t2", "r2")["messages"]})]
    )["agui"]["messages"]
    assert agui.json() == streamed
    assert "items" in paged.json()  # the paged shape stays the default
    assert bad.status == 400
    verdict = check_shapes({"ai-sdk": messages, "agui": agui.json()})
    assert verdict["ai-sdk"]["ok"], verdict["ai-sdk"]["error"]
    assert verdict["agui"]["ok"], verdict["agui"]["error"]


async def test_history_of_an_active_run_and_the_runs_list(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    upstream(router, GatedStream([*parts[:2], gate, *parts[2:]]))
    app = app_factory()
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        store = app.state.services.manager.store

        async def text_stored() -> bool:
            events = await store.read_events(
                next(iter([r.id for r in await store.list_runs("t1")]))
            )
            return any(e.event["type"] == "TEXT_MESSAGE_CONTENT" for e in events)

        await eventually(text_stored, what="the first delta stored")
        agui = await call(app, "GET", "/api/v1/agent/history?threadId=t1&format=agui")
        ai_sdk = await call(app, "GET", "/api/v1/agent/history?threadId=t1&format=ai-sdk")
        runs = await call(app, "GET", "/api/v1/agent/runs?threadId=t1")
        gate.set()
        await eventually(lambda: _terminal(app), what="the run ended")
        done = await call(app, "GET", "/api/v1/agent/history?threadId=t1&format=ai-sdk")
    assert agui.headers is not None and agui.headers["x-agui-run-id"] == "r1"
    assert [m["role"] for m in agui.json()] == ["user", "assistant"]
    assert agui.json()[1]["content"] == "Hel"
    assert [m["role"] for m in ai_sdk.json()] == ["user"]  # resume brings the active run
    assert [(r["runId"], r["status"]) for r in runs.json()["runs"]] == [("r1", "running")]
    assert done.headers is not None and "x-agui-run-id" not in done.headers
    assert [m["role"] for m in done.json()] == ["user", "assistant"]
    assert done.json()[1]["metadata"] == {"runId": "r1", "status": "completed"}
    verdict = check_shapes({"ai-sdk": done.json(), "agui": agui.json()})
    assert verdict["ai-sdk"]["ok"], verdict["ai-sdk"]["error"]
    assert verdict["agui"]["ok"], verdict["agui"]["error"]
