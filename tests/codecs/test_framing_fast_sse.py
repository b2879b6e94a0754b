"""The fast SSE path of FrameDecoder (whole ``data: {...}`` or ``data: [...]`` frames,
optionally after one ``event: <name>`` line, lines ended by LF or CRLF, decoded without the
line-by-line WHATWG decoder) yields exactly the frames of the decoder alone, for any body and
any split of it into reads (issue 13)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.framing import FrameDecoder
from agui_codecs.sse import SSEDecoder

PIECES = [
    b'data: {"a":1}\n\n',
    b'data: {"text":"caf\xc3\xa9 \xe2\x82\xac"}\n\n',
    b'data: {"bad":"\xff"}\n\n',  # invalid UTF-8: the decoder's U+FFFD replacement applies
    b"data: {not json}\n\n",
    b"data: [DONE]\n\n",
    b"data: {}\r\n\r\n",
    b"data:{}\n\n",
    b'data: {"a":\n',
    b"data: 2}\n\n",
    b"event: delta\n",
    b'event: message_start\ndata: {"type":"message_start"}\n\n',
    b'event: response.output_text.delta\ndata: {"d":"x"}\n\n',
    b"event: \ndata: {}\n\n",  # an empty name: type message
    b"event:x\ndata: {}\n\n",
    b"event:  x\ndata: {}\n\n",  # the second space is part of the name
    b"event: a b\ndata: {}\n\n",
    b"event: caf\xc3\xa9\ndata: {}\n\n",
    b"event: \xff\ndata: {}\n\n",
    b"event: x\r\ndata: {}\n\n",
    b"event: x\nid: 1\ndata: {}\n\n",
    b"event: x\ndata: {}\nevent: y\n\n",  # the last event field wins
    b"event: x\nevent: y\ndata: {}\n\n",
    b"event: x\ndata: {not json}\n\n",
    b"event: " + b"n" * 70 + b"\ndata: {}\n\n",  # a line over the size cap below
    b"id: 7\n",
    b": keep-alive\n\n",
    b": OPENROUTER PROCESSING\n",
    b":\n",
    b'data:{"nospace":1}\n\n',
    b"data:{not json}\n\n",
    b": " + b"c" * 70 + b"\n",  # a comment over the size cap below
    b"retry: 10\n",
    b"\n",
    b"\r",
    b"\xef\xbb\xbf",
    b'data: {"a":1}\n',
    b"data:  {}\n\n",
    b'data: {"big":"' + b"x" * 90 + b'"}\n\n',  # over the size cap below
    # CRLF line ends (Gemini, A2A), alone or mixed with LF, and lone CRs, which end lines too
    b'data: {"crlf":1}\r\n\r\n',
    b'data: {"crlf":2}\r\n\n',
    b'data: {"crlf":3}\n\r\n',
    b'event: message_delta\r\ndata: {"crlf":4}\r\n\r\n',
    b'event: x\r\ndata: {"mixed":5}\n\n',
    b'data: {"cr":\r6}\r\n\r\n',
    b'data: {"cr":7}\r\r\n',
    b'data: {"cr":8}\r\n\r',
    b"\r\n",
    b'event: messages\r\ndata: [{"content":"a"},{"id":1}]\r\n\r\n',  # LangGraph tuples
    b"data: [1,2]\n\n",
    b"data: [DONE]\r\n\r\n",
    b"data: [not json]\n\n",
    b"data:[]\n\n",
    b'data: {"x":"' + b"y" * 50 + b'"}\r\n\r\n',  # near the size cap below
    b'data: {"x":"' + b"y" * 52 + b'"}\r\n\r\n',
    # what orjson alone would not keep (jsontext.parse: every digit, lone surrogates), in
    # frames the one-pattern path takes (LF only, before any CR of the read) and others
    b'data: {"n":12345678901234567890123}\n\n',
    b'event: x\ndata: {"n":-9223372036854775809,"m":1}\n\n',
    b'data: {"n":1234567890123456789}\n\n',  # 19 digits, within orjson's range
    b'data: {"s":"1234567890","t":"123456789"}\n\n',  # digits split by a quote
    b"data: [18446744073709551616]\r\n\r\n",
    b'data: {"s":"\\ud83c"}\n\n',  # a lone escaped surrogate
    b'event: y\ndata: {"s":"\\udfff\\ud83c\\udf89"}\n\n',
    b'data: {"s":"\\ud83c"}\r\n\r\n',
    b"event: message_stop\n",
    b"data: {}\n",
    b"\n",
]


def frames(decoder: FrameDecoder, reads: list[bytes]) -> list[tuple[Any, ...]]:
    out = []
    for read in reads:
        out += decoder.feed(read)
    out += decoder.close()
    return [
        (f.data, f.event, f.surrogates, None if f.error is None else (type(f.error), f.error.code))
        for f in out
    ]


@st.composite
def split_bodies(draw: st.DrawFn) -> list[bytes]:
    body = b"".join(draw(st.lists(st.sampled_from(PIECES), max_size=12)))
    body += draw(st.binary(max_size=8))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    reads, last = [], 0
    for cut in [*cuts, len(body)]:
        reads.append(body[last:cut])
        last = cut
    return reads


@given(split_bodies(), st.sampled_from(["auto", "sse"]))
def test_fast_path_yields_the_frames_of_the_sse_decoder(reads: list[bytes], framing: Any) -> None:
    fast = FrameDecoder(framing, max_event_size=64)
    slow = FrameDecoder(framing, max_event_size=64)
    slow.fast_sse = False
    assert frames(fast, reads) == frames(slow, reads)


def test_whole_simple_frames_bypass_the_line_decoder(monkeypatch: Any) -> None:
    decoder = FrameDecoder("sse")
    decoder.feed(b'data: {"first":0}\n\n')  # the BOM check happens on the first read
    sse = decoder._sse
    assert sse is not None and sse.idle
    seen: list[bytes] = []
    feed = sse.feed
    monkeypatch.setattr(sse, "feed", lambda data: seen.append(data) or feed(data))
    got = decoder.feed(
        b'data: {"a":1}\n\nevent: x\ndata: {"b":2}\n\nid: 7\ndata: {"c":3}\n\ndata: {"d":4}\n\n'
    )
    assert [(f.data, f.event) for f in got] == [
        ({"a": 1}, "message"),
        ({"b": 2}, "x"),
        ({"c": 3}, "message"),
        ({"d": 4}, "message"),
    ]
    assert seen == [b'id: 7\ndata: {"c":3}\n\n']  # only the frame with another field


def test_the_first_frame_takes_the_fast_path_unless_a_bom_may_start_the_body(
    monkeypatch: Any,
) -> None:
    seen: list[bytes] = []
    feed = SSEDecoder.feed
    monkeypatch.setattr(
        SSEDecoder, "feed", lambda self, data: seen.append(data) or feed(self, data)
    )
    assert [f.data for f in FrameDecoder("sse").feed(b'data: {"a":1}\r\n\r\n')] == [{"a": 1}]
    assert seen == []
    assert [f.data for f in FrameDecoder("sse").feed(b'\xef\xbb\xbfdata: {"a":1}\n\n')] == [
        {"a": 1}
    ]
    assert seen == [b'\xef\xbb\xbfdata: {"a":1}\n\n']  # the decoder read it, and its BOM
