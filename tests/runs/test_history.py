"""History items built from stored events: ordered parts, AG-UI round trip, paging, dedup."""

from __future__ import annotations

import pytest
from real_clients import replay, require_harness

from gateway.runs import (
    RunFold,
    RunManager,
    agui_messages_from_parts,
    history_items_to_agui,
    input_items,
    run_item,
)

from .agui_rules import verify
from .helpers import FAST, RUNS, Stack, corpus_events, from_list, rich_run, sse, wires

pytestmark = pytest.mark.timeout(120)


def test_assistant_item_has_ordered_parts_with_tool_state_input_and_result() -> None:
    item = run_item(RunFold().apply_all(rich_run()), run_id="run-1", status="completed")
    assert item is not None
    assert item["parts"] == [
        {"type": "reasoning", "messageId": "r1", "text": "Thinking", "state": "done"},
        {"type": "text", "messageId": "m1", "text": "Let me check.", "state": "done"},
        {
            "type": "tool",
            "toolCallId": "c1",
            "toolName": "weather",
            "ownerMessageId": "m1",
            "state": "output-available",
            "parentMessageId": "m1",
            "input": {"city": "Paris"},
            "inputText": '{"city": "Paris"}',
            "output": {"temp": 21},
            "outputText": '{"temp": 21}',
            "resultMessageId": "res1",
        },
        {
            "type": "tool",
            "toolCallId": "c2",
            "toolName": "clock",
            "ownerMessageId": "m1",
            "state": "output-available",
            "parentMessageId": "m1",
            "input": {"tz": "CET"},
            "inputText": '{"tz": "CET"}',
            "output": "12:00",
            "outputText": "12:00",
            "resultMessageId": "res2",
        },
        {"type": "text", "messageId": "m2", "text": "It is 21°C at noon.", "state": "done"},
    ]
    assert (item["id"], item["role"], item["runId"], item["status"]) == (
        "run-1",
        "assistant",
        "run-1",
        "completed",
    )
    assert item["visibility"] == {"history": True, "context": True}
    assert item["aliases"] == ["r1", "m1", "res1", "res2", "m2"]


def test_text_is_split_around_a_tool_call_of_the_same_message() -> None:
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "before "},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "m"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "after"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    ]
    parts = RunFold().apply_all(events).parts
    assert [(p["type"], p.get("text")) for p in parts] == [
        ("text", "before "),
        ("tool", None),
        ("text", "after"),
    ]
    assert agui_messages_from_parts(parts) == [
        {
            "id": "m",
            "role": "assistant",
            "content": "before after",
            "toolCalls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
            ],
        }
    ]


def test_failed_run_item_is_shown_but_kept_out_of_context() -> None:
    fold = RunFold().apply_all(
        [
            *rich_run()[:10],
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            {"type": "STEP_FINISHED", "stepName": "plan"},
            {"type": "RUN_ERROR", "message": "boom", "code": "UPSTREAM_ERROR"},
        ]
    )
    item = run_item(fold, run_id="r", message_id="msg-7", status="failed")
    assert item is not None and item["id"] == "msg-7"
    assert item["visibility"] == {"history": True, "context": False}
    assert item["error"] == {"code": "UPSTREAM_ERROR", "message": "boom"}
    assert (
        run_item(
            RunFold().apply_all([{"type": "RUN_STARTED"}, {"type": "RUN_FINISHED"}]),
            run_id="r",
            status="completed",
        )
        is None
    )


