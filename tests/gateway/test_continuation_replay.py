"""A stored AI SDK continuation replays as it streamed (issue 11 kind 4, the durable path).

A continuation run (the ai v6/v7 tool-approval flow: the request's last message is an
assistant message whose tool calls the stream may answer, ``continued_tool_call_ids``) is
streamed by the POST with ``AiSdkEncoder(continues=...)``. Its resumes (``GET
/v1/ai-sdk/{route}/{chat}/stream``, ``GET /v1/workflow/.../stream?startIndex=N``) rebuild the
encoder from the stored run (``resume_encoder``): the run must carry those ids (``runs.continues``,
migration 0005), or a resumed client never gets the earlier calls' results.

Hypothesis draws continuation runs (results of earlier calls anywhere in the run, text messages,
new tool calls with their results, sometimes a result of a call neither started nor continued,
sometimes no RUN_FINISHED), stores them in a real store (sqlite) with the ids the POST had, and
checks from every chunk index N: the replay through ``resume_encoder`` of the stored record is the
POST's stream from chunk N on (the ``WorkflowChatTransport`` resume contract, npm
``@workflow/ai`` 5.0.0 ``dist/workflow-chat-transport.js``). Every started or continued call gets
exactly one ``tool-output-*`` chunk; the stray result gets none (``ai`` 7.0.173
``process-ui-message-stream.ts`` ``getToolInvocation`` throws for a call the message lacks).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs.core import StoreGuard
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from gateway.chunk_offsets import encode_event_frames, frames_from
from gateway.config import RouteConfig
from gateway.routes.stream import resume_encoder, run_metadata
from gateway.store import NewEvent, RunRecord, open_store
from gateway.types import RunEvent

MESSAGE_ID = "assistant-earlier"
THREAD = "t1"
WORD = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=5)


@dataclass
class Run:
    """One continuation run: its wire events (before the store guard) and what the POST knew."""

    run_id: str
    major: int | None
    earlier: list[str]  # continued_tool_call_ids of the request
    started: list[str]  # calls the run itself starts
    events: list[dict[str, Any]]


def _result(call_id: str, n: int, kind: str, value: str) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "type": "TOOL_CALL_RESULT",
        "messageId": f"result-{n}",
        "toolCallId": call_id,
        "role": "tool",
        "content": json.dumps({"v": value}) if kind == "available" else value,
    }
    if kind == "denied":
        wire["metadata"] = {"denied": True}
    elif kind == "error":
        wire["metadata"] = {"isError": True}
    return wire


@st.composite
def continuation_runs(draw: st.DrawFn, run_id: str) -> Run:
    major = draw(st.sampled_from([None, 6, 7]))
    earlier = [f"e{i}" for i in range(draw(st.integers(0, 3)))]
    body: list[dict[str, Any]] = []
    started: list[str] = []
    n = 0
    for k in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            mid = f"text-{k}"
            body.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
            for delta in draw(st.lists(WORD, min_size=1, max_size=3)):
                body.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta})
            body.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        else:
            cid = f"call-{k}"
            started.append(cid)
            body.append({"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": f"t{k}"})
            args = json.dumps({"q": draw(WORD)})
            cut = draw(st.integers(0, len(args)))
            for piece in (args[:cut], args[cut:]):
                if piece:
                    body.append({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": piece})
            body.append({"type": "TOOL_CALL_END", "toolCallId": cid})
            body.append(_result(cid, n, "available", draw(WORD)))
            n += 1
    # the earlier calls' results (and maybe a stray one) anywhere in the run
    answered = [*earlier, "stray"] if draw(st.booleans()) else list(earlier)
    for cid in answered:
        kind = draw(st.sampled_from(["available", "denied", "error"]))
        at = draw(st.integers(0, len(body)))
        body.insert(at, _result(cid, n, kind, draw(WORD)))
        n += 1
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": THREAD, "runId": run_id}]
    events += body
    if draw(st.booleans()):
        events.append({"type": "RUN_FINISHED", "threadId": THREAD, "runId": run_id})
    return Run(run_id, major, earlier, started, events)


@st.composite
def run_lists(draw: st.DrawFn) -> list[Run]:
    return [draw(continuation_runs(f"r{i}")) for i in range(draw(st.integers(3, 6)))]


def _chunks(data: bytes) -> list[Any]:
    """The JSON ``data`` of every SSE event (``[DONE]`` left out; WHATWG HTML SSE)."""
    out = []
    for block in data.decode().split("\n\n"):
        lines = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if lines and lines != ["[DONE]"]:
            out.append(json.loads("\n".join(lines)))
    return out


def _post_encoder(route: RouteConfig, run: RunRecord, earlier: Sequence[str]) -> AiSdkEncoder:
    """The encoder the POST streams a continuation with (``gateway.routes.stream.ai_sdk_chat``)."""
    return AiSdkEncoder(
        message_id=MESSAGE_ID,
        ai_sdk_major=route.ai_sdk_major,
        message_metadata=run_metadata(run),
        continues=earlier,
    )


async def _iter(events: Sequence[RunEvent]) -> AsyncIterator[RunEvent]:
    for event in events:
        yield event


async def _replay(route: RouteConfig, run: RunRecord, events: Sequence[RunEvent], n: int) -> bytes:
    frames = encode_event_frames(_iter(events), resume_encoder(route, run))
    return b"".join([part async for part in frames_from(frames, n)])


async def _check(runs: list[Run], folder: Path) -> None:
    store = await open_store(f"sqlite+aiosqlite:///{folder}/runs.db")
    try:
        for case in runs:
            route = RouteConfig(
                name="sdk",
                protocol="ai-sdk",
                upstream_url="http://agent.test/api/chat",
                ai_sdk_major=case.major,
            )
            guard = StoreGuard(thread_id=THREAD, run_id=case.run_id)
            stored = [w for e in case.events for w in guard.push(e)]
            created = await store.create_run(
                run_id=case.run_id,
                thread_id=THREAD,
                owner="replica-1",
                route=route.name,
                message_id=MESSAGE_ID,
                continues=case.earlier,
            )
            batch = [NewEvent(seq, wire) for seq, wire in enumerate(stored, 1)]
            await store.append_events(case.run_id, created.epoch, batch)
            record = await store.get_run(case.run_id)  # what a resume request reads
            events = await store.read_wire(case.run_id)
            live = _post_encoder(route, record, case.earlier)
            whole = b"".join(live.encode_wire(e.event, id=str(e.cursor)) for e in events)
            posted = _chunks(whole + live.close())
            outputs = [c["toolCallId"] for c in posted if c["type"].startswith("tool-output-")]
            assert sorted(outputs) == sorted([*case.earlier, *case.started])  # each once
            for n in range(len(posted) + 1):
                assert _chunks(await _replay(route, record, events, n)) == posted[n:], n
    finally:
        await store.close()


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(runs=run_lists())
def test_a_stored_continuation_replays_from_any_chunk_as_the_post_streamed_it(
    runs: list[Run],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        anyio.run(_check, runs, Path(folder))
