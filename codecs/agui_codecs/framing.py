"""Input framing: split an upstream body into JSON payloads, whatever wraps them.

Three framings occur in the wild (see ``tests/corpus/MANIFEST.md``):

* ``sse``: a ``text/event-stream`` body; each event's ``data`` is one JSON document and the
  literal ``[DONE]`` (OpenAI) ends the stream;
* ``jsonl``: one JSON document per line, no SSE framing (recorded fixtures, NDJSON endpoints);
* ``json``: one JSON array streamed element by element (Gemini ``streamGenerateContent``
  without ``alt=sse``).

``auto`` picks by the first non-blank byte after an optional BOM: ``{`` means ``jsonl``, ``[``
means ``json``, anything else ``sse``.

Sans-I/O: ``feed(bytes) -> list[Frame]``, ``close() -> list[Frame]``.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import orjson

from . import jsontext
from ._frame import DONE, Frame, frame_of
from ._json_array import JsonArrayFraming
from .errors import (
    EventTooLargeError,
    LocalProtocolError,
    MalformedUpstreamError,
    RemoteProtocolError,
)
from .sse import DEFAULT_MAX_EVENT_SIZE, SSEDecoder

__all__ = ["DONE", "Frame", "FrameDecoder", "Framing"]

Framing = Literal["auto", "sse", "jsonl", "json"]

_LEADING: Final = b"\xef\xbb\xbf \t\r\n"
"""Bytes ``auto`` skips before the first significant one (BOM bytes and JSON whitespace)."""
_EVENT_NAME: Final = re.compile(rb"[A-Za-z0-9_.\-]+")
"""An SSE event name the fast path takes as it is (anything else goes to the SSE decoder)."""
_LF_FRAME: Final = re.compile(rb"(?:event: ([A-Za-z0-9_.\-]+)\n)?data: ?([{\[][^\n]*+)\n\n")
"""The SSE fast path's commonest frame, matched whole where the read holds no CR: an optional
``event: <name>`` line (a plain token, :data:`_EVENT_NAME`), one ``data:`` line whose value
(one optional space removed) starts a JSON object or array, a blank line (group 1: the name,
group 2: the JSON). The data line is taken possessively: a line that is not followed by a
blank line fails at once, without backtracking through it."""


def _frame_end(data: bytes, pos: int) -> int:
    """Where the SSE fast path hands the decoder one frame it did not take: after the first
    blank line from ``pos`` ended by LF or CRLF (one LF search a line), or -1. Any blank line
    ends a frame; one spelled otherwise (a lone CR) only makes the piece longer."""
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return -1
        if data.startswith(b"\n", nl + 1):
            return nl + 2
        if data.startswith(b"\r\n", nl + 1):
            return nl + 3
        pos = nl + 1


class FrameDecoder(JsonArrayFraming):
    """Incremental splitter of an upstream body into :class:`Frame` objects.

    Args:
        framing: ``"auto"``, ``"sse"``, ``"jsonl"`` or ``"json"``.
        max_event_size: cap in bytes on one SSE line/event, one JSON line or one array element.

    A malformed body (a payload that is not JSON, a payload larger than ``max_event_size``,
    bytes after a JSON array's end, a JSON array cut short) does not raise: the frames decoded
    before the fault are returned, followed by one frame whose ``error`` is the typed
    :class:`RemoteProtocolError` (:class:`MalformedUpstreamError`, :class:`EventTooLargeError`,
    or code ``UPSTREAM_TRUNCATED`` for an array that never closed); later input is ignored.

    Raises:
        LocalProtocolError: ``feed()`` after ``close()``.
    """

    def __init__(
        self, framing: Framing = "auto", *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE
    ) -> None:
        if framing not in ("auto", "sse", "jsonl", "json"):
            raise LocalProtocolError(f"unknown framing {framing!r}")
        self.framing: Framing = framing
        self.max_event_size = max_event_size
        self._sse: SSEDecoder | None = None
        self._pending = bytearray()  # bytes held while framing is undecided, or jsonl/json tail
        self._closed = False
        # JSON-array scanner state
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._elem_start = -1
        self._array_open = False
        self._array_done = False
        self._event_names: dict[bytes, str] = {}  # SSE fast path: event names seen
        # SSE fast path, of the read being framed: its long digit runs, its first CR (or -1)
        self._digit_runs: jsontext.DigitRuns | None = None
        self._cr_at = -1
        self._scan = 0  # JSON array: bytes of _pending already scanned; JSON lines: no LF
        self._failed = False
        self._out: list[Frame] = []

    def feed(self, data: bytes) -> list[Frame]:
        """Consume bytes; return the payloads they complete (see the class docstring)."""
        if self._closed:
            raise LocalProtocolError("FrameDecoder.feed() called after close()")
        if self._failed:
            return []
        try:
            self._feed(data)
        except RemoteProtocolError as exc:
            self._fail(exc)
        out, self._out = self._out, []
        return out

    def close(self) -> list[Frame]:
        """Signal EOF; return any payload completed by it (and an error frame if cut short)."""
        if self._closed:
            return []
        self._closed = True
        if not self._failed:
            try:
                self._close()
            except RemoteProtocolError as exc:
                self._fail(exc)
        out, self._out = self._out, []
        return out

    def _fail(self, exc: RemoteProtocolError) -> None:
        self._failed = True
        self._pending.clear()
        self._out.append(Frame(None, None, exc))

    def _feed(self, data: bytes) -> None:
        if self.framing == "auto":
            # Everything held so far is BOM bytes and whitespace, so only the new bytes need
            # looking at (linear however the leading blank is chunked).
            self._pending += data
            stripped = data.lstrip(_LEADING)
            if not stripped:
                if len(self._pending) > self.max_event_size:
                    raise EventTooLargeError(
                        "leading whitespace too long", limit=self.max_event_size
                    )
                return
            first = stripped[:1]
            self.framing = "jsonl" if first == b"{" else "json" if first == b"[" else "sse"
            data = bytes(self._pending)
            self._pending.clear()
        if self.framing == "sse":
            self._feed_sse(data)
        elif self.framing == "jsonl":
            self._feed_jsonl(data, final=False)
        else:
            self._feed_json_array(data)

    def _close(self) -> None:
        if self.framing == "sse":
            if self._sse is not None:
                self._sse.close()
        elif self.framing == "jsonl":
            self._feed_jsonl(b"", final=True)
        elif self.framing == "json":
            if self._array_open and not self._array_done:
                if self._depth == 0 and not self._in_string and self._elem_start >= 0:
                    try:  # a last element that is whole still counts; half of one does not
                        self._flush_element(self._pending, len(self._pending), self._out)
                    except MalformedUpstreamError:
                        pass
                raise RemoteProtocolError(  # cut short, like a stream without its end
                    "JSON array stream ended before its closing ']'", code="UPSTREAM_TRUNCATED"
                )
        # auto with nothing but whitespace: an empty body, nothing to say

    # -- SSE -----------------------------------------------------------------------------
    def _feed_sse(self, data: bytes) -> None:
        if self._sse is None:
            self._sse = SSEDecoder(max_event_size=self.max_event_size)
            self._sse.starts_with(data)  # the fast path may take the first frame too
        frames = self._out
        sse = self._sse
        pos, size = 0, len(data)
        self._digit_runs = jsontext.DigitRuns(data)
        self._cr_at = data.find(b"\r")
        while self.fast_sse and pos < size:
            # Whole simple frames go the fast way; a frame split across reads is finished by
            # the decoder, then the fast way resumes (feeding it in pieces is the same as at once).
            if sse.idle:
                pos = self._take_simple_frames(data, pos, frames)
                if pos >= size:
                    return
            end = _frame_end(data, pos)  # after a blank line: the decoder is idle there
            if end < 0:
                break
            self._decode_sse(data[pos:end], frames)
            pos = end
            if not sse.idle:
                break
        self._decode_sse(data[pos:] if pos else data, frames)

    def _decode_sse(self, data: bytes, frames: list[Frame]) -> None:
        assert self._sse is not None
        if not data:
            return
        for ev in self._sse.feed(data):
            payload = ev.data
            if payload.strip() == "[DONE]":
                frames.append(Frame(DONE, ev.event))
            elif not payload.strip():
                continue  # a blank data field carries nothing; skip rather than fail
            else:
                frames.append(frame_of(payload, None, ev.event))

    fast_sse: bool = True
    """Take ``[event: <name>\n]data: {...}\n\n`` frames without the line-by-line SSE decoder
    (same frames)."""

    def _take_simple_frames(self, data: bytes, pos: int, frames: list[Frame]) -> int:
        """The fast path: while ``data`` holds a whole simple frame at ``pos``, decode its JSON
        bytes straight with :func:`~agui_codecs.jsontext.parse`; return where what is left for
        the SSE decoder starts. A simple frame is one LF- or CRLF-ended ``data: {<JSON>}`` (or
        ``[<JSON>]``, LangGraph's tuples) line (or ``data:{``, as DeepSeek, Groq and Mistral
        write it), optionally after one ``event:
        <name>`` line whose name is a plain ASCII token (:data:`_EVENT_NAME`; OpenAI Responses
        and Anthropic name every event), then a blank line (LF or CRLF: Gemini and A2A servers
        end lines with CRLF); no other CR. Comment lines (``: OPENROUTER PROCESSING``) and
        blank lines between frames are skipped (the decoder ignores them there too). It stops
        at anything else (another field, a lone CR, a partial frame, a line over the size cap,
        bytes that are not valid UTF-8 JSON): the decoder then sees exactly what it would have
        seen, so the frames are the same (WHATWG HTML §9.2.6: one leading space removed from a
        value, the event type from ``event`` or else ``message``, a comment or an empty event
        dispatches nothing).

        Most frames (LF line ends, before the read's first CR) are one match of
        :data:`_LF_FRAME`; the payload is then ``orjson.loads`` of its bytes, since
        :class:`~agui_codecs.jsontext.DigitRuns` has checked the whole read for integers orjson
        would not keep (those payloads, and any orjson refuses, go through ``jsontext.parse``).
        ``tests/codecs/test_framing_fast_sse.py`` checks the frames equal the decoder's alone
        (hypothesis)."""
        limit = self.max_event_size
        names = self._event_names
        runs, cr_at = self._digit_runs, self._cr_at  # of ``data``, set by _feed_sse
        assert runs is not None
        loads = orjson.loads
        lf_frame = _LF_FRAME.match
        while True:
            # The commonest frames first, one pattern match each: an LF-only frame before the
            # read's first CR (Anthropic, OpenAI); the steps below take the others one by one.
            m = lf_frame(data, pos) if cr_at < 0 or pos < cr_at else None
            while m is not None and (cr_at < 0 or m.end() <= cr_at) and m.end() - pos <= limit:
                name, raw = m.group(1, 2)
                try:
                    if runs.within(m.start(2), m.end(2)):
                        value, surrogates = jsontext.parse(raw)
                    else:
                        value, surrogates = loads(raw), False
                except jsontext.JSONDecodeError:
                    break  # (the steps below parse it again and decide)
                event = "message" if name is None else names.get(name) or self._event_name(name)
                frames.append(Frame(value, event, None, surrogates))
                pos = m.end()
                m = lf_frame(data, pos)
            line = pos
            crs = 0  # CRs the frame may hold: one ending each CRLF line
            if data.startswith(b"event: ", pos):
                line = data.find(b"\n", pos + 7)
                if line < 0 or line - pos > limit:
                    break
                name_end = line
                if data[line - 1] == 0x0D:  # CRLF
                    name_end, crs = line - 1, 1
                name = data[pos + 7 : name_end]
                event = names.get(name) or self._event_name(name)
                if not event:
                    break
                line += 1
            elif data.startswith(b":", pos) or data.startswith(b"\n", pos):
                end = data.find(b"\n", pos)
                if end < 0 or end - pos > limit or data.find(b"\r", pos, end) >= 0:
                    break
                if end > pos:
                    self._sse.comments += 1  # type: ignore[union-attr]
                pos = end + 1
                continue
            else:
                event = "message"
            if not data.startswith(b"data:", line):
                break
            json_at = line + 6 if data.startswith(b" ", line + 5) else line + 5
            if not data.startswith((b"{", b"["), json_at):
                break  # (``[DONE]`` is not JSON: the decoder gives its frame)
            end = data.find(b"\n", json_at)
            if end < 0 or end - line > limit:
                break
            json_end = end
            if data[end - 1] == 0x0D:  # CRLF
                json_end = end - 1
                crs += 1
            if data.startswith(b"\n", end + 1):  # the blank line
                after = end + 2
            elif data.startswith(b"\r\n", end + 1):
                after = end + 3
            else:
                break
            if data.count(b"\r", pos, end) != crs:  # a lone CR ends a line too
                break
            raw = data[json_at:json_end]
            try:
                if runs.within(json_at, json_end):  # the integers may need every digit
                    value, surrogates = jsontext.parse(raw)
                else:  # jsontext.parse's own hot path, its digit check done for the chunk
                    try:
                        value, surrogates = loads(raw), False
                    except jsontext.JSONDecodeError:
                        value, surrogates = jsontext.parse(raw)  # a lone surrogate, or raise
            except jsontext.JSONDecodeError:
                break  # the decoder's way: U+FFFD replacement, then the same error if any
            frames.append(Frame(value, event, None, True) if surrogates else Frame(value, event))
            pos = after
        return pos

    def _event_name(self, name: bytes) -> str:
        """``name`` as the event type when it is a plain token (remembered, up to 256 names),
        else ``""`` (the frame is left to the SSE decoder)."""
        if _EVENT_NAME.fullmatch(name) is None:
            return ""
        text = name.decode("ascii")
        if len(self._event_names) < 256:
            self._event_names[name] = text
        return text

    # -- JSON lines ----------------------------------------------------------------------
    def _feed_jsonl(self, data: bytes, *, final: bool) -> None:
        # Linear in the input however it is chunked: the held tail (one line in progress) is
        # never searched twice for its LF (``_scan``), and consumed lines are dropped once per
        # feed. A line longer than ``max_event_size`` fails whether it came whole or in pieces.
        buf = self._pending
        buf += data
        frames = self._out
        start = 0
        limit = self.max_event_size
        last = buf.rfind(b"\n", self._scan) if self.fast_jsonl else -1
        if last >= 0:  # the whole lines at once; what follows the last LF is left below
            whole = bytes(buf[:last])
            del buf[: last + 1]
            self._scan = len(buf)  # no LF in what is left
            self._jsonl_lines(whole, frames)
        try:
            nl = buf.find(b"\n", self._scan)
            while nl >= 0:
                if nl - start > limit:
                    raise EventTooLargeError(f"JSON line longer than {limit} bytes", limit=limit)
                line = bytes(buf[start:nl]).strip()
                start = nl + 1
                if line:
                    frames.append(self._jsonl_frame(line))
                nl = buf.find(b"\n", start)
        finally:
            del buf[:start]
            self._scan = len(buf)
        if len(buf) > limit:
            raise EventTooLargeError(
                f"JSON line longer than {self.max_event_size} bytes", limit=self.max_event_size
            )
        if final:
            line = bytes(buf).strip()
            buf.clear()
            if line:
                frames.append(self._jsonl_frame(line))

    fast_jsonl: bool = True
    """Frame the whole lines of each read at once (:meth:`_jsonl_lines`) instead of one LF
    search and copy each (same frames)."""

    def _jsonl_lines(self, whole: bytes, frames: list[Frame]) -> None:
        """The JSON lines of ``whole`` (complete lines, the last LF cut off), as the line loop
        of :meth:`_feed_jsonl` frames them: a line over ``max_event_size`` raises (the lines
        before it framed), a blank one is skipped. A line that is one JSON object as it stands
        (no blanks around it) and holds no run of 19 digits
        (:class:`~agui_codecs.jsontext.DigitRuns`, checked for all the lines at once) is
        ``orjson.loads`` of it, which is what :func:`~agui_codecs.jsontext.parse` gives there;
        any other line, and one orjson refuses, goes through :meth:`_jsonl_frame`.
        ``tests/codecs/test_framing_fast_jsonl.py`` checks the frames equal the line loop's
        (hypothesis)."""
        limit = self.max_event_size
        runs = jsontext.DigitRuns(whole)
        loads = orjson.loads
        at = 0
        for line in whole.split(b"\n"):
            size = len(line)
            if size > limit:
                raise EventTooLargeError(f"JSON line longer than {limit} bytes", limit=limit)
            if line.startswith(b"{") and line.endswith(b"}") and not runs.within(at, at + size):
                try:
                    frames.append(Frame(loads(line)))
                    at += size + 1
                    continue
                except jsontext.JSONDecodeError:
                    pass
            line = line.strip()
            if line:
                frames.append(self._jsonl_frame(line))
            at += size + 1

    @staticmethod
    def _jsonl_frame(line: bytes) -> Frame:
        if line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if line.startswith(b"data:"):  # tolerate SSE-style prefixes in line-delimited dumps
            line = line[5:].strip()
            if line == b"[DONE]":
                return Frame(DONE)
        return frame_of(line, "JSON line")