def test_input_messages_become_history_items() -> None:
    items = input_items(
        [
            {"id": "s", "role": "system", "content": "be brief"},
            {
                "id": "u",
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image", "source": {"type": "url", "value": "x"}},
                ],
            },
            {
                "id": "a",
                "role": "assistant",
                "content": "calling",
                "toolCalls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"x":1}'},
                    }
                ],
            },
            {"id": "tm", "role": "tool", "toolCallId": "c", "content": "42"},
            {"id": "act", "role": "activity", "activityType": "x", "content": {}},
            {"role": "user", "content": "no id"},
        ],
        run_id="run-1",
    )
    assert [(i["id"], i["role"], i["visibility"]) for i in items] == [
        ("s", "system", {"history": False, "context": True}),
        ("u", "user", {"history": True, "context": True}),
        ("a", "assistant", {"history": True, "context": True}),
        ("tm", "tool", {"history": True, "context": True}),
    ]
    assert items[1]["parts"] == [
        {"type": "text", "text": "hi"},
        {"type": "image", "source": {"type": "url", "value": "x"}},
    ]
    assert history_items_to_agui(items) == [
        {"id": "s", "role": "system", "content": "be brief"},
        {
            "id": "u",
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "source": {"type": "url", "value": "x"}},
            ],
        },
        {
            "id": "a",
            "role": "assistant",
            "content": "calling",
            "toolCalls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}}
            ],
        },
        {"id": "tm", "role": "tool", "toolCallId": "c", "content": "42"},
    ]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_history_item_rebuilds_what_the_real_client_holds(name: str) -> None:
    """The AG-UI messages of a stored run's history item equal ``agent.messages`` after the
    real ``@ag-ui/client`` consumed the run."""
    require_harness()
    events = RUNS[name]
    result = replay([("full", "agui", sse(events))])["full"]
    assert result["accepted"], result["error"]
    item = run_item(RunFold().apply_all(events), run_id="r", status="completed")
    assert item is not None
    assert history_items_to_agui([item]) == result["messages"]


def test_closing_events_make_every_prefix_a_legal_run() -> None:
    events = rich_run()
    for cut in range(1, len(events)):
        fold = RunFold().apply_all(events[:cut])
        closed = events[:cut] + fold.closing_events() + [{"type": "RUN_ERROR", "message": "x"}]
        verify(closed)
        after = RunFold().apply_all(closed)
        assert not (
            after.open_text
            or after.open_tools
            or after.reasoning_messages
            or after.reasoning_spans
            or after.open_steps
        )


def test_chunk_opened_items_are_not_closed_twice() -> None:
    fold = RunFold().apply_all(
        [
            {"type": "RUN_STARTED"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
        ]
    )
    assert fold.closing_events() == []
    assert fold.open_text["m"].content == ["a", "b"]
    fold.apply({"type": "RUN_ERROR", "message": "x"})
    assert fold.open_text == {} and fold.parts[0]["state"] == "done"


async def test_thread_history_records_input_and_output_once(stack: Stack) -> None:
    manager = RunManager(stack.store, stack.broker, settings=FAST)
    system = {"id": "s", "role": "system", "content": "be brief"}
    user1 = {"id": "u1", "role": "user", "content": "weather?"}
    run = await manager.create_run(thread_id="t", run_id="run-1", input_messages=[system, user1])
    await manager.start(run, from_list(rich_run(thread_id="t", run_id="run-1")))
    # The client sends the whole conversation back, as it holds it, with a new question.
    echoed = history_items_to_agui((await manager.history("t")).items)
    user2 = {"id": "u2", "role": "user", "content": "and tomorrow?"}
    run2 = await manager.create_run(thread_id="t", run_id="run-2", input_messages=[*echoed, user2])
    await manager.start(
        run2,
        from_list(wires(corpus_events("gpt4omini-text-usage.sse", thread_id="t", run_id="run-2"))),
    )
    page = await manager.history("t")
    assert [(i["id"], i["role"], i["sequence"]) for i in page.items] == [
        ("s", "system", 1),
        ("u1", "user", 2),
        ("run-1", "assistant", 3),
        ("u2", "user", 4),
        ("run-2", "assistant", 5),
    ]
    assert page.total == 5 and not page.has_more
    assert page.items[4]["status"] == "completed" and page.items[4]["usage"]
    older = await manager.history("t", limit=2, before_sequence=4)
    assert [i["sequence"] for i in older.items] == [2, 3] and older.next_before_sequence == 2
