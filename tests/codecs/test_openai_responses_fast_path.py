"""The OpenAI Responses decoder's fast path for delta events of a started run
(``OpenAIResponsesDecoder._delta_only``) gives the events, errors and repairs of its full
``handle``, for any sequence of stream events, fast path eligible or not, and every recorded
Responses stream (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.openai_responses.decoder import OpenAIResponsesDecoder

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "openai-responses"

RESPONSE = {"id": "resp_1", "model": "gpt-5", "status": "in_progress", "output": []}
ITEMS = st.sampled_from(
    [
        {"type": "message", "id": "msg_1", "role": "assistant", "content": []},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""},
    ]
)
DELTA_TYPES = st.sampled_from(
    [
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.function_call_arguments.delta",
        "response.custom_tool_call_input.delta",
        "response.output_text.done",
        "response.in_progress",
        ["not", "a", "type"],
    ]
)
DELTAS = st.fixed_dictionaries(
    {"type": DELTA_TYPES},
    optional={
        "sequence_number": st.integers(0, 6) | st.sampled_from([True, "3", None, 2.0]),
        "output_index": st.integers(0, 2) | st.sampled_from([None, False]),
        "item_id": st.sampled_from(["msg_1", "rs_1", "fc_1", "", 5]),
        "content_index": st.integers(0, 1),
        "summary_index": st.integers(0, 1),
        "delta": st.sampled_from(["a", "", "é", '{"x":', None, 3]),
        "text": st.sampled_from(["whole", None]),
        "response": st.sampled_from([RESPONSE, None, "x"]),
    },
)
ADDED = st.builds(
    lambda item, index, seq: {
        "type": "response.output_item.added",
        "output_index": index,
        "item": item,
        **seq,
    },
    ITEMS,
    st.integers(0, 2),
    st.sampled_from([{}, {"sequence_number": 1}]),
)
ENDS = st.sampled_from(
    [
        {"type": "response.completed", "response": {**RESPONSE, "status": "completed"}},
        {"type": "response.failed", "response": {**RESPONSE, "error": {"message": "boom"}}},
        {"type": "response.created", "response": {**RESPONSE, "id": "resp_2"}},
    ]
)
EVENTS = st.lists(st.one_of(DELTAS, DELTAS, ADDED, ENDS), max_size=10)


def decode(body: bytes, fast: bool) -> Any:
    decoder = get_decoder("openai-responses")
    assert isinstance(decoder, OpenAIResponsesDecoder)
    setattr(decoder, "fast_deltas", fast)  # noqa: B010 - a ClassVar, switched per instance
    try:
        events = decoder.feed(body) + decoder.close()
    except Exception as exc:  # compared, not handled
        return (type(exc), str(exc))
    error = None if decoder.error is None else (type(decoder.error), decoder.error.code)
    return [event_to_wire(e) for e in events], error, decoder.trailing


@given(st.booleans(), EVENTS)
def test_any_event_sequence_decodes_the_same(started: bool, events: list[Any]) -> None:
    head = [{"type": "response.created", "response": RESPONSE}] if started else []
    body = b"".join(orjson.dumps(e) + b"\n" for e in head + events)
    assert decode(body, fast=True) == decode(body, fast=False)


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_recorded_streams_decode_the_same(path: Path) -> None:
    assert decode(path.read_bytes(), fast=True) == decode(path.read_bytes(), fast=False)


@pytest.mark.parametrize(("fast", "handled"), [(True, 0), (False, 1)])
def test_a_text_delta_takes_the_fast_path(
    monkeypatch: pytest.MonkeyPatch, fast: bool, handled: int
) -> None:
    """The fast path is taken: a started run's text delta skips ``handle``'s reading of the
    response (its ``run.start(upstream_id=..., model=...)``)."""
    decoder = get_decoder("openai-responses")
    setattr(decoder, "fast_deltas", fast)  # noqa: B010 - a ClassVar, switched per instance
    decoder.feed(orjson.dumps({"type": "response.created", "response": RESPONSE}) + b"\n")
    starts: list[Any] = []
    start = decoder.run.start
    monkeypatch.setattr(decoder.run, "start", lambda **kw: starts.append(kw) or start(**kw))
    delta = {"type": "response.output_text.delta", "output_index": 0, "delta": "hi"}
    out = decoder.feed(orjson.dumps({**delta, "sequence_number": 2}) + b"\n")
    assert [event_to_wire(e)["type"] for e in out] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
    ]
    assert sum("upstream_id" in kw for kw in starts) == handled


@pytest.mark.parametrize("replayed", [2, 1, True, "3"])
def test_a_replayed_or_odd_sequence_number_decodes_the_same(replayed: Any) -> None:
    """A resumed stream replays events (``sequence_number`` not above the last): dropped both
    ways; a non-integer one is left to ``handle``."""
    delta = {"type": "response.output_text.delta", "output_index": 0, "delta": "hi"}
    events = [
        {"type": "response.created", "response": RESPONSE, "sequence_number": 0},
        {**delta, "sequence_number": 2},
        {**delta, "sequence_number": replayed},
        {"type": "response.completed", "response": {**RESPONSE, "status": "completed"}},
    ]
    body = b"".join(orjson.dumps(e) + b"\n" for e in events)
    fast = decode(body, fast=True)
    assert fast == decode(body, fast=False)
    texts = [w["delta"] for w in fast[0] if w["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts == (["hi"] if type(replayed) is int else ["hi", "hi"])
