"""The fast JSON-array path of FrameDecoder (a whole element parsed at once, its end found
among candidate closing brackets) yields exactly the frames of the byte scan alone, for any
body and any split of it into reads, malformed ones included (issue 13)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.framing import FrameDecoder

PIECES = [
    b"[",
    b"]",
    b",",
    b" ,\n",
    b",\r\n",
    b"\n  ",
    b"\x0c",
    b'{"a":1}',
    b'{"a":{"b":[1,2]},"c":[{"d":"},"}]}',
    b'{\n  "type": "text-delta",\n  "delta": "}, {"\n}',
    b'[{"x":1}, {"y":[2]}]',
    b'{"s":"\\"}, ["}',
    b'{"big":12345678901234567890123}',
    b'{"lone":"\\ud800"}',
    b'{"pair":"\\ud83d\\ude00"}',
    b'{"bad":"\xff"}',
    b'{"n":1e400}',
    b'{"unclosed":',
    b"}",
    b"{}",
    b"[]",
    b'"scalar"',
    b"12",
    b'{"x":"' + b"y" * 70 + b'"}',  # over the size cap below
    b"garbage",
]


def frames(decoder: FrameDecoder, reads: list[bytes]) -> list[tuple[Any, ...]]:
    out = []
    for read in reads:
        out += decoder.feed(read)
    out += decoder.close()
    return [
        (
            f.data,
            f.surrogates,
            None if f.error is None else (type(f.error), f.error.code, str(f.error)),
        )
        for f in out
    ]


@st.composite
def split_bodies(draw: st.DrawFn) -> list[bytes]:
    body = b"[" + b"".join(draw(st.lists(st.sampled_from(PIECES), max_size=14)))
    if draw(st.booleans()):
        body += b"]"
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    reads, last = [], 0
    for cut in [*cuts, len(body)]:
        reads.append(body[last:cut])
        last = cut
    return reads


@given(split_bodies(), st.sampled_from(["auto", "json"]))
def test_fast_path_yields_the_frames_of_the_byte_scan(reads: list[bytes], framing: Any) -> None:
    fast = FrameDecoder(framing, max_event_size=64)
    scan = FrameDecoder(framing, max_event_size=64)
    scan.fast_json = False
    assert frames(fast, reads) == frames(scan, reads)


@given(
    docs=st.lists(
        st.dictionaries(
            st.text(alphabet='{}[]",: ab', max_size=3),
            st.recursive(
                st.text(alphabet='{}[]",:\\ \nab', max_size=5) | st.integers(-(2**53), 2**53),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(alphabet='{},]"a', max_size=3), inner, max_size=3)
                ),
                max_leaves=10,
            ),
            max_size=3,
        ),
        max_size=5,
    ),
    indent=st.booleans(),
    sep=st.sampled_from([b",", b" ,\n", b",\r\n", b"\n,"]),
    cuts=st.lists(st.integers(0, 600), max_size=4),
)
def test_well_formed_arrays_frame_alike(
    docs: list[Any], indent: bool, sep: bytes, cuts: list[int]
) -> None:
    option = orjson.OPT_INDENT_2 if indent else 0
    body = b"[" + sep.join(orjson.dumps(d, option=option) for d in docs) + b"]"
    reads, last = [], 0
    for cut in [*sorted(c for c in cuts if c <= len(body)), len(body)]:
        reads.append(body[last:cut])
        last = cut
    fast, scan = FrameDecoder("json"), FrameDecoder("json")
    scan.fast_json = False
    assert frames(fast, reads) == frames(scan, reads)
    assert [f[0] for f in frames(FrameDecoder("json"), [body])] == docs
