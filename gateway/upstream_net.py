"""The upstream connections' network layer: an httpcore network backend on asyncio protocols.

Why (issue 13, per-stream CPU): httpcore 1.0.9's default backend on asyncio is anyio's, and
every read of an upstream stream there costs an anyio cancel scope (``fail_after``, a timer
handle, sniffio look-ups), an ``asyncio.Event`` wait, and ``resume_reading()`` /
``pause_reading()`` of the transport (two poller updates per read); the pool's keep-alive check
(``get_extra_info("is_readable")``, on every idle connection each time a request enters or
leaves a pool) builds anyio's attribute table and polls the socket. Measured with
``bench/added_latency.py`` (README "Performance"). This backend keeps what a streamed upstream
response needs and nothing more:

* :class:`_Protocol` reads all the time into a small buffer, paused only past
  :data:`READ_HIGH_WATER` buffered bytes (backpressure to the upstream when the gateway does
  not read: a slow client) and resumed once the buffer is taken;
* a read that finds data returns it at once (the buffered chunks joined up to ``max_bytes``);
  one that waits sets a deadline, checked by one timer per connection that is re-armed at most
  once per timeout interval (never a timer per read), so ``read`` timeouts behave as before
  (``httpcore.ReadTimeout`` once no byte came for ``timeout`` seconds);
* ``is_readable`` is the protocol's own state (data buffered, or the peer closed): no syscall.

Errors are httpcore's, as the anyio backend raises them (httpx maps them to its own:
``ConnectError``, ``ConnectTimeout``, ``ReadError``, ``ReadTimeout``, ``WriteError``,
``WriteTimeout``); a peer's orderly close is a read of ``b""``. TLS goes through the loop's
``start_tls``. Source: httpcore 1.0.9 ``_backends/base.py`` (the interface) and
``_backends/anyio.py`` (the behaviour kept), anyio 4 ``_backends/_asyncio.py``
(``SocketStream.receive``).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any, cast

import httpcore
from httpcore import AsyncNetworkBackend, AsyncNetworkStream

__all__ = ["READ_HIGH_WATER", "AsyncioBackend"]

READ_HIGH_WATER = 256 * 1024
"""Bytes a connection buffers ahead of its reader before it stops reading the socket."""

SocketOption = Any
"""One ``socket.setsockopt`` argument tuple (httpcore's ``SOCKET_OPTION``)."""


class _Protocol(asyncio.Protocol):
    """One connection's receive buffer and flow control (loop callbacks only)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        # a list, not a deque: an empty deque is about 760 bytes (every open stream holds
        # one connection), a list 56; :meth:`take` removes a slice of it at once
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.eof = False
        self.error: BaseException | None = None
        self.paused = False  # reading paused at the high-water mark
        self.waiter: asyncio.Future[None] | None = None
        self.write_paused = False
        self.drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, only alike
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > READ_HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake()
        return None  # the transport closes itself: HTTP/1.1 has no use for a half-open one

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None and self.error is None:
            self.error = exc
        self._wake()
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        """The buffered bytes, at most ``max_bytes`` (some are buffered)."""
        chunks = self.chunks
        first = chunks[0]
        if len(first) > max_bytes:
            chunks[0] = first[max_bytes:]
            first = first[:max_bytes]
        else:
            size = len(first)
            taken = 1
            while taken < len(chunks) and size + len(chunks[taken]) <= max_bytes:
                size += len(chunks[taken])
                taken += 1
            if taken > 1:
                first = b"".join(chunks[:taken])
            del chunks[:taken]
        self.buffered -= len(first)
        if self.paused and self.buffered <= READ_HIGH_WATER // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return first


class _Stream(AsyncNetworkStream):
    """An httpcore network stream over one :class:`_Protocol` (see the module docstring)."""

    def __init__(self, protocol: _Protocol, transport: asyncio.Transport) -> None:
        self._protocol = protocol
        self._transport = transport
        self._deadline: float | None = None  # loop time a waiting read times out
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Up to ``max_bytes`` received bytes, ``b""`` once the peer closed.

        Raises:
            httpcore.ReadTimeout: nothing arrived for ``timeout`` seconds.
            httpcore.ReadError: the connection failed (reset) or was closed here.
        """
        protocol = self._protocol
        if self._closed:
            raise httpcore.ReadError("the connection is closed")
        if not protocol.chunks:
            if protocol.eof:
                return self._at_eof()
            loop = protocol.loop
            waiter = protocol.waiter = loop.create_future()
            if timeout is not None:
                self._deadline = deadline = loop.time() + timeout
                if self._timer is None or self._timer_at > deadline:
                    self._arm(deadline)
            try:
                await waiter
            finally:
                protocol.waiter = None
                self._deadline = None
            if not protocol.chunks:
                if protocol.eof:
                    return self._at_eof()
                raise httpcore.ReadTimeout("timed out reading from the upstream")
        return protocol.take(max_bytes)

    def _at_eof(self) -> bytes:
        error = self._protocol.error
        if error is not None:
            raise httpcore.ReadError(str(error) or type(error).__name__) from error
        return b""

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = self._protocol.loop.call_at(when, self._check)

    def _check(self) -> None:
        # One timer per connection: it fires at the earliest deadline it was armed for and
        # re-arms itself for the current one, so a read that got data costs no timer at all.
        self._timer = None
        deadline = self._deadline
        if deadline is None:
            return
        now = self._protocol.loop.time()
        if now < deadline:
            self._arm(deadline)
            return
        waiter = self._protocol.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)  # read() finds nothing buffered: a timeout

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Send ``buffer``; waits while the transport's write buffer is over its high mark.

        Raises:
            httpcore.WriteTimeout: the buffer did not drain within ``timeout`` seconds.
            httpcore.WriteError: the connection is closed or failed.
        """
        if not buffer:
            return
        protocol = self._protocol
        if self._closed or self._transport.is_closing() or protocol.error is not None:
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(buffer)
        if not protocol.write_paused:
            return
        drained = protocol.drained = protocol.loop.create_future()
        try:
            async with asyncio.timeout(timeout):
                await drained
        except TimeoutError:
            raise httpcore.WriteTimeout("timed out writing to the upstream") from None
        finally:
            protocol.drained = None
        if protocol.error is not None or self._transport.is_closing():
            raise httpcore.WriteError("the connection was lost while writing")

    async def aclose(self) -> None:
        """Close the connection (what was written is still sent)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        """This connection under TLS (the loop's ``start_tls``).

        Raises:
            httpcore.ConnectTimeout: the handshake took longer than ``timeout`` seconds.
            httpcore.ConnectError: the handshake failed.
        """
        protocol = self._protocol
        try:
            async with asyncio.timeout(timeout):
                transport = await protocol.loop.start_tls(
                    self._transport, protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # pragma: no cover - only for a server-side start_tls
            raise httpcore.ConnectError("the TLS handshake did not complete")
        protocol.transport = transport
        return _Stream(protocol, transport)

    def get_extra_info(self, info: str) -> Any:
        """``ssl_object``, ``client_addr``, ``server_addr``, ``socket``, ``is_readable`` (data
        buffered or the peer closed: what the pool's keep-alive check asks), else None."""
        if info == "is_readable":
            return bool(self._protocol.chunks) or self._protocol.eof
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


def _apply(transport: asyncio.Transport, options: Iterable[SocketOption] | None) -> None:
    sock = transport.get_extra_info("socket")
    if sock is None:  # pragma: no cover - every loop's TCP transport has one
        return
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as anyio and asyncio do
    for option in options or ():
        sock.setsockopt(*option)


class AsyncioBackend(AsyncNetworkBackend):
    """httpcore network backend on the running asyncio loop's protocols (module docstring).

    ``happy_eyeballs_delay`` is passed to ``loop.create_connection`` where the loop takes it
    (the standard loop; uvloop tries the addresses in turn).
    """

    def __init__(self, *, happy_eyeballs_delay: float = 0.25) -> None:
        self._happy_eyeballs = happy_eyeballs_delay

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        """A TCP connection to ``host``:``port`` (TCP_NODELAY).

        Raises:
            httpcore.ConnectTimeout: not connected within ``timeout`` seconds.
            httpcore.ConnectError: refused, unreachable, or the name did not resolve.
        """
        loop = asyncio.get_running_loop()
        extra: dict[str, Any] = {}
        if isinstance(loop, asyncio.BaseEventLoop):
            extra["happy_eyeballs_delay"] = self._happy_eyeballs
        if local_address is not None:
            extra["local_addr"] = (local_address, 0)
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    lambda: _Protocol(loop), host, port, **extra
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        _apply(transport, socket_options)
        return _Stream(protocol, transport)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        """A connection to the Unix socket at ``path`` (errors as :meth:`connect_tcp`'s)."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(
                    lambda: _Protocol(loop), path
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"timed out connecting to {path}") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        for option in socket_options or ():
            transport.get_extra_info("socket").setsockopt(*option)
        return _Stream(protocol, transport)

    async def sleep(self, seconds: float) -> None:
        """``asyncio.sleep``."""
        await asyncio.sleep(seconds)
