"""Durable runs over HTTP, driven through the ASGI app with its lifespan (SQLite file +
in-process broker): ``POST /api/v1/agent/runs``, cancel, the runId-scoped events stream and
history, with their 400 / 404 / 409 / 503 answers (issue 3 §1, §2, §6)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST, OPENAI_URL, GatedStream
from starlette.applications import Starlette

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

from gateway.routes._cursor import bind_cursor, cursor_tag
from gateway.runs import CANCELED_MESSAGE
from gateway.tenancy import run_key

TAG = cursor_tag(run_key(None, "t1", "r1"))
"""The cursor tag of run r1 of thread t1 (ids on the wire are <epoch>.<seq>.<tag>)."""

pytestmark = pytest.mark.timeout(120)


class Upstream:
    """The mocked OpenAI upstream: each request gets the stream registered for its last user
    message's content (so concurrent runs get their own, whatever order they connect in)."""

    def __init__(self, router: respx.MockRouter) -> None:
        self.streams: dict[str, GatedStream] = {}
        router.post(OPENAI_URL).mock(side_effect=self._respond)

    def add(self, key: str, parts: list[bytes | asyncio.Event]) -> GatedStream:
        self.streams[key] = GatedStream(parts)
        return self.streams[key]

    def _respond(self, request: httpx.Request) -> httpx.Response:
        content = orjson.loads(request.content)["messages"][-1]["content"]
        return httpx.Response(200, stream=self.streams[content])


@pytest.fixture
def upstream(router: respx.MockRouter) -> Upstream:
    return Upstream(router)


@pytest.fixture
def durable_app(make_app: Any, tmp_path: Path, keys: None) -> Callable[..., Starlette]:
    """An app over a fresh SQLite run store (settings overridable)."""

    def make(**settings: Any) -> Starlette:
        merged = {"database_url": f"sqlite:///{tmp_path}/runs.db", **FAST, **settings}
        app: Starlette = make_app(**merged)
        return app

    return make


def manager(app: Starlette) -> Any:
    return app.state.services.manager


def key(run_id: str, thread_id: str = "t1") -> str:
    """The store key of an anonymous caller's run (gateway.tenancy)."""
    return run_key(None, thread_id, run_id)


async def wait_terminal(app: Starlette, run_id: str) -> Any:
    async def ended() -> bool:
        return bool((await manager(app).get_run(key(run_id))).is_terminal)

    await eventually(ended, what=f"run {run_id} terminal")
    return await manager(app).get_run(key(run_id))


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


# -- POST /api/v1/agent/runs -----------------------------------------------------------------


async def test_create_answers_201_at_once_and_the_run_proceeds_without_a_client(
    durable_app: Any, upstream: Upstream
) -> None:
    gate = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    stream = upstream.add("hi", [parts[0], gate, *parts[1:]])
    app = durable_app()
    async with running(app):
        reply = await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        assert reply.status == 201
        assert reply.json() == {"threadId": "t1", "runId": "r1"}
        assert reply.headers is not None
        assert reply.headers["location"] == "/api/v1/agent/runs/t1/events?runId=r1"
        assert not (await manager(app).get_run(key("r1"))).is_terminal  # answered before the end
        gate.set()
        record = await wait_terminal(app, "r1")
        assert record.status == "completed"
        assert stream.closed.is_set()

        events = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
    assert events.status == 200
    assert types(events_of(events.body)) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"route": "nope", "input": run_input("t", "r")}, 404, "ROUTE_NOT_FOUND"),
        ({"route": "gpt"}, 422, "INVALID_REQUEST"),
        ({"route": "gpt", "input": {"threadId": "t"}}, 422, "INVALID_REQUEST"),
        ({"route": "gpt", "input": run_input("t", "r"), "extra": 1}, 422, "INVALID_REQUEST"),
    ],
)
async def test_create_refusals(
    durable_app: Any, upstream: Upstream, body: dict[str, Any], status: int, code: str
) -> None:
    app = durable_app()
    async with running(app):
        reply = await call(app, "POST", "/api/v1/agent/runs", body)
    assert (reply.status, reply.json()["error"]["code"]) == (status, code)


