"""The upstream HTTP/1.1 connection (:mod:`gateway.upstream_h1`) against h11, the reference.

What must hold: any response an upstream may send (interim 1xx heads, any status, reason and
fields, a body framed by ``Content-Length``, ``chunked`` or the connection's close, cut at any
byte boundaries) reads through :class:`~gateway.upstream_h1.H1Connection` as it reads through
httpcore's ``AsyncHTTP11Connection`` (h11 0.16): the same status, reason, version, fields and
body, the same decision to keep the connection; the request bytes written are h11's; a response
h11 refuses is refused with the same httpcore error class.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpcore
import httpx
import pytest
import respx
from httpcore._async.connection import AsyncHTTPConnection
from httpcore._async.http11 import AsyncHTTP11Connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.upstream_h1 import H1Connection
from gateway.upstream_pool import ShardedTransport

ORIGIN = httpcore.Origin(b"http", b"upstream.test", 80)


class _Stream(httpcore.AsyncNetworkStream):
    """A network stream that reads the given chunks, then ``b""``; records what is written."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)
        self.written = bytearray()
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.closed:
            raise httpcore.ReadError("closed")
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if len(chunk) > max_bytes:
            self.chunks.insert(0, chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.written += buffer

    async def aclose(self) -> None:
        self.closed = True

    def get_extra_info(self, info: str) -> Any:
        return None


class _Backend(httpcore.AsyncNetworkBackend):
    def __init__(self, stream: _Stream) -> None:
        self.stream = stream

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        return self.stream


def _request(method: bytes = b"POST", body: bytes = b'{"a":1}') -> httpcore.Request:
    headers = [(b"Host", b"upstream.test"), (b"Accept", b"text/event-stream")]
    if method != b"HEAD":
        headers.append((b"Content-Length", str(len(body)).encode()))
    return httpcore.Request(
        method,
        "http://upstream.test/v1/chat?x=1",
        headers=headers,
        content=body if method != b"HEAD" else b"",
    )


async def _exchange(connection: Any, request: httpcore.Request) -> dict[str, Any]:
    """What one request reads: the response's parts and whether the connection is kept."""
    response = await connection.handle_async_request(request)
    body = b""
    try:
        async for chunk in response.stream:
            body += chunk
    finally:
        await response.stream.aclose()
    return {
        "status": response.status,
        "reason": response.extensions["reason_phrase"],
        "version": response.extensions["http_version"],
        "headers": response.headers,
        "body": body,
        "kept": connection.is_idle() and not connection.is_closed(),
    }


async def _through_both(
    chunks: list[bytes], request: httpcore.Request
) -> tuple[Any, Any, bytes, bytes]:
    """Outcome (a dict or the exception class) and the written bytes: ours, then h11's."""
    ours_stream, h11_stream = _Stream(chunks), _Stream(chunks)
    ours_conn = H1Connection(ORIGIN, network_backend=_Backend(ours_stream))
    h11_conn = AsyncHTTP11Connection(ORIGIN, h11_stream)
    outcomes: list[Any] = []
    for conn in (ours_conn, h11_conn):
        try:
            outcomes.append(await _exchange(conn, request))
        except httpcore.ProtocolError as exc:
            outcomes.append(type(exc))
    return outcomes[0], outcomes[1], bytes(ours_stream.written), bytes(h11_stream.written)


_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_names = st.text(_TCHAR, min_size=1, max_size=12).filter(
    lambda n: n.lower() not in ("content-length", "transfer-encoding", "connection")
)
_values = st.builds(
    lambda pad1, core, pad2: (pad1 + core + pad2).encode("latin-1"),
    st.sampled_from(["", " ", "\t", "  "]),
    st.from_regex(r"([!-~\x80-\xff]([ \t!-~\x80-\xff]{0,20}[!-~\x80-\xff])?)?", fullmatch=True),
    st.sampled_from(["", " ", "\t "]),
)
_fields = st.lists(st.tuples(_names.map(str.encode), _values), max_size=5)
_reasons = st.from_regex(r"([!-~]([ !-~]{0,15}[!-~])?)?", fullmatch=True).map(str.encode)


def _head(version: bytes, status: int, reason: bytes, fields: list[tuple[bytes, bytes]]) -> bytes:
    line = (
        b"HTTP/%b %d %b\r\n" % (version, status, reason)
        if reason
        else b"HTTP/%b %d\r\n"
        % (
            version,
            status,
        )
    )
    return line + b"".join(b"%b: %b\r\n" % field for field in fields) + b"\r\n"


@st.composite
def _responses(draw: st.DrawFn) -> tuple[bytes, bytes, bool]:
    """(the request method, a whole response as an upstream sends it, whether its body runs
    to the connection's close)."""
    method = draw(st.sampled_from([b"POST", b"POST", b"HEAD"]))
    wire = b""
    for status in draw(st.lists(st.sampled_from([100, 102, 103]), max_size=2)):
        wire += _head(b"1.1", status, draw(_reasons), draw(_fields))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    version = b"1.0" if framing == "close" and draw(st.booleans()) else b"1.1"
    status = draw(st.one_of(st.integers(200, 599), st.sampled_from([204, 304])))
    fields = draw(_fields)
    if draw(st.booleans()):
        fields.insert(draw(st.integers(0, len(fields))), (b"Connection", b"close"))
    body = draw(st.binary(max_size=300))
    no_body = method == b"HEAD" or status in (204, 304)
    if framing == "length":
        fields.append((b"Content-Length", b"%d" % len(body)))
    elif framing == "chunked":
        fields.append((b"Transfer-Encoding", b"chunked"))
    elif no_body:
        fields.append((b"Content-Length", b"0"))
    wire += _head(version, status, draw(_reasons), fields)
    if no_body:
        return method, wire, False
    if framing != "chunked":
        return method, wire + body, framing == "close"
    cuts = sorted(draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=4)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    for piece in pieces:
        if piece:
            extension = draw(st.sampled_from([b"", b";a=1", b';name="v"']))
            wire += b"%x%b\r\n%b\r\n" % (len(piece), extension, piece)
    wire += b"0\r\n"
    for name, value in draw(_fields):
        wire += b"%b: %b\r\n" % (name, value.strip(b" \t"))
    return method, wire + b"\r\n", False


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if data[a:b]]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_responses(), st.lists(st.integers(0, 10_000), max_size=12))
def test_any_response_reads_as_h11_reads_it(
    response: tuple[bytes, bytes, bool], cuts: list[int]
) -> None:
    method, wire, until_close = response
    ours, h11s, ours_written, h11_written = asyncio.run(
        _through_both(_split(wire, cuts), _request(method))
    )
    if until_close:
        # h11 0.16 reuses a connection whose HTTP/1.1 body ended with its close; RFC 9112
        # §6.3 item 8 and §9.3: the connection is gone, not kept
        assert not ours["kept"]
        ours = {**ours, "kept": h11s["kept"]}
    assert ours == h11s
    assert ours_written == h11_written


