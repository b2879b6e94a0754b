"""The AI SDK encoder's wire fast path (issue 13: a stored replay is mostly deltas).

``AiSdkEncoder.encode_wire`` hands the hot event types (deltas, text and reasoning start and
end, tool call start, arguments and end) to their handler directly while a step is open and
the message has not ended, skipping :meth:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder.wire_chunks`'
checks of the run's phase. The property: over any event sequence (``event_strategies``: every
``ag_ui.core`` type, in any order, so steps open, close and end mid-way), ``encode_wire`` gives
the bytes of the checked path, ``wire_chunks`` serialized chunk by chunk (the module's
``chunk_bytes``, ``data: <compact JSON>\\n\\n``), with the same repairs counted, for every
``ai`` major the encoder takes.
"""

from __future__ import annotations

import pytest
from ag_ui.core import Event, RunStartedEvent
from event_strategies import event_sequences
from hypothesis import HealthCheck, given, settings

from agui_codecs.core import strict
from agui_codecs.encoders._ai_sdk_parts import chunk_bytes
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _lenient() -> object:
    before = strict()
    strict(False)
    yield
    strict(before)


@pytest.mark.parametrize("major", [None, 5, 6, 7])
@SETTINGS
@given(events=event_sequences())
def test_encode_wire_gives_the_checked_path_bytes(major: int | None, events: list[Event]) -> None:
    fast, checked = AiSdkEncoder(ai_sdk_major=major), AiSdkEncoder(ai_sdk_major=major)
    start = RunStartedEvent(thread_id="t", run_id="r")
    for event in [start, *events]:
        wire = event_to_wire(event)
        expected = b"".join(chunk_bytes(c) for c in checked.wire_chunks(wire))
        assert fast.encode_wire(wire) == expected
    assert fast.close() == checked.close()
    assert fast.repairs.counts == checked.repairs.counts
