"""Resume over HTTP (issue 3 §3): ``Last-Event-ID`` / ``?lastEventId=`` at every cut, drops
while the run is live, ``?replay=snapshot`` mid-run, and the AI SDK
``GET /v1/ai-sdk/{route}/{chatId}/stream`` replay; each stream checked by the ``conformance``
AG-UI rules and, where the harness exists, by the real clients (``replay()``)."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream
from real_clients import replay, require_harness

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import (
    Frame,
    agui_errors,
    call,
    chat_events,
    events_of,
    eventually,
    frame_bytes,
    frames,
    run_input,
    running,
)

from gateway.routes._cursor import bind_cursor, cursor_tag, unbind_cursor
from gateway.store import parse_cursor
from gateway.tenancy import run_key

R1 = run_key(None, "t1", "r1")
"""The store key of run r1 of thread t1; its wire ids are <epoch>.<seq>.<tag>."""

pytestmark = pytest.mark.timeout(120)

TOOL_TURN = chat_events(
    reasoning=["Think", "ing"],
    text=["Let me ", "check."],
    tool=("c1", "weather", ['{"ci', 'ty": ', '"Paris"}']),
)
CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-1",
    "trigger": "submit-message",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}


class SlowStream(httpx.AsyncByteStream):
    """An upstream body yielding one part per ``delay`` seconds (a model that streams)."""

    def __init__(self, parts: list[bytes], delay: float) -> None:
        self.parts = parts
        self.delay = delay

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            await asyncio.sleep(self.delay)
            yield part


@pytest.fixture
def app_factory(make_app: Any, tmp_path: Path, keys: None) -> Any:
    def make(**settings: Any) -> Any:
        return make_app(database_url=f"sqlite:///{tmp_path}/runs.db", **FAST, **settings)

    return make


def mock_upstream(router: respx.MockRouter, stream: httpx.AsyncByteStream) -> None:
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, stream=stream))


async def start_run(app: Any, thread_id: str = "t1", run_id: str = "r1") -> None:
    body = {"route": "gpt", "input": run_input(thread_id, run_id)}
    assert (await call(app, "POST", "/api/v1/agent/runs", body)).status == 201


def data_frames(body: bytes) -> list[Frame]:
    return [f for f in frames(body) if isinstance(f.data, dict)]


def tool_args_delivered(events: list[dict[str, Any]]) -> dict[str, str]:
    """Each tool call's arguments as a client accumulates them (snapshot + ARGS)."""
    args: dict[str, str] = {}
    for event in events:
        if event["type"] == "MESSAGES_SNAPSHOT":
            for message in event["messages"]:
                for tool in message.get("toolCalls", ()):
                    args[tool["id"]] = args.get(tool["id"], "") + tool["function"]["arguments"]
        elif event["type"] == "TOOL_CALL_ARGS":
            args[event["toolCallId"]] = args.get(event["toolCallId"], "") + event["delta"]
    return args


# -- Last-Event-ID -------------------------------------------------------------------------


