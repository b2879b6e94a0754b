"""Decoder contract: whatever the upstream sends, the decoder ends the run, typed, and never
blames itself.

For random bytes, random JSON payloads shaped like the decoder's protocol (its corpus
vocabulary: field names, ``type`` values, SSE event names) and corpus payloads with one value
replaced by a random one, fed in random splits, to every registered decoder:

* no exception escapes ``feed()`` / ``close()``;
* the events are a legal run for ``@ag-ui/client`` 1.0.0 (the conformance kit, no error-level
  violation) that ends with RUN_FINISHED or RUN_ERROR, and every RUN_ERROR has a ``code``;
* a fault of the input is a typed :class:`~agui_codecs.RemoteProtocolError` whose code is the
  last RUN_ERROR's, and never :class:`~agui_codecs.InternalDecoderError`: a decoder flags a bad
  upstream shape itself, so the base class's catch-all (``INTERNAL_DECODER_ERROR``, logged and
  counted) only ever means a bug of ours.

``GATEWAY_TEST_FUZZ_EXAMPLES`` raises the number of examples per decoder (default 40) for a
longer hunt.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

import eventstream
import pytest
from botocore.eventstream import EventStreamBuffer
from corpus import corpus_files
from decoder_checks import kit_report
from decoder_runs import DECODER_FAMILIES, decoder_names, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs import InternalDecoderError, RemoteProtocolError, get_decoder
from agui_codecs.protocols.base import INTERNAL_ERRORS
from agui_codecs.sse import SSEDecoder

NAMES = decoder_names()
EXAMPLES = int(os.environ.get("GATEWAY_TEST_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Payload = tuple[str | None, Any]  # (SSE event name, JSON value)
TOKENS = [b"data: ", b"data:", b"event: error\n", b"event: message\n", b": ping\n", b"\n",
          b"\n\n", b"\r\n", b"\r", b"{", b"}", b"[", b"]", b'"type"', b'"x"', b":", b",",
          b"[DONE]", b"null", b"1", b"-0.5e3", b"\xef\xbb\xbf", b"\xff", b" "]  # fmt: skip


def _framing(data: bytes) -> str:
    if data[:1] == b"\x00":  # an AWS event-stream prelude
        return "eventstream"
    head = data.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1]
    return "jsonl" if head == b"{" else "json" if head == b"[" else "sse"


def _payloads(data: bytes) -> list[Payload]:
    """A corpus file's payloads with their SSE event names (event-stream: the ``:event-type``
    or ``:exception-type``), parsed for mutation."""
    form = _framing(data)
    if form == "eventstream":
        buffer = EventStreamBuffer()
        buffer.add_data(data)
        return [
            (
                m.headers.get(":event-type") or m.headers.get(":exception-type"),
                json.loads(m.payload),
            )
            for m in buffer
        ]
    if form == "json":
        return [(None, v) for v in json.loads(data.decode("utf-8-sig"))]
    if form == "jsonl":
        return [(None, json.loads(line)) for line in data.splitlines() if line.strip()]
    decoder = SSEDecoder()
    events = decoder.feed(data) + decoder.close()
    out: list[Payload] = []
    for ev in events:
        if ev.data.strip() and ev.data.strip() != "[DONE]":
            out.append((ev.event, json.loads(ev.data)))
    return out


@functools.cache
def _corpus(name: str) -> tuple[tuple[str, tuple[Payload, ...]], ...]:
    family = DECODER_FAMILIES.get(name)
    files = corpus_files(family) if family else []
    return tuple(
        (_framing(data), tuple(_payloads(data))) for data in (p.read_bytes() for p in files)
    )


def _walk(value: Any, keys: set[str], strings: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            keys.add(key)
            _walk(item, keys, strings)
    elif isinstance(value, list):
        for item in value:
            _walk(item, keys, strings)
    elif isinstance(value, str) and len(value) < 40:
        strings.add(value)


@functools.cache
def _vocabulary(name: str) -> tuple[list[str], list[str], list[str]]:
    """(field names, short strings, ``type`` values) of the decoder's corpus."""
    keys, strings, types = {"type", "id", "index", "text", "delta", "content"}, {"x"}, set()
    for _, payloads in _corpus(name):
        for _, value in payloads:
            _walk(value, keys, strings)
            if isinstance(value, dict) and isinstance(value.get("type"), str):
                types.add(value["type"])
    return sorted(keys), sorted(strings), sorted(types) or ["x"]


