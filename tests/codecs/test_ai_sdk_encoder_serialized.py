"""The AI SDK encoder's serialized path (``agui_codecs/encoders/_ai_sdk_serialized.py``): a
stored event given as its JSON encodes to the bytes of its wire dict.

The encoder contract (``agui_codecs/encoders/base.py``): for every event ``w``,
``encode_serialized(w["type"], orjson.dumps(w), lambda: w, id=i) == encode_wire(w, id=i)``.
Checked over any event sequence (``event_strategies``), and over text-heavy runs whose deltas
are any text (quotes, backslashes, control characters, non-ASCII: the spliced path's bounds)
and whose ids open, close and repeat, with steps in between, for every ``ai`` major; the state
after each event agrees too (the next bytes, ``close()``, the repairs counted).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from ag_ui.core import Event, RunStartedEvent
from event_strategies import event_sequences
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs.core import strict
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

IDS = st.sampled_from(["m1", "m2", 'q"uote', "a\\", "a\\\\", "ü", ""])
TEXT = st.one_of(st.text(max_size=8), st.sampled_from(['a"b', "a\\b", "line\n", "é", "\u2028"]))


@pytest.fixture(autouse=True)
def _lenient() -> object:
    before = strict()
    strict(False)
    yield
    strict(before)


def _text_wire(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(
            ["content"] * 6 + ["start", "end", "step-start", "step-end", "finished", "started"]
        )
    )
    mid = draw(IDS)
    if kind == "content":
        wire: dict[str, Any] = {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid}
        wire["delta"] = draw(TEXT)
        extra = draw(st.integers(0, 9))
        if extra == 0:
            wire["timestamp"] = 5  # another key: not the spliced shape
        elif extra == 1:
            wire["rawEvent"] = draw(TEXT)  # another key ending the JSON with '"}'
        return wire
    if kind == "start":
        return {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}
    if kind == "end":
        return {"type": "TEXT_MESSAGE_END", "messageId": mid}
    if kind == "step-start":
        return {"type": "STEP_STARTED", "stepName": "s"}
    if kind == "step-end":
        return {"type": "STEP_FINISHED", "stepName": "s"}
    if kind == "finished":
        return {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    return {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


@st.composite
def text_runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """RUN_STARTED, then text events of a few ids (deltas the most), steps, run ends."""
    count = draw(st.integers(0, 30))
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        *(_text_wire(draw) for _ in range(count)),
    ]


def _same(wires: list[dict[str, Any]], major: int | None) -> None:
    serialized = AiSdkEncoder(ai_sdk_major=major, message_id="m")
    wired = AiSdkEncoder(ai_sdk_major=major, message_id="m")
    for index, wire in enumerate(wires):
        cursor = f"1.{index}"
        got = serialized.encode_serialized(
            wire["type"], orjson.dumps(wire), lambda w=wire: w, id=cursor
        )
        assert got == wired.encode_wire(wire, id=cursor), wire
    assert serialized.close() == wired.close()
    assert serialized.repairs.counts == wired.repairs.counts


@pytest.mark.parametrize("major", [None, 6])
@SETTINGS
@given(wires=text_runs())
def test_a_text_run_gives_the_bytes_of_its_wire_dicts(
    major: int | None, wires: list[dict[str, Any]]
) -> None:
    _same(wires, major)


@pytest.mark.parametrize("major", [None, 5, 6, 7])
@SETTINGS
@given(events=event_sequences())
def test_any_event_sequence_gives_the_bytes_of_its_wire_dicts(
    major: int | None, events: list[Event]
) -> None:
    start = RunStartedEvent(thread_id="t", run_id="r")
    _same([dict(event_to_wire(e)) for e in [start, *events]], major)


def test_a_plain_stored_delta_is_spliced_without_parsing() -> None:
    encoder = AiSdkEncoder(message_id="m")
    encoder.encode_wire({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    encoder.encode_wire({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"})
    wire = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " tok1 ü"}

    def unparsed() -> dict[str, Any]:
        raise AssertionError("parsed")

    data = encoder.encode_serialized(wire["type"], orjson.dumps(wire), unparsed)
    assert data == 'data: {"type":"text-delta","id":"m1","delta":" tok1 ü"}\n\n'.encode()
