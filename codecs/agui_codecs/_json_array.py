"""Input framing of one JSON array streamed element by element (Gemini
``streamGenerateContent`` without ``alt=sse``; the .NET AG-UI and AI SDK JSON bodies): the
splitter :class:`~agui_codecs.framing.FrameDecoder` runs for its ``json`` framing, holding its
state there (RFC 8259: strings, escapes and brackets decide where an element ends)."""

from __future__ import annotations

import re
from typing import Final

from . import jsontext
from ._frame import Frame, frame_of
from .errors import EventTooLargeError, MalformedUpstreamError

__all__ = ["JsonArrayFraming"]

_STRING_STOP: Final = re.compile(rb'["\\]')
"""What ends a run of plain characters inside a JSON string: a quote or a backslash."""
_NESTED_SKIP: Final = re.compile(rb'[^"{}\[\]]*(?:"(?:[^"\\]|\\.)*"[^"{}\[\]]*)*', re.DOTALL)
"""What the JSON array splitter skips inside an element (depth > 0, outside a string):
everything but a bracket, with the strings that end in the buffer (RFC 8259 §7: a quote ends
one unless escaped by a backslash); it stops at a bracket or at the quote of a string still
open, which the byte-by-byte scan takes from there. Commas, colons, numbers, whitespace and
whole strings change nothing there."""
_ELEMENT_END: Final = re.compile(rb"[}\]][ \t\r\n]*(?:(,)[ \t\r\n]*(?:[{\[]|\Z)|(\])[ \t\r\n]*\Z)")
"""A candidate end of a JSON array element (:meth:`JsonArrayFraming._whole_element`), matched at
each closing bracket of the element's kind (found with ``bytearray.find``): the bracket,
blanks, then either a comma and the next element's opening bracket (or the end of the bytes so
far), or the array's ``]`` at the end of the bytes so far (group 1: the comma, group 2: that
bracket). Inside an element a closing bracket is mostly followed by a comma and a key, or by
another closing bracket, which this leaves out."""
_ELEMENT_TRIES: Final = 8
"""Candidate ends :meth:`JsonArrayFraming._whole_element` tries before leaving an element to the
byte scan (each try parses up to the candidate: a bound on the work spent on deep nesting)."""


