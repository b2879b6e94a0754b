"""The AG-UI normalizer finds which held ENDs an event sends without asking each held END
(``AguiHolds._ends_holds``): the decoded events, repairs and error are those of asking each
(``fast_release = False``), for interleaved text, reasoning and tool call items with late
deltas, reused ids, chunks, results and other events, with the hold's event bound small
enough to be reached (issue 13: a run of consecutive messages holds each one's END, and
asking each of them at every event made it quadratic)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.agui import _holds

Wire = dict[str, Any]

ITEMS = [
    ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "messageId"),
    ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "toolCallId"),
    ("REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "messageId"),
]
IDS = st.sampled_from(["a", "b", "c", "d"])
OTHERS = st.sampled_from(
    [
        {"type": "RAW", "event": {}},
        {"type": "STATE_SNAPSHOT", "snapshot": {}},
        {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "TOOL_CALL_RESULT", "toolCallId": "a", "messageId": "r", "content": "1"},
        {"type": "TOOL_CALL_RESULT", "toolCallId": "b", "messageId": "r2", "content": "1"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "x"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "x"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "b", "delta": "x"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f", "delta": "{}"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "late"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "b", "delta": "late"},
    ]
)


@st.composite
def streams(draw: st.DrawFn) -> list[Wire]:
    """Items (opener, deltas, END, maybe deltas after it; ids reused) one after another or
    interleaved, with other events between."""
    scripts: list[list[Wire]] = []
    for start, content, end, key in draw(st.lists(st.sampled_from(ITEMS), max_size=6)):
        i = draw(IDS)
        opener: Wire = {"type": start, key: i}
        if start == "TOOL_CALL_START":
            opener["toolCallName"] = "f"
        deltas = [{"type": content, key: i, "delta": "x"}] * draw(st.integers(0, 2))
        late = [{"type": content, key: i, "delta": "y"}] * draw(st.integers(0, 1))
        scripts.append([opener, *deltas, {"type": end, key: i}, *late])
    out: list[Wire] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    interleave = draw(st.booleans())
    while live := [s for s in scripts if s]:
        pick = draw(st.integers(0, len(live) - 1)) if interleave else 0
        out.append(live[pick].pop(0))
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(OTHERS))
    if draw(st.booleans()):
        out.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    return out


def decode(body: bytes, *, fast: bool) -> Any:
    decoder = get_decoder("agui")
    decoder.normalizer.fast_release = fast
    out = decoder.feed(body)
    held = decoder.normalizer._ended
    kinds = {kind: n for kind, n in decoder.normalizer._ended_kinds.items() if n}
    assert kinds == {kind: sum(1 for k, _ in held if k == kind) for kind in kinds}
    out += decoder.close()
    error = None if decoder.error is None else (type(decoder.error), decoder.error.code)
    return [(type(e), e, event_to_wire(e)) for e in out], decoder.repairs, error


@settings(max_examples=400)
@given(streams(), st.sampled_from([1, 2, 3, 5, 4096]))
def test_released_ends_are_those_of_asking_each(events: list[Wire], hold_events: int) -> None:
    body = "".join(json.dumps(e) + "\n" for e in events).encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_holds, "HOLD_EVENTS", hold_events)
        assert decode(body, fast=True) == decode(body, fast=False)
