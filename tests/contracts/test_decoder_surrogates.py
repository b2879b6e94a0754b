"""Decoder contract: a lone escaped surrogate anywhere in a payload never breaks a run.

RFC 8259 §7 admits ``"\\ud800"`` (a lone UTF-16 surrogate escape) in a JSON string and §8.2
leaves its meaning open; orjson refuses it, so :func:`agui_codecs.jsontext.parse` keeps it as a
lone code point and flags the frame. A provider splitting an astral character across two
deltas sends exactly that (the halves are joined: ``tests/codecs/test_known_leftovers.py``);
anywhere else (an id, a tool name, a key, a raw event) the half becomes U+FFFD
(``agui_codecs.surrogates.scrub_event``). The long fuzz hunt found the kind: an ``agui`` body
whose raw event held ``"\\ud800"`` ended with ``INTERNAL_DECODER_ERROR`` (pydantic could not
serialize the string).

For every registered decoder with a corpus, corpus bodies get lone surrogate escapes put at the
start or end of random JSON string literals (values and keys), fed whole and in random splits:

* the run never ends with :class:`~agui_codecs.InternalDecoderError`;
* every event serializes as UTF-8 JSON (``orjson``), and both encoders take the run;
* the same events for every split.
"""

from __future__ import annotations

import os
import re
from typing import Any

import orjson
import pytest
from decoder_runs import DECODER_FAMILIES, decode, decoder_names, encode_agui, encode_ai_sdk, wire
from fuzz_inputs import family_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs import InternalDecoderError, jsontext

_HALVES = (b"\\ud800", b"\\udbff", b"\\udc00", b"\\udfff", b"\\ud83c", b"\\udf0d", b"\\uD83C")
_ENCODED_HALVES = (b"\xed\xa0\x80", b"\xed\xb0\x80", b"\xed\xa0\xbc")
"""A surrogate written as UTF-8 bytes (CESU-8 style): invalid UTF-8, which every framing must
take the same way whatever the split (the long hunt found the JSON fast path letting it
through as a lone surrogate while the SSE decoder replaced each byte)."""
_STRING_START = re.compile(rb'(?<![\\])"(?=[A-Za-z0-9 _.,:{}\[\]-])')
"""An opening or closing quote of a JSON string literal (roughly: a quote not escaped, next to
ordinary text); inserting an escape right after it lands inside a string either way."""

NAMES = [
    n for n in decoder_names() if DECODER_FAMILIES.get(n) and family_corpus(DECODER_FAMILIES[n])
]


@st.composite
def bodies(draw: st.DrawFn, name: str) -> bytes:
    corpus = family_corpus(DECODER_FAMILIES[name])
    body = draw(st.sampled_from(corpus))
    body = body[: draw(st.sampled_from([2048, 8192, len(body)]))]
    spots = [m.end() for m in _STRING_START.finditer(body)]
    if not spots:
        return body
    chosen = sorted(set(draw(st.lists(st.sampled_from(spots), min_size=1, max_size=4))))
    out, prev = [], 0
    for at in chosen:
        out += [body[prev:at], draw(st.sampled_from(_HALVES + _ENCODED_HALVES))]
        prev = at
    return b"".join([*out, body[prev:]])


def _check(name: str, body: bytes, cuts: list[int]) -> None:
    events, decoder = decode(name, body)
    assert not isinstance(decoder.error, InternalDecoderError), decoder.error
    wires: list[dict[str, Any]] = wire(events)
    orjson.dumps(wires)  # raises on a lone surrogate: every string must be valid Unicode
    encode_agui(events)
    encode_ai_sdk(events)
    split_events, split_decoder = decode(name, body, cuts)
    assert wire(split_events) == wires
    assert not isinstance(split_decoder.error, InternalDecoderError)


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=int(os.environ.get("GATEWAY_TEST_SURROGATE_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_lone_surrogate_escapes_anywhere_end_in_a_legal_run(name: str, data: st.DataObject) -> None:
    body = data.draw(bodies(name), label="body")
    cuts = data.draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=8), label="cuts")
    _check(name, body, cuts)


