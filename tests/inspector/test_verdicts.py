"""The inspector's verdicts are the conformance kit's, each put on the cursor of its event
(``gateway/inspect/verdicts.py``): the same findings as ``check_events`` over the same events,
the end-of-stream checks only for an ended run, and the state a client holds after them."""

from __future__ import annotations

from typing import Any

from event_strategies import event_sequences
from hypothesis import given

from agui_codecs.events import event_to_wire
from conformance import check_events
from gateway.inspect import run_verdicts
from gateway.types import Cursor, RunEvent


def stored(*events: dict[str, Any]) -> list[RunEvent]:
    return [RunEvent(Cursor(1, seq), event) for seq, event in enumerate(events, 1)]


def bound(event: RunEvent) -> str:
    return f"{event.cursor}.TAG"


STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
FINISHED = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def test_a_finding_is_put_on_the_cursor_of_its_event() -> None:
    # @ag-ui/client 1.0.0 verify.ts: TEXT_MESSAGE_CONTENT for a message that is not open throws
    events = stored(
        STARTED,
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"},
        FINISHED,
    )
    verdicts = run_verdicts(events, ended=True, wire_cursor=bound)
    body = verdicts.to_json()
    assert body["rejected"] is True
    first = body["findings"][0]
    assert (first["cursor"], first["index"], first["severity"]) == ("1.2.TAG", 1, "error")
    assert first["rule"] == "agui/verify/text-content-without-start"
    assert body["events"] == 3 and body["lastCursor"] == "1.3.TAG"


def test_a_live_run_is_not_blamed_for_having_no_terminal_event_yet() -> None:
    events = stored(STARTED, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
    live = run_verdicts(events, ended=False, wire_cursor=bound)
    assert live.findings == [] and not live.rejected
    ended = run_verdicts(events, ended=True, wire_cursor=bound)
    assert [(c, v.rule_id) for c, v in ended.findings] == [(None, "agui/hygiene/no-terminal-event")]


def test_state_is_the_snapshot_with_the_deltas_that_apply() -> None:
    events = stored(
        STARTED,
        {"type": "STATE_SNAPSHOT", "snapshot": {"count": 1, "items": []}},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": 2}]},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/gone/x", "value": 3}]},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/items/-", "value": "a"}]},
        FINISHED,
    )
    verdicts = run_verdicts(events, ended=True, wire_cursor=bound)
    assert verdicts.to_json()["state"] == {"count": 2, "items": ["a"]}
    assert [(c, v.rule_id, v.severity) for c, v in verdicts.findings] == [
        ("1.4.TAG", "agui/hygiene/state-patch-failed", "warning")
    ]
    assert "state" not in run_verdicts(stored(STARTED), ended=False, wire_cursor=bound).to_json()


@given(event_sequences())
def test_verdicts_are_the_kits_findings_on_the_same_events(events: list[Any]) -> None:
    wires = [event_to_wire(e) for e in events]
    report = check_events(wires)
    verdicts = run_verdicts(stored(*wires), ended=True, wire_cursor=bound)
    expected = [
        (None if v.index is None else f"1.{v.index + 1}.TAG", v.rule_id, v.severity, v.message)
        for v in report.violations
    ]
    assert [(c, v.rule_id, v.severity, v.message) for c, v in verdicts.findings] == expected
    assert verdicts.rejected == report.rejected
