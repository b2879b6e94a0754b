"""The OpenAI Chat decoder's fast path for plain text chunks (``OpenAIChatDecoder._text_only``)
gives the events, errors and repairs of its full ``handle``, for any sequence of chunks, fast
path eligible or not (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "openai-chat"

TEXT = st.sampled_from(["", "a", "é", "\n", "{"]) | st.text(max_size=4)
DELTAS = st.fixed_dictionaries(
    {},
    optional={
        "content": st.none() | TEXT | st.integers(-5, 5) | st.just([{"type": "text", "text": "p"}]),
        "role": st.sampled_from(["assistant", None]),
        "reasoning": st.none() | TEXT,
        "refusal": st.none() | TEXT,
        "tool_calls": st.just([{"index": 0, "id": "c1", "function": {"name": "f"}}]),
        "extra": st.integers(-5, 5),
    },
)
CHOICES = st.fixed_dictionaries(
    {},
    optional={
        "index": st.sampled_from([0, 0, 0, 1, "0"]),
        "delta": st.none() | DELTAS | st.integers(-5, 5),
        "message": st.just({"content": "whole"}),
        "finish_reason": st.sampled_from([None, "stop", "length", "", "tool_calls"]),
    },
)
CHUNKS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["chatcmpl-1", "", None, 7]),
        "model": st.sampled_from(["gpt-4o-mini", "", None, 3]),
        "object": st.sampled_from(["chat.completion.chunk", "chat.completion"]),
        "choices": st.none() | st.lists(CHOICES, max_size=2) | st.integers(-5, 5),
        "usage": st.none() | st.just({"prompt_tokens": 3, "completion_tokens": 2}) | st.just({}),
        "x_groq": st.just({"usage": {"prompt_tokens": 1}}) | st.just({}) | st.integers(-5, 5),
        "error": st.none() | st.just({"message": "boom"}),
    },
)
TEXT_CHUNKS = st.builds(
    lambda text, role, finish, index, extra: {
        "id": "chatcmpl-1",
        "model": "gpt-4o-mini",
        "choices": [{"index": index, "delta": {"content": text, **role}, **finish}],
        **extra,
    },
    TEXT,
    st.sampled_from([{}, {"role": "assistant"}]),
    st.sampled_from([{}, {"finish_reason": None}, {"finish_reason": "stop"}]),
    st.sampled_from([0, 0, 1]),
    st.sampled_from([{}, {"usage": None}, {"object": "chat.completion.chunk"}, {"x_groq": {}}]),
)
"""Chunks the fast path takes (and a few near misses)."""
STARTED = {"id": "chatcmpl-1", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {}}]}


def decode(body: bytes, fast: bool) -> Any:
    decoder = get_decoder("openai-chat")
    assert isinstance(decoder, OpenAIChatDecoder)
    setattr(decoder, "fast_text", fast)  # noqa: B010 - a ClassVar, switched per instance
    try:
        events = decoder.feed(body) + decoder.close()
    except Exception as exc:  # compared, not handled
        return (type(exc), str(exc))
    return [event_to_wire(e) for e in events]


def sse(chunks: list[Any], done: bool) -> bytes:
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


@settings(max_examples=300, deadline=None)
@given(
    chunks=st.lists(TEXT_CHUNKS | TEXT_CHUNKS | CHUNKS | st.just(STARTED), max_size=8),
    lead=st.booleans(),
    done=st.booleans(),
)
def test_fast_path_gives_the_events_of_handle(chunks: list[Any], lead: bool, done: bool) -> None:
    body = sse(([STARTED] if lead else []) + chunks, done)
    assert decode(body, True) == decode(body, False)


@pytest.mark.parametrize("path", sorted(CORPUS.iterdir()), ids=lambda p: p.name)
def test_corpus_streams_decode_alike(path: Path) -> None:
    body = path.read_bytes()
    assert decode(body, True) == decode(body, False)
