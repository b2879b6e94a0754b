"""Input framing: SSE, JSON lines and streamed JSON arrays, auto-detected, split-safe."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.errors import EventTooLargeError, MalformedUpstreamError, RemoteProtocolError
from agui_codecs.framing import DONE, Frame, FrameDecoder


def frames(data: bytes, framing: Any = "auto", **kw: Any) -> list[Frame]:
    d = FrameDecoder(framing, **kw)
    return d.feed(data) + d.close()


def split(data: bytes, cuts: list[int], framing: Any = "auto") -> list[Frame]:
    d = FrameDecoder(framing)
    out: list[Frame] = []
    prev = 0
    for cut in sorted({c for c in cuts if 0 < c < len(data)}):
        out += d.feed(data[prev:cut])
        prev = cut
    return out + d.feed(data[prev:]) + d.close()


def test_sse_payloads_named_events_and_done() -> None:
    body = b'event: message_start\ndata: {"a": 1}   \n\ndata: [DONE]\n\n'
    assert frames(body) == [Frame({"a": 1}, "message_start"), Frame(DONE, "message")]


def test_jsonl_detected_and_last_line_without_newline_kept() -> None:
    assert frames(b'{"a":1}\n\n{"b":2}') == [Frame({"a": 1}), Frame({"b": 2})]


def test_gemini_json_array_with_crlf_comma_separators() -> None:
    body = b'[{\n  "a": "x,]}\\"y"\n}\n,\r\n{\n  "b": [1, {"c": 2}]\n}\n]'
    assert frames(body) == [Frame({"a": 'x,]}"y'}), Frame({"b": [1, {"c": 2}]})]


def test_bom_before_json_array() -> None:
    assert frames(b'\xef\xbb\xbf[{"a":1}]') == [Frame({"a": 1})]


def test_json_array_cut_short_is_an_error_frame_after_good_frames() -> None:
    out = frames(b'[{"a":1},{"b":')
    assert out[0] == Frame({"a": 1})  # half an element is dropped: the stream was cut
    assert isinstance(out[-1].error, RemoteProtocolError)
    assert out[-1].error.code == "UPSTREAM_TRUNCATED"


def test_json_array_that_never_closes_is_truncated_after_its_good_frames() -> None:
    out = frames(b'[{"a":1},{"b":2}')
    assert out[:2] == [Frame({"a": 1}), Frame({"b": 2})]
    assert isinstance(out[-1].error, RemoteProtocolError)
    assert out[-1].error.code == "UPSTREAM_TRUNCATED"


@pytest.mark.parametrize("tail", [b"]", b"[", b"{}", b'"x"', b",", b"1"])
def test_bytes_after_the_json_array_are_an_error_frame(tail: bytes) -> None:
    out = frames(b'[{"a":1}]\n' + tail)
    assert out[0] == Frame({"a": 1})
    assert isinstance(out[-1].error, MalformedUpstreamError)


def test_bad_jsonl_line_yields_good_frames_then_error_and_stops() -> None:
    d = FrameDecoder()
    out = d.feed(b'{"a":1}\nnot json\n{"b":2}\n')
    assert out[0] == Frame({"a": 1})
    assert isinstance(out[1].error, MalformedUpstreamError)
    assert d.feed(b'{"c":3}\n') == []


def test_oversized_jsonl_line_is_typed_error() -> None:
    [frame] = frames(b'{"a":"' + b"x" * 200, max_event_size=100)
    assert isinstance(frame.error, EventTooLargeError)


def test_empty_body_gives_no_frames() -> None:
    assert frames(b"") == [] and frames(b"  \n ") == []


DOCS = st.lists(
    st.dictionaries(
        st.text(max_size=5),
        st.one_of(
            st.integers(-(2**53), 2**53),
            st.text(max_size=8),
            st.lists(st.integers(0, 9), max_size=3),
        ),
        max_size=3,
    ),
    min_size=1,
    max_size=6,
)


@given(
    docs=DOCS, cuts=st.lists(st.integers(0, 500)), kind=st.sampled_from(["sse", "jsonl", "json"])
)
def test_any_split_gives_identical_frames(
    docs: list[dict[str, Any]], cuts: list[int], kind: str
) -> None:
    import orjson

    if kind == "sse":
        body = b"".join(b"data: " + orjson.dumps(d) + b"\r\n\r\n" for d in docs)
    elif kind == "jsonl":
        body = b"\n".join(orjson.dumps(d) for d in docs)
    else:
        body = (
            b"[" + b"\n,\r\n".join(orjson.dumps(d, option=orjson.OPT_INDENT_2) for d in docs) + b"]"
        )
    expected = [d for d in docs]
    whole = frames(body)
    assert [f.data for f in whole] == expected
    assert split(body, cuts) == whole
    assert split(body, list(range(len(body)))) == whole


NESTED = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(alphabet='{}[]",:\\ \n\tab', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='{}[]",:\\ ab', max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    docs=st.lists(st.dictionaries(st.text(max_size=3), NESTED, max_size=3), min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 800)),
    indent=st.booleans(),
)
def test_json_array_of_nested_elements_frames_each_element(
    docs: list[dict[str, Any]], cuts: list[int], indent: bool
) -> None:
    """A streamed JSON array whose elements nest objects and arrays, with brackets, quotes,
    commas and backslashes inside strings, gives each element once, as ``orjson`` parses it
    (the skip over whole strings and non-brackets inside an element), in any split."""
    import orjson

    option = orjson.OPT_INDENT_2 if indent else 0
    body = b"[" + b" ,\n".join(orjson.dumps(d, option=option) for d in docs) + b"]"
    whole = frames(body)
    assert [f.data for f in whole] == orjson.loads(body)
    assert split(body, cuts) == whole
