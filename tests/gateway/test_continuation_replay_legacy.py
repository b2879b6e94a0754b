"""A continuation stored before migration 0005 (``runs.continues`` NULL) replays with the
results of the calls it continues (issue 11 kind 4; ``gateway/runs/continued.py``).

The POST streamed the continuation with ``AiSdkEncoder(continues=<the tool parts of the
continued message>)``; those parts came from the thread's earlier streams under that message's
id. Hypothesis draws a thread: the run that streamed message M (its id recorded, or chosen by
an AI SDK backend and kept in RUN_STARTED ``metadata.messageId``) starting calls, maybe a
further continuation of M starting more, runs of other messages starting other calls, then
the run replayed, stored with NULL ``continues``: a continuation of M, or a fresh message
(``response_message_id`` None: a new id), carrying results of M's calls, of other messages'
calls, of a call nobody started, and of its own calls. From every chunk index N the replay
through the resume endpoints' encoder is the POST's stream from N on (``WorkflowChatTransport``,
npm ``@workflow/ai`` 5.0.0); only M's calls and the run's own get a ``tool-output-*`` (``ai``
7.0.173 ``getToolInvocation`` throws for a call the message lacks). Through the HTTP API and
the real ai 7 client: ``test_a_legacy_continuation_resumes_in_the_real_ai_7_client``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import respx
import sqlalchemy as sa
from approval_turns import approval_turn
from gwtest import GatedStream, sse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.core import StoreGuard
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from gateway.app import create_app
from gateway.chunk_offsets import encode_event_frames, frames_from
from gateway.config import RouteConfig, Settings
from gateway.routes.stream import resume_encoder, run_metadata
from gateway.runs.continued import continued_calls
from gateway.store import NewEvent, RunFinal, RunRecord, open_store
from gateway.store.schema import runs as runs_table
from gateway.types import RunEvent

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))  # run_backends

from durable_support import call, events_of, running
from run_backends import ManualClock

pytestmark = pytest.mark.timeout(180)

THREAD = "t1"
M = "assistant-m"
ROUTE = RouteConfig(name="sdk", protocol="ai-sdk", upstream_url="http://agent.test/api/chat")


@dataclass
class Stored:
    """A run of the thread: its record's message id, its events (before the store guard)."""

    run_id: str
    message_id: str | None
    events: list[dict[str, Any]]
    started: list[str] = field(default_factory=list)


def _call(cid: str) -> list[dict[str, Any]]:
    return [
        {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": "act"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": json.dumps({"c": cid})},
        {"type": "TOOL_CALL_END", "toolCallId": cid},
    ]


def _result(cid: str, n: int) -> dict[str, Any]:
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": f"res-{n}",
        "toolCallId": cid,
        "role": "tool",
        "content": json.dumps({"done": cid}),
    }


def _run(run_id: str, streamed_as: str, recorded: bool, calls: list[str]) -> Stored:
    started: dict[str, Any] = {"type": "RUN_STARTED", "threadId": THREAD, "runId": run_id}
    if not recorded:  # an AI SDK backend chose the id (kept in RUN_STARTED metadata)
        started["metadata"] = {"messageId": streamed_as}
    body = [e for cid in calls for e in _call(cid)]
    finished = {"type": "RUN_FINISHED", "threadId": THREAD, "runId": run_id}
    events = [started, *body, finished]
    return Stored(run_id, streamed_as if recorded else None, events, list(calls))


@dataclass
class Thread:
    runs: list[Stored]  # oldest first; the last is replayed
    parts: list[str]  # the tool parts of the message the last run continues (POST continues)
    upstream_ids: bool  # the route's upstream is an AI SDK backend (it may pick message ids)


