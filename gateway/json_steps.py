"""Parse a large JSON text in steps of bounded CPU, with the value ``jsontext.loads`` gives.

One ``orjson.loads`` of a 16.5 MB AI SDK chat body (200k messages) holds the GIL for ~250 ms,
so a thread does not free the event loop. :func:`loads_in_steps` is a generator that parses
the same text in pieces of about ``step`` bytes and yields between them (the caller awaits
there); it returns (``StopIteration.value``) what :func:`agui_codecs.jsontext.loads` returns
for the whole text, or raises what it raises.

How (RFC 8259 §2-§5 grammar; orjson 3.x behaviour, checked by ``tests/gateway/test_json_steps.py``):

* the outer containers (objects and arrays nested less than :data:`DESCENT` deep) that do not
  fit in one step are walked by hand: ``{``, keys, ``:``, ``,``, ``]``, ``}`` and whitespace
  (space, tab, LF, CR, nothing else);
* where a value ends is what orjson says: ``orjson.loads`` of a window starting at the value
  fails with ``unexpected content after document`` at the first byte after it (its ``pos``
  counts code points: converted to bytes), in windows growing from 512 bytes (an escaped lone
  surrogate, which orjson refuses, is first rewritten ``\\u0000`` in the window);
* the elements of an array are parsed in runs of about ``step`` bytes: a candidate cut is the
  next "last byte of the first element, ``,``, first key of the first element" (``},{"id":``)
  after ``step`` bytes, and the run before it is parsed as ``"[" * depth + run + "]" * depth``,
  with one element at each added level. That succeeds only when the cut is between two
  elements of this array (not inside a string or a nested value): the grammar is LL(1) and the
  run starts at an element's first byte, so orjson reads it as the document does. A refused cut
  tries the next two, then the rest of the array when it ends within two steps (found by the
  same trailing-content error), else a step of elements, each one's end probed on its own;
* each piece is parsed by ``jsontext.loads`` under as many added arrays as the document has
  containers around it, so orjson's depth limit (1024) applies as on the whole text; integers
  beyond 64 bits and lone escaped surrogates take its standard-library path piece by piece,
  which gives the same values as for the whole text (duplicate keys: the last value, at the
  first key's place, as orjson and ``dict``).

Anything the steps cannot settle (invalid JSON, a window orjson refuses for another reason)
parses the whole text with ``jsontext.loads`` instead, so an error is the same error, raised
after the steps taken so far. A single value larger than a step that is not a container (a
10 MB string) is parsed in one piece. One known difference: a text with a run of 19+ digits
anywhere takes ``jsontext``'s standard-library path whole, whose recursion stops near 1000
levels (``RecursionError``, not a ``JSONDecodeError``), while here only the pieces holding
such a run take it: a piece nested 1000-1024 deep elsewhere is read (orjson's limit) instead.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any, Final

import orjson

from agui_codecs import jsontext

__all__ = ["DESCENT", "STEP", "Steps", "loads_in_steps"]

STEP: Final = 256 * 1024
"""Bytes parsed between two yields (about 1-2 ms of orjson on a 2026 VM core)."""
DESCENT: Final = 8
"""Containers nested less deep than this are walked by hand when larger than a step."""

Steps = Generator[None, None, Any]
"""A generator that yields between steps and returns the parsed value."""

_FIRST_WINDOW: Final = 512
_GROWTH: Final = 8
_CANDIDATES: Final = 3
_TRAILING: Final = "unexpected content after document"
_WS: Final = re.compile(rb"[ \t\n\r]*")
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_WS_CLASS: Final = rb"[ \t\n\r]*"
_FIRST_KEY: Final = re.compile(rb'\{[ \t\n\r]*("(?:[^"\\]|\\.){0,64}")[ \t\n\r]*:')
_NUMBER_BYTES: Final = frozenset(b"-0123456789")
_NUMBER_HEAD: Final = rb"[-0-9]"  # numbers are alike whatever their digits
_OPEN_OBJECT: Final = 0x7B
_OPEN_ARRAY: Final = 0x5B
_WHITESPACE: Final = frozenset(b" \t\n\r")


class _Unsure(Exception):
    """The steps cannot settle the text: it is parsed whole (same value or same error)."""


def loads_in_steps(data: bytes, step: int = STEP) -> Steps:
    """Parse ``data`` (JSON text, UTF-8 bytes) like :func:`agui_codecs.jsontext.loads`,
    yielding about every ``step`` bytes parsed.

    Returns (as the generator's value): the parsed value, equal to ``jsontext.loads(data)``
    (same types, same key order).

    Raises:
        JSONDecodeError: as ``jsontext.loads(data)`` raises it (invalid JSON, ``NaN``,
            numbers overflowing a double, too deep).
    """
    try:
        return (yield from _Parser(data, step).document())
    except _Unsure:
        return jsontext.loads(data)


def _probe(window: memoryview) -> None:
    """``orjson.loads(window)`` for its error only; an escaped surrogate (which orjson refuses
    and ``jsontext`` keeps) is read as ``\\u0000`` (same length, same structure: inside a
    string its bytes stay string bytes, whether an escape or after an escaped backslash).

    Raises:
        JSONDecodeError: as ``orjson.loads`` (``pos`` in code points).
    """
    try:
        orjson.loads(window)
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in exc.msg:
            raise
        orjson.loads(_SURROGATE_ESCAPE.sub(rb"\\u0000", window))


def _byte_offset(doc: str, pos: int) -> int:
    """The UTF-8 byte offset of code point ``pos`` of ``doc`` (orjson's ``pos`` unit)."""
    return pos if doc.isascii() else len(doc[:pos].encode())


class _Parser:
    """One text's steps; ``work`` counts bytes parsed since the last yield."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data = data
        self.view = memoryview(data)
        self.step = max(1, step)
        self.work = 0

    def document(self) -> Steps:
        start = self._ws(0)
        value, end = yield from self._value(start, 0)
        if self._ws(end) != len(self.data):
            raise _Unsure
        return value

    # -- pieces -----------------------------------------------------------------------------

    def _ws(self, index: int) -> int:
        match = _WS.match(self.data, index)
        assert match is not None  # [ \t\n\r]* matches the empty string
        return match.end()

    def _pause(self) -> Generator[None, None, None]:
        if self.work >= self.step:
            self.work = 0
            yield

    def _window_stop(self, start: int, size: int) -> int:
        """``start + size``, moved back so as not to cut a UTF-8 sequence."""
        stop = min(len(self.data), start + size)
        while stop < len(self.data) and stop > start + 1 and 0x80 <= self.data[stop] < 0xC0:
            stop -= 1
        return stop

    def _end(self, start: int, limit: int | None) -> int | None:
        """Exclusive end of the JSON value at ``start`` (no trailing whitespace), or None when
        it is longer than ``limit`` bytes (``limit`` None: no bound)."""
        size = _FIRST_WINDOW if limit is None else min(_FIRST_WINDOW, limit)
        total = len(self.data)
        while True:
            stop = self._window_stop(start, size)
            self.work += stop - start
            try:
                _probe(self.view[start:stop])
            except orjson.JSONDecodeError as exc:
                if exc.msg == _TRAILING:
                    return self._trim(start + _byte_offset(exc.doc, exc.pos))
                if stop == total or exc.pos < len(exc.doc) - 16:
                    raise _Unsure from exc  # a fault inside the window: not the cut's
            else:
                if stop == total:
                    return self._trim(stop)
                # a number cut short parses too: the window must show what follows
            if limit is not None and size >= limit:
                return None
            size *= _GROWTH
            if limit is not None:
                size = min(size, limit)

    def _trim(self, end: int) -> int:
        while end > 0 and self.data[end - 1] in _WHITESPACE:
            end -= 1
        return end

    def _values(self, start: int, stop: int, level: int) -> list[Any]:
        """The comma-separated values of ``data[start:stop]``, which sit inside ``level``
        (≥ 1) containers of the document: parsed under ``level`` added arrays, with exactly
        one element at each added level but the innermost (else the cut was not between
        values of one container)."""
        self.work += stop - start
        text = b"[" * level + self.data[start:stop] + b"]" * level
        try:
            parsed: Any = jsontext.loads(text)
        except (ValueError, RecursionError) as exc:
            raise _Unsure from exc
        for _ in range(level - 1):
            if len(parsed) != 1:
                raise _Unsure
            parsed = parsed[0]
        assert isinstance(parsed, list)
        return parsed

    def _one(self, start: int, stop: int, level: int) -> Any:
        """The single value ``data[start:stop]`` inside ``level`` containers."""
        if level == 0:
            self.work += stop - start
            try:
                return jsontext.loads(self.data[start:stop])
            except (ValueError, RecursionError) as exc:
                raise _Unsure from exc
        values = self._values(start, stop, level)
        if len(values) != 1:
            raise _Unsure
        return values[0]

    # -- values -----------------------------------------------------------------------------

    def _value(self, start: int, level: int) -> Generator[None, None, tuple[Any, int]]:
        """The value at ``start`` (inside ``level`` containers) and its exclusive end."""
        end = self._end(start, self.step)
        if end is None and level < DESCENT:
            opener = self.data[start]
            if opener == _OPEN_OBJECT:
                return (yield from self._object(start, level))
            if opener == _OPEN_ARRAY:
                return (yield from self._array(start, level))
        if end is None:
            end = self._end(start, None)
            assert end is not None
        value = self._one(start, end, level)
        yield from self._pause()
        return value, end

    def _object(self, start: int, level: int) -> Generator[None, None, tuple[Any, int]]:
        """The object at ``start`` member by member (``data[start]`` is ``{``)."""
        data = self.data
        members: dict[str, Any] = {}
        index = self._ws(start + 1)
        if data[index : index + 1] == b"}":
            return members, index + 1
        while True:
            if data[index : index + 1] != b'"':
                raise _Unsure
            key_end = self._end(index, None)
            assert key_end is not None
            key = self._one(index, key_end, level + 1)
            colon = self._ws(key_end)
            if data[colon : colon + 1] != b":":
                raise _Unsure
            value, end = yield from self._value(self._ws(colon + 1), level + 1)
            members[key] = value  # a repeated key: last value, first place (as orjson)
            after = self._ws(end)
            byte = data[after : after + 1]
            if byte == b"}":
                return members, after + 1
            if byte != b",":
                raise _Unsure
            index = self._ws(after + 1)

    def _array(self, start: int, level: int) -> Generator[None, None, tuple[Any, int]]:
        """The array at ``start`` in runs of elements (``data[start]`` is ``[``)."""
        data = self.data
        inner = level + 1
        items: list[Any] = []
        index = self._ws(start + 1)
        if data[index : index + 1] == b"]":
            return items, index + 1
        boundary: re.Pattern[bytes] | None = None
        while True:
            first_end = self._end(index, self.step)
            if first_end is None:  # one element larger than a step
                item, end = yield from self._value(index, inner)
                items.append(item)
            else:
                if boundary is None:
                    boundary = self._boundary(index, first_end)
                run = yield from self._run(index, first_end, boundary, inner)
                if run is None:  # the pattern misled: a step walked element by element
                    boundary = None  # and learnt anew from the next run's first element
                    run = self._walk(index, first_end, inner)
                items += run[0]
                end = run[1]
                yield from self._pause()
            after = self._ws(end)
            byte = data[after : after + 1]
            if byte == b"]":
                return items, after + 1
            if byte != b",":
                raise _Unsure
            index = self._ws(after + 1)

    def _boundary(self, start: int, end: int) -> re.Pattern[bytes]:
        """What lies between this element and a next one like it: its last byte, ``,`` and
        its first byte (an object's: ``{`` and its first key, with its ``:``; a number's: any
        digit, or ``-``)."""
        data = self.data
        head = _NUMBER_HEAD if data[start] in _NUMBER_BYTES else re.escape(data[start : start + 1])
        first_key = _FIRST_KEY.match(data, start, end)
        if first_key is not None:
            head = rb"\{" + _WS_CLASS + re.escape(first_key.group(1)) + _WS_CLASS + rb":"
        last = rb"[0-9]" if 0x30 <= data[end - 1] <= 0x39 else re.escape(data[end - 1 : end])
        return re.compile(last + _WS_CLASS + rb"," + _WS_CLASS + head)

    def _run(
        self, start: int, first_end: int, boundary: re.Pattern[bytes], level: int
    ) -> Generator[None, None, tuple[list[Any], int] | None]:
        """The elements from ``start`` up to a cut about a step on, and the cut; None when
        no cut could be confirmed (a refused cut costs a step: the steps yield between)."""
        if first_end - start >= self.step:
            return None
        since = max(start + self.step, first_end - 1)
        until = start + 2 * self.step
        for tried, match in enumerate(boundary.finditer(self.data, since, until)):
            cut = match.start() + 1
            try:
                return self._values(start, cut, level), cut
            except _Unsure:
                yield from self._pause()
                if tried + 1 == _CANDIDATES:
                    break
        rest = self._rest(start, level)
        yield from self._pause()
        return rest

    def _walk(self, start: int, first_end: int, level: int) -> tuple[list[Any], int]:
        """The elements from ``start`` for about a step, each one's end found on its own (as
        many probes as elements: for arrays whose elements do not look alike)."""
        data = self.data
        end = first_end
        spent = self.work  # the probes count too: tiny elements cost a probe each
        while end - start < self.step and self.work - spent < self.step:
            after = self._ws(end)
            if data[after : after + 1] != b",":
                break  # the array's "]", or a fault the caller refuses
            following = self._end(self._ws(after + 1), self.step)
            if following is None:
                break  # an element larger than a step: the caller walks into it
            end = following
        return self._values(start, end, level), end

    def _rest(self, start: int, level: int) -> tuple[list[Any], int] | None:
        """The elements from ``start`` to the end of their array when it ends within two
        steps, and the end of the last one; else None."""
        stop = self._window_stop(start, 2 * self.step)
        self.work += stop - start
        try:
            _probe(memoryview(b"[" + self.data[start:stop]))
        except orjson.JSONDecodeError as exc:
            if exc.msg != _TRAILING:
                return None
            after = start - 1 + _byte_offset(exc.doc, exc.pos)
        else:
            after = stop
        close = self._trim(after)  # data[close - 1] is the "]" that closed the added "["
        end = self._trim(close - 1)
        return self._values(start, end, level), end
