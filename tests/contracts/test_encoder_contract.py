"""The encoder contract, run over every registered encoder (built-ins and entry-point plugins).

What ``agui_codecs.encoders.base`` promises of every :class:`~agui_codecs.Encoder`, on event
sequences hypothesis draws from every ``ag_ui.core`` event type (``event_strategies``), as
``test_decoder_contract.py`` runs one suite over every decoder:

* ``encode(event, id=i) == encode_wire(event_to_wire(event), id=i)``, also for the wire dict
  after the store's JSON round trip, with its serialized form passed as ``json=``, and as
  ``encode_serialized(type, json, load, id=i)`` (a stored row's type and text), so the
  durable path (stored dicts or text, no model) sends what the live path sends; the ``agui``
  encoder frames the text without parsing it;
* every call returns whole SSE frames (docs/protocols.md §1.2): LF only, each frame ended by a
  blank line, known fields only, one ``data:`` line of compact JSON (or ``[DONE]``), decoded by
  the WHATWG parser (``agui_codecs.sse.SSEDecoder``) into exactly those payloads; a stream the
  AI SDK reads (``x-vercel-ai-ui-message-stream`` header, §3.1) never holds a key
  ``secureJsonParse`` rejects (``__proto__``, ``constructor.prototype``);
* ``id=``: exactly one ``id:`` line, on the event's last frame, for an encoder that writes ids
  (everything else unchanged); none, and the same bytes, for one that does not;
* ``close()`` is idempotent and ends the encoder; the response headers keep proxies from
  buffering (§1.2).

The sequences are of any shape (encoders must cope), so these tests build their encoders
outside strict mode (``agui_codecs.core.illegal``: an encoder refusing an illegal event is
not what they are about); one more test holds that in strict mode ``encode`` and
``encode_wire`` refuse the same events with the same fault, and refusing leaves the encoder
as it was.

A new encoder gets all of it by registering.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import orjson
import pytest
from ag_ui.core import Event, RunStartedEvent
from event_strategies import EVENT_TYPES, event_sequences, models
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs import ENCODERS, Encoder, IllegalEventError, LocalProtocolError
from agui_codecs.core import strict
from agui_codecs.events import event_to_wire
from agui_codecs.sse import SSEDecoder

NAMES = list(ENCODERS)
SETTINGS = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
FIELDS = (b"data", b"id", b"event")


@pytest.fixture(autouse=True, scope="module")
def _lenient() -> Iterator[None]:
    before = strict()
    strict(False)
    yield
    strict(before)


def _encode_all(
    encoder: Encoder, events: list[Event], ids: bool = True
) -> tuple[list[bytes], bytes]:
    out = [encoder.encode(e, id=f"1.{i + 1}" if ids else None) for i, e in enumerate(events)]
    return out, encoder.close()


def test_every_registered_encoder_is_a_named_encoder() -> None:
    assert {"agui", "ai-sdk"} <= set(NAMES)
    for name, cls in ENCODERS.items():
        assert issubclass(cls, Encoder) and cls.name == name


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(events=event_sequences())
def test_encode_is_encode_wire_of_the_wire_form(name: str, events: list[Event]) -> None:
    cls = ENCODERS[name]
    by_model, by_wire, by_stored, by_json, by_text = cls(), cls(), cls(), cls(), cls()
    for index, event in enumerate(events):
        cursor = f"1.{index + 1}"
        wire = event_to_wire(event)
        stored = orjson.loads(orjson.dumps(wire))  # what a store row gives back
        expected = by_model.encode(event, id=cursor)
        assert by_wire.encode_wire(wire, id=cursor) == expected
        assert by_stored.encode_wire(stored, id=cursor) == expected
        assert by_json.encode_wire(stored, id=cursor, json=orjson.dumps(stored)) == expected
        # a stored row's type column and text, the dict parsed only on demand
        text = orjson.dumps(stored)
        serialized = by_text.encode_serialized(
            stored["type"],
            text,
            _loader(text),
            id=cursor,
        )
        assert serialized == expected
    closes = {by_model.close(), by_wire.close(), by_stored.close(), by_json.close()}
    closes.add(by_text.close())
    assert len(closes) == 1


def _loader(text: bytes) -> Callable[[], Any]:
    """What a stored row gives ``encode_serialized``: a parse of its text, on demand."""
    return lambda: orjson.loads(text)


def _unparsed() -> Any:
    raise AssertionError("the agui encoder parsed a serialized event")


@SETTINGS
@given(events=event_sequences(), lines=st.booleans())
def test_the_agui_encoder_frames_serialized_events_without_parsing_them(
    events: list[Event], lines: bool
) -> None:
    """AG-UI frames carry the event's JSON as it is (``@ag-ui/client`` 1.0.0
    ``src/transform/sse.ts`` parses each ``data:`` line as one JSON event), so outside strict
    mode a stored event is framed from its type and text alone: the same bytes as its dict."""
    cls = ENCODERS["agui"]
    by_wire, by_text = cls(event_lines=lines), cls(event_lines=lines)  # type: ignore[call-arg]
    for index, event in enumerate(events):
        wire = event_to_wire(event)
        text = orjson.dumps(wire)
        expected = by_wire.encode_wire(wire, id=f"1.{index + 1}")
        assert by_text.encode_serialized(wire["type"], text, _unparsed, id=f"1.{index + 1}") == (
            expected
        )


def _outcome(call: Callable[[], bytes]) -> bytes | str:
    """The bytes of ``call``, or the fault of the ``IllegalEventError`` it raised."""
    try:
        return call()
    except IllegalEventError as exc:
        return f"refused: {exc.fault}"


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(events=event_sequences())
def test_strict_mode_refuses_the_same_events_from_the_model_and_the_wire_form(
    name: str, events: list[Event]
) -> None:
    """Strict mode checks the input against the AG-UI transition tables on both paths; a
    refused event changes nothing (the next one is encoded as if it had not come)."""
    cls = ENCODERS[name]
    strict(True)
    try:
        by_model, by_wire, skipping, by_text = cls(), cls(), cls(), cls()
    finally:
        strict(False)
    start = RunStartedEvent(thread_id="t", run_id="r")
    for index, event in enumerate([start, *events]):
        cursor = f"1.{index + 1}"
        wire = event_to_wire(event)
        expected = _outcome(lambda: by_model.encode(event, id=cursor))  # noqa: B023
        assert _outcome(lambda: by_wire.encode_wire(wire, id=cursor)) == expected  # noqa: B023
        serialized = partial(
            by_text.encode_serialized,
            wire["type"],
            orjson.dumps(wire),
            _loader(orjson.dumps(wire)),
            id=cursor,
        )
        assert _outcome(serialized) == expected
        if isinstance(expected, bytes):  # the same encoder never shown the refused events
            assert skipping.encode_wire(wire, id=cursor) == expected
    assert by_model.close() == by_wire.close() == skipping.close() == by_text.close()


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("name", NAMES)
@settings(SETTINGS, max_examples=15)
@given(data=st.data())
def test_every_event_type_encodes_the_same_from_its_wire_form(
    name: str, event_type: type[Event], data: st.DataObject
) -> None:
    """Each type on its own after RUN_STARTED (so a stateful encoder is mid-run)."""
    event = data.draw(models(event_type))
    start = RunStartedEvent(thread_id="t", run_id="r")
    by_model, by_wire = ENCODERS[name](), ENCODERS[name]()
    assert by_model.encode(start) == by_wire.encode_wire(event_to_wire(start))
    expected = by_model.encode(event, id="1.2")
    assert by_wire.encode_wire(orjson.loads(orjson.dumps(event_to_wire(event))), id="1.2") == (
        expected
    )
    assert by_model.close() == by_wire.close()


def _frames(chunk: bytes) -> list[list[bytes]]:
    """The frames of one call's bytes, each as its lines; asserts the framing rules."""
    assert b"\r" not in chunk, "LF framing only"
    if not chunk:
        return []
    assert chunk.endswith(b"\n\n"), "a call returns whole frames"
    frames = []
    for frame in chunk[:-2].split(b"\n\n"):
        lines = frame.split(b"\n")
        assert all(lines), f"an empty line inside a frame: {frame!r}"
        for line in lines:
            field, sep, _value = line.partition(b": ")
            assert sep and field in FIELDS, f"unexpected SSE line {line!r}"
        assert [line[:5] for line in lines].count(b"data:") == 1, "one data line per frame"
        frames.append(lines)
    return frames


