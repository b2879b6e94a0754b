"""AWS event-stream framing (``application/vnd.amazon.eventstream``) as :class:`Frame` objects.

The binary encoding of the Smithy "Amazon Event Stream Specification" (and AWS's "Event stream
encoding" page): each message is

=============  ==========================================================================
bytes          content
=============  ==========================================================================
4              total length (big-endian uint32, the whole message: prelude to CRC)
4              headers length
4              prelude CRC32 (of the first 8 bytes)
n              headers: name length (1), name (UTF-8), value type (1), value
m              payload (ConverseStream: a JSON object)
4              message CRC32 (of everything before it)
=============  ==========================================================================

Headers say what a message is: ``:message-type`` ``event`` (``:event-type`` names the union
member, e.g. ``contentBlockDelta``), ``exception`` (``:exception-type``, e.g.
``throttlingException``, a modelled error) or ``error`` (``:error-code``,
``:error-message``, an unmodelled one). Each message becomes one frame whose ``data`` is the
JSON object ``{<event or exception type>: <payload>}`` (the shape botocore and the AWS SDKs give
ConverseStream events, and that recorded JSON dumps of them have), an ``error`` message
``{":error": {"code", "message"}}``.

The prelude and message CRCs and the headers are checked and parsed by botocore's
``botocore.eventstream.EventStreamBuffer`` (a pure parser: no I/O at import); this module only
splits the body on the length prefix, caps a message at ``max_event_size`` and turns every
parser failure into a typed error frame (:class:`~agui_codecs.framing.FrameDecoder`'s policy).

A body whose first byte is not ``0x00`` (no message under 16 MiB starts otherwise) is not
binary: it is read with :class:`~agui_codecs.framing.FrameDecoder` of the given framing, so a
JSON-lines dump of the same objects (one ``{"contentBlockDelta": {...}}`` per line, as the AWS
SDK examples and vercel/ai's fixtures print them) decodes the same way.
"""

from __future__ import annotations

import struct
from binascii import crc32
from typing import Any, Final, cast

import orjson
from botocore.eventstream import EventStreamBuffer

from ...errors import EventTooLargeError, MalformedUpstreamError, RemoteProtocolError
from ...framing import Frame, FrameDecoder, Framing

__all__ = ["ERROR_KEY", "MIN_MESSAGE", "EventStreamFrames"]

MIN_MESSAGE: Final = 16
"""Bytes of a message with no header and no payload (prelude 12 + message CRC 4)."""

ERROR_KEY: Final = ":error"
"""Frame key of an ``error`` message (``:message-type: error``), which names no event type."""

_TYPE_HEADER: Final = {"event": ":event-type", "exception": ":exception-type"}


def _message_frame(raw: bytes) -> Frame:
    """One whole message (``raw`` is exactly its bytes) as a frame.

    Raises:
        MalformedUpstreamError: a CRC mismatch, bad headers, an unknown message type, a
            payload that is not JSON.
    """
    parsed = _string_message(raw)
    headers, body = parsed if parsed is not None else _botocore_message(raw)
    return _frame(headers, body)


_MAX_HEADERS: Final = 128 * 1024
"""botocore's cap on a message's headers (``_MAX_HEADERS_LENGTH``); its payload cap, 24 MiB,
is over any ``max_event_size`` but checked alike."""
_MAX_PAYLOAD: Final = 24 * 1024 * 1024


def _string_message(raw: bytes) -> tuple[dict[str, Any], bytes] | None:
    """The fast path of :func:`_message_frame`: the headers and payload of a message whose
    CRCs match and whose headers are all strings (type 7, every ConverseStream message), read
    as botocore reads them; None for anything else (another header type, a CRC mismatch, a
    length over botocore's caps, a header running past the headers, a repeated name, bytes
    that are not UTF-8), which :func:`_botocore_message` then reads (or rejects) itself.
    ``tests/codecs/test_bedrock_eventstream.py`` checks both give the same frames
    (hypothesis)."""
    total, size, prelude_crc = _PRELUDE.unpack_from(raw)
    if crc32(raw[:8]) != prelude_crc or size > _MAX_HEADERS or total - size - 16 > _MAX_PAYLOAD:
        return None
    if crc32(raw[8:-4], prelude_crc) != _UINT32.unpack_from(raw, total - 4)[0]:
        return None
    headers: dict[str, Any] = {}
    pos, end = 12, 12 + size
    try:
        while pos < end:
            name_end = pos + 1 + raw[pos]
            if name_end + 3 > end or raw[name_end] != 7:
                return None
            value_at = name_end + 3
            value_end = value_at + _UINT16.unpack_from(raw, name_end + 1)[0]
            if value_end > end:
                return None
            name = raw[pos + 1 : name_end].decode()
            if name in headers:
                return None
            headers[name] = raw[value_at:value_end].decode()
            pos = value_end
    except UnicodeDecodeError:
        return None
    return headers, raw[end:-4]


