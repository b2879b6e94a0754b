"""The Anthropic decoder's fast path for text and thinking deltas of an open block
(``AnthropicDecoder._delta_only``) gives the events, errors and repairs of its full ``handle``,
for any sequence of stream events, fast path eligible or not, and every recorded Anthropic
stream (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.anthropic.decoder import AnthropicDecoder

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "anthropic"

START = {
    "type": "message_start",
    "message": {"id": "msg_1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 3}},
}
INDEX = st.integers(0, 2) | st.sampled_from([True, "0", None, 1.0])
BLOCKS = st.sampled_from(
    [
        {"type": "text", "text": ""},
        {"type": "thinking", "thinking": ""},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        {"type": "mystery_block"},
    ]
)
DELTA_BODIES = st.fixed_dictionaries(
    {"type": st.sampled_from(["text_delta", "thinking_delta", "signature_delta", "x", 3])},
    optional={
        "text": st.sampled_from(["a", "", "\u00e9", None, 3]),
        "thinking": st.sampled_from(["hm", "", None, ["x"]]),
        "signature": st.just("sig"),
    },
)
EVENTS = st.lists(
    st.one_of(
        st.builds(
            lambda i, d: {"type": "content_block_delta", "index": i, "delta": d},
            INDEX,
            DELTA_BODIES | st.sampled_from([None, "x"]),
        ),
        st.builds(
            lambda i, b: {"type": "content_block_start", "index": i, "content_block": b},
            INDEX,
            BLOCKS,
        ),
        st.builds(lambda i: {"type": "content_block_stop", "index": i}, INDEX),
        st.just({"type": "ping"}),
        st.just({"type": ["content_block_delta"]}),
        st.just({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        st.just({"type": "message_stop"}),
    ),
    max_size=10,
)


def decode(body: bytes, fast: bool) -> Any:
    decoder = get_decoder("anthropic")
    assert isinstance(decoder, AnthropicDecoder)
    setattr(decoder, "fast_deltas", fast)  # noqa: B010 - a ClassVar, switched per instance
    try:
        events = decoder.feed(body) + decoder.close()
    except Exception as exc:  # compared, not handled
        return (type(exc), str(exc))
    error = None if decoder.error is None else (type(decoder.error), decoder.error.code)
    return [event_to_wire(e) for e in events], error


@given(st.booleans(), EVENTS)
def test_any_event_sequence_decodes_the_same(started: bool, events: list[Any]) -> None:
    body = b"".join(orjson.dumps(e) + b"\n" for e in ([START] if started else []) + events)
    assert decode(body, fast=True) == decode(body, fast=False)


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_recorded_streams_decode_the_same(path: Path) -> None:
    assert decode(path.read_bytes(), fast=True) == decode(path.read_bytes(), fast=False)


@pytest.mark.parametrize(("fast", "dispatched"), [(True, 0), (False, 1)])
def test_a_text_delta_takes_the_fast_path(
    monkeypatch: pytest.MonkeyPatch, fast: bool, dispatched: int
) -> None:
    """The fast path is taken: a text delta of an open block skips the dispatch."""
    decoder = get_decoder("anthropic")
    setattr(decoder, "fast_deltas", fast)  # noqa: B010 - a ClassVar, switched per instance
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    decoder.feed(orjson.dumps(START) + b"\n" + orjson.dumps(block) + b"\n")
    calls: list[Any] = []
    on_delta = AnthropicDecoder._on_block_delta
    handlers = {**AnthropicDecoder._HANDLERS}
    handlers["content_block_delta"] = lambda self, p: calls.append(p) or on_delta(self, p)
    monkeypatch.setattr(AnthropicDecoder, "_HANDLERS", handlers)
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    out = decoder.feed(orjson.dumps({**delta, "delta": {"type": "text_delta", "text": "hi"}}))
    out += decoder.feed(b"\n")
    wire = event_to_wire(out[-1])
    assert (wire["type"], wire["delta"]) == ("TEXT_MESSAGE_CONTENT", "hi")
    assert len(calls) == dispatched


@pytest.mark.parametrize("kind", ["mystery_block", "text", "thinking"])
def test_a_delta_of_each_block_kind_decodes_the_same(kind: str) -> None:
    """A text delta inside a block of a kind this decoder does not know is kept for that
    block's CUSTOM event, not sent as text: both ways."""
    events = [
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": kind}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    body = b"".join(orjson.dumps(e) + b"\n" for e in events)
    fast = decode(body, fast=True)
    assert fast == decode(body, fast=False)
    texts = [w for w in fast[0] if w["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(texts) == (0 if kind == "mystery_block" else 1)
