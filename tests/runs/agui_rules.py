"""The AG-UI 1.0 verify rules the prelude and resumed streams must pass (PROTOCOLS.md §2,
``@ag-ui/client`` 1.0 ``src/verify/verify.ts``), as a small independent checker for tests.

Rules 1-8 (run lifecycle, text, tool calls, steps, reasoning spans and messages); chunk events
are not expanded here (the real-client tests cover them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class VerifyError(AssertionError):
    """A stream the real client would reject; the message names the event index and rule."""


def _fail(index: int, kind: object, rule: str) -> None:
    raise VerifyError(f"event {index} ({kind}): {rule}")


def verify(events: Iterable[dict[str, Any]]) -> None:
    """Raise :class:`VerifyError` at the first event breaking a verify rule."""
    active = finished = errored = False
    seen_any = False
    text: set[str] = set()
    tools: set[str] = set()
    steps: set[str] = set()
    spans: set[str] = set()
    reasoning: set[str] = set()
    for i, event in enumerate(events):
        kind = event.get("type")

        if not seen_any and kind not in ("RUN_STARTED", "RUN_ERROR"):
            _fail(i, kind, "rule 1: the first event must be RUN_STARTED or RUN_ERROR")
        seen_any = True
        if errored and kind != "RUN_STARTED":
            _fail(i, kind, "rule 3: only RUN_STARTED may follow RUN_ERROR")
        if finished and kind not in ("RUN_STARTED", "RUN_ERROR"):
            _fail(i, kind, "rule 3: only RUN_STARTED or RUN_ERROR may follow RUN_FINISHED")
        if kind == "RUN_STARTED":
            if active:
                _fail(i, kind, "rule 2: RUN_STARTED while a run is active")
            active, finished, errored = True, False, False
            text, tools, steps, spans, reasoning = set(), set(), set(), set(), set()
        elif kind == "RUN_FINISHED":
            if text or tools or steps or spans or reasoning:
                _fail(
                    i, kind, f"rule 4: open at RUN_FINISHED {text, tools, steps, spans, reasoning}"
                )
            active, finished = False, True
        elif kind == "RUN_ERROR":
            active, errored = False, True
        elif kind == "TEXT_MESSAGE_START":
            if event["messageId"] in text:
                _fail(i, kind, "rule 5: TEXT_MESSAGE_START for an open message")
            text.add(event["messageId"])
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"):
            if event["messageId"] not in text:
                _fail(i, kind, "rule 5: no open text message with that id")
            if kind == "TEXT_MESSAGE_END":
                text.discard(event["messageId"])
        elif kind == "TOOL_CALL_START":
            if event["toolCallId"] in tools:
                _fail(i, kind, "rule 6: TOOL_CALL_START for an open call")
            tools.add(event["toolCallId"])
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            if event["toolCallId"] not in tools:
                _fail(i, kind, "rule 6: no open tool call with that id")
            if kind == "TOOL_CALL_END":
                tools.discard(event["toolCallId"])
        elif kind == "STEP_STARTED":
            if event["stepName"] in steps:
                _fail(i, kind, "rule 7: STEP_STARTED for an active step")
            steps.add(event["stepName"])
        elif kind == "STEP_FINISHED":
            if event["stepName"] not in steps:
                _fail(i, kind, "rule 7: STEP_FINISHED without a matching active step")
            steps.discard(event["stepName"])
        elif kind == "REASONING_START":
            if event["messageId"] in spans:
                _fail(i, kind, "rule 8: REASONING_START for an open span")
            spans.add(event["messageId"])
        elif kind == "REASONING_END":
            if event["messageId"] not in spans:
                _fail(i, kind, "rule 8: REASONING_END without an open span")
            spans.discard(event["messageId"])
        elif kind == "REASONING_MESSAGE_START":
            if event["messageId"] in reasoning:
                _fail(i, kind, "rule 8: REASONING_MESSAGE_START for an open message")
            reasoning.add(event["messageId"])
        elif kind in ("REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END"):
            if event["messageId"] not in reasoning:
                _fail(i, kind, "rule 8: no open reasoning message with that id")
            if kind == "REASONING_MESSAGE_END":
                reasoning.discard(event["messageId"])
