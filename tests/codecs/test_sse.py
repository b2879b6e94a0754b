"""SSE decoder and encoder against the WHATWG HTML "event stream interpretation" algorithm.

Expected values come from the standard's text (HTML Living Standard §9.2.6) and its examples,
not from our own output.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.errors import EventTooLargeError, LocalProtocolError
from agui_codecs.sse import SSEDecoder, SSEEvent, encode_comment, encode_event


def decode(data: bytes, **kw: int) -> list[SSEEvent]:
    d = SSEDecoder(**kw)
    return d.feed(data) + d.close()


def decode_bytewise(data: bytes) -> list[SSEEvent]:
    d = SSEDecoder()
    out: list[SSEEvent] = []
    for i in range(len(data)):
        out += d.feed(data[i : i + 1])
    return out + d.close()


def test_spec_example_two_data_lines_join_with_lf() -> None:
    # HTML spec example: "data: YHOO\ndata: +2\ndata: 10\n\n" -> "YHOO\n+2\n10"
    assert decode(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [SSEEvent("YHOO\n+2\n10")]


def test_spec_example_comment_id_and_fields() -> None:
    body = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    assert decode(body) == [
        SSEEvent("first event", "message", "1"),
        SSEEvent("second event", "message", ""),
        SSEEvent(" third event", "message", ""),
    ]


def test_spec_example_empty_data_fields() -> None:
    # "data\n\ndata\ndata\n\ndata:" -> "", "\n", and the last is dropped (no blank line).
    assert decode(b"data\n\ndata\ndata\n\ndata:") == [SSEEvent(""), SSEEvent("\n")]


def test_space_after_colon_removed_once() -> None:
    assert decode(b"data:test\n\ndata: test\n\ndata:  test\n\n") == [
        SSEEvent("test"),
        SSEEvent("test"),
        SSEEvent(" test"),
    ]


@pytest.mark.parametrize("sep", [b"\n", b"\r", b"\r\n"])
def test_line_endings_cr_lf_crlf(sep: bytes) -> None:
    body = sep.join([b"event: a", b"data: 1", b"", b"data: 2", b"", b""])
    assert decode(body) == [SSEEvent("1", "a"), SSEEvent("2")]


def test_crlf_split_across_feeds_is_one_line_end() -> None:
    d = SSEDecoder()
    out = d.feed(b"data: x\r") + d.feed(b"\n\r") + d.feed(b"\ndata: y\r\n\r\n")
    assert out == [SSEEvent("x"), SSEEvent("y")]


def test_blank_line_without_data_dispatches_nothing_and_resets_event_type() -> None:
    assert decode(b"event: foo\n\ndata: x\n\n") == [SSEEvent("x", "message")]


def test_id_persists_and_nul_id_ignored() -> None:
    body = b"id: 7\ndata: a\n\ndata: b\n\nid: bad\x00id\ndata: c\n\n"
    assert [e.id for e in decode(body)] == ["7", "7", "7"]


def test_id_without_data_sets_last_event_id_without_dispatch() -> None:
    d = SSEDecoder()
    assert d.feed(b"id: 42\n\n") == []
    assert d.last_event_id == "42"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"retry: 1500", 1500),
        (b"retry: 15a", None),
        (b"retry: -3", None),
        (b"retry:  7", None),
        (b"retry:", None),
    ],
)
def test_retry_only_all_ascii_digits(line: bytes, expected: int | None) -> None:
    d = SSEDecoder()
    d.feed(line + b"\n\n")
    assert d.retry == expected


def test_unknown_fields_and_lines_without_colon_are_ignored() -> None:
    assert decode(b"foo: bar\ndata: x\nbaz\n\n") == [SSEEvent("x")]


def test_comments_are_never_data() -> None:
    d = SSEDecoder()
    assert d.feed(b": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata: y\n\n") == [SSEEvent("y")]
    assert d.comments == 2


def test_leading_bom_stripped_once_even_when_split() -> None:
    d = SSEDecoder()
    out = d.feed(b"\xef") + d.feed(b"\xbb") + d.feed(b"\xbfdata: x\n\n")
    assert out == [SSEEvent("x")]
    # A second BOM is part of the field name, so the line is an unknown field.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == []


def test_multibyte_utf8_split_across_feeds() -> None:
    body = "data: héllo 🌍\n\n".encode()
    assert decode_bytewise(body) == [SSEEvent("héllo 🌍")]


def test_invalid_utf8_replaced_not_raised() -> None:
    assert decode(b"data: \xff\n\n") == [SSEEvent("\ufffd")]


def test_unterminated_event_at_eof_dropped() -> None:
    assert decode(b"data: complete\n\ndata: partial") == [SSEEvent("complete")]


def test_one_mebibyte_line_is_handled() -> None:
    payload = "x" * (1024 * 1024)
    assert decode(f"data: {payload}\n\n".encode()) == [SSEEvent(payload)]


def test_oversized_line_raises_typed_error() -> None:
    d = SSEDecoder(max_event_size=1024)
    with pytest.raises(EventTooLargeError) as info:
        d.feed(b"data: " + b"x" * 2000)
    assert info.value.code == "UPSTREAM_EVENT_TOO_LARGE"
    assert info.value.limit == 1024


def test_oversized_event_from_many_lines_raises() -> None:
    d = SSEDecoder(max_event_size=100)
    with pytest.raises(EventTooLargeError):
        d.feed(b"data: " + b"y" * 60 + b"\n" + b"data: " + b"y" * 60 + b"\n")


def test_events_before_oversized_one_are_not_lost() -> None:
    d = SSEDecoder(max_event_size=100)
    assert d.feed(b"data: ok\n\ndata: " + b"z" * 200 + b"\n\n") == [SSEEvent("ok")]
    with pytest.raises(EventTooLargeError):
        d.close()


def test_feed_after_close_is_local_error() -> None:
    d = SSEDecoder()
    d.close()
    with pytest.raises(LocalProtocolError):
        d.feed(b"data: x\n\n")


SSE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "data: a",
                "data:b",
                "data",
                "event: e",
                "id: 1",
                "id",
                "retry: 10",
                ": c",
                "",
                "x: y",
                "data: é🌍",
            ]
        ),
        st.text(max_size=8).filter(lambda s: "\r" not in s and "\n" not in s),
    ),
    max_size=30,
)


@given(
    lines=SSE_TEXT, sep=st.sampled_from(["\n", "\r", "\r\n"]), cuts=st.lists(st.integers(0, 400))
)
def test_any_split_gives_identical_events(lines: list[str], sep: str, cuts: list[int]) -> None:
    body = ("\ufeff" + sep.join(lines) + sep).encode()
    whole = decode(body)
    d = SSEDecoder()
    out: list[SSEEvent] = []
    prev = 0
    for cut in sorted({c for c in cuts if c < len(body)}):
        out += d.feed(body[prev:cut])
        prev = cut
    out += d.feed(body[prev:]) + d.close()
    assert out == whole
    assert decode_bytewise(body) == whole


@given(
    data=st.text(),
    event=st.one_of(st.none(), st.text(alphabet="abcXYZ_-", min_size=1)),
    id=st.one_of(st.none(), st.text(alphabet="0123456789.", min_size=1)),
)
def test_encoder_round_trips_through_decoder(data: str, event: str | None, id: str | None) -> None:
    # The decoder normalizes CRLF/CR inside data to LF, so compare against that.
    expected = data.replace("\r\n", "\n").replace("\r", "\n")
    [decoded] = decode(encode_event(data, event=event, id=id))
    assert decoded.data == expected
    assert decoded.event == (event or "message")
    assert decoded.id == (id or "")


def test_encoder_uses_lf_framing_only() -> None:
    out = encode_event('{"a":1}', event="RUN_STARTED", id="1.1")
    assert out == b'event: RUN_STARTED\nid: 1.1\ndata: {"a":1}\n\n'
    assert b"\r" not in out


def test_encoder_rejects_line_breaks_in_id_and_event() -> None:
    with pytest.raises(LocalProtocolError):
        encode_event("x", id="1\n2")
    with pytest.raises(LocalProtocolError):
        encode_event("x", event="a\rb")


def test_comment_encoding() -> None:
    assert encode_comment() == b": keep-alive\n\n"
    assert decode(encode_comment()) == []