def _rejected_keys(payload: bytes) -> list[str]:
    """Keys ``secureJsonParse`` (``@ai-sdk/provider-utils``) rejects anywhere in a payload."""
    found: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        for key, value in pairs:
            if key == "__proto__":
                found.append(key)
            if key == "constructor" and isinstance(value, dict) and "prototype" in value:
                found.append("constructor.prototype")
        return dict(pairs)

    json.loads(payload, object_pairs_hook=hook)
    return found


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(events=event_sequences(), ids=st.booleans())
def test_output_is_valid_sse_of_compact_json(name: str, events: list[Event], ids: bool) -> None:
    cls = ENCODERS[name]
    out, tail = _encode_all(cls(), events, ids)
    ai_sdk_reads_it = "x-vercel-ai-ui-message-stream" in cls.headers
    payloads = []
    for chunk in [*out, tail]:
        for lines in _frames(chunk):
            payload = next(line[6:] for line in lines if line.startswith(b"data: "))
            payloads.append(payload)
            if payload == b"[DONE]":
                continue
            assert orjson.dumps(orjson.loads(payload)) == payload, "compact JSON"
            if ai_sdk_reads_it:
                assert _rejected_keys(payload) == []
    decoder = SSEDecoder()
    decoded = decoder.feed(b"".join([*out, tail])) + decoder.close()
    assert [e.data.encode() for e in decoded] == payloads


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(events=event_sequences())
def test_id_is_one_line_on_the_last_frame_or_nothing(name: str, events: list[Event]) -> None:
    cls = ENCODERS[name]
    with_ids, without = cls(), cls()
    for index, event in enumerate(events):
        cursor = f"2.{index + 1}"
        framed, plain = with_ids.encode(event, id=cursor), without.encode(event)
        frames = _frames(framed)
        id_lines = [line for lines in frames for line in lines if line.startswith(b"id:")]
        if cls.writes_ids and frames:
            assert id_lines == [b"id: " + cursor.encode()]
            assert id_lines[0] in frames[-1]
            assert framed.replace(id_lines[0] + b"\n", b"", 1) == plain
        else:
            assert id_lines == [] and framed == plain
    assert with_ids.close() == without.close()