@st.composite
def threads(draw: st.DrawFn) -> Thread:
    runs: list[Stored] = []
    others: list[str] = []
    for j in range(draw(st.integers(0, 2))):  # runs of other messages, before M's
        calls = [f"x{j}-{k}" for k in range(draw(st.integers(0, 2)))]
        runs.append(_run(f"o{j}", f"other-{j}", draw(st.booleans()), calls))
        others += calls
    upstream_ids = draw(st.booleans())
    parts = [f"e{k}" for k in range(draw(st.integers(0, 3)))]
    recorded = draw(st.booleans()) if upstream_ids else True  # else the gateway picks the id
    runs.append(_run("m0", M, recorded, parts))  # the stream that made M
    if draw(st.booleans()):  # a further continuation of M (recorded id M), its own calls
        more = [f"f{k}" for k in range(draw(st.integers(1, 2)))]
        runs.append(_run("m1", M, True, more))
        parts += more
    if draw(st.booleans()):  # another message after M's
        calls = [f"y{k}" for k in range(draw(st.integers(0, 2)))]
        runs.append(_run("o9", "other-9", draw(st.booleans()), calls))
        others += calls
    fresh = draw(st.booleans())
    own = [f"own{k}" for k in range(draw(st.integers(0, 2)))]
    body: list[dict[str, Any]] = []
    for n, cid in enumerate(own):
        body += [*_call(cid), _result(cid, n)]
    foreign = draw(st.lists(st.sampled_from([*parts, *others, "stray"]), unique=True))
    for n, cid in enumerate(foreign, start=len(own)):
        body.insert(draw(st.integers(0, len(body))), _result(cid, n))
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": THREAD, "runId": "r"}]
    events += body
    if draw(st.booleans()):
        events.append({"type": "RUN_FINISHED", "threadId": THREAD, "runId": "r"})
    runs.append(Stored("r", "msg-fresh" if fresh else M, events, own))
    return Thread(runs, [] if fresh else parts, upstream_ids)


def _chunks(data: bytes) -> list[Any]:
    """The JSON ``data`` of every SSE event (``[DONE]`` left out; WHATWG HTML SSE)."""
    out = []
    for block in data.decode().split("\n\n"):
        lines = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if lines and lines != ["[DONE]"]:
            out.append(json.loads("\n".join(lines)))
    return out


async def _iter(events: Sequence[RunEvent]) -> AsyncIterator[RunEvent]:
    for event in events:
        yield event


async def _check(thread: Thread, folder: Path) -> None:
    clock = ManualClock()
    store = await open_store(f"sqlite+aiosqlite:///{folder}/runs.db", clock=clock)
    try:
        for case in thread.runs:  # as written before 0005: no continues
            clock.advance(1)
            guard = StoreGuard(thread_id=THREAD, run_id=case.run_id)
            stored = [w for e in case.events for w in guard.push(e)]
            created = await store.create_run(
                run_id=case.run_id, thread_id=THREAD, owner="r1", message_id=case.message_id
            )
            batch = [NewEvent(seq, wire) for seq, wire in enumerate(stored, 1)]
            final = RunFinal("completed") if stored[-1]["type"] == "RUN_FINISHED" else None
            await store.append_events(case.run_id, created.epoch, batch, final=final)
        record = await store.get_run("r")
        assert record.continues == ()
        events = await store.read_wire("r")
        live = AiSdkEncoder(  # what the POST streamed (gateway.routes.stream.ai_sdk_chat)
            message_id=record.message_id,
            message_metadata=run_metadata(record),
            continues=thread.parts,
        )
        whole = b"".join(live.encode_wire(e.event, id=str(e.cursor)) for e in events)
        posted = _chunks(whole + live.close())
        outputs = sorted(c["toolCallId"] for c in posted if c["type"].startswith("tool-output-"))
        results = {
            e["toolCallId"] for e in thread.runs[-1].events if e["type"] == "TOOL_CALL_RESULT"
        }
        own = thread.runs[-1].started
        assert outputs == sorted(results & {*thread.parts, *own})  # M's calls and its own, once
        continues = await continued_calls(store, record, upstream_ids=thread.upstream_ids)
        for n in range(len(posted) + 1):
            encoder = resume_encoder(ROUTE, record, continues=continues)
            frames = encode_event_frames(_iter(events), encoder)
            replayed = b"".join([part async for part in frames_from(frames, n)])
            assert _chunks(replayed) == posted[n:], n
    finally:
        await store.close()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(thread=threads())