_PRELUDE: Final = struct.Struct(">III")
_UINT32: Final = struct.Struct(">I")
_UINT16: Final = struct.Struct(">H")


def _botocore_message(raw: bytes) -> tuple[dict[str, Any], bytes]:
    """The headers and payload of one message as botocore's ``EventStreamBuffer`` reads them.

    Raises:
        MalformedUpstreamError: whatever botocore refuses (a CRC mismatch, bad headers).
    """
    parser = EventStreamBuffer()
    parser.add_data(raw)
    try:
        message = next(parser)
    except Exception as exc:  # botocore's ParserError, and struct/Unicode errors of bad headers
        raise MalformedUpstreamError(
            f"event-stream message is malformed ({type(exc).__name__}: {exc})"
        ) from exc
    return cast(dict[str, Any], message.headers), message.payload  # botocore-stubs: int


def _frame(headers: dict[str, Any], body: bytes) -> Frame:
    """The frame of a message read as ``headers`` and payload ``body``.

    Raises:
        MalformedUpstreamError: an unknown message type, a payload that is not JSON.
    """
    kind = headers.get(":message-type")
    if kind == "error":
        code, text = headers.get(":error-code"), headers.get(":error-message")
        return Frame(
            {
                ERROR_KEY: {
                    "code": code if isinstance(code, str) else "",
                    "message": text if isinstance(text, str) else "",
                }
            }
        )
    name = headers.get(_TYPE_HEADER.get(kind, "")) if isinstance(kind, str) else None
    if not isinstance(name, str) or not name:
        raise MalformedUpstreamError(f"event-stream message of type {kind!r} names no event")
    payload: Any = {}
    if body:
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise MalformedUpstreamError(
                f"event-stream {name!r} payload is not JSON ({exc})"
            ) from exc
    return Frame({name: payload})


class EventStreamFrames:
    """Incremental splitter of an event-stream body into :class:`Frame` objects (a
    :class:`~agui_codecs.protocols.base.Framer`).

    Args:
        framing: the framing of a body that is not binary (``"auto"``: detected by
            :class:`~agui_codecs.framing.FrameDecoder`). Only ``"auto"`` looks at the first
            byte; any other value reads the body with :class:`FrameDecoder` of that framing.
        max_event_size: cap in bytes on one message (its total length).

    A malformed body (a message shorter than 16 bytes or longer than ``max_event_size``, a CRC
    mismatch, bad headers, a payload that is not JSON) gives the frames before it and then one
    error frame; later input is ignored. A message cut short by EOF is an error frame with
    code ``UPSTREAM_TRUNCATED``.
    """

    def __init__(self, framing: Framing = "auto", *, max_event_size: int) -> None:
        self._framing = framing
        self._max = max_event_size
        self._text: FrameDecoder | None = (
            None if framing == "auto" else FrameDecoder(framing, max_event_size=max_event_size)
        )
        self._binary = False
        self._buf = bytearray()
        self._failed = False

    def feed(self, data: bytes) -> list[Frame]:
        """Consume bytes; return the frames of the messages they complete."""
        if self._text is not None:
            return self._text.feed(data)
        if self._failed:
            return []
        if not self._binary:
            if not data:
                return []
            if data[0] != 0:  # not an event-stream prelude: a JSON / SSE dump of the events
                self._text = FrameDecoder(self._framing, max_event_size=self._max)
                return self._text.feed(data)
            self._binary = True
        self._buf += data
        out: list[Frame] = []
        try:
            self._split(out)
        except RemoteProtocolError as exc:
            self._failed = True
            self._buf.clear()
            out.append(Frame(None, None, exc))
        return out

    def close(self) -> list[Frame]:
        """Signal EOF: an error frame if a message was cut short, else nothing."""
        if self._text is not None:
            return self._text.close()
        if self._failed or not self._buf:
            return []
        self._failed = True
        self._buf.clear()
        error = RemoteProtocolError(
            "event-stream body ended inside a message", code="UPSTREAM_TRUNCATED"
        )
        return [Frame(None, None, error)]

    def _split(self, out: list[Frame]) -> None:
        buf = self._buf
        while len(buf) >= 4:
            (total,) = struct.unpack_from(">I", buf, 0)
            if total > self._max:
                raise EventTooLargeError(
                    f"event-stream message of {total} bytes is over {self._max}", limit=self._max
                )
            if total < MIN_MESSAGE:
                raise MalformedUpstreamError(f"event-stream message length {total} is too short")
            if len(buf) >= 8:
                (headers,) = struct.unpack_from(">I", buf, 4)
                if headers > total - MIN_MESSAGE:
                    raise MalformedUpstreamError(
                        f"event-stream headers length {headers} exceeds the message"
                    )
            if len(buf) < total:
                return
            raw = bytes(buf[:total])
            del buf[:total]
            out.append(_message_frame(raw))
