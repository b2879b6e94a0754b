"""The two client splitters and JSON.parse emulation (``conformance.framing``).

Expected behaviour is read from ``@ag-ui/client`` 1.0.0 ``src/transform/sse.ts`` and
``eventsource-parser`` 3.1.1 ``src/parse.ts``; the differential test replays the same shapes
through the real clients.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from conformance.framing import (
    AGUI_MAX_BUFFER,
    AguiSplitter,
    EventSourceSplitter,
    JsonError,
    Payload,
    has_proto_key,
    parse_json,
)

BODY = b'data: {"a":1}\n\n: comment\n\nevent: x\nid: 3\ndata: {"b":\ndata: 2}\n\n'


def _agui(body: bytes, cuts: list[int] | None = None) -> list[str]:
    splitter, out, prev = AguiSplitter(), [], 0
    for cut in sorted(set(cuts or [])):
        out += splitter.feed(body[prev:cut])
        prev = cut
    out += splitter.feed(body[prev:]) + splitter.close()
    return [p.text for p in out]


def _es(body: bytes, cuts: list[int] | None = None) -> list[str]:
    splitter, out, prev = EventSourceSplitter(), [], 0
    for cut in sorted(set(cuts or [])):
        out += splitter.feed(body[prev:cut])
        prev = cut
    out += splitter.feed(body[prev:]) + splitter.close()
    return [p.text for p in out]


@pytest.mark.parametrize("split", [_agui, _es], ids=["agui", "eventsource"])
def test_whole_byte_by_byte_and_random_splits_give_the_same_payloads(
    split: Callable[[bytes, list[int] | None], list[str]],
) -> None:
    whole = split(BODY, None)
    assert whole == ['{"a":1}', '{"b":\n2}']
    assert split(BODY, list(range(1, len(BODY)))) == whole
    rng = random.Random(4)
    for _ in range(20):
        assert split(BODY, [rng.randrange(1, len(BODY)) for _ in range(5)]) == whole


def test_utf8_character_split_across_reads_survives() -> None:
    body = 'data: {"d":"é😀"}\n\n'.encode()
    assert _agui(body, [10, 11, 12, 13]) == ['{"d":"é😀"}']
    assert _es(body, [10, 11, 12, 13]) == ['{"d":"é😀"}']


def test_agui_splitter_splits_only_on_lf_lf() -> None:
    crlf = b'data: {"a":1}\r\n\r\ndata: {"b":2}\r\n\r\n'
    payloads = AguiSplitter().feed(crlf)
    assert payloads == []  # no "\n\n" anywhere: one event, read at EOF
    splitter = AguiSplitter()
    splitter.feed(crlf)
    (tail,) = splitter.close()
    assert tail.unterminated and tail.crlf
    with pytest.raises(JsonError):
        parse_json(tail.text)


def test_agui_splitter_reads_an_unterminated_last_event() -> None:
    (payload,) = _agui_payloads(b'data: {"a":1}')
    assert payload.unterminated and payload.text == '{"a":1}'


def _agui_payloads(body: bytes) -> list[Payload]:
    splitter = AguiSplitter()
    return [*splitter.feed(body), *splitter.close()]


def test_agui_splitter_ignores_data_without_colon_and_strips_bom() -> None:
    assert _agui(b'\xef\xbb\xbfdata\ndata: {"a":1}\n\n') == ['{"a":1}']


def test_agui_splitter_fails_past_ten_mib_without_boundary() -> None:
    splitter = AguiSplitter()
    splitter.feed(b"data: " + b"x" * AGUI_MAX_BUFFER)
    assert splitter.overflow
    assert splitter.close() == []


def test_eventsource_splitter_drops_an_unterminated_last_event() -> None:
    splitter = EventSourceSplitter()
    assert splitter.feed(b'data: {"a":1}\n') == []
    assert splitter.close() == [] and splitter.dropped


def test_eventsource_splitter_dispatches_empty_data_and_cr_endings() -> None:
    assert _es(b"data:\n\n") == [""]
    assert _es(b"data: 1\r\rdata: 2\r\n\r\n") == ["1", "2"]
    assert _es(b"data\n\n") == [""]  # a field with no colon has an empty value


def test_eventsource_splitter_reports_unknown_fields() -> None:
    splitter = EventSourceSplitter()
    splitter.feed(b"retry: 10\nfoo: bar\n: c\ndata: 1\n\n")
    assert splitter.ignored_lines == ["foo: bar"]


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "{'a':1}", "\ufeff{}", "1 2", ""])
def test_parse_json_rejects_what_javascript_rejects(text: str) -> None:
    with pytest.raises(JsonError):
        parse_json(text)


def test_parse_json_accepts_json_whitespace_and_lone_surrogates() -> None:
    assert parse_json(' \t{"a": "\\ud800"}\r\n') == {"a": "\ud800"}


def test_has_proto_key_finds_nested_and_escaped_keys() -> None:
    assert has_proto_key(parse_json('{"a":[{"\\u005f_proto__":1}]}'))
    assert has_proto_key({"constructor": {"prototype": {}}})
    assert not has_proto_key({"constructor": "x", "proto": 1})