def test_the_found_agui_raw_event_with_a_lone_surrogate() -> None:
    """The hunt's input, reduced: a TOOL_CALL_START whose ``rawEvent`` key holds ``\\ud800``."""
    body = (
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
        b'data: {"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f",'
        b'"rawEvent":{"role\\ud800":"assistant"}}\n\n'
        b'data: {"type":"TOOL_CALL_END","toolCallId":"c"}\n\n'
        b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'
    )
    events, decoder = decode("agui", body)
    assert decoder.error is None
    start = next(e for e in wire(events) if e["type"] == "TOOL_CALL_START")
    assert start["rawEvent"] == {"role\ufffd": "assistant"}
    assert wire(events)[-1]["type"] == "RUN_FINISHED"


def test_a_hosted_tool_item_with_a_lone_surrogate_is_kept_as_its_escape() -> None:
    """Found by the property in CI: an ``image_generation_call`` item whose ``.done`` held a key
    ``"\\ud800status"`` ended the run with ``INTERNAL_DECODER_ERROR`` (the decoder serialized
    the item for TOOL_CALL_RESULT with orjson, which refuses the lone surrogate). The result's
    JSON text now keeps the escape, so it reads back as the item the upstream sent."""
    done = b'"type":"response.output_item.done"'
    marker = b'"type":"image_generation_call","status":"completed"'
    body = next(
        b
        for b in family_corpus(DECODER_FAMILIES["openai-responses"])
        if any(done in line and marker in line for line in b.splitlines())
    )
    lines = body.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if done in line and marker in line)
    lines[at] = lines[at].replace(
        marker, b'"type":"image_generation_call","\\ud800status":"completed"'
    )
    events, decoder = decode("openai-responses", b"".join(lines))
    assert decoder.error is None
    results = [e for e in wire(events) if e["type"] == "TOOL_CALL_RESULT"]
    items = [jsontext.loads(r["content"]) for r in results]
    assert any(i.get("\ud800status") == "completed" for i in items if isinstance(i, dict))
    assert any('"\\ud800status":"completed"' in r["content"] for r in results)
    orjson.dumps(wire(events))


_FOUND_SPLIT = b'data: {"candidates": [{"content": {"parts": [{"text": "1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n10\\n11\\n12\\n13\\n1"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 18,"candidatesTokenCount": 31,"totalTokenCount": 84,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 18}],"thoughtsTokenCount": 35,"serviceTier": "standard"},"modelVersion": "gemini-2.5-flash","responseId": "ru1garvBEoOiqtsP2fznmQw"}\n\ndata: {"candidates": [{"content": {"parts": [{"text": "4\\n15\\n16\\n17\\n18\\n19\\n20\\n21\\n22\\n23\\n24\\n25\\n26\\n27\\n28\\n29\xed\xa0\x80\\n3"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 18,"candidatesTokenCount": 79,"totalTokenCount": 132,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 18}],"thoughtsTokenCount": 35,"serviceTier": "standard"},"modelVersion": "gemini-2.5-flash","responseId": "ru1garvBEoOiqtsP2fznmQw"}\n\ndata: {"candidates": [{"content": {"parts": [{"text": "0"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 18,"candidatesTokenCount": 80,"totalTokenCount": 13 3,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 18}],"thoughtsTokenCount": 35,"serviceTier": "standard"},"modelVersion": "gemini-2.5-flash","responseId": "ru1garvBEoOiqtsP2fznmQw"}\n\n'
"""The long hunt's input (``split-gemini-8d10b49f5a1a``): a Gemini SSE body whose second frame
holds a surrogate written as UTF-8 bytes (``\\xed\\xa0\\x80``), its third frame malformed."""


def test_the_hunts_split_dependent_gemini_body_decodes_the_same_in_any_split() -> None:
    """Whole, the second frame took the JSON fast path, whose standard-library fallback read the
    bytes as one lone surrogate (one U+FFFD); cut at the hunt's offsets, the SSE decoder replaced
    each byte (three). The fallback now takes bytes as strict UTF-8, as orjson does."""
    whole, _ = decode("gemini", _FOUND_SPLIT)
    split, _ = decode("gemini", _FOUND_SPLIT, [853, 946, 958, 540, 914, 115])
    assert wire(split) == wire(whole)
    by_byte, _ = decode("gemini", _FOUND_SPLIT, range(1, len(_FOUND_SPLIT)))
    assert wire(by_byte) == wire(whole)