@pytest.mark.parametrize(
    "wire",
    [
        pytest.param(b"", id="closed-before-any-byte"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Le", id="closed-in-the-head"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", id="short-body"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", id="short-chunk"
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", id="no-last-chunk"),
        pytest.param(b"HTTP/1.1 2000 OK\r\n\r\n", id="bad-status"),
        pytest.param(b"HTTX/1.1 200 OK\r\n\r\n", id="bad-version"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
            id="bad-chunk-size",
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nBad Name: v\r\n\r\n", id="space-in-field-name"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX: " + b"v" * 110_000 + b"\r\n\r\n", id="head-too-large"),
    ],
)
def test_a_response_h11_refuses_is_refused_alike(wire: bytes) -> None:
    pieces = [wire[i : i + 1024] for i in range(0, len(wire), 1024)]  # h11 bounds what it buffers
    ours, h11s, _, _ = asyncio.run(_through_both(pieces, _request()))
    assert ours is h11s is httpcore.RemoteProtocolError


def test_an_upstream_that_closes_before_answering_says_so_as_h11() -> None:
    """The message the stale-connection resend relies on (gateway/upstream_pool.py)."""

    async def main() -> None:
        connection = H1Connection(ORIGIN, network_backend=_Backend(_Stream([])))
        with pytest.raises(httpcore.RemoteProtocolError, match="without sending a response"):
            await connection.handle_async_request(_request())
        assert connection.awaiting_response() and connection.is_closed()

    asyncio.run(main())


def test_a_kept_connection_carries_the_next_request() -> None:
    one = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    two = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nyo\r\n0\r\n\r\n"

    async def main() -> None:
        stream = _Stream([one, two])
        connection = H1Connection(ORIGIN, network_backend=_Backend(stream))
        first = await _exchange(connection, _request())
        assert connection.is_available() and connection.requests == 1
        second = await _exchange(connection, _request())
        assert (first["body"], second["status"], second["body"]) == (b"hi", 201, b"yo")
        assert connection.requests == 2 and second["kept"]

    asyncio.run(main())


def test_a_chunked_request_body_is_written_as_h11_writes_it() -> None:
    async def parts() -> Any:
        yield b"abc"
        yield b""
        yield b"defgh"

    async def main() -> None:
        written = []
        for factory in (
            lambda s: H1Connection(ORIGIN, network_backend=_Backend(s)),
            lambda s: AsyncHTTP11Connection(ORIGIN, s),
        ):
            stream = _Stream([b"HTTP/1.1 204 No Content\r\n\r\n"])
            request = httpcore.Request(
                b"POST",
                "http://upstream.test/",
                headers=[(b"Host", b"upstream.test"), (b"Transfer-Encoding", b"chunked")],
                content=parts(),
            )
            await _exchange(factory(stream), request)
            written.append(bytes(stream.written))
        assert written[0] == written[1]

    asyncio.run(main())


@pytest.mark.parametrize(
    "headers",
    [
        [(b"Host", b"upstream.test"), (b"X-Bad", b"a\r\nInjected: 1")],
        [(b"Host", b"upstream.test"), (b"Bad Name", b"v")],
        [(b"Host", b"upstream.test"), (b"Content-Length", b"5")],  # the body is 2 bytes
    ],
    ids=["crlf-in-value", "space-in-name", "body-shorter-than-its-length"],
)
def test_a_request_h11_would_refuse_is_refused(headers: list[tuple[bytes, bytes]]) -> None:
    async def main() -> None:
        connection = H1Connection(ORIGIN, network_backend=_Backend(_Stream([])))
        request = httpcore.Request(b"POST", "http://upstream.test/", headers=headers, content=b"ab")
        with pytest.raises(httpcore.LocalProtocolError):
            await connection.handle_async_request(request)

    asyncio.run(main())


def test_the_pool_uses_it_unless_h11_is_asked_for() -> None:
    async def main() -> None:
        limits = httpx.Limits(max_connections=4)
        for parser, kind in (("httptools", H1Connection), ("h11", AsyncHTTPConnection)):
            transport = ShardedTransport(limits, parser=parser)  # type: ignore[arg-type]
            pool = transport._new_shard().transport._pool
            connection = pool.create_connection(ORIGIN)  # type: ignore[attr-defined]
            assert type(connection) is kind
            await transport.aclose()

    asyncio.run(main())


def test_respx_mock_still_sees_the_default_transports_requests() -> None:
    """respx's default mocker patches httpcore's ``AsyncHTTPConnection``; our connection
    overrides the patched method, so the pool falls back to httpcore's while it is patched."""

    async def main() -> None:
        async with httpx.AsyncClient(transport=ShardedTransport(httpx.Limits())) as client:
            with respx.mock:
                respx.post("http://upstream.invalid/v1").respond(200, text="mocked")
                response = await client.post("http://upstream.invalid/v1", content=b"{}")
        assert (response.status_code, response.text) == (200, "mocked")

    asyncio.run(main())


async def _serve_once(answer: bytes) -> tuple[asyncio.Server, int]:
    """A server on 127.0.0.1 that reads one request head, writes ``answer`` and closes."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", b"abc"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n5\r\nde", b"abcde"),
    ],
    ids=["content-length", "chunked"],
)
def test_a_body_cut_short_is_httpx_remote_protocol_error_and_frees_its_slot(
    answer: bytes, body: bytes
) -> None:
    """Through httpx and the sharded pool over real sockets: the bytes that came are read (a
    chunk's part too, as h11 gives it), then httpx's error (gateway/upstream.py maps it to
    UPSTREAM_DISCONNECTED)."""

    async def main() -> None:
        server, port = await _serve_once(answer)
        transport = ShardedTransport(httpx.Limits(max_connections=4))
        async with server, httpx.AsyncClient(transport=transport) as client:
            got = b""
            with pytest.raises(httpx.RemoteProtocolError):
                async with client.stream("POST", f"http://127.0.0.1:{port}/", content=b"{}") as r:
                    async for chunk in r.aiter_bytes():
                        got += chunk
            assert got == body
            assert [s.in_flight for s in transport.shards] == [0]
            assert not transport.shards[0].pool.connections

    asyncio.run(main())


def test_a_101_answer_ends_the_exchange_and_the_connection() -> None:
    """The gateway upgrades nothing: a 101 is returned as h11 returns it, then closed."""
    wire = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nraw"

    async def main() -> None:
        connection = H1Connection(ORIGIN, network_backend=_Backend(_Stream([wire])))
        got = await _exchange(connection, _request())
        assert (got["status"], got["reason"], got["body"]) == (101, b"Switching Protocols", b"")
        assert connection.is_closed()

    asyncio.run(main())


def test_sequential_requests_share_one_kept_alive_socket() -> None:
    """Keep-alive through the sharded pool over a real socket (RFC 9112 §9.3): a chunked and
    a length-framed answer, one TCP connection accepted."""
    answers = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nyo",
    ]
    accepted = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        for answer in answers:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            writer.write(answer)
            await writer.drain()
        writer.close()

    async def main() -> list[bytes]:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, httpx.AsyncClient(transport=ShardedTransport(httpx.Limits())) as c:
            return [
                (await c.post(f"http://127.0.0.1:{port}/", content=b"{}")).content for _ in "ab"
            ]

    assert asyncio.run(main()) == [b"hi", b"yo"]
    assert accepted == 1


_after = st.one_of(
    st.binary(min_size=1, max_size=40),
    st.builds(
        lambda status, body: (
            b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%b" % (status, len(body), body)
        ),
        st.integers(200, 599),
        st.binary(max_size=20),
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_responses(), _after, st.lists(st.integers(0, 10_000), max_size=12))
def test_bytes_after_a_complete_response_never_change_it(
    response: tuple[bytes, bytes, bool], after: bytes, cuts: list[int]
) -> None:
    """Stray bytes or a second response after a complete one, in any split: the response
    reads as it reads alone (status, reason, fields, body); when they come in the read that
    ends it, the connection is not kept (later ones are the idle connection's readable check,
    ``has_expired``). A body that runs to the close takes them as body: not this case."""
    method, wire, until_close = response
    if until_close or method == b"HEAD":
        return  # HEAD: httptools does not know the request's method; its fields frame no body
    alone, _, _, _ = asyncio.run(_through_both([wire], _request(method)))
    for pieces in (_split(wire + after, cuts), [wire + after]):
        ours, _, _, _ = asyncio.run(_through_both(pieces, _request(method)))
        if isinstance(alone, dict) and isinstance(ours, dict):
            assert {**ours, "kept": alone["kept"]} == alone
        else:
            assert ours == alone
    assert not (isinstance(ours, dict) and ours["kept"])


_FOLD = b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nhi"


@pytest.mark.parametrize(
    "wire",
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n"
            b"2\r\nhi\r\n0\r\n\r\n",
            id="chunked-and-content-length",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\nhi\r\n0\r\n\r\n",
            id="content-length-then-chunked",
        ),
        pytest.param(b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", id="bare-lf-line-ends"),
        pytest.param(_FOLD, id="obs-fold"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX-A: a\x7fb\r\nContent-Length: 2\r\n\r\nhi", id="del"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 2\r\n\r\nhi", id="ctl"),
    ],
)
def test_what_h11_reads_and_llhttp_would_refuse_reads_as_h11(wire: bytes) -> None:
    """RFC 9112 §6.3 item 3 (chunked wins), §2.2 (a bare LF), §5.2 (obs-fold: SP); the
    connection is not kept after a message with both framings."""
    ours, h11s, _, _ = asyncio.run(_through_both([wire], _request()))
    assert isinstance(ours, dict) and isinstance(h11s, dict)
    assert {**ours, "kept": h11s["kept"]} == h11s
    assert ours["body"] == b"hi"
    if b"Transfer-Encoding" in wire:
        assert not ours["kept"]


@pytest.mark.parametrize(
    "wire",
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            id="gzip-then-chunked",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nhi", id="chunked-then-gzip"
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nhi", id="identity"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n", id="nul"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX-A: a\x0bb\r\nContent-Length: 0\r\n\r\n", id="vt"),
    ],
)
def test_a_transfer_coding_or_field_value_h11_refuses_is_refused(wire: bytes) -> None:
    """A transfer coding other than chunked would reach the decoder still coded (h11 0.16
    refuses it: "Only Transfer-Encoding: chunked is supported"); RFC 9110 §5.5 field values."""
    ours, h11s, _, _ = asyncio.run(_through_both([wire], _request()))
    assert ours is h11s is httpcore.RemoteProtocolError


def test_a_content_length_list_is_refused() -> None:
    """The one framing h11 reads and this connection refuses (RFC 9110 §8.6: a recipient MAY
    reject a list of equal Content-Length values as invalid)."""
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nhi"
    ours, h11s, _, _ = asyncio.run(_through_both([wire], _request()))
    assert ours is httpcore.RemoteProtocolError
    assert isinstance(h11s, dict) and h11s["body"] == b"hi"