async def test_create_with_a_taken_run_id_is_409_and_starts_nothing(
    durable_app: Any, upstream: Upstream
) -> None:
    upstream.add("hi", chat_events(text=["a"]))
    app = durable_app()
    async with running(app):
        body = {"route": "gpt", "input": run_input("t1", "r1")}
        assert (await call(app, "POST", "/api/v1/agent/runs", body)).status == 201
        await wait_terminal(app, "r1")
        again = await call(app, "POST", "/api/v1/agent/runs", body)
        assert again.status == 409
        assert again.json()["error"]["code"] == "RUN_EXISTS"
        assert [r.public_run_id for r in await manager(app).store.list_runs("t1")] == ["r1"]


async def test_run_endpoints_answer_503_without_the_lifespan(durable_app: Any) -> None:
    app = durable_app()  # never started: no store is open
    for method, target, body in [
        ("POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t", "r")}),
        ("POST", "/api/v1/agent/runs/t/cancel?runId=r", None),
        ("GET", "/api/v1/agent/runs/t/events?runId=r", None),
        ("GET", "/api/v1/agent/history?threadId=t", None),
        ("GET", "/v1/ai-sdk/gpt/chat-1/stream", None),
    ]:
        reply = await call(app, method, target, body)
        assert reply.status == 503, target
        assert reply.json()["error"]["code"] == "RUNS_UNAVAILABLE"


# -- cancel ----------------------------------------------------------------------------------


async def test_cancel_ends_the_run_with_run_canceled_and_is_idempotent(
    durable_app: Any, upstream: Upstream
) -> None:
    never = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    stream = upstream.add("hi", [parts[0], parts[1], never])
    app = durable_app()
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        await eventually(lambda: _has_events(app, "r1", 3), what="first events stored")
        first = await call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=r1")
        assert first.status == 200
        assert first.json() == {
            "threadId": "t1",
            "runId": "r1",
            "status": "running",
            "cancelRequested": True,
        }
        record = await wait_terminal(app, "r1")
        assert record.status == "cancelled"
        assert stream.closed.is_set()  # the upstream request was cancelled
        again = await call(app, "POST", "/api/v1/agent/runs/t1/cancel?runId=r1")
        assert again.status == 200
        assert again.json()["status"] == "cancelled"
        assert again.json()["cancelRequested"] is False
        events = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
    stored = events_of(events.body)
    assert types(stored)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]  # closed first
    assert stored[-1]["code"] == "RUN_CANCELED"
    assert stored[-1]["message"] == CANCELED_MESSAGE == "run canceled by user"
    assert agui_errors(events.body) == []


async def _has_events(app: Starlette, run_id: str, n: int) -> bool:
    return len(await manager(app).store.read_events(key(run_id))) >= n


@pytest.mark.parametrize(
    ("target", "status", "code"),
    [
        ("/api/v1/agent/runs/t1/cancel?runId=nope", 404, "RUN_NOT_FOUND"),
        ("/api/v1/agent/runs/other-thread/cancel?runId=r1", 404, "RUN_NOT_FOUND"),
        ("/api/v1/agent/runs/t1/cancel", 400, "INVALID_PARAMETER"),
    ],
)
async def test_cancel_refusals(
    durable_app: Any, upstream: Upstream, target: str, status: int, code: str
) -> None:
    upstream.add("hi", chat_events(text=["a"]))
    app = durable_app()
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        await wait_terminal(app, "r1")
        reply = await call(app, "POST", target)
        assert (reply.status, reply.json()["error"]["code"]) == (status, code)
        assert (await manager(app).get_run(key("r1"))).status == "completed"  # untouched


# -- events ----------------------------------------------------------------------------------