def _json(name: str) -> st.SearchStrategy[Any]:
    keys, strings, _ = _vocabulary(name)
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.sampled_from(strings)
        | st.text(max_size=4)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(keys), inner, max_size=5)
        ),
        max_leaves=16,
    )


def _frame(form: str, payloads: list[Payload]) -> bytes:
    if form == "eventstream":
        return b"".join(eventstream.event(e or "message", v) for e, v in payloads)
    if form == "json":
        return ("[" + ",\n".join(json.dumps(v) for _, v in payloads) + "]").encode()
    if form == "jsonl":
        return b"".join(json.dumps(v).encode() + b"\n" for _, v in payloads)
    out = b""
    for event, value in payloads:
        if event is not None and event != "message":
            out += b"event: " + event.encode() + b"\n"
        out += b"data: " + json.dumps(value).encode() + b"\n\n"
    return out


def _replace(value: Any, path: list[Any], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    for key, item in items:
        out += _paths(item, (*prefix, key))
    return out


def _run(name: str, body: bytes, splits: list[int]) -> None:
    """Decode ``body`` split at ``splits`` and check every promise of the module docstring."""
    before = sum(INTERNAL_ERRORS.values())
    decoder = get_decoder(name)
    events = []
    prev = 0
    for cut in sorted({c for c in splits if 0 < c < len(body)}):
        events += decoder.feed(body[prev:cut])
        prev = cut
    events += decoder.feed(body[prev:]) + decoder.close()
    evs = wire(events)
    assert not isinstance(decoder.error, InternalDecoderError), repr(decoder.error.__cause__)
    assert sum(INTERNAL_ERRORS.values()) == before
    assert evs and evs[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), evs[-1:]
    assert all(e.get("code") for e in evs if e["type"] == "RUN_ERROR")
    report = kit_report(evs)
    assert report.errors == [], [v.to_json() for v in report.errors]
    if decoder.error is not None:
        assert isinstance(decoder.error, RemoteProtocolError)
        assert evs[-1]["type"] == "RUN_ERROR" and evs[-1]["code"] == decoder.error.code


def _splits(data: st.DataObject, body: bytes) -> list[int]:
    return data.draw(st.lists(st.integers(0, len(body)), max_size=8), label="splits")


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_random_bytes_end_in_a_typed_legal_run(name: str, data: st.DataObject) -> None:
    noise = st.binary(max_size=300) | st.lists(st.sampled_from(TOKENS), max_size=60).map(b"".join)
    body = data.draw(noise, label="body")
    _run(name, body, _splits(data, body))


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_random_protocol_shaped_payloads_end_in_a_typed_legal_run(
    name: str, data: st.DataObject
) -> None:
    _, strings, types = _vocabulary(name)
    values = st.dictionaries(st.sampled_from(_vocabulary(name)[0]), _json(name), max_size=5)
    typed = st.tuples(values, st.sampled_from(types) | st.sampled_from(strings)).map(
        lambda pair: {**pair[0], "type": pair[1]}
    )
    event = st.none() | st.sampled_from(["error", "message", *types])
    payloads = data.draw(st.lists(st.tuples(event, typed | _json(name)), max_size=8))
    body = _frame(data.draw(st.sampled_from(["sse", "jsonl", "json"])), payloads)
    _run(name, body, _splits(data, body))


@pytest.mark.parametrize("name", [n for n in NAMES if n in DECODER_FAMILIES])
@FUZZ
@given(data=st.data())
def test_corpus_payloads_with_a_value_replaced_end_in_a_typed_legal_run(
    name: str, data: st.DataObject
) -> None:
    form, payloads = data.draw(st.sampled_from(_corpus(name)), label="file")
    index = data.draw(st.integers(0, len(payloads) - 1), label="payload")
    kept = list(payloads[: index + data.draw(st.integers(1, 4))])
    for _ in range(data.draw(st.integers(1, 2))):
        at = data.draw(st.integers(0, min(index, len(kept) - 1)))
        event, value = kept[at]
        path = data.draw(st.sampled_from(_paths(value)), label="path")
        kept[at] = (event, _replace(value, list(path), data.draw(_json(name), label="value")))
    body = _frame(form, kept)
    _run(name, body, _splits(data, body))
