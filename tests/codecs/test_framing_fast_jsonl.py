"""The fast JSON-lines path of FrameDecoder (a read's whole lines split at once, a line that is
one JSON object as it stands parsed by orjson alone once the read is known to hold no 19-digit
run) yields exactly the frames of the line-by-line loop, for any body and any split of it into
reads (issue 13)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.framing import FrameDecoder

PIECES = [
    b'{"a":1}\n',
    b'{"text":"caf\xc3\xa9 \xe2\x82\xac"}\n',
    b'{"bad":"\xff"}\n',  # invalid UTF-8: malformed
    b"{not json}\n",
    b'  {"padded":true} \r\n',
    b'{"crlf":1}\r\n',
    b"\n",
    b"\r\n",
    b"   \n",
    b'{"a":\n',
    b"2}\n",
    b"[1,2]\n",
    b"\xef\xbb\xbf{}\n",
    b"data: [DONE]\n",
    b'data: {"prefixed":1}\n',
    b"{}",
    b'{"n":12345678901234567890123}\n',  # an integer orjson would round
    b'{"n":-9223372036854775809}\n',
    b'{"n":1234567890123456789}\n',  # 19 digits, within orjson's range
    b'{"s":"1234567890","t":"123456789"}\n',  # digits split by a quote
    b'{"s":"\\ud83c"}\n',  # a lone escaped surrogate
    b'{"s":"\\udfff\\ud83c\\udf89"}\n',
    b'{"big":"' + b"x" * 70 + b'"}\n',  # over the size cap below
    b'{"x":"' + b"y" * 56 + b'"}\n',  # at the size cap below
    b'{"x":"' + b"y" * 57 + b'"}\n',
    b'{"a":1}{"b":2}\n',
    b'{"a":"}"}\n',
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
    body = b"".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12)))
    body += draw(st.binary(max_size=8))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    reads, last = [], 0
    for cut in [*cuts, len(body)]:
        reads.append(body[last:cut])
        last = cut
    return reads


@given(split_bodies(), st.sampled_from(["auto", "jsonl"]))
def test_fast_path_yields_the_frames_of_the_line_loop(reads: list[bytes], framing: Any) -> None:
    fast = FrameDecoder(framing, max_event_size=64)
    slow = FrameDecoder(framing, max_event_size=64)
    slow.fast_jsonl = False
    assert frames(fast, reads) == frames(slow, reads)


def test_big_integers_and_lone_surrogates_keep_what_orjson_alone_would_lose() -> None:
    body = b'{"n":12345678901234567890123}\n{"s":"\\ud83c"}\n{"m":1}\n'
    got = FrameDecoder("jsonl").feed(body)
    assert [(f.data, f.surrogates) for f in got] == [
        ({"n": 12345678901234567890123}, False),
        ({"s": "\ud83c"}, True),
        ({"m": 1}, False),
    ]