async def test_resume_after_every_event_of_an_ended_run_sends_exactly_the_rest(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, GatedStream(TOOL_TURN))
    app = app_factory()
    async with running(app):
        await start_run(app)
        full = data_frames((await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")).body)
        assert full[-1].event == "RUN_FINISHED"
        for index, frame in enumerate(full):
            via_header = await call(
                app,
                "GET",
                "/api/v1/agent/runs/t1/events?runId=r1",
                headers={"last-event-id": frame.id or ""},
            )
            # at the end of an ended run: 204, so an EventSource stops reconnecting (issue 14)
            at_end = index == len(full) - 1
            assert via_header.status == (204 if at_end else 200) and via_header.complete
            assert data_frames(via_header.body) == full[index + 1 :], f"after {frame.id}"
            via_query = await call(
                app, "GET", f"/api/v1/agent/runs/t1/events?runId=r1&lastEventId={frame.id}"
            )
            assert data_frames(via_query.body) == full[index + 1 :]
        # the header wins over a stale query (EventSource reconnects to the same URL)
        both = await call(
            app,
            "GET",
            f"/api/v1/agent/runs/t1/events?runId=r1&lastEventId={full[0].id}",
            headers={"last-event-id": full[3].id or ""},
        )
        assert data_frames(both.body) == full[4:]


async def test_resume_with_random_drops_while_the_run_is_live_loses_and_repeats_nothing(
    app_factory: Any, router: respx.MockRouter
) -> None:
    parts = chat_events(text=[f"w{i} " for i in range(60)], tool=("c1", "f", ['{"a"', ": 1}"]))
    mock_upstream(router, SlowStream(parts, delay=0.005))
    rng = random.Random(7)
    app = app_factory()
    async with running(app):
        await start_run(app)
        received: list[Frame] = []
        rounds = 0
        while not received or received[-1].event not in ("RUN_FINISHED", "RUN_ERROR"):
            rounds += 1
            budget = rng.randint(1, 8)
            headers = {"last-event-id": received[-1].id or ""} if received else {}

            def enough(reply: Any, budget: int = budget) -> bool:
                return len(data_frames(reply.body)) >= budget

            reply = await call(
                app, "GET", "/api/v1/agent/runs/t1/events?runId=r1", headers=headers, stop=enough
            )
            received += data_frames(reply.body)
        stored = await app.state.services.manager.store.read_events(run_key(None, "t1", "r1"))
    assert rounds > 3
    assert [f.id for f in received] == [bind_cursor(s.cursor, cursor_tag(R1)) for s in stored]
    assert [f.data for f in received] == [s.event for s in stored]
    assert agui_errors(frame_bytes(received)) == []


# -- ?replay=snapshot -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cut", "last_stored", "reopened"),
    [
        (2, "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_START"),  # after "Think"
        (4, "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_START"),  # after "Let me "
        (7, "TOOL_CALL_ARGS", "TOOL_CALL_START"),  # after the fragment '{"ci'
    ],
    ids=["mid-reasoning", "mid-text", "mid-tool-args"],
)
async def test_snapshot_replay_mid_run_is_valid_and_sends_everything_once(
    app_factory: Any, router: respx.MockRouter, cut: int, last_stored: str, reopened: str
) -> None:
    gate = asyncio.Event()
    mock_upstream(router, GatedStream([*TOOL_TURN[:cut], gate, *TOOL_TURN[cut:]]))
    app = app_factory()
    async with running(app):
        await start_run(app)
        store = app.state.services.manager.store

        async def cut_is_durable() -> bool:
            return any(
                e.type == last_stored for e in await store.read_events(run_key(None, "t1", "r1"))
            )

        await eventually(cut_is_durable, what=f"{last_stored} durable")

        def on_chunk(chunk: bytes) -> None:
            gate.set()  # the prelude is built: let the run go on

        reply = await call(
            app, "GET", "/api/v1/agent/runs/t1/events?runId=r1&replay=snapshot", on_chunk=on_chunk
        )
        full = data_frames((await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")).body)
    sent = data_frames(reply.body)
    kinds = [f.event for f in sent]
    assert kinds[:2] == ["RUN_STARTED", "MESSAGES_SNAPSHOT"]
    prelude_end = next(i for i, f in enumerate(sent) if f.id is not None)
    assert reopened in kinds[: prelude_end + 1]  # the open item is re-opened with its content
    mark = parse_cursor(unbind_cursor(sent[prelude_end].id or "", R1))  # what the client holds
    assert sent[prelude_end + 1 :] == [
        f for f in full if parse_cursor(unbind_cursor(f.id or "", R1)) > mark
    ]
    assert kinds[-1] == "RUN_FINISHED"
    assert tool_args_delivered([f.data for f in sent]) == {"c1": '{"city": "Paris"}'}
    assert agui_errors(reply.body) == []

    require_harness()
    results = replay([("snapshot", "agui", reply.body), ("full", "agui", frame_bytes(full))])
    assert results["snapshot"]["accepted"], results["snapshot"]["error"]
    # the snapshot also restores the conversation before the run (the client's list is
    # replaced by it); the run's own messages are those of a full replay
    prior = {"id": "u-r1", "role": "user", "content": "hi"}
    assert results["snapshot"]["messages"] == [prior, *results["full"]["messages"]]
    assistant = results["snapshot"]["messages"][-1]
    assert assistant["toolCalls"][0]["function"]["arguments"] == '{"city": "Paris"}'


async def test_snapshot_replay_of_an_ended_run_is_the_prelude_alone(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, GatedStream(TOOL_TURN))
    app = app_factory()
    async with running(app):
        await start_run(app)
        await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")  # until it ended
        reply = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1&replay=snapshot")
    sent = data_frames(reply.body)
    assert [f.event for f in sent] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert [f.id is None for f in sent] == [True, True, False]
    assert tool_args_delivered([f.data for f in sent]) == {"c1": '{"city": "Paris"}'}
    assert agui_errors(reply.body) == []


# -- AI SDK resume ---------------------------------------------------------------------------


async def test_ai_sdk_resume_replays_the_active_run_from_its_start_then_204(
    app_factory: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo", " there"])
    mock_upstream(router, GatedStream([*parts[:3], gate, *parts[3:]]))
    app = app_factory()
    async with running(app):
        assert (await call(app, "GET", "/v1/ai-sdk/gpt/chat-1/stream")).status == 204
        assert (await call(app, "GET", "/v1/ai-sdk/nope/chat-1/stream")).status == 404
        first = await call(app, "POST", "/v1/ai-sdk/gpt", CHAT_REQUEST, stop=lambda r: True)
        start = events_of(first.body)[0]
        assert start["type"] == "start"

        def on_chunk(chunk: bytes) -> None:
            gate.set()

        resumed = await call(app, "GET", "/v1/ai-sdk/gpt/chat-1/stream", on_chunk=on_chunk)
        assert resumed.status == 200
        assert resumed.headers is not None
        assert resumed.headers["x-vercel-ai-ui-message-stream"] == "v1"
        chunks = events_of(resumed.body)
        assert chunks[0] == start  # same messageId: the client replaces, not duplicates
        assert resumed.body.endswith(b"data: [DONE]\n\n")
        text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
        assert text == "Hello there"
        assert chunks[-1]["type"] == "finish"
        assert (await call(app, "GET", "/v1/ai-sdk/gpt/chat-1/stream")).status == 204  # done

    require_harness()
    results = replay([("resume", "ai-v7", resumed.body), ("resume-v5", "ai-v5", resumed.body)])
    for name, result in results.items():
        assert result["accepted"], (name, result["error"])
        assistant = result["messages"][-1]
        assert assistant["id"] == start["messageId"]
        assert [p["text"] for p in assistant["parts"] if p["type"] == "text"] == ["Hello there"]


async def test_ai_sdk_post_records_under_the_chat_id_with_its_message_id(
    app_factory: Any, router: respx.MockRouter
) -> None:
    mock_upstream(router, GatedStream(chat_events(text=["ok"])))
    app = app_factory()
    async with running(app):
        reply = await call(app, "POST", "/v1/ai-sdk/gpt", CHAT_REQUEST)
        start = events_of(reply.body)[0]
        runs = await app.state.services.manager.store.list_runs("chat-1")
    assert len(runs) == 1 and runs[0].status == "completed"
    assert runs[0].message_id == start["messageId"]
    assert orjson.loads(orjson.dumps(events_of(reply.body)[-1]))["type"] == "finish"