async def test_events_frames_carry_event_id_and_data_and_close_after_the_terminal(
    durable_app: Any, upstream: Upstream
) -> None:
    upstream.add(
        "hi",
        chat_events(
            reasoning=["Think", "ing"],
            text=["Let me ", "check."],
            tool=("c1", "weather", ['{"ci', 'ty": "Paris"}']),
        ),
    )
    app = durable_app()
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        await wait_terminal(app, "r1")
        reply = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1")
        stored = await manager(app).store.read_events(key("r1"))
    assert reply.status == 200 and reply.complete
    assert reply.headers is not None
    assert reply.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert reply.headers["cache-control"] == "no-cache"
    sent = frames(reply.body)
    assert all(f.event == f.data["type"] for f in sent)
    assert [f.id for f in sent] == [bind_cursor(s.cursor, TAG) for s in stored]
    assert [f.data for f in sent] == [s.event for s in stored]
    assert sent[-1].event == "RUN_FINISHED"
    assert agui_errors(reply.body) == []
    # the frame layout: event, id, data (LF framing)
    assert reply.body.startswith(f"event: RUN_STARTED\nid: 1.1.{TAG}\ndata: {{".encode())


@pytest.mark.parametrize(
    ("target", "headers", "status", "code"),
    [
        ("/api/v1/agent/runs/t1/events?runId=nope", {}, 404, "RUN_NOT_FOUND"),
        ("/api/v1/agent/runs/t2/events?runId=r1", {}, 404, "RUN_NOT_FOUND"),
        ("/api/v1/agent/runs/t1/events", {}, 400, "INVALID_PARAMETER"),
        ("/api/v1/agent/runs/t1/events?runId=r1&replay=tail", {}, 400, "INVALID_PARAMETER"),
        ("/api/v1/agent/runs/t1/events?runId=r1", {"last-event-id": "abc"}, 400, "INVALID_CURSOR"),
        ("/api/v1/agent/runs/t1/events?runId=r1&lastEventId=1.x", {}, 400, "INVALID_CURSOR"),
        (
            "/api/v1/agent/runs/t1/events?runId=r1",
            {"last-event-id": f"1.999.{TAG}"},
            400,
            "INVALID_CURSOR",
        ),
        (
            "/api/v1/agent/runs/t1/events?runId=r1",
            {"last-event-id": f"7.1.{TAG}"},
            400,
            "INVALID_CURSOR",
        ),
    ],
)
async def test_events_refusals(
    durable_app: Any,
    upstream: Upstream,
    target: str,
    headers: dict[str, str],
    status: int,
    code: str,
) -> None:
    upstream.add("hi", chat_events(text=["a"]))
    app = durable_app()
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )
        await wait_terminal(app, "r1")
        reply = await call(app, "GET", target, headers=headers)
    assert reply.status == status
    error = reply.json()["error"]
    assert error["code"] == code
    if code == "INVALID_CURSOR":
        assert "event id" in error["message"]  # says what is wrong with which id


async def test_events_of_two_interleaved_runs_of_one_thread_stay_apart(
    durable_app: Any, upstream: Upstream
) -> None:
    gate_a, gate_b, end_b = asyncio.Event(), asyncio.Event(), asyncio.Event()
    a = chat_events(text=["A1", "A2", "A3"])
    b = chat_events(text=["B1", "B2", "B3"])
    upstream.add("for a", [a[0], a[1], gate_a, a[2], a[3], *a[4:]])
    upstream.add("for b", [b[0], b[1], gate_b, b[2], end_b, *b[3:]])
    app = durable_app()
    async with running(app):
        for run_id in ("ra", "rb"):
            body = {"route": "gpt", "input": run_input("t1", run_id, f"for {run_id[1]}")}
            assert (await call(app, "POST", "/api/v1/agent/runs", body)).status == 201
        reader_a = asyncio.create_task(call(app, "GET", "/api/v1/agent/runs/t1/events?runId=ra"))
        reader_b = asyncio.create_task(call(app, "GET", "/api/v1/agent/runs/t1/events?runId=rb"))
        gate_b.set()  # b moves on, a waits
        await eventually(lambda: _has_events(app, "rb", 4), what="b's events")
        gate_a.set()  # a ends while b is still live
        got_a = await reader_a
        assert not reader_b.done()  # a's end did not close b's reader
        end_b.set()
        got_b = await reader_b
    for run_id, got, mark in (("ra", got_a, "A"), ("rb", got_b, "B")):
        events = events_of(got.body)
        assert events[0]["runId"] == run_id
        assert types(events)[-1] == "RUN_FINISHED"
        text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert text == f"{mark}1{mark}2{mark}3"
        assert agui_errors(got.body) == []


