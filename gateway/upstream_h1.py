"""The upstream HTTP/1.1 client connection: an httpcore connection that parses responses with
``httptools`` (llhttp) instead of h11.

Why (issue 13, per-stream CPU): under httpcore 1.0.9's ``AsyncHTTP11Connection`` every chunk
of a streamed upstream response goes through h11's pure-Python state machine and three nested
async generators (httpcore's body stream, its ``Trace`` context and ``_receive_event``); at 64
concurrent streams that was the largest single Python cost per stream (README "Performance").
:class:`H1Connection` keeps httpcore's connection interface (so httpx, httpcore's pool, respx
and every timeout and error path stay as they are) and replaces only the HTTP/1.1 exchange:

* the request head is serialized here (RFC 9112 §3, §5) and written together with the first
  body chunk; names and values are checked as h11 checks them (RFC 9110 §5.1, §5.5), a bad one
  is ``httpcore.LocalProtocolError``;
* the response is fed to one ``httptools.HttpResponseParser`` per exchange; a body chunk is
  what one read of the network stream carried (no copy per event), its framing is RFC 9112
  §6.3's: ``Transfer-Encoding: chunked`` (§7.1, chunk extensions and trailer fields
  skipped; another transfer coding is refused, as h11 refuses it), else ``Content-Length``
  (§6.2), else the body runs to the connection's close (§6.3 item 8); 1xx interim responses
  are skipped (RFC 9110 §15.2), 204 and 304 have no body, nor has the answer to ``HEAD``;
* read as h11 reads them, where llhttp would refuse: both ``Transfer-Encoding`` and
  ``Content-Length`` (chunked wins, §6.3 item 3, and the connection is not kept), a bare LF
  as line end (§2.2), obs-fold in a field value (its line break dropped, its spaces kept:
  §5.2's "one or more SP"; h11 leaves one); a field value with NUL, CR, LF, VT or FF is
  refused, as h11 refuses it (RFC 9110 §5.5). One difference is left: a ``Content-Length``
  list (``2, 2``) is refused, which RFC 9110 §8.6 allows (h11 reads it); error texts are
  llhttp's;
* a message after the complete response in the same read (stray bytes, a second response)
  leaves the response as it was parsed and closes the connection;
* the connection is kept for another request (RFC 9112 §9.3) only when both messages were
  complete, the response is HTTP/1.1, neither side said ``Connection: close`` and nothing
  followed the response: what h11 decides, except that bytes after a complete response close
  the connection (h11 keeps them as the start of the next response).

Errors are httpcore's, as ``AsyncHTTP11Connection`` raises them (httpx maps them to its
own): a malformed response or one cut short is ``RemoteProtocolError`` (an upstream that
closes before any byte of the response: "Server disconnected without sending a response.",
what :mod:`gateway.upstream_pool` resends once on a reused connection), a response head over
:data:`MAX_HEAD_BYTES` too; timeouts and network errors come from the network stream
(``ReadTimeout``, ``WriteTimeout``, ``ReadError``...). A ``WriteError`` while the request is
sent is ignored, as httpcore does, so that an upstream that answers early and closes is read.
Not done: ``Upgrade`` / ``CONNECT`` tunnels (a 101 answer ends the exchange and the
connection), HTTP/2, httpcore's ``trace`` extension.

Source: RFC 9112 (HTTP/1.1), RFC 9110 (HTTP semantics); httpcore 1.0.9 ``_async/http11.py``
and ``_async/connection.py`` (the behaviour kept); h11 0.16 ``_readers.py``, ``_headers.py``
(the checks); httptools 0.9 ``parser/parser.pyx`` (the callbacks).
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import httpcore
import httptools
from httpcore import AsyncNetworkStream
from httpcore._async.connection import AsyncHTTPConnection
from httpcore._synchronization import AsyncShieldCancellation

__all__ = ["MAX_HEAD_BYTES", "READ_BYTES", "H1Connection"]

READ_BYTES = 64 * 1024
"""Bytes asked of the network stream per read (httpcore's ``READ_NUM_BYTES``)."""

MAX_HEAD_BYTES = 100 * 1024
"""Bytes of response head (status line and fields, 1xx heads included) accepted before it is
refused (httpcore's ``MAX_INCOMPLETE_EVENT_SIZE`` for h11)."""

# connection states (httpcore's HTTPConnectionState, plus CONNECTING)
_NEW, _CONNECTING, _ACTIVE, _IDLE, _CLOSED = range(5)
_STATE_NAMES = ("NEW", "CONNECTING", "ACTIVE", "IDLE", "CLOSED")

# RFC 9110 §5.1 token, §5.5 field-value (h11 0.16 _abnf.py: field_name, field_value)
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_FIELD_VALUE = re.compile(
    rb"(?:[\x21-\x7e\x80-\xff](?:[ \t\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?"
)
_TARGET = re.compile(rb"[\x21-\x7e\x80-\xff]+")  # h11's request_target: no space, no CTL
# a received field value's bytes that h11 0.16 refuses (``_abnf.py``: a field-vchar is any byte
# but NUL and whitespace, RFC 9110 §5.5's obs-text and CTLs included; SP and HTAB between them):
# checked here because llhttp's lenient_headers (needed for obs-fold) lets them by
_BAD_VALUE_BYTE = re.compile(rb"[\x00\x0b\x0c\r\n]")


class _Stray(Exception):
    """A message began after the complete response (raised inside httptools' callback)."""


class _Exchange:
    """One request's response as it is parsed: httptools' callbacks (within ``feed_data``)."""

    __slots__ = (
        "body",
        "chunked",
        "close",
        "complete",
        "head_bytes",
        "headers",
        "headers_done",
        "length",
        "no_body",
        "parser",
        "reason",
        "received",
        "status",
        "trailing",
        "version",
    )

    def __init__(self, head_request: bool) -> None:
        self.parser = httptools.HttpResponseParser(self)
        # what h11 0.16 reads and llhttp refuses by default: both Transfer-Encoding and
        # Content-Length (RFC 9112 §6.3 item 3: chunked wins; the connection is not kept), a
        # bare LF as line end (RFC 9112 §2.2), obs-fold (RFC 9112 §5.2: replaced by SP)
        self.parser.set_dangerous_leniencies(
            lenient_chunked_length=True, lenient_optional_cr_before_lf=True, lenient_headers=True
        )
        self.no_body = head_request  # RFC 9110 §9.3.2: the answer to HEAD has no content
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.status = 0
        self.version = b"HTTP/1.1"
        self.headers_done = False  # the final (non-1xx) head is parsed
        self.complete = False  # the final response is complete
        self.trailing = False  # bytes followed the complete response
        self.chunked = False
        self.length: int | None = None
        self.close = False  # the response says Connection: close (or is not HTTP/1.1)
        self.body: list[bytes] = []
        self.received = 0  # bytes of response fed so far
        self.head_bytes = 0  # bytes fed before the final head was complete

    def feed(self, data: bytes) -> None:
        """Parse ``data``; body chunks land in :attr:`body`.

        Raises: httpcore.RemoteProtocolError: the bytes are not an HTTP/1.1 response, or its
        head passed :data:`MAX_HEAD_BYTES`.
        """
        self.received += len(data)
        if self.complete:
            self.trailing = True
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.headers_done = self.complete = True  # a 101: the exchange ends here
            self.close = True
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            if isinstance(cause, _Stray):
                self.trailing = True  # the response stands as it was; the connection closes
            elif isinstance(cause, httpcore.RemoteProtocolError):
                raise cause from None
            else:
                raise httpcore.RemoteProtocolError(str(cause or exc)) from exc
        except httptools.HttpParserError as exc:
            if not self.complete:
                raise httpcore.RemoteProtocolError(str(exc) or type(exc).__name__) from exc
            self.trailing = True  # bytes after the response that are not one
        if not self.headers_done:
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD_BYTES:
                raise httpcore.RemoteProtocolError("the response head is too large")

    def eof(self) -> None:
        """The upstream closed the connection: end a close-delimited body (RFC 9112 §6.3 item 8).

        Raises: httpcore.RemoteProtocolError: the response was not complete.
        """
        if self.complete:
            return
        if self.headers_done and not self.chunked and self.length is None:
            self.complete = True
            self.close = True
            return
        if not self.received:
            raise httpcore.RemoteProtocolError("Server disconnected without sending a response.")
        raise httpcore.RemoteProtocolError(
            "peer closed connection without sending complete message body"
            if self.headers_done
            else "peer closed connection without sending a complete response head"
        )

    # httptools callbacks

    def on_message_begin(self) -> None:
        if self.complete:  # another message in the same read: stop before it touches this one
            raise _Stray
        self.reason = b""
        self.headers = []

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        if _BAD_VALUE_BYTE.search(value):
            raise httpcore.RemoteProtocolError(f"Illegal header value {value!r}")
        if not self.headers_done:  # after the head: trailer fields (RFC 9112 §7.1.2), dropped
            self.headers.append((name, value.rstrip(b" \t")))

    def on_headers_complete(self) -> None:
        parser = self.parser
        status = parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            return  # interim (RFC 9110 §15.2): its on_message_complete follows, then the final
        self.status = status
        version = parser.get_http_version()
        self.version = b"HTTP/" + version.encode()
        self.close = version != "1.1"
        for name, value in self.headers:
            lowered = name.lower()
            if lowered == b"transfer-encoding":
                # h11 0.16 reads chunked only; another coding would reach the decoder as it is
                if value.strip(b" \t").lower() != b"chunked":
                    raise httpcore.RemoteProtocolError(
                        "Only Transfer-Encoding: chunked is supported"
                    )
                self.chunked = True
                if self.length is not None:  # RFC 9112 §6.3 item 3: chunked wins, not kept
                    self.close = True
                self.length = None
            elif lowered == b"content-length":
                # llhttp refuses a list ("2, 2"), which RFC 9110 §8.6 allows a recipient to do
                if self.chunked:
                    self.close = True
                else:
                    self.length = int(value)
            elif lowered == b"connection" and b"close" in value.lower():
                self.close = True
        if self.no_body or status in (204, 304):
            self.chunked, self.length = False, 0
        self.headers_done = True
        if self.no_body:
            self.complete = True

    def on_body(self, body: bytes) -> None:
        if self.complete:
            self.trailing = True
        else:
            self.body.append(body)

    def on_message_complete(self) -> None:
        if self.headers_done:
            self.complete = True


class H1Connection(AsyncHTTPConnection):
    """An httpcore connection to one origin that speaks HTTP/1.1 itself (module docstring).

    It connects as httpcore's ``AsyncHTTPConnection`` does (same arguments, TLS with ALPN
    ``http/1.1``, connect retries) and then carries one request at a time.

    Attributes:
        requests: requests sent on this connection, the current one included.
    """

    def __init__(self, origin: httpcore.Origin, **kwargs: Any) -> None:
        super().__init__(origin, **kwargs)
        self._stream: AsyncNetworkStream | None = None
        self._h1_state = _NEW
        self._expire_at: float | None = None
        self._exchange: _Exchange | None = None
        self._sent = False  # the whole request was written
        self._keep = False  # the request allows keep-alive (no Connection: close)
        self.requests = 0

    def awaiting_response(self) -> bool:
        """No byte of the current request's response has arrived (or no request was sent)."""
        exchange = self._exchange
        return exchange is None or exchange.received == 0

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        """Send ``request`` and read its response head; the body streams from the response.

        Returns: an ``httpcore.Response`` (``extensions``: ``http_version``, ``reason_phrase``,
        ``network_stream``).

        Raises: ``httpcore.ConnectionNotAvailable`` (busy: the pool picks another),
        ``ConnectError`` / ``ConnectTimeout``, ``LocalProtocolError`` (a request h11 would
        refuse), ``RemoteProtocolError``, ``ReadTimeout``, ``ReadError`` (module docstring).
        """
        if not self.can_handle_request(request.url.origin):
            raise RuntimeError(
                f"Attempted to send request to {request.url.origin} on connection to {self._origin}"
            )
        if self._h1_state == _NEW:
            self._h1_state = _CONNECTING
            try:
                self._stream = await self._connect(request)
            except BaseException:
                self._connect_failed = True
                self._h1_state = _CLOSED
                raise
        elif self._h1_state != _IDLE:
            raise httpcore.ConnectionNotAvailable()
        stream = self._stream
        assert stream is not None
        self._h1_state = _ACTIVE
        self._expire_at = None
        self.requests += 1
        self._exchange = exchange = _Exchange(request.method == b"HEAD")
        self._sent = False
        timeouts = request.extensions.get("timeout", {})
        try:
            try:
                await self._send(stream, request, timeouts.get("write"))
                self._sent = True
            except httpcore.WriteError:
                pass  # as httpcore: the upstream may have answered before closing; read it
            timeout = timeouts.get("read")
            while not exchange.headers_done:
                data = await stream.read(READ_BYTES, timeout)
                if data:
                    exchange.feed(data)
                else:
                    exchange.eof()
            return httpcore.Response(
                status=exchange.status,
                headers=exchange.headers,
                content=_Body(self, exchange, timeout),
                extensions={
                    "http_version": exchange.version,
                    "reason_phrase": exchange.reason,
                    "network_stream": stream,
                },
            )
        except BaseException:
            with AsyncShieldCancellation():
                await self._response_closed()
            raise

    async def _send(
        self, stream: AsyncNetworkStream, request: httpcore.Request, timeout: float | None
    ) -> None:
        """Write the request: the head with the first body chunk (RFC 9112 §3, §6, §7.1).

        Raises: httpcore.LocalProtocolError: a method, target, field name or value that is
        not valid, or a body longer or shorter than its ``Content-Length``.
        """
        method, target = request.method, request.url.target
        if not _TOKEN.fullmatch(method) or not _TARGET.fullmatch(target):
            raise httpcore.LocalProtocolError("illegal request line")
        parts = [method, b" ", target, b" HTTP/1.1\r\n"]
        chunked = False
        length: int | None = None
        keep = True
        for name, value in request.headers:
            if not _TOKEN.fullmatch(name):
                raise httpcore.LocalProtocolError(f"illegal header name {name!r}")
            if not _FIELD_VALUE.fullmatch(value):
                raise httpcore.LocalProtocolError(f"illegal header value {value!r}")
            lowered = name.lower()
            if lowered == b"transfer-encoding":
                if value.lower() != b"chunked":
                    raise httpcore.LocalProtocolError("only Transfer-Encoding: chunked is sent")
                chunked = True
            elif lowered == b"content-length":
                length = int(value) if value.isdigit() else -1
                if length < 0:
                    raise httpcore.LocalProtocolError(f"bad Content-Length {value!r}")
            elif lowered == b"connection" and b"close" in value.lower():
                keep = False
            parts += (name, b": ", value, b"\r\n")
        parts.append(b"\r\n")
        self._keep = keep
        pending = b"".join(parts)
        remaining = None if chunked else (length or 0)
        assert isinstance(request.stream, AsyncIterable)
        async for chunk in request.stream:
            if not chunk:
                continue
            if remaining is not None:
                remaining -= len(chunk)
                if remaining < 0:
                    raise httpcore.LocalProtocolError("Too much data for declared Content-Length")
            else:
                chunk = b"%x\r\n%b\r\n" % (len(chunk), chunk)
            await stream.write(pending + chunk if pending else chunk, timeout)
            pending = b""
        if remaining:
            raise httpcore.LocalProtocolError("Too little data for declared Content-Length")
        if chunked:
            pending += b"0\r\n\r\n"
        if pending:
            await stream.write(pending, timeout)

    async def _response_closed(self) -> None:
        exchange = self._exchange
        if (
            self._h1_state == _ACTIVE
            and exchange is not None
            and exchange.complete
            and not exchange.trailing
            and not exchange.close
            and self._sent
            and self._keep
        ):
            self._h1_state = _IDLE
            self._exchange = None
            if self._keepalive_expiry is not None:
                self._expire_at = time.monotonic() + self._keepalive_expiry
        else:
            await self.aclose()

    # httpcore's AsyncConnectionInterface

    async def aclose(self) -> None:
        """Close the connection (unilaterally, as httpcore's)."""
        self._h1_state = _CLOSED
        if self._stream is not None:
            await self._stream.aclose()

    def is_available(self) -> bool:
        """Idle: it can take a request (a new one is not: its creator sends the first)."""
        return self._h1_state == _IDLE

    def has_expired(self) -> bool:
        """Idle past the keep-alive expiry, or idle and readable (the upstream closed it), or
        its connect failed."""
        state = self._h1_state
        if state == _IDLE:
            expire_at = self._expire_at
            if expire_at is not None and time.monotonic() > expire_at:
                return True
            assert self._stream is not None
            return bool(self._stream.get_extra_info("is_readable"))
        return state == _CLOSED and self._connect_failed

    def is_idle(self) -> bool:
        """No request in progress on an open connection (a failed connect counts, as httpcore's)."""
        return self._h1_state == _IDLE or (self._h1_state == _CLOSED and self._connect_failed)

    def is_closed(self) -> bool:
        """Closed (or its connect failed)."""
        return self._h1_state == _CLOSED

    def info(self) -> str:
        """``'<origin>', HTTP/1.1, <STATE>, Request Count: <n>`` as httpcore's."""
        return (
            f"{str(self._origin)!r}, HTTP/1.1, {_STATE_NAMES[self._h1_state]}, "
            f"Request Count: {self.requests}"
        )


class _Body:
    """A response body as httpcore streams it: ``async for`` gives each received chunk."""

    __slots__ = ("_closed", "_connection", "_exchange", "_timeout")

    def __init__(self, connection: H1Connection, exchange: _Exchange, timeout: float | None):
        self._connection = connection
        self._exchange = exchange
        self._timeout = timeout
        self._closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        exchange = self._exchange
        body = exchange.body
        try:
            while not body:
                if exchange.complete or self._closed:
                    raise StopAsyncIteration
                stream = self._connection._stream
                assert stream is not None
                data = await stream.read(READ_BYTES, self._timeout)
                if data:
                    exchange.feed(data)
                else:
                    exchange.eof()
        except StopAsyncIteration:
            raise
        except BaseException:
            with AsyncShieldCancellation():
                await self.aclose()
            raise
        chunk = body[0] if len(body) == 1 else b"".join(body)
        body.clear()
        return chunk

    async def aclose(self) -> None:
        """End the exchange: the connection is kept (complete response) or closed."""
        if not self._closed:
            self._closed = True
            await self._connection._response_closed()
