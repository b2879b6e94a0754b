"""Server-Sent Events: an incremental decoder and an encoder.

The decoder follows the WHATWG HTML Living Standard, section 9.2.6 "Interpreting an event
stream" (the ``text/event-stream`` parsing algorithm), exactly:

* lines end with CRLF, LF or CR; a CR at the end of one ``feed()`` pairs with an LF at the start
  of the next;
* bytes are split into lines *before* UTF-8 decoding, so a multi-byte character split across
  reads is never mangled; invalid UTF-8 is replaced with U+FFFD as the standard requires;
* one leading U+FEFF (BOM) is stripped, even when it arrives split across reads;
* ``:`` starts a comment; ``field: value`` loses exactly one leading space; a line without ``:``
  is a field with an empty value;
* ``data`` lines accumulate joined by LF; a blank line dispatches only if a ``data`` field was
  seen; ``event`` sets the type (default ``"message"``); ``id`` persists across events and is
  ignored when it contains NUL; ``retry`` counts only when it is all ASCII digits; unknown
  fields are ignored; an event not terminated by a blank line at EOF is dropped.

It is sans-I/O (h11 style): ``feed(bytes) -> list[SSEEvent]``, ``close() -> list[SSEEvent]``.
Oversized input raises :class:`~agui_codecs.errors.EventTooLargeError` instead of growing
without bound.

The writer is the one place SSE bytes are framed (encoders, keep-alives, the demo upstream):
LF framing only (``@ag-ui/client`` 1.0 splits on ``\\n\\n`` and the AI SDK's eventsource-parser
needs the blank line, ``docs/protocols.md`` §1.2), one ``data:`` line per line of the payload,
``event``/``id`` values refused when they would break the frame.

* :func:`encode_event`: any text payload (split into ``data:`` lines);
* :func:`encode_data`: the hot path, one payload that is already one line of bytes (compact
  JSON as ``orjson.dumps`` writes it), with precomputed prefixes and cached ``event:`` lines;
* :func:`encode_comment` / :data:`KEEP_ALIVE`: comment lines (keep-alives, never an ``id:``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from .errors import EventTooLargeError, LocalProtocolError

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "KEEP_ALIVE",
    "SSEDecoder",
    "SSEEvent",
    "encode_comment",
    "encode_data",
    "encode_event",
    "encode_json",
]

DEFAULT_MAX_EVENT_SIZE = 8 * 1024 * 1024
"""Default cap, in bytes, on one SSE line and on one event's accumulated data (8 MiB)."""

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched SSE event.

    Attributes:
        data: the event's data, ``data`` lines joined by LF (no trailing LF).
        event: the event type; ``"message"`` when no ``event`` field was given.
        id: the last event ID buffer at dispatch time (``""`` when none was ever set).
    """

    data: str
    event: str = "message"
    id: str = ""


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder (WHATWG HTML §9.2.6).

    Args:
        max_event_size: cap in bytes on a single line and on one event's accumulated data.

    Attributes:
        retry: the last valid ``retry`` value in milliseconds, or ``None``.
        last_event_id: the last event ID buffer.
        comments: number of comment lines seen (keep-alives).

    Raises:
        EventTooLargeError: from ``feed()`` when a line or an event exceeds ``max_event_size``.
        LocalProtocolError: from ``feed()`` after ``close()``.
    """

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        self.max_event_size = max_event_size
        self.retry: int | None = None
        self.last_event_id = ""
        self.comments = 0
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already searched for a line end
        self._bom_checked = False
        self._skip_lf = False  # the previous feed ended with CR
        self._data: list[str] = []
        self._data_size = 0
        self._has_data = False
        self._event_type = ""
        self._closed = False
        self._error: EventTooLargeError | None = None

    @property
    def idle(self) -> bool:
        """True between events: no partial line or event is held, the BOM check is done, no CR
        waits for its LF, no error is pending. A caller may then take whole ``data: <line>``
        frames itself (:class:`~agui_codecs.framing.FrameDecoder` does, for single-line JSON)
        and feed the decoder the rest: the decoder's state would not have changed."""
        return (
            not self._buf
            and not self._has_data
            and not self._event_type
            and not self._skip_lf
            and self._bom_checked
            and self._error is None
            and not self._closed
        )

    def starts_with(self, chunk: bytes) -> None:
        """Note that the stream, nothing of it fed yet, begins with ``chunk`` (not fed): when
        that cannot begin a BOM, the BOM check is done (as feeding it would find), so the
        decoder is :attr:`idle` before its first byte."""
        if not self._bom_checked and not self._buf and chunk and chunk[0] != _BOM[0]:
            self._bom_checked = True

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume bytes; return the events completed by them (possibly none)."""
        if self._closed:
            raise LocalProtocolError("SSEDecoder.feed() called after close()")
        if self._error is not None:
            raise self._error
        if not chunk:
            return []
        buf = self._buf
        buf += chunk
        if not self._bom_checked:
            if len(buf) < len(_BOM) and _BOM.startswith(bytes(buf)):
                return []
            if buf.startswith(_BOM):
                del buf[: len(_BOM)]
            self._bom_checked = True
        if self._skip_lf and buf[:1] == b"\n":
            del buf[:1]
        self._skip_lf = False
        events: list[SSEEvent] = []
        pos = 0
        try:
            for match in _LINE_END.finditer(buf, self._scan):
                end = match.start()
                if match.end() == len(buf) and match.end() - end == 1 and buf[end] == 0x0D:
                    # A lone CR at the very end may be the first half of a CRLF split across
                    # reads (a CRLF that arrived whole is already one line end).
                    self._skip_lf = True
                if end - pos > self.max_event_size:
                    raise EventTooLargeError(
                        f"SSE line longer than {self.max_event_size} bytes",
                        limit=self.max_event_size,
                    )
                self._line(bytes(buf[pos:end]), events)
                pos = match.end()
            if len(buf) - pos > self.max_event_size:
                raise EventTooLargeError(
                    f"SSE line longer than {self.max_event_size} bytes", limit=self.max_event_size
                )
        except EventTooLargeError as exc:
            # Events completed before the oversized one are returned; the error is raised by
            # the next feed() or close(), so nothing already decoded is lost.
            self._error = exc
            self._buf.clear()
            if not events:
                raise
            return events
        if pos:
            del buf[:pos]
        self._scan = len(buf)
        return events

    def close(self) -> list[SSEEvent]:
        """Signal EOF. An unterminated event is dropped, as the standard requires.

        Raises:
            EventTooLargeError: deferred from the last ``feed()``.
        """
        self._closed = True
        if self._error is not None:
            raise self._error
        self._buf.clear()
        self._data.clear()
        return []

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        line = raw.decode("utf-8", "replace")
        if line[0] == ":":
            self.comments += 1
            return
        field, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data_size += len(raw)
            if self._data_size > self.max_event_size:
                raise EventTooLargeError(
                    f"SSE event data larger than {self.max_event_size} bytes",
                    limit=self.max_event_size,
                )
            self._data.append(value)
            self._has_data = True
        elif field == "event":
            self._event_type = value
        elif field == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif field == "retry":
            if value and value.isascii() and value.isdigit():
                self.retry = int(value)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._has_data:
            events.append(
                SSEEvent("\n".join(self._data), self._event_type or "message", self.last_event_id)
            )
        self._data = []
        self._data_size = 0
        self._has_data = False
        self._event_type = ""


def encode_event(
    data: str, *, event: str | None = None, id: str | None = None, retry: int | None = None
) -> bytes:
    """Encode one SSE event as UTF-8 bytes with LF framing and a terminating blank line.

    ``data`` is split on CRLF, CR and LF into one ``data:`` line per piece, so any string
    round-trips through a WHATWG decoder.

    Raises:
        LocalProtocolError: ``event`` or ``id`` contains a line break, or ``id`` contains NUL.
    """
    parts: list[str] = []
    if event is not None:
        if "\n" in event or "\r" in event:
            raise LocalProtocolError("SSE event type must not contain line breaks")
        parts.append(f"event: {event}\n")
    if id is not None:
        if "\n" in id or "\r" in id or "\x00" in id:
            raise LocalProtocolError("SSE id must not contain line breaks or NUL")
        parts.append(f"id: {id}\n")
    if retry is not None:
        parts.append(f"retry: {int(retry)}\n")
    if "\r" in data or "\n" in data:
        for piece in re.split(r"\r\n|\r|\n", data):
            parts.append(f"data: {piece}\n")
    else:
        parts.append(f"data: {data}\n")
    parts.append("\n")
    return "".join(parts).encode()


def encode_comment(text: str = "keep-alive") -> bytes:
    """Encode an SSE comment line (``: text``) plus blank line; used as a keep-alive."""
    if "\n" in text or "\r" in text:
        raise LocalProtocolError("SSE comment must not contain line breaks")
    return f": {text}\n\n".encode()


KEEP_ALIVE: Final = encode_comment()
"""``: keep-alive`` plus the blank line: the idle comment both clients skip (no ``id:``)."""

_DATA: Final = b"data: "
_ID: Final = b"id: "
_END: Final = b"\n\n"


@functools.lru_cache(maxsize=256)
def _event_line(event: str) -> bytes:
    """``event: <type>\\n`` (validated once per distinct type; event types are few)."""
    if "\n" in event or "\r" in event:
        raise LocalProtocolError("SSE event type must not contain line breaks")
    return b"event: " + event.encode() + b"\n"


def encode_data(data: bytes, *, event: str | None = None, id: str | None = None) -> bytes:
    """Encode one SSE event whose data is one line of UTF-8 bytes, LF framed.

    The fast form of :func:`encode_event` for payloads that are one line already, such as
    compact JSON (``orjson.dumps`` never writes a raw CR or LF: they are escaped inside
    strings). Equal, byte for byte, to ``encode_event(data.decode(), event=event, id=id)``.

    Args:
        data: the payload, UTF-8, without CR or LF.
        event: the ``event:`` line's type, if any.
        id: the ``id:`` line's value, if any (a resume cursor, ``docs/runs.md`` §1).

    Raises:
        LocalProtocolError: ``data`` contains CR or LF, ``event`` or ``id`` a line break, or
            ``id`` NUL.
    """
    if b"\n" in data or b"\r" in data:
        raise LocalProtocolError("encode_data() takes one line: use encode_event() for text")
    if id is None:
        if event is None:
            return _DATA + data + _END
        return _event_line(event) + _DATA + data + _END
    if "\n" in id or "\r" in id or "\x00" in id:
        raise LocalProtocolError("SSE id must not contain line breaks or NUL")
    head = _ID + id.encode() + b"\n"
    if event is not None:
        head = _event_line(event) + head
    return head + _DATA + data + _END


def encode_json(data: bytes) -> bytes:
    """``data: <data>\n\n`` for ``data`` that is ``orjson.dumps`` output, without checks.

    The hot path of the encoders: compact JSON from orjson never holds a raw CR or LF (they are
    escaped inside strings), so the one-line check of :func:`encode_data` is skipped; the result
    is byte for byte ``encode_data(data)``. Pass anything else to :func:`encode_data`.
    """
    return _DATA + data + _END
