"""Hostile upstream bodies for every decoder and framer, as hypothesis strategies.

One source of adversarial input for the split-invariance property
(``tests/contracts/test_decoder_splits.py``), the typed-error contract
(``tests/contracts/test_decoder_fuzz.py``) and the long hunt (``tests/fuzz/run.py``,
``make fuzz``). What a body can be (:func:`bodies`):

* a recorded corpus file (``tests/corpus``) of the decoder's own family or any other
  (cross-protocol input), with up to four mutations (:func:`mutated`): truncation, a range
  deleted or repeated, a byte replaced, a hostile token inserted, line ends rewritten
  (LF / CR / CRLF), a splice of another family's file;
* generated text built from SSE / JSON tokens and hostile payloads (:data:`HOSTILE`): invalid
  UTF-8, NaN / Infinity, duplicate keys, deep nesting, values of the wrong JSON type, a huge
  line.

:func:`splits` draws the cut offsets a body is fed in; :func:`feed_split` applies them to any
``feed``/``close`` object and returns what it gave, and the exception if one escaped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from corpus import CORPUS_DIR
from hypothesis import strategies as st

__all__ = [
    "HOSTILE",
    "TOKENS",
    "all_corpus",
    "bodies",
    "family_corpus",
    "feed_split",
    "generated",
    "mutated",
    "splits",
]

TOKENS: tuple[bytes, ...] = (
    b"data: ", b"data:", b"event: error\n", b"event: message\n", b": ping\n", b"id: 1\n",
    b"retry: 10\n", b"\n", b"\n\n", b"\r\n", b"\r", b"\r\n\r\n", b"{", b"}", b"[", b"]",
    b'"type"', b'"id"', b'"x"', b":", b",", b"[DONE]", b"null", b"true", b"1", b"-0.5e3",
    b"\xef\xbb\xbf", b"\xff", b" ", b"\\", b'"', b"\x00",
)  # fmt: skip
"""Framing-level tokens (SSE fields, line ends, JSON punctuation, BOM, stray bytes)."""

HOSTILE: tuple[bytes, ...] = (
    b"\xff\xfe\xc3(\xe2\x82",  # invalid UTF-8 (bad lead, truncated sequences)
    b"\xed\xa0\x80",  # a UTF-16 surrogate encoded in UTF-8 (invalid)
    b'{"type": NaN}',
    b'{"x": Infinity, "y": -Infinity}',
    b'{"type": "a", "type": "b"}',  # duplicate keys
    b'{"id": 1, "type": 2, "index": "0", "usage": "many"}',  # wrong JSON types
    b'{"id": {}, "type": [], "delta": 3, "content": {"text": 1}}',
    b'{"usage": {"prompt_tokens": "x", "input_tokens": [], "completion_tokens_details": 1}}',
    b"[" * 300 + b"]" * 300,  # deep nesting
    b'{"a":' * 200 + b"1" + b"}" * 200,
    b'"\\ud800"',  # a lone surrogate escape
    b"1e999999",
    b"-" + b"9" * 400,  # a huge integer
)
"""Hostile payload fragments inserted by :func:`mutated` and :func:`generated`."""

_FAMILIES_ORDER = (
    "openai-chat", "openai-responses", "anthropic", "gemini", "agui", "aisdk-ui",
    "bedrock-converse", "a2a", "langgraph",
)  # fmt: skip


@functools.cache
def family_corpus(family: str) -> tuple[bytes, ...]:
    """The bytes of every repository corpus file of ``family`` (sorted by name)."""
    folder = CORPUS_DIR / family
    if not folder.is_dir():
        return ()
    return tuple(
        p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name[0] != "."
    )


@functools.cache
def all_corpus() -> tuple[bytes, ...]:
    """Every repository corpus file of every family (the cross-protocol pool)."""
    return tuple(body for family in _FAMILIES_ORDER for body in family_corpus(family))


def _index(body: bytes) -> st.SearchStrategy[int]:
    return st.integers(0, len(body))


@st.composite
def _mutate_once(draw: st.DrawFn, body: bytes) -> bytes:
    kind = draw(
        st.sampled_from(
            ["truncate", "delete", "repeat", "replace", "insert", "line_ends", "splice"]
        )
    )
    if kind == "line_ends":
        old = draw(st.sampled_from([b"\r\n", b"\n"]))
        new = draw(st.sampled_from([b"\r", b"\r\n", b"\n", b"\n\r"]))
        return body.replace(old, new)
    if kind == "splice":
        other = draw(st.sampled_from(all_corpus()))
        a, b = sorted((draw(_index(other)), draw(_index(other))))
        at = draw(_index(body))
        return body[:at] + other[a : min(b, a + 4096)] + body[at:]
    at = draw(_index(body))
    if kind == "truncate":
        return body[:at]
    if kind == "insert":
        token = draw(st.sampled_from(TOKENS + HOSTILE) | st.binary(min_size=1, max_size=8))
        return body[:at] + token + body[at:]
    if not body:
        return body
    end = min(len(body), at + draw(st.integers(1, 64)))
    if kind == "delete":
        return body[:at] + body[end:]
    if kind == "repeat":
        return body[:end] + body[at:end] + body[end:]
    at = min(at, len(body) - 1)
    return body[:at] + bytes([draw(st.integers(0, 255))]) + body[at + 1 :]


@st.composite
def mutated(draw: st.DrawFn, pool: tuple[bytes, ...]) -> bytes:
    """A file of ``pool`` with one to four mutations (see the module docstring)."""
    body = draw(st.sampled_from(pool))
    for _ in range(draw(st.integers(1, 4))):
        body = draw(_mutate_once(body))
    return body


def generated(*, max_line: int = 4096) -> st.SearchStrategy[bytes]:
    """Bodies built from :data:`TOKENS`, :data:`HOSTILE`, random bytes and one long line of up
    to ``max_line`` bytes (a ``data:`` line, a JSON line or an array element)."""
    long_line = st.integers(1, max_line).map(
        lambda n: b"data: " + b'{"x": "' + b"a" * n + b'"}\n\n'
    ) | st.integers(1, max_line).map(lambda n: b'{"x": "' + b"a" * n + b'"}\n')
    piece = st.sampled_from(TOKENS) | st.sampled_from(HOSTILE) | st.binary(max_size=16)
    return st.lists(piece | long_line, max_size=40).map(b"".join) | st.binary(max_size=300)


def bodies(family: str | None) -> st.SearchStrategy[bytes]:
    """Hostile bodies for a decoder whose corpus is ``family`` (``None``: it has none)."""
    own = family_corpus(family) if family else ()
    options = [generated(), mutated(all_corpus())]
    if own:
        options += [mutated(own), mutated(own), st.sampled_from(own)]
    return st.one_of(*options)


def splits(body: bytes, *, max_size: int = 12) -> st.SearchStrategy[list[int]]:
    """Cut offsets into ``body``: random ones, or every byte (one-byte feeds)."""
    if len(body) < 2:
        return st.just([])
    every = st.just(list(range(1, len(body))))
    some = st.lists(st.integers(1, len(body) - 1), max_size=max_size)
    return some | every if len(body) <= 2048 else some


def feed_split(
    feed: Callable[[bytes], list[Any]],
    close: Callable[[], list[Any]],
    body: bytes,
    cuts: Iterable[int],
) -> tuple[list[Any], BaseException | None]:
    """Feed ``body`` cut at ``cuts``, then close; return what came out and what escaped.

    The exception (if any) ends the feeding: the output is what came before it.
    """
    out: list[Any] = []
    prev = 0
    try:
        for cut in sorted({c for c in cuts if 0 < c < len(body)}):
            out += feed(body[prev:cut])
            prev = cut
        out += feed(body[prev:])
        out += close()
    except Exception as exc:  # the caller judges what escaped
        return out, exc
    return out, None
