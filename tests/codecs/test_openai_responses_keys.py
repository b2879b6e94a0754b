"""openai-responses decoder: an output item is one item whichever of its events carry
``output_index`` (the Responses streaming reference gives every item event ``output_index`` and
``item_id``; the fuzz hunt found bodies where some lack it).

The kind: an item first seen without ``output_index`` (keyed by its ``item_id``) whose later
events bring one opened its tool call a second time at ``output_item.done`` and closed the first
one again at the end (``agui/verify/tool-start-already-open``,
``agui/verify/tool-end-without-start``, rejected by ``@ag-ui/client`` 1.0.0). The property: any
subset of an item's events may lack ``output_index`` and the decoded run has the same events
(text, tool calls, arguments, results) as with every index present, and the kit rejects nothing.
"""

from __future__ import annotations

from typing import Any

from decoder_checks import decode_all, wire
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_responses_fixtures import FUNCTION_CALL_ITEM, MESSAGE_ITEM, NAME, completed, sse
from openai_responses_fixtures import created as created_event

from conformance import check_events

FILE_SEARCH_ITEM = {
    "id": "fs_1",
    "type": "file_search_call",
    "status": "in_progress",
    "queries": [],
    "results": None,
}


def _items() -> list[list[dict[str, Any]]]:
    """Three items' events (one list per item), every event with ``output_index``."""
    call = {**FUNCTION_CALL_ITEM}
    at_1 = {"output_index": 1, "item_id": call["id"]}
    text = {"output_index": 2, "item_id": "msg_1", "content_index": 0}
    return [
        [
            {"type": "response.output_item.added", "output_index": 0, "item": FILE_SEARCH_ITEM},
            {"type": "response.file_search_call.searching", "output_index": 0, "item_id": "fs_1"},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**FILE_SEARCH_ITEM, "status": "completed", "queries": ["capital?"]},
            },
        ],
        [
            {"type": "response.output_item.added", "output_index": 1, "item": call},
            {"type": "response.function_call_arguments.delta", **at_1, "delta": '{"city":'},
            {"type": "response.function_call_arguments.delta", **at_1, "delta": '"Paris"}'},
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": {**call, "arguments": '{"city":"Paris"}', "status": "completed"},
            },
        ],
        [
            {
                "type": "response.output_item.added",
                "output_index": 2,
                "item": {**MESSAGE_ITEM, "content": []},
            },
            {"type": "response.output_text.delta", **text, "delta": "Par"},
            {"type": "response.output_text.delta", **text, "delta": "is"},
            {
                "type": "response.output_item.done",
                "output_index": 2,
                "item": {**MESSAGE_ITEM, "content": [{"type": "output_text", "text": "Paris"}]},
            },
        ],
    ]


def _body(drop: list[bool]) -> bytes:
    events = [e for item in _items() for e in item]
    kept = [
        {k: v for k, v in e.items() if k != "output_index"} if gone else e
        for e, gone in zip(events, drop, strict=True)
    ]
    return sse(created_event(), *kept, completed())


EVENTS = sum(len(item) for item in _items())


def _decoded(drop: list[bool]) -> list[dict[str, Any]]:
    return wire(decode_all(NAME, _body(drop)))


def test_an_item_added_without_output_index_then_done_with_one_is_one_tool_call() -> None:
    """The input the hunt found (``kit-rejects-openai-responses-f75f963a71d8``: a mutated
    ``file-search-call-file-citations.sse`` whose ``output_item.added`` has ``out_index``)."""
    drop = [True] + [False] * (EVENTS - 1)
    events = _decoded(drop)
    starts = [e for e in events if e["type"] == "TOOL_CALL_START"]
    ends = [e for e in events if e["type"] == "TOOL_CALL_END"]
    assert [e["toolCallId"] for e in starts] == ["fs_1", FUNCTION_CALL_ITEM["call_id"]]
    assert [e["toolCallId"] for e in ends] == ["fs_1", FUNCTION_CALL_ITEM["call_id"]]
    assert check_events(events).errors == []


@settings(max_examples=60, deadline=None)
@given(drop=st.lists(st.booleans(), min_size=EVENTS, max_size=EVENTS))
def test_any_events_without_output_index_give_the_same_legal_run(drop: list[bool]) -> None:
    events = _decoded(drop)
    assert check_events(events).errors == [], [e["type"] for e in events]
    assert events == _decoded([False] * EVENTS)
