"""The upstream connection pool, sharded: several httpcore pools of at most
:data:`SHARD_CONNECTIONS` connections each, one chosen per request.

Why: httpcore 1.0.9's ``AsyncConnectionPool._assign_requests_to_connections`` runs whenever a
request enters or leaves the pool and scans every connection of the pool (and, for every
queued request, every connection again): its cost grows with the pool's size, so one pool
holding 10,000 streaming upstream connections spends the event loop in that scan (measured
past ~2,100 open streams: the process stopped accepting, README "Performance"). Pools of a few
hundred connections keep each scan short; the total stays ``GATEWAY_UPSTREAM_MAX_CONNECTIONS``.

:class:`ShardedTransport` is an ``httpx.AsyncBaseTransport`` over ``httpx.AsyncHTTPTransport``
shards sharing one SSL context. A request goes to the first shard with fewer than its
``max_connections`` requests in flight (so below :data:`SHARD_CONNECTIONS` concurrent requests
everything is one pool, as before, and keep-alive connections are reused there); a shard is created
when every existing one is full, up to ``ceil(max_connections / SHARD_CONNECTIONS)``; when all are
full the request goes to the least busy shard and waits there for a connection (httpx
``timeouts.pool``, then ``PoolTimeout``: ``UPSTREAM_TIMEOUT``, as with one pool). A request is in
flight from ``handle_async_request`` until its response stream is closed (or the call raised). The
transport hands requests to the shard's pool itself (what
``AsyncHTTPTransport.handle_async_request`` does) so that a response body is one chain of
``__anext__`` calls down to the connection (:class:`_ShardBody`, :class:`_PoolBody`) instead of
httpx's and httpcore's nested async generators (issue 13: per-chunk CPU). Each shard keeps
``min(max_keepalive_connections, its size)`` idle connections, which expire after the limits'
``keepalive_expiry`` (the app's 4 s, ``gateway.app.UPSTREAM_KEEPALIVE_EXPIRY``). The shards'
connections run on :class:`gateway.upstream_net.AsyncioBackend` (asyncio protocols instead of
anyio's streams: less CPU per received chunk, issue 13) unless another httpcore network backend is
given, and speak HTTP/1.1 through :class:`gateway.upstream_h1.H1Connection` (httptools instead of
h11: less CPU per received chunk again, issue 13) unless ``parser="h11"`` asks for httpcore's own
connection, in pools whose bookkeeping scan is linear in their connections and that resend a
request once when its reused connection turns out closed by the upstream (:class:`_Pool`).

Source: httpx 0.28.1 ``_transports/default.py`` (``AsyncHTTPTransport``, ``Limits``),
httpcore 1.0.9 ``_async/connection_pool.py``.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Literal

import h11
import httpcore
import httpx
from httpcore._async.connection import AsyncHTTPConnection
from httpcore._async.connection_pool import AsyncPoolRequest
from httpcore._async.http11 import AsyncHTTP11Connection
from httpcore._synchronization import AsyncEvent, AsyncShieldCancellation
from httpx._transports.default import map_httpcore_exceptions

from .upstream_h1 import H1Connection
from .upstream_net import AsyncioBackend

__all__ = ["SHARD_CONNECTIONS", "Parser", "ShardedTransport"]

Parser = Literal["httptools", "h11"]
"""Which HTTP/1.1 implementation a pool's connections use: :class:`~gateway.upstream_h1.
H1Connection` (``httptools``, the default) or httpcore's ``AsyncHTTP11Connection`` (``h11``)."""

SHARD_CONNECTIONS = 256
"""Connections one shard (one httpcore pool) holds at most."""


class _Shard:
    __slots__ = ("in_flight", "pool", "size", "transport")

    def __init__(self, transport: httpx.AsyncHTTPTransport, pool: _Pool, size: int) -> None:
        self.transport = transport  # owns the pool (closes it)
        self.pool = pool
        self.size = size
        self.in_flight = 0


class _Pool(httpcore.AsyncConnectionPool):
    """httpcore's pool with its bookkeeping scan in linear time.

    httpcore 1.0.9's ``_assign_requests_to_connections`` (run when a request enters or leaves
    the pool) tests "too many idle connections" with ``len([c.is_idle() for c in
    connections])`` once per idle connection (quadratic; the length is that of all the
    pool's connections) and builds the full lists of available and idle connections for every
    queued request where it takes their first. This one decides the same (same connections
    closed, same request on the same connection, in the same order: a hypothesis test runs
    both) with one pass and first-match searches.

    A request whose reused keep-alive connection failed before any response byte (the upstream
    closed it idle: ``RemoteProtocolError`` "Server disconnected without sending a response",
    ``ReadError``, ``WriteError``) is sent again at once, once, on a new connection
    (:meth:`handle_async_request`), as browsers and urllib3 do; not an attempt of
    :mod:`gateway.attempts` (it never sees it), no backoff.

    Its connections are :class:`~gateway.upstream_h1.H1Connection` (``parser="httptools"``,
    the default) or httpcore's (``parser="h11"``); with a proxy, httpcore's proxy connections;
    while httpcore's ``AsyncHTTPConnection.handle_async_request`` is patched (``respx.mock``,
    whose default mocker patches it), httpcore's, so that the mock sees every request.
    """

    def __init__(self, *, parser: Parser = "httptools", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fresh: set[AsyncPoolRequest] = set()  # resent: a new connection only
        self._parser = parser

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        """A new connection to ``origin`` (not connected yet: it connects on its first request)."""
        if (
            self._parser == "h11"
            or self._proxy is not None
            or self._http2
            or AsyncHTTPConnection.handle_async_request is not _STOCK_HANDLE
        ):
            return super().create_connection(origin)
        return H1Connection(
            origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=self._keepalive_expiry,
            http1=True,
            http2=False,
            retries=self._retries,
            local_address=self._local_address,
            uds=self._uds,
            network_backend=self._network_backend,
            socket_options=self._socket_options,
        )

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        """httpcore 1.0.9's, plus the one resend of a stale reused connection (class docstring).

        Raises: what httpcore's pool raises; a failure on a new connection, or after a response
        byte arrived, or of the resend itself, is raised as it was.
        """
        scheme = request.url.scheme.decode()
        if scheme not in ("http", "https", "ws", "wss"):
            raise httpcore.UnsupportedProtocol(f"unsupported protocol {scheme!r}")
        timeout = request.extensions.get("timeout", {}).get("pool", None)
        pool_request = AsyncPoolRequest(request)
        self._requests.append(pool_request)
        try:
            while True:
                closing = self._assign_requests_to_connections()
                await self._close_connections(closing)
                connection = await pool_request.wait_for_connection(timeout=timeout)
                # its wait is over: a fresh event holds no asyncio.Event (whose deque is about
                # 760 bytes) for the response's life, as httpcore's clear_connection makes one
                pool_request._connection_acquired = AsyncEvent()
                reused = _reused(connection)
                try:
                    response = await connection.handle_async_request(pool_request.request)
                except httpcore.ConnectionNotAvailable:
                    pool_request.clear_connection()
                except _STALE:
                    if not reused or pool_request in self._fresh or not _no_response(connection):
                        raise
                    self._fresh.add(pool_request)
                    pool_request.clear_connection()
                else:
                    break
        except BaseException as exc:
            self._requests.remove(pool_request)
            self._fresh.discard(pool_request)
            closing = self._assign_requests_to_connections()
            await self._close_connections(closing)
            raise exc from None
        self._fresh.discard(pool_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=_PoolBody(response.stream, pool_request, self),
            extensions=response.extensions,
        )

    def _assign_requests_to_connections(self) -> list[httpcore.AsyncConnectionInterface]:
        closing: list[httpcore.AsyncConnectionInterface] = []
        connections = self._connections
        keepalive = self._max_keepalive_connections
        for connection in list(connections):
            if connection.is_closed():
                connections.remove(connection)
            elif connection.has_expired() or (
                connection.is_idle() and len(connections) > keepalive
            ):
                connections.remove(connection)
                closing.append(connection)
        for pool_request in self._requests:
            if not pool_request.is_queued():
                continue
            origin = pool_request.request.url.origin
            available = (
                None
                if self._fresh and pool_request in self._fresh
                else next(
                    (c for c in connections if c.can_handle_request(origin) and c.is_available()),
                    None,
                )
            )
            if available is not None:
                pool_request.assign_to_connection(available)
                continue
            if len(connections) < self._max_connections:
                connection = self.create_connection(origin)
            else:
                idle = next((c for c in connections if c.is_idle()), None)
                if idle is None:
                    continue
                connections.remove(idle)
                closing.append(idle)
                connection = self.create_connection(origin)
            connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing


_STOCK_HANDLE = AsyncHTTPConnection.handle_async_request
"""httpcore's own, to tell when a mock patched it (:meth:`_Pool.create_connection`)."""

_STALE = (httpcore.RemoteProtocolError, httpcore.ReadError, httpcore.WriteError)
"""What a reused connection the upstream closed while idle raises on the next request."""


def _http11(connection: httpcore.AsyncConnectionInterface) -> AsyncHTTP11Connection | None:
    inner = connection._connection if isinstance(connection, AsyncHTTPConnection) else None
    return inner if isinstance(inner, AsyncHTTP11Connection) else None


def _reused(connection: httpcore.AsyncConnectionInterface) -> bool:
    """The connection carried a request before (checked before this one is sent)."""
    if isinstance(connection, H1Connection):
        return connection.requests > 0
    http11 = _http11(connection)
    return http11 is not None and http11._request_count > 0


def _no_response(connection: httpcore.AsyncConnectionInterface) -> bool:
    """No byte of the response arrived (:class:`~gateway.upstream_h1.H1Connection`: none was
    received; h11: it still awaits the status line, nothing buffered).

    A 1xx interim answer that h11 already parsed is not seen here; the gateway sends no
    ``expect: 100-continue``, so an upstream has no reason to send one.
    """
    if isinstance(connection, H1Connection):
        return connection.awaiting_response()
    http11 = _http11(connection)
    if http11 is None:
        return False
    state = http11._h11_state
    return state.their_state is h11.SEND_RESPONSE and not state.trailing_data[0]


class _PoolBody:
    """httpcore 1.0.9's ``PoolByteStream`` (a response body that gives its request back to the
    pool when closed, and closes itself when reading fails) with ``__anext__`` instead of an
    async generator: one coroutine call per chunk rather than a generator resumed per chunk."""

    __slots__ = ("_closed", "_iterator", "_pool", "_pool_request", "_stream")

    def __init__(self, stream: AsyncIterable[bytes], pool_request: AsyncPoolRequest, pool: _Pool):
        self._stream = stream
        self._iterator = stream.__aiter__()
        self._pool_request = pool_request
        self._pool = pool
        self._closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._iterator.__anext__()
        except StopAsyncIteration:
            raise
        except BaseException as exc:
            await self.aclose()
            raise exc from None

    async def aclose(self) -> None:
        """Close the body (its connection is kept or closed) and give the request back."""
        if not self._closed:
            self._closed = True
            with AsyncShieldCancellation():
                aclose = getattr(self._stream, "aclose", None)
                if aclose is not None:
                    await aclose()
            pool = self._pool
            with pool._optional_thread_lock:
                pool._requests.remove(self._pool_request)
                closing = pool._assign_requests_to_connections()
            await pool._close_connections(closing)


class _ShardBody(httpx.AsyncByteStream):
    """A response body as httpx's ``AsyncResponseStream`` gives it (httpcore's errors raised as
    httpx's), that gives its shard's slot back once, when it is closed; ``__anext__`` instead
    of an async generator (as :class:`_PoolBody`)."""

    __slots__ = ("_iterator", "_shard", "_stream")

    def __init__(self, stream: AsyncIterable[bytes], shard: _Shard) -> None:
        self._stream = stream
        self._iterator = stream.__aiter__()
        self._shard: _Shard | None = shard

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._iterator.__anext__()
        except StopAsyncIteration:
            raise
        except Exception as exc:
            with map_httpcore_exceptions():
                raise exc

    async def aclose(self) -> None:
        shard, self._shard = self._shard, None
        if shard is not None:
            shard.in_flight -= 1
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            await aclose()


class ShardedTransport(httpx.AsyncBaseTransport):
    """httpx transport over several connection pools (see the module docstring).

    Args:
        limits: the pool limits over all shards (``max_connections`` total,
            ``max_keepalive_connections`` per shard, capped at its size; ``keepalive_expiry``).
            ``max_connections=None`` (no bound) makes shards without end.
        shard_connections: connections per shard (>= 1).
        verify: as ``httpx.AsyncHTTPTransport``'s; one SSL context is built from it and
            shared by every shard.
        network_backend: the httpcore network backend of every shard's pool (default: one
            :class:`~gateway.upstream_net.AsyncioBackend`; ``httpcore.AnyIOBackend()`` is
            httpcore's own).
        parser: the connections' HTTP/1.1 (:data:`Parser`; ``"h11"``: httpcore's own).

    Attributes:
        shards: the shards created so far (created on demand).
    """

    def __init__(
        self,
        limits: httpx.Limits,
        *,
        shard_connections: int = SHARD_CONNECTIONS,
        verify: ssl.SSLContext | str | bool = True,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        parser: Parser = "httptools",
    ) -> None:
        if shard_connections < 1:
            raise ValueError(f"shard_connections must be >= 1, got {shard_connections}")
        self._total = limits.max_connections
        self._shard_size = shard_connections
        self._max_shards = (
            None if self._total is None else max(1, math.ceil(self._total / shard_connections))
        )
        self._keepalive = limits.max_keepalive_connections
        self._expiry = limits.keepalive_expiry
        self._ssl = (
            verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify)
        )
        self._backend = network_backend if network_backend is not None else AsyncioBackend()
        self._parser: Parser = parser
        self.shards: list[_Shard] = []

    def _new_shard(self) -> _Shard:
        index = len(self.shards)
        size = self._shard_size
        if self._total is not None:
            size = min(size, self._total - index * self._shard_size)
        keepalive = size if self._keepalive is None else min(self._keepalive, size)
        limits = httpx.Limits(
            max_connections=size, max_keepalive_connections=keepalive, keepalive_expiry=self._expiry
        )
        transport = httpx.AsyncHTTPTransport(verify=self._ssl, limits=limits)
        # httpx 0.28 builds its httpcore pool with neither a backend nor a pool class to
        # choose: replaced before it made any connection, with httpx's own arguments
        transport._pool = pool = _Pool(
            ssl_context=self._ssl,
            max_connections=size,
            max_keepalive_connections=keepalive,
            keepalive_expiry=self._expiry,
            http1=True,
            http2=False,
            network_backend=self._backend,
            parser=self._parser,
        )
        shard = _Shard(transport, pool, size)
        self.shards.append(shard)
        return shard

    def _choose(self) -> _Shard:
        for shard in self.shards:
            if shard.in_flight < shard.size:
                return shard
        if self._max_shards is None or len(self.shards) < self._max_shards:
            return self._new_shard()
        return min(self.shards, key=lambda s: s.in_flight / s.size)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through a shard; its slot is held until the body is closed.

        Raises: what ``httpx.AsyncHTTPTransport.handle_async_request`` raises
        (``httpx.TransportError`` subclasses, ``PoolTimeout`` when every shard is full).
        """
        shard = self._choose()
        shard.in_flight += 1
        url = request.url
        assert isinstance(request.stream, httpx.AsyncByteStream)
        # what httpx 0.28.1's AsyncHTTPTransport.handle_async_request does, its body stream lean
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            with map_httpcore_exceptions():
                response = await shard.pool.handle_async_request(core_request)
        except BaseException:
            shard.in_flight -= 1
            raise
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ShardBody(response.stream, shard),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        """Close every shard's pool (their connections)."""
        for shard in self.shards:
            await shard.transport.aclose()
