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

Each mutation and generator is written once, against a :class:`Picker`: hypothesis draws for
the strategies (:func:`bodies`, shrinkable, in the suite) or a seeded :class:`random.Random`
(:class:`RandomPicker`: the long hunt, where hypothesis' own overhead per input would cost more
than the decoding).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from corpus import CORPUS_DIR
from hypothesis import strategies as st

__all__ = [
    "HOSTILE",
    "TOKENS",
    "Picker",
    "RandomPicker",
    "all_corpus",
    "bodies",
    "body_for",
    "family_corpus",
    "feed_split",
    "generate",
    "generated",
    "mutate",
    "mutate_once",
    "mutated",
    "random_splits",
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

_INSERTS = TOKENS + HOSTILE
T = TypeVar("T")

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


class Picker(Protocol):
    """Where a mutation's choices come from: hypothesis (:class:`_Draws`, shrinkable) or
    :class:`random.Random` (the long hunt, :class:`RandomPicker`: no per-input overhead)."""

    def integer(self, low: int, high: int) -> int: ...

    def choice(self, options: Sequence[T]) -> T: ...

    def blob(self, max_size: int) -> bytes: ...


class _Draws:
    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def integer(self, low: int, high: int) -> int:
        return self._draw(st.integers(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return self._draw(st.sampled_from(options))

    def blob(self, max_size: int) -> bytes:
        return self._draw(st.binary(max_size=max_size))


class RandomPicker:
    """A :class:`Picker` over :class:`random.Random` (seeded: a hunt is reproducible)."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.random.randrange(len(options))]

    def blob(self, max_size: int) -> bytes:
        return self.random.randbytes(self.random.randint(0, max_size))


_MUTATIONS = ("truncate", "delete", "repeat", "replace", "insert", "line_ends", "splice")


def mutate_once(pick: Picker, body: bytes) -> bytes:
    """One mutation of ``body`` (see the module docstring)."""
    kind = pick.choice(_MUTATIONS)
    if kind == "line_ends":
        old = pick.choice((b"\r\n", b"\n"))
        return body.replace(old, pick.choice((b"\r", b"\r\n", b"\n", b"\n\r")))
    if kind == "splice":
        other = pick.choice(all_corpus())
        a = pick.integer(0, len(other))
        b = min(len(other), a + pick.integer(0, 4096))
        at = pick.integer(0, len(body))
        return body[:at] + other[a:b] + body[at:]
    at = pick.integer(0, len(body))
    if kind == "truncate":
        return body[:at]
    if kind == "insert":
        token = pick.choice(_INSERTS) if pick.integer(0, 3) else pick.blob(8)
        return body[:at] + token + body[at:]
    if not body:
        return body
    end = min(len(body), at + pick.integer(1, 64))
    if kind == "delete":
        return body[:at] + body[end:]
    if kind == "repeat":
        return body[:end] + body[at:end] + body[end:]
    at = min(at, len(body) - 1)
    return body[:at] + bytes([pick.integer(0, 255)]) + body[at + 1 :]


def mutate(pick: Picker, pool: Sequence[bytes], *, window: int | None = None) -> bytes:
    """A file of ``pool`` (its first ``window`` bytes or fewer, if given) with one to four
    mutations."""
    body = pick.choice(pool)
    if window is not None and len(body) > window:
        body = body[: pick.integer(window // 4, window)]
    for _ in range(pick.integer(1, 4)):
        body = mutate_once(pick, body)
    return body


def generate(pick: Picker, *, max_line: int = 4096) -> bytes:
    """A body of :data:`TOKENS`, :data:`HOSTILE`, random bytes and long lines of up to
    ``max_line`` bytes (a ``data:`` line or a JSON line)."""
    if not pick.integer(0, 5):
        return pick.blob(300)
    parts = []
    for _ in range(pick.integer(0, 40)):
        kind = pick.integer(0, 9)
        if kind < 5:
            parts.append(pick.choice(TOKENS))
        elif kind < 8:
            parts.append(pick.choice(HOSTILE))
        elif kind < 9:
            parts.append(pick.blob(16))
        else:
            line = b'{"x": "' + b"a" * pick.integer(1, max_line) + b'"}'
            parts.append(pick.choice((b"data: " + line + b"\n\n", line + b"\n")))
    return b"".join(parts)


def body_for(pick: Picker, family: str | None, *, window: int | None = None) -> bytes:
    """One hostile body for a decoder whose corpus is ``family`` (``None``: it has none)."""
    own = family_corpus(family) if family else ()
    kind = pick.integer(0, 5 if own else 1)
    if kind == 0:
        return generate(pick)
    if kind == 1:
        return mutate(pick, all_corpus(), window=window)
    if kind == 5:
        return pick.choice(own)
    return mutate(pick, own, window=window)


@st.composite
def mutated(draw: st.DrawFn, pool: tuple[bytes, ...]) -> bytes:
    """A file of ``pool`` with one to four mutations (see the module docstring)."""
    return mutate(_Draws(draw), pool)


@st.composite
def generated(draw: st.DrawFn) -> bytes:
    """A body of :func:`generate`."""
    return generate(_Draws(draw))


@st.composite
def bodies(draw: st.DrawFn, family: str | None) -> bytes:
    """Hostile bodies for a decoder whose corpus is ``family`` (``None``: it has none)."""
    return body_for(_Draws(draw), family)


def splits(body: bytes, *, max_size: int = 12) -> st.SearchStrategy[list[int]]:
    """Cut offsets into ``body``: random ones, or every byte (one-byte feeds)."""
    if len(body) < 2:
        return st.just([])
    every = st.just(list(range(1, len(body))))
    some = st.lists(st.integers(1, len(body) - 1), max_size=max_size)
    return some | every if len(body) <= 2048 else some


def random_splits(pick: Picker, body: bytes, *, max_size: int = 12) -> list[int]:
    """:func:`splits` for a :class:`Picker`: random cuts, or every byte of a short body."""
    if len(body) < 2:
        return []
    if len(body) <= 512 and not pick.integer(0, 7):
        return list(range(1, len(body)))
    return [pick.integer(1, len(body) - 1) for _ in range(pick.integer(0, max_size))]


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
