"""The AG-UI and AI SDK checkers: the faults of issue 4, violation details, input forms.

Verdicts asserted here are the real clients' (the same streams are in ``streams/`` and their
recorded verdicts in ``streams/VERDICTS.json``, re-checked live by test_differential.py).
"""

from __future__ import annotations

import json
import random

import diffcorpus
import pytest
from corpus import require_corpus

from conformance import AguiChecker, AiSdkChecker, check_bytes, detect_form, detect_protocol

STORED = {name.split("/", 2)[2]: body for name, _, body in diffcorpus.stored_streams()}


def rules(body: bytes, protocol: str = "agui", major: int = 7) -> list[str]:
    report = check_bytes(body, protocol=protocol, major=major)  # type: ignore[arg-type]
    return [v.rule_id for v in report.violations]


def errors(body: bytes, protocol: str = "agui", major: int = 7) -> list[str]:
    report = check_bytes(body, protocol=protocol, major=major)  # type: ignore[arg-type]
    return [v.rule_id for v in report.errors]


# -- faults seen in public reports (issue 4) ----------------------------------------------
def test_tool_call_start_end_without_args_is_accepted_and_warned() -> None:
    found = rules(STORED["tool-call-start-end-without-args"])
    assert found == ["agui/hygiene/tool-call-without-args"]


def test_stray_tool_args_after_end_is_rejected() -> None:
    assert errors(STORED["tool-args-after-end"]) == ["agui/verify/tool-args-without-start"]


def test_tool_call_end_with_another_id_is_rejected_and_the_call_stays_open() -> None:
    assert errors(STORED["tool-call-end-with-other-id"]) == [
        "agui/verify/tool-end-without-start",
        "agui/verify/run-finished-while-open",
    ]


def test_tool_only_response_naming_an_unannounced_parent_message_is_warned() -> None:
    assert rules(STORED["tool-call-parent-message-never-announced"]) == [
        "agui/hygiene/parent-message-unknown"
    ]


def test_text_content_after_end_of_same_id_is_rejected() -> None:
    assert errors(STORED["text-content-after-end"]) == ["agui/verify/text-content-without-start"]


def test_two_tool_calls_open_at_once_are_neither_rejected_nor_warned() -> None:
    assert rules(STORED["two-tool-calls-open-at-once"]) == []


# -- report details --------------------------------------------------------------------------
def test_violation_names_the_event_index_and_ids() -> None:
    report = check_bytes(STORED["tool-args-after-end"], protocol="agui")
    (violation,) = report.errors
    assert violation.index == 4 and violation.ids == ("a",)
    assert "TOOL_CALL_ARGS" in violation.message
    assert report.events == 6


def test_checker_goes_on_after_an_error_and_reports_each_fault_once() -> None:
    body = diffcorpus.frame([
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},  # before RUN_STARTED
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "x", "delta": "?"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ])  # fmt: skip
    assert errors(body) == ["agui/verify/first-event-not-run-started",
                            "agui/verify/text-content-without-start"]  # fmt: skip


@pytest.mark.parametrize(
    "name", ["subagent-lifecycle", "text-chunk-role-disagrees", "thinking-events-complete"]
)
def test_any_split_of_the_body_gives_the_same_report(name: str) -> None:
    body = STORED[name]
    whole = check_bytes(body, protocol="agui").to_json()
    rng = random.Random(name)
    checker = AguiChecker()
    cuts = sorted({rng.randrange(1, len(body)) for _ in range(12)})
    prev = 0
    for cut in [*cuts, len(body)]:
        checker.feed(body[prev:cut])
        prev = cut
    checker.close()
    assert checker.report.to_json() == whole


def test_jsonl_and_json_array_inputs_skip_framing_rules() -> None:
    events = diffcorpus.unframe(STORED["subagent-lifecycle"])
    jsonl = "\n".join(json.dumps(e) for e in events).encode()
    array = json.dumps(events, indent=2).encode()
    assert detect_form(jsonl) == "jsonl" and detect_form(array) == "json"
    assert detect_form(STORED["subagent-lifecycle"]) == "sse"
    assert rules(jsonl) == rules(array) == []
    bad = jsonl + b"\n{oops\n"
    assert errors(bad) == ["agui/sse/invalid-json"]


def test_protocol_detection_reads_the_first_event_type() -> None:
    assert detect_protocol(STORED["subagent-lifecycle"]) == "agui"
    ai_body = diffcorpus.frame([{"type": "start"}, {"type": "finish"}], done=True)
    assert detect_protocol(ai_body) == "ai-sdk"
    assert detect_protocol(b"") == "agui"


def test_raw_agui_corpus_family_verdicts_are_the_clients() -> None:
    """@ag-ui/client 1.0.0 rejects exactly these three of the 14 recordings (harness replay)."""
    rejected = set()
    for path in require_corpus("agui"):
        if check_bytes(path.read_bytes(), protocol="agui").rejected:
            rejected.add(path.stem)
    assert rejected == {
        "custom-gemini-raw-nonstandard-run-error",  # snake_case threadId, RESULT without content
        "google-adk-run-error",  # RUN_ERROR without message
        "langgraph-gemini-tool-call-raw-steps-snapshots",  # STEP_STARTED for an active step
    }


# -- AI SDK -----------------------------------------------------------------------------------
AI = {name.split("/", 2)[2]: body for name, p, body in diffcorpus.stored_streams() if p == "ai-sdk"}


def test_error_chunk_followed_by_more_chunks_is_accepted_with_a_warning() -> None:
    for major in (5, 6, 7):
        assert rules(AI["error-then-unknown-type"], "ai-sdk", major) == [
            "ai-sdk/stream/chunks-after-error"
        ]


@pytest.mark.parametrize(("major", "rejected"), [(5, True), (6, True), (7, False)])
def test_text_part_left_open_over_finish_step(major: int, rejected: bool) -> None:
    report = check_bytes(AI["text-delta-after-finish-step"], protocol="ai-sdk", major=major)
    assert report.rejected is rejected
    assert "ai-sdk/hygiene/part-open-at-finish-step" in {v.rule_id for v in report.warnings}


def test_unknown_type_names_the_majors_that_know_it() -> None:
    report = check_bytes(AI["tool-approval-request-and-response"], protocol="ai-sdk", major=6)
    (error,) = report.errors
    assert error.rule_id == "ai-sdk/schema/unknown-type" and "only in ai v7" in error.message


def test_ai_sdk_checker_rejects_unsupported_majors() -> None:
    with pytest.raises(ValueError, match="major"):
        AiSdkChecker(4)


def test_aisdk_ui_corpus_snapshots_break_ai_v5_only() -> None:
    """The @ai-sdk/langchain snapshots use v6+ chunks: ai 5.0.277 rejects both (harness replay:
    an unknown ``tool-approval-request`` type; a tool output for a dynamic tool part sent
    without ``dynamic``), 6.0.326 and 7.0.173 accept both."""
    expected_v5 = {
        "langgraph-hitl-tool-approval-request": "ai-sdk/schema/unknown-type",
        "langgraph-react-agent-reasoning-tool-calls": "ai-sdk/stream/tool-chunk-for-unknown-call",
    }
    for path in require_corpus("aisdk-ui"):
        v5 = check_bytes(path.read_bytes(), protocol="ai-sdk", major=5)
        assert [v.rule_id for v in v5.errors][:1] == [expected_v5[path.stem]]
        for major in (6, 7):
            assert not check_bytes(path.read_bytes(), protocol="ai-sdk", major=major).rejected
