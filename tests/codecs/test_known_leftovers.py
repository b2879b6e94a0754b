"""Known leftovers (issue 11 kind 8): split surrogate pairs and big integers keep their content.

* A provider writing JSON with ``\\uXXXX`` escapes (Python's ``json.dumps`` default, many
  ``ensure_ascii`` servers) may cut a string between the two UTF-16 halves of an astral
  character: ``"\\ud83c"`` in one delta, ``"\\udf0d"`` in the next. Each payload is valid JSON
  (RFC 8259 §7 admits lone escaped surrogates), and the text the decoder emits must be the
  original text: one character, not ``UPSTREAM_MALFORMED`` and not garbage. A half that never
  finds its other half becomes U+FFFD (Unicode §3.9), nothing is dropped.
* Gemini sends ``functionCall.args`` as an object; integers beyond 2^53 (and beyond 64 bits)
  must keep every digit in TOOL_CALL_ARGS (RFC 8259 §6: the text is the number).

Inputs are generated (random strings with astral characters, split at every kind of UTF-16
boundary; random integers of any size), the expected value is the input itself.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import orjson
from decoder_checks import assert_legal_run, decode_split, wire
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.jsontext import dumps, loads
from agui_codecs.surrogates import SurrogateJoiner

ASTRAL = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, exclude_categories=["Cs"])
TEXT = st.lists(st.one_of(ASTRAL, st.characters(exclude_categories=["Cs"])), min_size=1).map(
    "".join
)


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _split(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at UTF-16 code unit offsets: pieces may hold lone surrogates."""
    units = _units(text)
    n = len(units) // 2
    points = sorted({c % (n + 1) for c in cuts} | {0, n})
    return [
        units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")
        for a, b in pairwise(points)
        if b > a
    ]


def _openai(pieces: list[str], field: str) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta}]}
        body["choices"][0]["finish_reason"] = finish
        return b"data: " + json.dumps(body).encode() + b"\n\n"  # ensure_ascii: \uXXXX escapes

    out = b""
    if field == "arguments":
        call = {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}
        out += chunk({"tool_calls": [call]})
        for piece in pieces:
            out += chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        return out + chunk({}, "tool_calls") + b"data: [DONE]\n\n"
    for piece in pieces:
        out += chunk({"content": piece})
    return out + chunk({}, "stop") + b"data: [DONE]\n\n"


def _anthropic(pieces: list[str]) -> bytes:
    payloads: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _gemini(pieces: list[str]) -> bytes:
    out = b""
    for i, piece in enumerate(pieces):
        cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}}
        if i == len(pieces) - 1:
            cand["finishReason"] = "STOP"
        out += b"data: " + json.dumps({"candidates": [cand]}).encode() + b"\r\n\r\n"
    return out


def _joined(events: list[dict[str, Any]], kind: str, field: str) -> str:
    return "".join(e[field] for e in events if e["type"] == kind)


@settings(max_examples=120, deadline=None)
@given(
    text=TEXT,
    cuts=st.lists(st.integers(0, 400), max_size=12),
    where=st.sampled_from(["openai-text", "openai-args", "anthropic", "gemini"]),
    byte_cuts=st.lists(st.integers(1, 3000), max_size=6),
)
def test_a_surrogate_pair_split_across_deltas_is_one_character(
    text: str, cuts: list[int], where: str, byte_cuts: list[int]
) -> None:
    pieces = _split(text, cuts)
    if where == "openai-text":
        name, body, kind, field = (
            "openai-chat",
            _openai(pieces, "content"),
            "TEXT_MESSAGE_CONTENT",
            "delta",
        )
    elif where == "openai-args":
        name, body, kind, field = (
            "openai-chat",
            _openai(pieces, "arguments"),
            "TOOL_CALL_ARGS",
            "delta",
        )
    elif where == "anthropic":
        name, body, kind, field = "anthropic", _anthropic(pieces), "TEXT_MESSAGE_CONTENT", "delta"
    else:
        name, body, kind, field = "gemini", _gemini(pieces), "TEXT_MESSAGE_CONTENT", "delta"
    events = decode_split(name, body, byte_cuts)
    w = wire(events)
    assert w[-1]["type"] == "RUN_FINISHED", w[-1]
    if kind == "TEXT_MESSAGE_CONTENT":
        assert_legal_run(w)
    assert _joined(w, kind, field) == text
    encoder = AguiEncoder()
    for event in events:  # every event can be sent: valid UTF-8 throughout
        encoder.encode(event).decode("utf-8")


@settings(max_examples=100, deadline=None)
@given(
    pieces=st.lists(
        st.text(
            alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
            | st.characters(max_codepoint=0x7F),
            max_size=4,
        ),
        max_size=6,
    )
)
def test_lone_halves_become_replacement_characters_and_nothing_is_dropped(
    pieces: list[str],
) -> None:
    joiner = SurrogateJoiner()
    out = "".join(joiner.push("p", p) for p in pieces) + joiner.flush("p")
    out.encode("utf-8")  # no lone surrogate left
    expected = "".join(pieces).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    assert out == expected


BIG = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.integers(min_value=2**53 - 3, max_value=2**64 + 3),
    st.integers(min_value=-(2**63) - 3, max_value=-(2**53)),
)
ARGS = st.dictionaries(
    st.text(st.characters(min_codepoint=0x61, max_codepoint=0x7A), min_size=1, max_size=5),
    st.one_of(BIG, st.lists(BIG, max_size=3), st.dictionaries(st.just("n"), BIG)),
    max_size=4,
)


@settings(max_examples=120, deadline=None)
@given(args=ARGS, streamed_as=st.sampled_from(["sse", "array"]))
def test_gemini_big_integer_arguments_keep_their_digits(
    args: dict[str, Any], streamed_as: str
) -> None:
    call = {"functionCall": {"name": "lookup", "args": args}}
    doc = {"candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}]}
    text = json.dumps(doc)  # the standard library writes every digit
    body = (
        (b"data: " + text.encode() + b"\r\n\r\n") if streamed_as == "sse" else f"[{text}]".encode()
    )
    w = wire(decode_split("gemini", body, []))
    assert w[-1]["type"] == "RUN_FINISHED"
    arguments = _joined(w, "TOOL_CALL_ARGS", "delta")
    assert json.loads(arguments) == args  # stdlib: exact integers on both sides


@given(
    value=st.recursive(
        BIG | st.text() | st.booleans() | st.none(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=10,
    )
)
@settings(max_examples=100, deadline=None)
def test_jsontext_round_trips_what_orjson_would_change(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert loads(text.encode()) == value
    assert json.loads(dumps(value)) == value
    if not any(isinstance(v, int) and abs(v) >= 2**63 for v in _leaves(value)):
        assert dumps(value) == orjson.dumps(value).decode()


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]
