"""The HTTP/1.1 protocols ``agui-gateway serve`` runs: uvicorn's httptools protocol (the
default when httptools is importable: less CPU per request, issue 13) or its h11 one
(``GATEWAY_HTTP_PROTOCOL=h11``), each with the bounds uvicorn lacks (issue 15: slow clients
cost bounded memory and time).

uvicorn (0.30 to 0.54, ``uvicorn/protocols/http/h11_impl.py``) bounds a request head's size
only while it is incomplete (``h11_max_incomplete_event_size``: 400 beyond it; a whole head
that arrives in one read passes whatever its size), closes idle keep-alive connections
(``timeout_keep_alive``, cancelled by the first byte received) and answers 503 past
``limit_concurrency``; it has no timeout on a request head that trickles in, and its
back-pressure (``pause_writing`` / ``FlowControl.drain``) makes a stream wait forever for a
client that stopped reading; its httptools protocol bounds no head at all. :class:`SlowClientGuards`
adds to both (:class:`GuardedH11Protocol` here, :class:`~gateway.http_httptools.
GuardedHttpToolsProtocol` in :mod:`gateway.http_httptools`):

* **head timeout**: from the connection's start, and again after each response on a kept-alive
  connection, the request line and headers must be complete within ``header_timeout`` seconds;
  else a 408 ``{"error": {"code": "HEADER_TIMEOUT", ...}}`` is written (when a part of the head
  arrived) and the connection closed (slowloris).
* **head size**: a request line and headers longer than ``max_header_bytes`` are answered 431
  ``HEADER_TOO_LARGE`` (RFC 6585 §5) and the connection closed, however they arrive (with
  httptools, a head pipelined behind a request's body in the same read is counted from the
  next read on: bounded by one read, 256 KiB, beyond the bound).
* **send timeout**: the transport's write buffer is bounded by ``write_buffer_bytes`` (asyncio's
  high-water mark; the low one is a quarter of it). When it is full the transport pauses the
  writer; if the client takes nothing for ``send_timeout`` seconds the connection is aborted
  (the buffer dropped, not flushed). uvicorn then reports ``http.disconnect`` to the app, so the
  streaming response stops and releases its run reader; the run goes on in the background and
  the client resumes it with ``Last-Event-ID`` (``docs/runs.md`` §5).

What a client that never reads costs is so bounded: the kernel's socket buffers (its send
buffer autotunes up to ``net.ipv4.tcp_wmem``'s maximum unless ``socket_send_buffer`` fixes
it; the send timeout starts once the kernel's and then the transport's buffer are full), at most
``write_buffer_bytes`` plus one chunk in the transport, the SSE response's chunk queue, and its
reader's broker queue (``GATEWAY_BROKER_READER_MAX_*``), for at most ``send_timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import re
import socket
from typing import Any, ClassVar, Literal

import h11
import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "GuardedH11Protocol",
    "HttpParser",
    "SlowClientGuards",
    "guarded_protocol",
    "resolve_http_parser",
]

_log = logging.getLogger("gateway.http")

HttpParser = Literal["auto", "httptools", "h11"]
"""``GATEWAY_HTTP_PROTOCOL``: ``auto`` (httptools when importable, else h11), or either."""

_HEAD_END = re.compile(rb"\n\r?\n")  # what ends a request head (CRLF or bare LF)


def _refusal(status: int, reason: str, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response with the gateway's JSON error shape, closing the connection."""
    body = orjson.dumps({"error": {"code": code, "message": message}})
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class SlowClientGuards(asyncio.Protocol):
    """The head timeout, head size bound and send timeout (module docstring), mixed in before
    a uvicorn HTTP protocol class, which provides ``loop`` and ``transport``. A subclass says
    when a request head is awaited (:meth:`_awaiting_head`) and where heads begin and end.

    Attributes:
        header_timeout: seconds for a request line and headers.
        max_header_bytes: bytes of a request line and headers.
        send_timeout: seconds a full write buffer may wait for the client.
        write_buffer_bytes: the transport's write-buffer high-water mark.
        socket_send_buffer: ``SO_SNDBUF`` of each connection (0: the kernel's autotuning,
            up to ``net.ipv4.tcp_wmem``'s maximum, 4 MiB on Linux by default).
    """

    # slots, not the instance dict: uvicorn's protocols keep their 27 attributes in a dict
    # whose keys the instances share (about 0.3 KiB); six more there made each connection's
    # a dict of its own (about 1.6 KiB)
    __slots__ = ("_head_size", "_head_started", "_head_tail", "_head_timer", "_send_timer")

    header_timeout: ClassVar[float] = 10.0
    max_header_bytes: ClassVar[int] = 16 * 1024
    send_timeout: ClassVar[float] = 30.0
    write_buffer_bytes: ClassVar[int] = 64 * 1024
    socket_send_buffer: ClassVar[int] = 0

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._head_started = False
        self._head_size = 0
        self._head_tail = b""

    # -- request head ---------------------------------------------------------------------

    def _awaiting_head(self) -> bool:
        """True while the next request's head is awaited and no response is in progress."""
        raise NotImplementedError

    def _reset_head(self) -> None:
        self._head_started = False
        self._head_size = 0
        self._head_tail = b""

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _await_head_after_response(self) -> None:
        """Arm the head timer after a response; when a pipelined head has already begun, the
        connection is not idle: uvicorn's keep-alive close (armed by its own
        ``on_response_complete``, cancelled only by bytes received) is cancelled, so the
        head gets the 408 of the head timeout, not a silent close."""
        self._arm_head_timer()
        if self._head_started:
            self._unset_keepalive_if_required()  # type: ignore[attr-defined]

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or not self._awaiting_head():
            return
        if self._head_started:
            _log.info(
                "request head not received within %gs: connection closed", self.header_timeout
            )
            message = f"request headers not received within {self.header_timeout:g} s"
            self.transport.write(_refusal(408, "Request Timeout", "HEADER_TIMEOUT", message))
        self.transport.close()

    def _head_too_large(self, data: bytes) -> bool:
        """Count the request head's bytes as they arrive; True when it exceeds the bound."""
        seen = self._head_tail + data
        end = _HEAD_END.search(seen)
        if end is None:
            self._head_size += len(data)
            self._head_tail = seen[-3:]
        else:
            self._head_size += end.end() - len(self._head_tail)
        return self._head_size > self.max_header_bytes

    def _refuse_large_head(self) -> None:
        """431 and close (only the connection is closed when a response is in progress)."""
        self._cancel_head_timer()
        if self._awaiting_head():
            message = f"request line and headers exceed {self.max_header_bytes} bytes"
            refusal = _refusal(431, "Request Header Fields Too Large", "HEADER_TOO_LARGE", message)
            self.transport.write(refusal)
        self.transport.close()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # sets self.transport (uvloop's is no asyncio class)
        self.transport.set_write_buffer_limits(high=self.write_buffer_bytes)
        sock = transport.get_extra_info("socket")
        if self.socket_send_buffer and sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.socket_send_buffer)
        self._reset_head()
        self._arm_head_timer()

    # -- output waiting for the client ----------------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self.send_timeout, self._send_timed_out)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_timed_out(self) -> None:
        self._send_timer = None
        if self.transport.is_closing():
            return
        _log.info(
            "client took no bytes for %gs (%d buffered): connection dropped",
            self.send_timeout,
            self.transport.get_write_buffer_size(),
        )
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        super().connection_lost(exc)


