"""``gateway.json_steps.loads_in_steps`` gives what ``jsontext.loads`` gives for the whole text:
the same value (types, float signs, key order) or the same error, for any step size.

The expected outcome is always ``agui_codecs.jsontext.loads`` (orjson, with its standard-library
path for integers beyond 64 bits and lone surrogates) of the same bytes. The documents are
written by a serializer of our own so that whitespace, duplicate keys, escapes and structure
characters inside strings vary; some are then damaged by one byte, and must fail (or not)
exactly as the whole parse does. Stall lengths are measured in ``bench/large_request.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs import jsontext
from gateway import json_steps

# strings full of what a boundary search could mistake for structure
TRICKY = st.text(alphabet=st.sampled_from([*']},{"[:\\ \t\n/u0aé😀\x00', "\ud83d"]))
KEYS = st.sampled_from(["id", "role", "content", "parts", "a", 'k"},{"id":', "é"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 0]),
    st.floats(allow_nan=False, allow_infinity=False),
    TRICKY,
    st.text(max_size=12),
)
# an object is a list of pairs, so that keys repeat
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.lists(st.tuples(KEYS, inner), max_size=6).map(lambda pairs: ("object", pairs))
    ),
    max_leaves=40,
)
MESSAGE = st.lists(st.tuples(KEYS, VALUES), max_size=4).map(
    lambda pairs: ("object", [("id", "m"), *pairs])
)
SMALL_MESSAGE = st.integers(0, 99).map(lambda i: ("object", [("id", i)]))
DOCUMENTS = st.one_of(
    VALUES,
    # lists of alike objects: a cut after the end of one list could land inside the next
    st.lists(st.lists(MESSAGE | SMALL_MESSAGE, max_size=5), max_size=5),
    st.tuples(st.lists(MESSAGE, max_size=30), st.lists(st.tuples(KEYS, VALUES), max_size=3)).map(
        lambda drawn: ("object", [("threadId", "t"), ("messages", drawn[0]), *drawn[1]])
    ),
)
DAMAGE = st.sampled_from([*b'[]{},:"\\ 0e-.\xc3\xff\x01', None])


def _write(value: Any, draw: st.DrawFn, ascii_only: bool) -> str:
    """JSON text of ``value`` (``("object", pairs)`` for objects) with drawn whitespace."""

    def ws() -> str:
        return draw(st.sampled_from(["", "", "", " ", "\n  ", "\t", "\r\n"]))

    if isinstance(value, tuple):
        members = [
            f"{ws()}{json.dumps(key, ensure_ascii=ascii_only)}{ws()}:{ws()}"
            f"{_write(item, draw, ascii_only)}{ws()}"
            for key, item in value[1]
        ]
        return "{" + ",".join(members) + ws() + "}"
    if isinstance(value, list):
        return "[" + ",".join(ws() + _write(item, draw, ascii_only) + ws() for item in value) + "]"
    return json.dumps(value, ensure_ascii=True if _lone(value) else ascii_only)


def _lone(value: Any) -> bool:
    return isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value)


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    text = _write(draw(DOCUMENTS), draw, draw(st.booleans()))
    data = ws_pad(draw) + text.encode() + ws_pad(draw)
    if draw(st.integers(0, 3)) == 0:  # one byte damaged: inserted, replaced or removed
        at = draw(st.integers(0, len(data)))
        byte = draw(DAMAGE)
        tail = data[at + 1 :] if draw(st.booleans()) else data[at:]
        data = data[:at] + (b"" if byte is None else bytes([byte])) + tail
    return data


def ws_pad(draw: st.DrawFn) -> bytes:
    return draw(st.sampled_from([b"", b"", b" ", b"\n"]))


def _canonical(value: Any) -> Any:
    """``value`` with every type and float sign spelled out, and key order kept."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ["list", *map(_canonical, value)]
    assert isinstance(value, dict)
    return ["dict", *((key, _canonical(item)) for key, item in value.items())]


def _outcome(parse: Any) -> Any:
    try:
        return ("value", _canonical(parse()))
    except Exception as exc:  # the type and text are compared
        return ("error", type(exc).__name__, str(exc))


def _drive(data: bytes, step: int) -> tuple[Any, int]:
    """The value of the steps and how many times they yielded."""
    steps = json_steps.loads_in_steps(data, step)
    yields = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value, yields
        yields += 1


@settings(max_examples=300, deadline=None)
@given(data=texts(), step=st.integers(1, 40) | st.integers(1, 300))
def test_steps_give_what_the_whole_parse_gives(data: bytes, step: int) -> None:
    assert _outcome(lambda: _drive(data, step)[0]) == _outcome(lambda: jsontext.loads(data))


