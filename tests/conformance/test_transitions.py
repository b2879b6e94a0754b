"""Legal transitions as data (``agui_codecs.transitions``): the tables and the two trackers.

Expected faults follow ``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts`` and ``ai``
``process-ui-message-stream.ts``; the witness and stored streams replay the same sequences
through the real clients (test_differential.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from agui_codecs.transitions import (
    ANY,
    LIFECYCLE_BY_EVENT,
    LIFECYCLES,
    RUN_TABLE,
    UI_MAJORS,
    AguiVerifier,
    Fault,
    Phase,
    UiChunkTracker,
    UiFault,
)

RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def faults(*events: dict[str, Any]) -> list[Fault]:
    verifier = AguiVerifier()
    return [f.fault for e in events if (f := verifier.step(e)) is not None]


def test_run_table_has_a_default_for_every_phase_and_maps_every_opener() -> None:
    for phase in Phase:
        assert (phase, ANY) in RUN_TABLE
    assert {lc.opener for lc in LIFECYCLES} <= set(LIFECYCLE_BY_EVENT)
    assert LIFECYCLE_BY_EVENT["TOOL_CALL_ARGS"][1] == "continue"


def test_two_tool_calls_open_at_once_are_legal() -> None:
    calls = [{"type": f"TOOL_CALL_{k}", "toolCallId": i, **({"toolCallName": "f"} if k == "START" else {}),
              **({"delta": "{}"} if k == "ARGS" else {})}
             for k, i in (("START", "a"), ("START", "b"), ("ARGS", "a"), ("ARGS", "b"), ("END", "a"), ("END", "b"))]  # fmt: skip
    assert faults(RS, *calls, RF) == []


def test_closed_id_may_be_reopened_and_runs_may_follow_each_other() -> None:
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m"}
    end = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
    assert faults(RS, start, end, start, end, RF, RS, RF) == []
    assert faults(RS, {"type": "RUN_ERROR", "message": "x"}, RS, RF) == []


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([{"type": "TEXT_MESSAGE_START", "messageId": "m"}], [Fault.FIRST_EVENT]),
        ([RS, RS], [Fault.RUN_STARTED_WHILE_ACTIVE]),
        ([RS, RF, {"type": "CUSTOM", "name": "x", "value": 1}], [Fault.AFTER_FINISHED]),
        ([RS, {"type": "RUN_ERROR", "message": "x"}, RF], [Fault.AFTER_ERROR]),
        ([RS, {"type": "STEP_STARTED", "stepName": "s"}, RF], [Fault.FINISHED_WHILE_OPEN]),
        ([RS, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}], [Fault.TEXT_CONTENT_NOT_OPEN]),
        ([RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n", "description": None}],
         [Fault.SUBAGENT_FIELD]),
        ([RS, {"type": "CUSTOM", "name": "x", "value": 1, "subagentRunId": None}], [Fault.NULL_SUBAGENT_TAG]),
        ([RS, {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user", "subagentRunId": None}]}],
         [Fault.NULL_SUBAGENT_TAG]),
    ],
)  # fmt: skip
def test_verifier_faults(events: list[dict[str, Any]], expected: list[Fault]) -> None:
    assert faults(*events) == expected


def test_run_finished_reports_open_entities_in_verify_order() -> None:
    verifier = AguiVerifier()
    for event in (RS, {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
                  {"type": "TEXT_MESSAGE_START", "messageId": "m"}):  # fmt: skip
        assert verifier.step(event) is None
    found = verifier.step(RF)
    assert found is not None and found.ids == ("m",)  # text is reported before tool calls


def test_owner_retained_after_close_and_snapshot_seeds_owners() -> None:
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m", "subagentRunId": "s1"}
    assert faults(RS, start, {"type": "TEXT_MESSAGE_END", "messageId": "m"},
                  {**start, "subagentRunId": "s2"}) == [Fault.OWNER_MISMATCH]  # fmt: skip
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"id": "a1", "role": "assistant", "toolCalls": [{"id": "c", "type": "function"}]}
        ],
    }
    tagged = {
        "type": "TOOL_CALL_START",
        "toolCallId": "c",
        "toolCallName": "f",
        "subagentRunId": "s",
    }
    assert faults(RS, snapshot, tagged) == [Fault.OWNER_MISMATCH]


def ui_faults(major: int, *chunks: dict[str, Any]) -> list[UiFault]:
    tracker = UiChunkTracker(UI_MAJORS[major])
    return [f[0] for c in chunks if (f := tracker.step(c)) is not None]


TS, TD = {"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": "x"}
FS = {"type": "finish-step"}


@pytest.mark.parametrize(("major", "expected"), [(5, [UiFault.TEXT_DELTA_NOT_OPEN]),
                                                 (6, [UiFault.TEXT_DELTA_NOT_OPEN]), (7, [])])  # fmt: skip
def test_finish_step_forgets_open_text_parts_before_v7(major: int, expected: list[UiFault]) -> None:
    assert ui_faults(major, TS, FS, TD) == expected


def test_v5_finds_tool_parts_by_dynamic_flag_only() -> None:
    start = {"type": "tool-input-start", "toolCallId": "c", "toolName": "f", "dynamic": True}
    output = {"type": "tool-output-available", "toolCallId": "c", "output": 1}
    assert ui_faults(5, start, output) == [UiFault.TOOL_UNKNOWN_CALL]
    assert ui_faults(5, start, {**output, "dynamic": True}) == []
    assert ui_faults(6, start, output) == []


def test_reset_step_drops_the_current_steps_tool_parts() -> None:
    call = {"type": "tool-input-available", "toolCallId": "c", "toolName": "f", "input": {}}
    output = {"type": "tool-output-available", "toolCallId": "c", "output": 1}
    assert ui_faults(7, {"type": "start-step"}, call, {"type": "reset-step"}, output) == [
        UiFault.TOOL_UNKNOWN_CALL
    ]
    assert (
        ui_faults(
            7,
            {"type": "start-step"},
            call,
            FS,
            {"type": "start-step"},
            {"type": "reset-step"},
            output,
        )
        == []
    )


@pytest.mark.parametrize(
    ("first", "second", "fails"),
    [("a", {"u": 1}, True), (1, [1], True), ("a", "b", True), ({"a": 1}, "x", False),
     ("a", {}, False), ([1], {"0": 2}, False), ({"a": {"b": 1}}, {"a": {"c": 2}}, False)],
)  # fmt: skip
def test_message_metadata_merge_throws_like_merge_objects(
    first: Any, second: Any, fails: bool
) -> None:
    chunks = [
        {"type": "start", "messageMetadata": first},
        {"type": "message-metadata", "messageMetadata": second},
    ]
    assert ui_faults(7, *chunks) == ([UiFault.METADATA_NOT_MERGEABLE] if fails else [])