async def test_idle_events_stream_gets_keepalive_comments_without_ids(
    durable_app: Any, upstream: Upstream
) -> None:
    resume = asyncio.Event()
    parts = chat_events(text=["Hel", "lo"])
    upstream.add("hi", [parts[0], parts[1], resume, *parts[2:]])
    app = durable_app(keepalive_seconds=0.05)
    async with running(app):
        await call(
            app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": run_input("t1", "r1")}
        )

        def on_chunk(chunk: bytes) -> None:
            if chunk.startswith(b":"):
                resume.set()

        reply = await call(app, "GET", "/api/v1/agent/runs/t1/events?runId=r1", on_chunk=on_chunk)
    assert b": keep-alive\n\n" in reply.chunks  # type: ignore[operator]
    assert all(f.id is None for f in frames(reply.body) if f.comment)
    assert types(events_of(reply.body))[-1] == "RUN_FINISHED"
    assert agui_errors(reply.body) == []


# -- history ---------------------------------------------------------------------------------


async def test_history_pages_backwards_through_a_thread(
    durable_app: Any, upstream: Upstream
) -> None:
    app = durable_app()
    async with running(app):
        messages: list[dict[str, Any]] = []
        for turn in range(3):
            content = f"turn {turn}"
            upstream.add(content, chat_events(text=[f"answer {turn}"]))
            messages.append({"id": f"u{turn}", "role": "user", "content": content})
            body = run_input("t1", f"r{turn}")
            body["messages"] = list(messages)
            await call(app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": body})
            await wait_terminal(app, f"r{turn}")
            record = await manager(app).get_run(key(f"r{turn}"))
            messages.append(
                {
                    "id": record.message_id or f"r{turn}",
                    "role": "assistant",
                    "content": f"answer {turn}",
                }
            )

        whole = (await call(app, "GET", "/api/v1/agent/history?threadId=t1")).json()
        assert set(whole) == {
            "items",
            "total",
            "start_sequence",
            "end_sequence",
            "next_before_sequence",
            "has_more",
        }
        assert whole["total"] == 6 and not whole["has_more"]
        assert [i["role"] for i in whole["items"]] == ["user", "assistant"] * 3
        assert whole["items"][0]["content"] == "turn 0"
        assert [p["text"] for p in whole["items"][-1]["parts"] if p["type"] == "text"] == [
            "answer 2"
        ]

        page = (await call(app, "GET", "/api/v1/agent/history?threadId=t1&limit=4")).json()
        assert page["items"] == whole["items"][-4:]
        assert page["total"] == 6 and page["has_more"]
        before = page["next_before_sequence"]
        older = await call(
            app, "GET", f"/api/v1/agent/history?threadId=t1&limit=4&before_sequence={before}"
        )
        assert older.json()["items"] == whole["items"][:2]
        assert older.json()["has_more"] is False

        clamped = await call(app, "GET", "/api/v1/agent/history?threadId=t1&limit=100000")
        assert clamped.status == 200 and clamped.json()["total"] == 6
        empty = (await call(app, "GET", "/api/v1/agent/history?threadId=unknown")).json()
        assert empty["items"] == [] and empty["total"] == 0


@pytest.mark.parametrize(
    "query",
    [
        "",
        "threadId=",
        "threadId=t1&limit=0",
        "threadId=t1&limit=-3",
        "threadId=t1&limit=ten",
        "threadId=t1&limit=1.5",
        "threadId=t1&before_sequence=0",
        "threadId=t1&before_sequence=x",
        "threadId=t1&before_sequence=99999999999999999999",
    ],
)
async def test_history_bad_parameters_are_400(durable_app: Any, query: str) -> None:
    app = durable_app()
    async with running(app):
        reply = await call(app, "GET", f"/api/v1/agent/history?{query}")
    assert reply.status == 400, query
    assert reply.json()["error"]["code"] == "INVALID_PARAMETER"
