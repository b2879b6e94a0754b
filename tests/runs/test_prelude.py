"""The ``?replay=snapshot`` prelude: valid for AG-UI verify at every cut point, tool arguments
delivered exactly once, and the real ``@ag-ui/client`` ends with the same messages."""

from __future__ import annotations

import asyncio

import pytest
from real_clients import replay, require_harness

from gateway.runs import RunManager, build_snapshot_prelude
from gateway.store import Cursor, RunEvent

from .agui_rules import verify
from .helpers import (
    FAST,
    RUNS,
    Gate,
    Stack,
    collect,
    numbered,
    resumed_stream,
    rich_run,
    sse,
    tool_args_delivered,
    wait_until,
)

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_prelude_at_every_cut_passes_verify_and_sends_args_once(name: str) -> None:
    events = RUNS[name]
    expected_args = tool_args_delivered(events)
    for cut in range(len(events) + 1):
        stream = resumed_stream(events, cut)
        verify(stream)
        assert tool_args_delivered(stream) == expected_args, f"cut {cut}"


def test_prelude_shape_mid_tool_call() -> None:
    events = rich_run()
    prelude = build_snapshot_prelude(numbered(events)[:18])  # c1 ended, c2 open
    assert prelude.events == [
        events[0],
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "r1", "role": "reasoning", "content": "Thinking"},
                {
                    "id": "m1",
                    "role": "assistant",
                    "content": "Let me check.",
                    "toolCalls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
            ],
        },
        {"type": "STEP_STARTED", "stepName": "plan"},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c2",
            "toolCallName": "clock",
            "parentMessageId": "m1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": '{"tz":'},
    ]
    assert not prelude.ended


def test_prelude_edges() -> None:
    assert build_snapshot_prelude([]).events == [] and build_snapshot_prelude([]).cursor is None
    error = {"type": "RUN_ERROR", "message": "x", "code": "RUN_INTERRUPTED"}
    only_error = build_snapshot_prelude([RunEvent(Cursor(2, 1), error)])
    assert (only_error.events, only_error.cursor, only_error.ended) == ([error], Cursor(2, 1), True)
    done = build_snapshot_prelude(numbered(rich_run()))
    assert done.ended and done.events[-1] == rich_run()[-1] and len(done.events) == 3


def test_prior_messages_lead_the_snapshot_and_own_ids_win() -> None:
    prior = [
        {"id": "u1", "role": "user", "content": "weather?"},
        {"id": "m1", "role": "assistant", "content": "stale copy"},
    ]
    stream = resumed_stream(rich_run(), 12, prior)
    snapshot = stream[1]["messages"]
    assert [m["id"] for m in snapshot] == ["u1", "r1", "m1"]
    assert snapshot[2]["content"] == "Let me check."


@pytest.mark.parametrize("name", sorted(RUNS))
def test_real_client_builds_the_same_messages_after_a_snapshot_rejoin(name: str) -> None:
    require_harness()
    events = RUNS[name]
    prior = [{"id": "u1", "role": "user", "content": "hi"}]
    full = [events[0], {"type": "MESSAGES_SNAPSHOT", "messages": prior}, *events[1:]]
    jobs = [("full", "agui", sse(full))]
    cuts = range(1, len(events) + 1, max(1, len(events) // 25))
    jobs += [(f"cut-{cut}", "agui", sse(resumed_stream(events, cut, prior))) for cut in cuts]
    results = replay(jobs)
    assert results["full"]["accepted"], results["full"]["error"]
    for job_id, _client, _body in jobs[1:]:
        result = results[job_id]
        assert result["accepted"], (job_id, result["error"])
        assert result["messages"] == results["full"]["messages"], job_id


def test_real_client_accepts_a_rejoin_inside_a_chunked_message() -> None:
    require_harness()
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "assistant", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": " there"},
        {
            "type": "TOOL_CALL_CHUNK",
            "toolCallId": "c",
            "toolCallName": "f",
            "parentMessageId": "m",
            "delta": '{"a"',
        },
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "delta": ": 1}"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    jobs = [("full", "agui", sse(events))]
    jobs += [
        (f"cut-{cut}", "agui", sse(resumed_stream(events, cut)))
        for cut in range(1, len(events) + 1)
    ]
    results = replay(jobs)
    for job_id, _client, _body in jobs:
        assert results[job_id]["accepted"], (job_id, results[job_id]["error"])
        assert results[job_id]["messages"] == results["full"]["messages"], job_id


async def test_snapshot_rejoin_of_a_live_run(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=FAST)
    events = rich_run()
    gate = Gate(events)
    run = await manager.create_run(
        thread_id="thread-1",
        run_id="run-1",
        input_messages=[{"id": "u1", "role": "user", "content": "weather in Paris?"}],
    )
    task = manager.start(run, gate.stream())
    await gate.release(16)
    await wait_until(lambda: gate.sent == 16)

    async def released_events_stored() -> bool:  # the prelude is built from the store
        return len(await stack.store.read_wire(run.id, limit=100)) >= 16

    await wait_until(released_events_stored)
    prelude = await manager.snapshot_prelude(run.id)
    assert prelude.events[1]["messages"][0] == {
        "id": "u1",
        "role": "user",
        "content": "weather in Paris?",
    }
    tail = asyncio.create_task(collect(await manager.reader(run.id, after=prelude.cursor)))
    await gate.release(100)
    stream = prelude.events + [e.event for e in await tail]
    await task
    verify(stream)
    assert tool_args_delivered(stream) == tool_args_delivered(events)
