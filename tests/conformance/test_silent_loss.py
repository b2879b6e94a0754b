"""Warnings for silent data loss (issue 17): cases the client accepts while something the
producer sent never reaches the user. Each rule also has a witness replayed through the real
client (diffcorpus.AGUI_WITNESSES), which proves the stream is accepted."""

from __future__ import annotations

from diffcorpus import frame

from conformance import check_bytes, check_events

RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def rules(events: list[dict[str, object]], profile: str = "1.0") -> list[str]:
    return [v.rule_id for v in check_events(events, profile=profile).violations]


def test_state_patch_is_checked_against_the_state_the_client_holds() -> None:
    snap = {"type": "STATE_SNAPSHOT", "snapshot": {"plan": {"status": "open"}}}
    ok = {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/plan/status", "value": "x"}]}
    bad = {"type": "STATE_DELTA", "delta": [
        {"op": "replace", "path": "/plan/status", "value": "closed"},
        {"op": "replace", "path": "/absent/deeper", "value": 1},
    ]}  # fmt: skip
    assert rules([RS, snap, ok, RF]) == []
    assert rules([RS, snap, bad, RF]) == ["agui/hygiene/state-patch-failed"]
    # atomic, as the client: the failed patch left the state as it was, so this one applies
    after = {
        "type": "STATE_DELTA",
        "delta": [{"op": "test", "path": "/plan/status", "value": "open"}],
    }
    assert rules([RS, snap, bad, after, RF]) == ["agui/hygiene/state-patch-failed"]
    # no snapshot yet: the client's state is unknown, nothing is claimed
    assert rules([RS, bad, RF]) == []


def test_state_from_the_run_input_counts() -> None:
    start = {**RS, "input": {"threadId": "t", "runId": "r", "state": {"n": 1}, "messages": [],
                             "tools": [], "context": [], "forwardedProps": {}}}  # fmt: skip
    delta = {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/m"}]}
    assert rules([start, delta, RF]) == ["agui/hygiene/state-patch-failed"]


def test_snapshot_that_renames_a_streamed_message_warns_but_a_retraction_does_not() -> None:
    streamed = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hello"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    ]
    renamed = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [{"id": "x9", "role": "assistant", "content": "hello"}],
    }
    kept = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [{"id": "m1", "role": "assistant", "content": "hello!"}],
    }
    retracted = {"type": "MESSAGES_SNAPSHOT", "messages": []}
    assert rules([RS, *streamed, renamed, RF]) == ["agui/hygiene/snapshot-renames-message"]
    assert rules([RS, *streamed, kept, RF]) == []
    assert rules([RS, *streamed, retracted, RF]) == []


def test_run_error_after_finished_is_a_warning_for_1_0_and_a_notice_for_1_1() -> None:
    events = [RS, RF, {"type": "RUN_ERROR", "message": "late"}]
    for profile, severity in (("1.0", "warning"), ("1.1", "info")):
        report = check_events(events, profile=profile)
        assert [(v.rule_id, v.severity) for v in report.violations] == [
            ("agui/hygiene/run-error-after-finished", severity)
        ]


def test_timestamps_in_seconds_are_reported_once() -> None:
    stamp = {"type": "CUSTOM", "name": "n", "value": 1, "timestamp": 1_700_000_000}
    assert rules([RS, stamp, stamp, RF]) == ["agui/hygiene/timestamp-in-seconds"]
    assert rules([RS, {**stamp, "timestamp": 1_700_000_000_000}, RF]) == []


def test_lines_the_client_drops_and_invalid_utf8() -> None:
    body = b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}\n'
    body += b'{"type":"CUSTOM","name":"lost","value":1}\n\n'
    body += b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"\xffr"}\n\n'
    found = [v.rule_id for v in check_bytes(body, protocol="agui").violations]
    assert "agui/sse/line-without-data" in found and "agui/sse/invalid-utf8" in found
    text = [{"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": "QQ"},
            {"type": "text-end", "id": "t"}]  # fmt: skip
    ai = frame([{"type": "start"}, *text, {"type": "finish"}], done=True).replace(b"QQ", b"Q\xff")
    report = check_bytes(ai, protocol="ai-sdk")
    assert [v.rule_id for v in report.violations] == ["ai-sdk/sse/invalid-utf8"]