class JsonArrayFraming:
    """The JSON array splitter of :class:`~agui_codecs.framing.FrameDecoder` (its ``json``
    framing): the state below is the decoder's, set by its ``__init__``."""

    max_event_size: int
    _pending: bytearray  # the element in progress and what follows it
    _scan: int  # bytes of _pending already scanned
    _out: list[Frame]  # frames of the current feed()
    _depth: int
    _in_string: bool
    _escape: bool
    _elem_start: int
    _array_open: bool
    _array_done: bool

    def _feed_json_array(self, data: bytes) -> None:
        buf = self._pending
        buf += data
        frames = self._out
        i = self._scan
        n = len(buf)
        while i < n:
            c = buf[i]
            if self._array_done:
                if c not in (0x20, 0x09, 0x0A, 0x0D):
                    raise MalformedUpstreamError("trailing bytes after the JSON array")
            elif not self._array_open and c not in (0x5B, 0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF):
                # Anything significant before the "[" is malformed at once (a string there
                # was held as an element, whose size verdict then depended on the chunking).
                raise MalformedUpstreamError("JSON stream does not start with '['")
            elif self._in_string:
                if self._escape:
                    self._escape = False
                elif c == 0x5C:  # backslash
                    self._escape = True
                elif c == 0x22:  # quote
                    self._in_string = False
                else:  # plain string content: jump to the next quote or backslash (C speed)
                    stop = _STRING_STOP.search(buf, i + 1)
                    i = (stop.start() if stop is not None else n) - 1
            elif c == 0x22:
                self._in_string = True
                if self._elem_start < 0:
                    self._elem_start = i
            elif c in (0x7B, 0x5B):  # { [
                if not self._array_open:
                    if c != 0x5B:
                        raise MalformedUpstreamError("JSON stream does not start with '['")
                    self._array_open = True
                else:
                    if self._depth == 0 and self._elem_start < 0:
                        after = self._whole_element(buf, i, frames) if self.fast_json else -1
                        if after > 0:  # framed whole: on past it
                            i = after
                            continue
                        # (a value right after another without a comma stays in the same
                        # element, which then fails to parse, whatever the chunking)
                        self._elem_start = i
                    self._depth += 1
            elif c in (0x7D, 0x5D):  # } ]
                if self._depth == 0:
                    if c == 0x5D and self._array_open:
                        self._flush_element(buf, i, frames)
                        self._array_done = True
                    else:
                        self._check_size(i)  # too large already, whatever the chunking
                        raise MalformedUpstreamError("unbalanced bracket in JSON array stream")
                else:
                    self._depth -= 1
            elif c == 0x2C and self._depth == 0:  # comma between elements
                self._flush_element(buf, i, frames)
            elif (
                self._array_open
                and self._depth == 0
                and self._elem_start < 0
                and c not in (0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF)
            ):
                self._elem_start = i  # a scalar element
            if self._depth > 0 and not self._in_string:
                # inside an element only brackets and open strings change the state: skip on
                skip = _NESTED_SKIP.match(buf, i + 1)
                i = skip.end() if skip is not None else i + 1
                continue
            i += 1
        # Drop consumed bytes, keeping the element in progress.
        keep = self._elem_start if self._elem_start >= 0 else n
        del buf[:keep]
        self._scan = n - keep
        if self._elem_start >= 0:
            self._elem_start = 0
        if len(buf) > self.max_event_size:
            raise EventTooLargeError(
                f"JSON array element larger than {self.max_event_size} bytes",
                limit=self.max_event_size,
            )

    fast_json: bool = True
    """Frame a JSON array's whole elements with one parse each (:meth:`_whole_element`)
    instead of scanning them byte by byte (same frames)."""

    def _whole_element(self, buf: bytearray, start: int, frames: list[Frame]) -> int:
        """The fast path of an element starting at ``start`` (its ``{`` or ``[``, at depth 0),
        and of the elements right after it: try the first few candidate ends (a closing
        bracket of the element's kind followed by blanks and a comma or the array's ``]``,
        :data:`_ELEMENT_END`) with :func:`~agui_codecs.jsontext.parse`;
        the first that parses is the element (a JSON array or object text ends at the bracket
        matching its first one, so no other candidate can parse). Returns the index of the
        next element's bracket (past the comma), the end of the bytes (a comma ended them) or
        the array's closing bracket, having appended the frame, or -1 to leave the element to
        the byte scan (no candidate in the buffer, none parsed, or over ``max_event_size``:
        the scan then gives the same frame or error)."""
        after = self._one_element(buf, start, frames)
        while 0 < after < len(buf) and buf[after] in (0x7B, 0x5B):  # the next one follows
            following = self._one_element(buf, after, frames)
            if following < 0:
                break  # the scan takes it from its bracket
            after = following
        return after

    def _one_element(self, buf: bytearray, start: int, frames: list[Frame]) -> int:
        """One element of :meth:`_whole_element`: the same result for the element at
        ``start`` alone."""
        closer = b"}" if buf[start] == 0x7B else b"]"  # an element ends with its own kind
        pos, tries = start, 0
        while tries < _ELEMENT_TRIES:
            close = buf.find(closer, pos)  # (memchr: faster than the pattern's own search)
            if close < 0:
                return -1
            found = _ELEMENT_END.match(buf, close)
            pos = close + 1
            if found is None:
                continue
            tries += 1
            sep = found.lastindex or 0  # 1: a comma, 2: the array's closing bracket
            if found.start(sep) - start > self.max_event_size:
                return -1
            try:
                value, surrogates = jsontext.parse(bytes(buf[start : close + 1]))
            except jsontext.JSONDecodeError:
                continue
            frames.append(Frame(value, None, None, True) if surrogates else Frame(value))
            if sep == 2:
                return found.start(2)
            # past the comma and blanks to the next element's bracket (the scan does nothing
            # there), or to the end of the bytes when the comma ended them
            end = found.end()
            return end - 1 if buf[end - 1] in (0x7B, 0x5B) else end
        return -1

    def _check_size(self, end: int) -> None:
        """Raise if the element in progress already holds more than ``max_event_size`` bytes
        at ``end``: the same verdict as the held-tail check at the end of a ``feed()``, so a
        fault further on never hides it (split invariance)."""
        if self._elem_start >= 0 and end - self._elem_start > self.max_event_size:
            raise EventTooLargeError(
                f"JSON array element larger than {self.max_event_size} bytes",
                limit=self.max_event_size,
            )

    def _flush_element(self, buf: bytearray, end: int, frames: list[Frame]) -> None:
        if self._elem_start < 0:
            return
        self._check_size(end)
        raw = bytes(buf[self._elem_start : end]).strip()
        self._elem_start = -1
        if raw:
            frames.append(frame_of(raw, "JSON array element"))