def _chat(n: int, *, indent: int | None = None) -> bytes:
    messages = [
        {
            "id": f"m{i}",
            "role": "user" if i % 2 else "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "text", "text": f"part {i} " + '"]},{\\"id\\":'},
                {"type": "tool-x", "input": {"id": i, "deep": [[{"id": 1}, {"id": 2}]]}},
            ],
        }
        for i in range(n)
    ]
    return json.dumps({"id": "chat", "messages": messages}, indent=indent).encode()


@pytest.mark.parametrize("odd", ["", "\ud83d", "\\ud83d", str(2**64)])
@pytest.mark.parametrize("indent", [None, 2])
def test_a_large_body_is_parsed_in_many_steps_without_the_whole_parse(
    monkeypatch: pytest.MonkeyPatch, indent: int | None, odd: str
) -> None:
    # also with a lone surrogate (escaped: orjson refuses it, jsontext keeps it), a text that
    # only looks like one, or an integer beyond 64 bits (jsontext's standard-library path)
    data = _chat(400, indent=indent).replace(b"part 7 ", json.dumps(odd).encode()[1:-1], 1)
    whole = jsontext.loads(data)
    real = jsontext.loads

    def pieces_only(text: Any) -> Any:
        assert len(text) < len(data) // 4, "parsed whole"
        return real(text)

    monkeypatch.setattr(json_steps.jsontext, "loads", pieces_only)
    value, yields = _drive(data, 4096)
    assert value == whole
    assert yields >= len(data) // (3 * 4096)


@pytest.mark.parametrize("depth", [1021, 1022, 1023, 1024])
@pytest.mark.parametrize("step", [1, 64, 4096])
def test_orjson_depth_limit_is_kept_inside_pieces(depth: int, step: int) -> None:
    # orjson refuses a 1025th level (depth counted from the top of the whole text)
    data = b'{"x":1,"messages":[1,' + b"[" * depth + b"]" * depth + b',{"a":2}]}'
    assert _outcome(lambda: _drive(data, step)[0]) == _outcome(lambda: jsontext.loads(data))


@pytest.mark.parametrize("step", [1, 3, 1000])
@pytest.mark.parametrize(
    "data",
    [
        b'{"messages":[{"id":1},{"id":2}],"messages":[{"id":3}]}',  # last value, first place
        b'{"a":18446744073709551616,"messages":[{"id":1},{"id":99999999999999999999}]}',
        b'{"messages":["\\ud83d",{"id":"\\ude00"}]}',  # lone surrogates kept
        b'{"messages":[1e400]}',
        b'{"messages":[NaN]}',
        b'\xef\xbb\xbf{"messages":[]}',
        b'{"messages":[1,2]} x',
        b'{"messages":[1,2]',
        b'{"messages":[1,2,]}',
        b'{"messages":[-0.0,-0,1E2,0.1e-400]}',
    ],
)
def test_edge_texts_match_the_whole_parse(data: bytes, step: int) -> None:
    assert _outcome(lambda: _drive(data, step)[0]) == _outcome(lambda: jsontext.loads(data))


@pytest.mark.parametrize("step", range(1, 60))
def test_a_cut_past_the_end_of_a_list_is_refused(step: int) -> None:
    # a cut inside the second list makes "[[" + run + "]]" valid JSON with two lists in it
    data = b'[[{"id":1},{"id":2}],[{"id":3},{"id":4},{"id":5}],{"x":[{"id":6},{"id":7}]}]'
    assert _drive(data, step)[0] == jsontext.loads(data)


@pytest.mark.parametrize(
    "elements",
    [
        ["x", *range(20000)],  # a first element unlike the rest
        [{"a": 1}, *({"b": i} for i in range(5000))],
        [[i, {"id": i}] for i in range(3000)],
    ],
)
def test_arrays_whose_elements_differ_are_still_parsed_in_steps(
    monkeypatch: pytest.MonkeyPatch, elements: list[Any]
) -> None:
    data = json.dumps({"messages": elements}).encode()
    real = jsontext.loads

    def pieces_only(text: Any) -> Any:
        assert len(text) < len(data) // 4, "parsed whole"
        return real(text)

    monkeypatch.setattr(json_steps.jsontext, "loads", pieces_only)
    value, yields = _drive(data, 2048)
    assert value == {"messages": elements}
    assert yields >= len(data) // (3 * 2048)
