"""The wire form of events: the fast path equals the SDK's own serialization."""

from __future__ import annotations

from typing import Any

from ag_ui.core import ReasoningMessageContentEvent, TextMessageContentEvent, ToolCallArgsEvent
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.events import event_to_wire, parse_event

OPTIONAL = st.fixed_dictionaries(
    {},
    optional={
        "timestamp": st.integers(0, 2**40),
        "raw_event": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        "metadata": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
        "subagent_run_id": st.text(max_size=5),
    },
)


@given(text=st.text(), mid=st.text(min_size=1), extra=OPTIONAL)
def test_delta_fast_path_equals_model_dump(text: str, mid: str, extra: dict[str, Any]) -> None:
    for event in (
        TextMessageContentEvent(message_id=mid, delta=text, **extra),
        ReasoningMessageContentEvent(message_id=mid, delta=text, **extra),
        ToolCallArgsEvent(tool_call_id=mid, delta=text, **extra),
    ):
        assert event_to_wire(event) == event.model_dump(mode="json", by_alias=True)
        assert event_to_wire(parse_event(event_to_wire(event))) == event_to_wire(event)


def test_optional_fields_are_omitted_not_null() -> None:
    wire = event_to_wire(TextMessageContentEvent(message_id="m", delta="x"))
    assert wire == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}