class GuardedH11Protocol(SlowClientGuards, H11Protocol):
    """uvicorn's ``H11Protocol`` with :class:`SlowClientGuards`: a head is awaited while h11
    says the client is ``IDLE`` (h11 parses a pipelined request only once the response before
    it is complete). Configure a subclass with :func:`guarded_protocol`."""

    def _awaiting_head(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and data:
            self._head_started = True
            if self._head_too_large(data):
                self._refuse_large_head()
                return
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._cancel_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            buffered = self.conn.trailing_data[0]  # a pipelined head's start, held by h11
            self._head_started = bool(buffered)
            self._head_size = len(buffered)
            self._head_tail = bytes(buffered[-3:])
            self._await_head_after_response()


def resolve_http_parser(choice: HttpParser) -> Literal["httptools", "h11"]:
    """The parser ``GATEWAY_HTTP_PROTOCOL`` names: ``auto`` is ``httptools`` when the
    ``httptools`` package is importable (a dependency on CPython), else ``h11``."""
    if choice != "auto":
        return choice
    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def guarded_protocol(
    *,
    header_timeout: float,
    send_timeout: float,
    write_buffer_bytes: int,
    max_header_bytes: int = 16 * 1024,
    socket_send_buffer: int = 0,
    parser: Literal["httptools", "h11"] = "h11",
) -> type[SlowClientGuards]:
    """A subclass of :class:`GuardedH11Protocol` (``parser="h11"``) or of
    :class:`~gateway.http_httptools.GuardedHttpToolsProtocol` (``"httptools"``) with these
    bounds (uvicorn's ``http=`` takes a protocol class and builds one per connection).

    Raises:
        ValueError: a timeout not above 0, a buffer below 1 KiB.
        ImportError: ``parser="httptools"`` without the ``httptools`` package.
    """
    if header_timeout <= 0 or send_timeout <= 0 or min(write_buffer_bytes, max_header_bytes) < 1024:
        raise ValueError("timeouts must be > 0, write_buffer_bytes and max_header_bytes >= 1024")
    base: type[SlowClientGuards] = GuardedH11Protocol
    if parser == "httptools":
        from .http_httptools import GuardedHttpToolsProtocol

        base = GuardedHttpToolsProtocol
    return type(
        base.__name__,
        (base,),
        {
            "header_timeout": header_timeout,
            "max_header_bytes": max_header_bytes,
            "socket_send_buffer": socket_send_buffer,
            "send_timeout": send_timeout,
            "write_buffer_bytes": write_buffer_bytes,
        },
    )
