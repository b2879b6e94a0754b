"""AWS event-stream framing of ``bedrock-converse`` (``protocols/bedrock_converse/_eventstream``).

The expected messages come from botocore's own parser (``botocore.eventstream.EventStreamBuffer``,
what boto3 reads ConverseStream with) run over the same bytes, and from the layout of the Smithy
"Amazon Event Stream Specification": the test encoder (``tests/support/eventstream.py``) is
first proven against botocore, then used to build bodies of any shape (hypothesis), which the
framing must split exactly as botocore does, however the bytes are cut. Faults (a CRC that does
not match, a length under 16 bytes or over the cap, a message cut short, a payload that is not
JSON) are typed error frames after the good ones.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

import eventstream
from corpus import corpus_files
from eventstream import MODEL_STREAM_ERROR, botocore_frames
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs import EventTooLargeError, MalformedUpstreamError
from agui_codecs.framing import Frame
from agui_codecs.protocols.bedrock_converse._eventstream import (
    ERROR_KEY,
    EventStreamFrames,
    _botocore_message,
    _frame,
    _message_frame,
    _string_message,
)

CAP = 8 * 1024 * 1024


def split(body: bytes, cuts: list[int]) -> list[Frame]:
    framer = EventStreamFrames(max_event_size=CAP)
    out: list[Frame] = []
    prev = 0
    for cut in sorted({c for c in cuts if 0 < c < len(body)}):
        out += framer.feed(body[prev:cut])
        prev = cut
    return out + framer.feed(body[prev:]) + framer.close()


def test_the_test_encoder_writes_what_botocore_reads() -> None:
    body = eventstream.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "é"}})
    body += eventstream.exception("throttlingException", {"message": "slow down"})
    assert botocore_frames(body) == [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "é"}}},
        {"throttlingException": {"message": "slow down"}},
    ]


def test_recorded_bodies_split_as_botocore_splits_them_whole_and_byte_by_byte() -> None:
    files = [p for p in corpus_files("bedrock-converse") if p.suffix == ".eventstream"]
    assert files
    for path in files:
        body = path.read_bytes()
        expected = botocore_frames(body)
        assert [f.data for f in split(body, [])] == expected, path.name
        assert [f.data for f in split(body, list(range(len(body))))] == expected, path.name


def test_a_recorded_exception_message_is_a_frame_of_its_exception_type() -> None:
    [frame] = split(MODEL_STREAM_ERROR, [])
    assert frame.error is None
    assert frame.data == botocore_frames(MODEL_STREAM_ERROR)[0]
    assert frame.data["modelStreamErrorException"]["originalStatusCode"] == 500


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
_MESSAGE = st.tuples(
    st.sampled_from(["event", "exception"]),
    st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF), min_size=1, max_size=30),
    _JSON,
)


@settings(max_examples=60, deadline=None)
@given(messages=st.lists(_MESSAGE, min_size=1, max_size=6), data=st.data())
def test_any_body_splits_as_botocore_splits_it_however_it_is_cut(
    messages: list[tuple[str, str, object]], data: st.DataObject
) -> None:
    body = b"".join(
        (eventstream.event if kind == "event" else eventstream.exception)(name, payload)
        for kind, name, payload in messages
    )
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=12))
    frames = split(body, cuts)
    assert all(f.error is None for f in frames)
    assert [f.data for f in frames] == botocore_frames(body)


def test_an_error_message_carries_its_code_and_message() -> None:
    body = eventstream.encode_message(
        {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom"}, b""
    )
    [frame] = split(body, [])
    assert frame.data == {ERROR_KEY: {"code": "InternalFailure", "message": "boom"}}


def _last_error(frames: list[Frame]) -> object:
    assert frames[-1].data is None and frames[-1].error is not None
    assert all(f.error is None for f in frames[:-1])
    return frames[-1].error


def test_a_crc_mismatch_is_malformed_after_the_good_messages() -> None:
    good = eventstream.event("messageStart", {"role": "assistant"})
    bad = bytearray(eventstream.event("messageStop", {"stopReason": "end_turn"}))
    bad[-6] ^= 0x20  # a payload byte: the message CRC no longer matches
    frames = split(good + bytes(bad) + good, [])
    assert [f.data for f in frames[:-1]] == [{"messageStart": {"role": "assistant"}}]
    assert isinstance(_last_error(frames), MalformedUpstreamError)


def test_a_prelude_crc_mismatch_is_malformed() -> None:
    bad = bytearray(eventstream.event("messageStart", {}))
    bad[9] ^= 1
    assert isinstance(_last_error(split(bytes(bad), [])), MalformedUpstreamError)


def test_lengths_under_the_minimum_or_over_the_cap_are_refused_before_buffering() -> None:
    assert isinstance(_last_error(split(b"\x00\x00\x00\x08" + b"\x00" * 20, [])),
                      MalformedUpstreamError)  # fmt: skip
    framer = EventStreamFrames(max_event_size=1024)
    frames = framer.feed(b"\x00\x01\x00\x00")  # 65536 bytes announced, 4 received
    assert isinstance(_last_error(frames), EventTooLargeError)
    assert framer.feed(eventstream.event("messageStart", {})) == []  # nothing after a fault


def test_headers_longer_than_the_message_are_malformed() -> None:
    frames = split(b"\x00\x00\x00\x20\x00\x00\x00\x40" + b"\x00" * 24, [])
    assert isinstance(_last_error(frames), MalformedUpstreamError)


def test_a_payload_that_is_not_json_is_malformed() -> None:
    body = eventstream.encode_message(
        {":message-type": "event", ":event-type": "messageStart"}, b"{not json"
    )
    assert isinstance(_last_error(split(body, [])), MalformedUpstreamError)


def test_a_message_without_its_type_header_is_malformed() -> None:
    body = eventstream.encode_message({":message-type": "event"}, b"{}")
    assert isinstance(_last_error(split(body, [])), MalformedUpstreamError)


def test_a_message_cut_short_by_eof_is_truncated() -> None:
    body = eventstream.event("messageStart", {"role": "assistant"})
    frames = split(body + body[:10], [])
    assert frames[0].data == {"messageStart": {"role": "assistant"}}
    error = _last_error(frames)
    assert getattr(error, "code", None) == "UPSTREAM_TRUNCATED"


def test_a_text_body_is_read_as_json_lines_or_sse() -> None:
    line = b'{"messageStart": {"role": "assistant"}}\n'
    assert [f.data for f in split(line * 2, [3, 17])] == [
        {"messageStart": {"role": "assistant"}}
    ] * 2
    sse = b'event: messageStart\ndata: {"role": "assistant"}\n\n'
    [frame] = split(sse, [5])
    assert (frame.event, frame.data) == ("messageStart", {"role": "assistant"})


HEADER_NAMES = st.sampled_from(
    [":message-type", ":event-type", ":exception-type", ":error-code", ":error-message", "x", ""]
)
HEADER_VALUES = st.sampled_from(
    ["event", "exception", "error", "contentBlockDelta", "throttlingException", "", "é"]
) | st.text(max_size=4)


@st.composite
def raw_headers(draw: st.DrawFn) -> bytes:
    """Headers of any value type (7, the string, most often), names possibly repeated, lengths
    possibly wrong, bytes possibly not UTF-8."""
    out = b""
    for _ in range(draw(st.integers(0, 4))):
        name = draw(HEADER_NAMES).encode() if draw(st.integers(0, 29)) else b"\xff"
        out += bytes([len(name)]) + name
        kind = (
            7 if draw(st.integers(0, 4)) else draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 8, 9, 10]))
        )
        out += bytes([kind])
        if kind == 7 or kind == 6:
            value = draw(HEADER_VALUES).encode() if draw(st.integers(0, 29)) else b"\xc3"
            length = len(value) + (
                draw(st.sampled_from([1, -1])) if draw(st.integers(0, 9)) == 0 else 0
            )
            out += max(length, 0).to_bytes(2, "big") + value
        else:
            out += draw(st.binary(max_size={2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}.get(kind, 0)))
    return out


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    """One message of any headers and payload, its CRCs right or (sometimes) a byte flipped."""
    headers = draw(raw_headers())
    payload = draw(st.sampled_from([b"", b"{}", b'{"a":1}', b"not json", b"[1]"]))
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    raw = bytearray(body + struct.pack(">I", zlib.crc32(body)))
    if draw(st.integers(0, 5)) == 0:
        at = draw(st.integers(8, len(raw) - 1))
        raw[at] ^= draw(st.integers(1, 255))
    return bytes(raw)


def _outcome(read: Callable[[], Frame]) -> object:
    try:
        return read().data
    except MalformedUpstreamError as exc:
        return (type(exc), str(exc))


@settings(max_examples=400)
@given(messages())
def test_the_string_header_fast_path_reads_as_botocore(raw: bytes) -> None:
    """``_message_frame`` (string headers read without botocore) gives the frame, or the
    error, of botocore's own reading of the same message."""
    assert _outcome(lambda: _message_frame(raw)) == _outcome(
        lambda: _frame(*_botocore_message(raw))
    )


def test_the_fast_path_reads_every_recorded_message() -> None:
    for path in (p for p in corpus_files("bedrock-converse") if p.suffix == ".eventstream"):
        body = path.read_bytes()
        while body:
            (total,) = struct.unpack_from(">I", body)
            assert _string_message(body[:total]) is not None, path.name
            body = body[total:]