@pytest.mark.parametrize("name", [n for n in NAMES if ENCODERS[n].writes_ids])
@pytest.mark.parametrize("bad", ["1\n2", "1\r2", "1\x002"])
def test_an_id_that_would_break_the_frame_is_refused(name: str, bad: str) -> None:
    with pytest.raises(LocalProtocolError):
        ENCODERS[name]().encode(RunStartedEvent(thread_id="t", run_id="r"), id=bad)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(events=event_sequences(max_size=6))
def test_close_is_idempotent_and_ends_the_encoder(name: str, events: list[Event]) -> None:
    encoder = ENCODERS[name]()
    _encode_all(encoder, events)
    assert encoder.close() == b""  # _encode_all closed it once already
    with pytest.raises(LocalProtocolError):
        encoder.encode(RunStartedEvent(thread_id="t", run_id="r"))
    with pytest.raises(LocalProtocolError):
        encoder.encode_wire({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})


@pytest.mark.parametrize("name", NAMES)
def test_headers_keep_the_stream_unbuffered(name: str) -> None:
    headers = {k.lower(): v for k, v in ENCODERS[name].headers.items()}
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["cache-control"] == "no-cache"
    assert headers["x-accel-buffering"] == "no"
    assert ENCODERS[name].media_type == "text/event-stream"
