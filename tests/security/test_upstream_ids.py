"""Ids the upstream sends are checked like client ids (issue 15): a message or tool-call id
holding a NUL, a control character or too many characters is remapped to a safe id
(:mod:`gateway.upstream_ids`), consistently across the run's events, never dropped, so the run
is stored and its history read back the same on SQLite and PostgreSQL (a NUL in a column is
an error on PostgreSQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import (
    AssistantMessage,
    FunctionCall,
    MessagesSnapshotEvent,
    RunFinishedEvent,
    TextMessageContentEvent,
    ToolCall,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
)
from authapp import BACKENDS, auth_app, run_input
from durable_support import events_of
from gwtest import chunk, sse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.ids import MAX_ID_LENGTH, id_problem
from gateway.upstream_ids import UpstreamIds, safe_id

pytestmark = pytest.mark.timeout(600)

REFUSED = ["\x00", "\x01", "\x1b", "\x7f", "\x85", "\u2028"]

good_ids = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
)
bad_ids = st.one_of(
    st.tuples(good_ids, st.sampled_from(REFUSED), good_ids).map("".join),
    st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=MAX_ID_LENGTH + 1),
)
any_ids = st.one_of(good_ids, bad_ids)


@given(message=any_ids, call=any_ids, other=any_ids)
def test_every_id_out_is_acceptable_and_the_mapping_is_consistent_and_one_to_one(
    message: str, call: str, other: str
) -> None:
    ids = UpstreamIds()
    events = [
        TextMessageContentEvent(message_id=message, delta="a"),
        ToolCallStartEvent(tool_call_id=call, tool_call_name="f", parent_message_id=message),
        ToolCallResultEvent(message_id=other, tool_call_id=call, content="r"),
        MessagesSnapshotEvent(
            messages=[
                AssistantMessage(
                    id=message,
                    tool_calls=[ToolCall(id=call, function=FunctionCall(name="f", arguments="{}"))],
                ),
                ToolMessage(id=other, tool_call_id=call, content="r"),
            ]
        ),
        RunFinishedEvent(
            thread_id="t", run_id="r", outcome={"type": "success", "pendingToolCallIds": [call]}
        ),
    ]
    out = [ids.process(e) for e in events]
    snapshot = out[3]
    seen = {
        out[0].message_id,
        out[1].tool_call_id,
        out[1].parent_message_id,
        out[2].message_id,
        out[2].tool_call_id,
        snapshot.messages[0].id,
        snapshot.messages[0].tool_calls[0].id,
        snapshot.messages[1].id,
        snapshot.messages[1].tool_call_id,
    }
    assert all(id_problem(i) is None for i in seen)
    assert out[0].message_id == out[1].parent_message_id == snapshot.messages[0].id
    assert out[1].tool_call_id == out[2].tool_call_id == snapshot.messages[0].tool_calls[0].id
    assert snapshot.messages[1].tool_call_id == out[1].tool_call_id
    assert out[4].outcome.pending_tool_call_ids == [out[1].tool_call_id]
    for original, mapped in ((message, out[0].message_id), (call, out[1].tool_call_id)):
        assert mapped == (original if id_problem(original) is None else safe_id(original))
    assert len({message, call, other}) == len(
        {out[0].message_id, out[1].tool_call_id, out[2].message_id}
    )  # two ids stay two
    assert out[0].delta == "a" and out[2].content == "r"  # nothing else changes


def upstream_with(message_id: str, call_ids: list[str]) -> bytes:
    parts: list[dict[str, Any] | str] = [
        {**chunk({"role": "assistant", "content": "looking"}), "id": message_id}
    ]
    for index, call_id in enumerate(call_ids):
        parts.append(
            {
                **chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": "lookup", "arguments": '{"q": 1}'},
                            }
                        ]
                    }
                ),
                "id": message_id,
            }
        )
    parts += [{**chunk({}, "tool_calls"), "id": message_id}, "[DONE]"]
    return sse(*parts)


cases = st.lists(
    st.tuples(any_ids, st.lists(any_ids, min_size=1, max_size=3, unique=True)),
    min_size=2,
    max_size=2,
)


@pytest.mark.parametrize(("store_kind", "broker_kind"), BACKENDS)
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=cases)
async def test_runs_with_any_upstream_ids_are_stored_and_read_back_on_every_store(
    tmp_path_factory: pytest.TempPathFactory,
    store_kind: str,
    broker_kind: str,
    runs: list[tuple[str, list[str]]],
) -> None:
    current: list[bytes] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=current[0])

    tmp_path: Path = tmp_path_factory.mktemp("ids")
    async with auth_app(tmp_path, store_kind, broker_kind, upstream=upstream) as gw:
        key = await gw.key("acme")
        for n, (message_id, call_ids) in enumerate(runs):
            current[:] = [upstream_with(message_id, call_ids)]
            reply = await gw.request("POST", "/v1/agui/gpt", run_input(f"t{n}", "r1"), key=key)
            assert reply.status == 200, reply.body[:300]
            events = events_of(reply.body)
            assert events[-1]["type"] == "RUN_FINISHED", events[-1]
            starts = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
            fixed = [c if id_problem(c) is None else safe_id(c) for c in call_ids]
            assert starts == fixed  # every call kept, in order, under its (safe) id
            texts = {e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START"}
            assert texts == {message_id if id_problem(message_id) is None else safe_id(message_id)}
            history = await gw.request("GET", f"/api/v1/agent/history?threadId=t{n}", key=key)
            assert history.status == 200, history.body[:300]
            items = history.json()["items"]
            stored_calls = [
                p["toolCallId"] for i in items for p in i.get("parts", []) if p["type"] == "tool"
            ]
            assert stored_calls == fixed
            assert all(id_problem(i["id"]) is None for i in items)
