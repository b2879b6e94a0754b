"""Delivery profiles (activity, metadata, seed), the AI SDK chunk, and the real clients."""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest
from ag_ui.core import (
    ActivitySnapshotEvent,
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    TextInputContent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire, parse_event
from agui_codecs.ui import (
    UiSchemaCompiler,
    ai_sdk_ui_chunk,
    attach_ui,
    parse_hints,
    tool_output,
    ui_events,
    ui_schema_of,
)

from .examples import CALENDAR, CONTACT, SNIPPET


def _result(content: Any, *, metadata: dict[str, Any] | None = None) -> ToolCallResultEvent:
    text = content if isinstance(content, str) else orjson.dumps(content).decode()
    return ToolCallResultEvent(
        message_id="msg_tool_1", tool_call_id="call_1", content=text, metadata=metadata
    )


def _ui(example: tuple[dict[str, Any], Any] = CALENDAR) -> dict[str, Any]:
    ui = UiSchemaCompiler().compile(example[0], example[1], tool_call_id="call_1")
    assert ui is not None
    return ui


def test_activity_profile_keeps_the_result_and_adds_an_activity_snapshot() -> None:
    result = _result(CALENDAR[1])
    ui = _ui()
    events = ui_events(result, ui)
    assert events[0] is result
    wire = event_to_wire(events[1])
    assert wire == {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": "a2ui-surface-call_1",
        "activityType": "a2ui-surface",
        "content": {"a2ui_operations": ui["messages"]},
        "replace": True,
        "metadata": {
            "ui_schema": {
                k: ui[k] for k in ("format", "version", "catalogId", "surfaceId", "toolCallId")
            }
        },
    }
    assert ui_schema_of(parse_event(wire)) == ui


def test_metadata_profile_puts_the_ui_schema_in_result_metadata() -> None:
    result = _result(CALENDAR[1], metadata={"keep": 1})
    ui = _ui()
    [event] = ui_events(result, ui, delivery="metadata")
    wire = event_to_wire(event)
    assert wire["metadata"] == {"keep": 1, "ui_schema": ui}
    assert wire["content"] == result.content
    assert ui_schema_of(parse_event(wire)) == ui


def test_metadata_profile_drops_an_oversized_ui_schema(caplog: pytest.LogCaptureFixture) -> None:
    compiler = UiSchemaCompiler()
    result = _result(CALENDAR[1])
    ui = compiler.compile(*CALENDAR, tool_call_id="call_1")
    assert ui is not None
    with caplog.at_level(logging.WARNING, logger="agui_codecs.ui"):
        events = ui_events(
            result, ui, delivery="metadata", metadata_max_bytes=100, compiler=compiler
        )
    assert events == [result]
    assert compiler.stats.rejected == {"metadata_too_large": 1}
    assert "metadata cap is 100" in caplog.text


def test_seed_profile_adds_a_top_level_ui_schema() -> None:
    result = _result(CALENDAR[1])
    ui = _ui()
    [event] = ui_events(result, ui, delivery="seed")
    wire = event_to_wire(event)
    assert wire["ui_schema"] == ui
    assert {k: v for k, v in wire.items() if k != "ui_schema"} == event_to_wire(result)
    assert ui_schema_of(parse_event(wire)) == ui


def test_upstream_a2ui_activities_are_not_taken_for_ours() -> None:
    upstream = ActivitySnapshotEvent(
        message_id="a2ui-surface-x",
        activity_type="a2ui-surface",
        content={"a2ui_operations": []},
        replace=True,
    )
    assert ui_schema_of(upstream) is None
    assert ui_schema_of(_result({"ui_schema": "no"})) is None


def test_ai_sdk_chunk_is_a_data_ui_schema_part_keyed_by_tool_call() -> None:
    ui = _ui()
    assert ai_sdk_ui_chunk(ui) == {"type": "data-ui-schema", "id": "call_1", "data": ui}


def test_route_hints_win_over_hints_in_the_result() -> None:
    compiler = UiSchemaCompiler()
    route = parse_hints({"kind": "key_value"})
    output = dict(CONTACT[1], ui_hints=CONTACT[0])
    events = attach_ui(compiler, _result(output), route_hints=route)
    ui = ui_schema_of(events[1])
    assert ui is not None
    assert "rows" in ui["messages"][2]["updateDataModel"]["value"]


def test_hints_from_the_result_and_from_seed_metadata_are_used() -> None:
    compiler = UiSchemaCompiler()
    from_result = attach_ui(compiler, _result(dict(CONTACT[1], ui_hints=CONTACT[0])))
    meta = {"tool_agent_output": {"ui_hints": CONTACT[0]}}
    from_meta = attach_ui(compiler, _result(CONTACT[1], metadata=meta))
    assert len(from_result) == 2 and len(from_meta) == 2
    assert from_result[0].content == _result(dict(CONTACT[1], ui_hints=CONTACT[0])).content


def test_no_hints_or_bad_hints_leave_the_result_alone(caplog: pytest.LogCaptureFixture) -> None:
    compiler = UiSchemaCompiler()
    plain = _result({"a": 1})
    assert attach_ui(compiler, plain) == [plain]
    bad = _result({"a": 1, "ui_hints": {"kind": "carousel"}})
    with caplog.at_level(logging.WARNING, logger="agui_codecs.ui"):
        assert attach_ui(compiler, bad) == [bad]
    assert compiler.stats.rejected == {"invalid_hints": 1}


def test_a_non_json_result_can_be_shown_as_code() -> None:
    route = parse_hints({"kind": "code", "language": "text"})
    events = attach_ui(UiSchemaCompiler(), _result("not { json"), route_hints=route)
    ui = ui_schema_of(events[1])
    assert ui is not None
    assert ui["messages"][2]["updateDataModel"]["value"]["code"] == "```text\nnot { json\n```"


def test_tool_output_joins_text_parts() -> None:
    parts = [TextInputContent(text='{"a":'), TextInputContent(text=" 1}")]
    assert tool_output(parts) == {"a": 1}
    assert tool_output("plain") == "plain"


# -- real clients (tests/harness): @ag-ui/client 1.0.0, ai 7 / 6 / 5 ------------------------


def _run_events(result: ToolCallResultEvent) -> list[Event]:
    return [
        RunStartedEvent(thread_id="thread_1", run_id="run_1", protocol_version="1.0"),
        ToolCallStartEvent(tool_call_id="call_1", tool_call_name="list_events"),
        ToolCallArgsEvent(tool_call_id="call_1", delta='{"week": 10}'),
        ToolCallEndEvent(tool_call_id="call_1"),
        result,
    ]


def _ai_sdk_body(events: list[Event]) -> bytes:
    encoder = AiSdkEncoder()
    out = b""
    for event in events:
        chunks = encoder.chunks(event)
        ui = ui_schema_of(event)
        if ui is not None:
            chunks.append(ai_sdk_ui_chunk(ui))
        out += b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    return out + encoder.close()


@pytest.mark.parametrize("example", [CALENDAR, SNIPPET], ids=["calendar", "snippet"])
def test_real_clients_accept_the_ui_on_both_wires(example: tuple[dict[str, Any], Any]) -> None:
    from real_clients import AI_SDK_CLIENTS, replay, require_harness

    require_harness()
    compiler = UiSchemaCompiler()
    result = _result(example[1])
    route = parse_hints(example[0])
    ui_part = attach_ui(compiler, result, route_hints=route)
    assert len(ui_part) == 2
    ui = ui_schema_of(ui_part[1])
    assert ui is not None
    events = [
        *_run_events(result)[:-1],
        *ui_part,
        RunFinishedEvent(thread_id="thread_1", run_id="run_1"),
    ]
    encoder = AguiEncoder()
    agui_body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    ai_body = _ai_sdk_body(events)
    jobs = [("agui", "agui", agui_body)] + [(c, c, ai_body) for c in AI_SDK_CLIENTS]
    results = replay(jobs)

    agui = results["agui"]
    assert agui["accepted"], agui["error"]
    activity = [m for m in agui["messages"] if m.get("role") == "activity"]
    assert activity == [
        {
            "id": "a2ui-surface-call_1",
            "role": "activity",
            "activityType": "a2ui-surface",
            "content": {"a2ui_operations": ui["messages"]},
            "metadata": ui_part[1].metadata,
        }
    ]
    tool = next(m for m in agui["messages"] if m.get("role") == "tool")
    assert tool["content"] == result.content  # the model sees data, not UI

    for client in AI_SDK_CLIENTS:
        res = results[client]
        assert res["accepted"], (client, res["error"])
        [assistant] = res["messages"]
        parts = [p for p in assistant["parts"] if p["type"] == "data-ui-schema"]
        assert parts == [{"type": "data-ui-schema", "id": "call_1", "data": ui}], client
        types = [p["type"] for p in assistant["parts"]]
        assert types.index("data-ui-schema") > next(
            i for i, t in enumerate(types) if t.startswith("tool-")
        )


def test_stage_uses_route_hints_by_tool_name_and_skips_tool_errors() -> None:
    from agui_codecs.ui import UiStage

    compiler = UiSchemaCompiler()
    stage = UiStage(compiler, route_hints={"list_events": parse_hints(CALENDAR[0])}, locale="de")
    _, start, args, end, result = _run_events(_result(CALENDAR[1]))
    assert [e for ev in (start, args, end) for e in stage.process(ev)] == [start, args, end]
    out = stage.process(result)
    assert out[0] is result and len(out) == 2
    ui = ui_schema_of(out[1])
    assert ui is not None and ui["toolCallId"] == "call_1"
    components = ui["messages"][1]["updateComponents"]["components"]
    assert components[1]["text"] == "Anstehende Termine"
    failed = _result(CALENDAR[1], metadata={"isError": True})
    assert stage.process(failed) == [failed]
    assert stage.process(out[1]) == [out[1]]  # already a UI event: passes through


def test_stage_without_route_hints_uses_hints_in_the_result() -> None:
    from agui_codecs.ui import UiStage

    stage = UiStage(UiSchemaCompiler(), delivery="seed")
    result = _result(dict(CONTACT[1], ui_hints=CONTACT[0]))
    [event] = stage.process(result)
    assert ui_schema_of(event) is not None
    assert stage.process(event) == [event]  # never compiled twice