def test_a_continuation_stored_without_continues_replays_as_the_post_streamed_it(
    thread: Thread,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        anyio.run(_check, thread, Path(folder))


# -- through the HTTP API and the real ai 7 client -------------------------------------------

BACKEND = "https://agent.test/api/chat"
ROUTES = f"""
[[routes]]
name = "sdk7"
upstream_url = "{BACKEND}"
protocol = "ai-sdk"
ai_sdk_major = 7
"""
USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Delete both."}]}
CALLS = [(cid, "delete_file", {"path": f"/tmp/{cid}"}) for cid in ("c0", "c1")]
PREVIOUS = {  # the message the first turn left, both approvals answered (ai 7 ui-messages.ts)
    "id": "assistant-9",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        *(
            {
                "type": "tool-delete_file",
                "toolCallId": cid,
                "state": "approval-responded",
                "input": value,
                "approval": {"id": f"ap-{cid}", "approved": cid == "c1"},
            }
            for cid, _name, value in CALLS
        ),
    ],
}
ANSWERS = [  # the backend's continuation (streamText answers the earlier calls after start)
    {"type": "start", "messageId": "assistant-9"},
    {"type": "tool-output-denied", "toolCallId": "c0"},
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}},
    {"type": "start-step"},
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "Deleted one."},
    {"type": "text-end", "id": "t1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]


def _backend(router: respx.MockRouter, chunks: list[dict[str, Any]]) -> None:
    parts: list[bytes | Any] = [sse(*chunks, "[DONE]")]
    router.post(BACKEND).mock(
        side_effect=lambda request: httpx.Response(200, stream=GatedStream(parts))
    )


async def test_a_legacy_continuation_resumes_in_the_real_ai_7_client(
    tmp_path: Path, router: respx.MockRouter
) -> None:
    """The ai 7 approval flow through ``/v1/workflow/sdk7/t9``: the first turn asks, the
    continuation answers both calls; its row is then made as before migration 0005 (NULL
    ``continues``). Its replay (``GET .../stream?startIndex=0``) carries both earlier calls'
    outputs, and the real ai 7 client continuing the message ends with both calls answered."""
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings_ = Settings(config=path, database_url=f"sqlite:///{tmp_path}/runs.db")
    app = create_app(settings_, http_client=client)
    chat = {"id": "t9", "trigger": "submit-message"}
    async with running(app):
        _backend(router, approval_turn("assistant-9", CALLS))
        asked = await call(app, "POST", "/v1/workflow/sdk7/t9", {**chat, "messages": [USER]})
        assert asked.status == 200
        _backend(router, ANSWERS)
        body = {**chat, "messages": [USER, PREVIOUS]}
        answered = await call(app, "POST", "/v1/workflow/sdk7/t9", body)
        assert answered.status == 200
        run_id = answered.headers["x-workflow-run-id"]
        store = app.state.services.manager.store
        async with store.engine.begin() as conn:  # as written before migration 0005
            await conn.execute(sa.update(runs_table).values(continues=None))
        record: RunRecord = (await store.list_runs("t9"))[0]
        assert record.public_run_id == run_id and record.continues == ()
        replayed = await call(app, "GET", f"/v1/workflow/sdk7/t9/{run_id}/stream?startIndex=0")
    await client.aclose()
    assert replayed.status == 200
    outputs = [c for c in events_of(replayed.body) if c["type"].startswith("tool-output-")]
    assert outputs == ANSWERS[1:3]  # as the POST sent them
    assert events_of(replayed.body) == events_of(answered.body)
    require_harness()
    options = {"initial_messages": [USER, PREVIOUS]}
    result = replay([("v7", "ai-v7", replayed.body, options)])["v7"]
    assert result["accepted"], result["error"]
    (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
    states = {p["toolCallId"]: p["state"] for p in message["parts"] if "toolCallId" in p}
    assert states == {"c0": "output-denied", "c1": "output-available"}
