"""The upstream network backend (:mod:`gateway.upstream_net`) against real sockets on 127.0.0.1.

What must hold: through httpx and the sharded pool, a response read over
:class:`~gateway.upstream_net.AsyncioBackend` is what httpcore's own anyio backend reads (the
same bytes, the same error), whatever the chunking and pauses of the server; a read times out
only after ``read`` seconds without a byte (not per request); a connection the server closed
while idle is not reused; large bodies go both ways (the read high-water mark, write drain).
"""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway import upstream_net
from gateway.upstream_net import AsyncioBackend
from gateway.upstream_pool import ShardedTransport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

# one step of a scripted response body: bytes to send, or a pause in ms
Step = tuple[str, bytes | int]


async def _head(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return head


def _scripted(steps: list[Step], chunked: bool, cut: bool) -> Handler:
    """One response per connection, written as ``steps``; ``cut``: closed before the end."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _head(reader)
            body = b"".join(v for k, v in steps if isinstance(v, bytes))
            framing = (
                b"transfer-encoding: chunked" if chunked else b"content-length: %d" % len(body)
            )
            writer.write(b"HTTP/1.1 200 OK\r\n" + framing + b"\r\n\r\n")
            for _kind, value in steps:
                if isinstance(value, int):
                    await writer.drain()
                    await asyncio.sleep(value / 1000)
                elif chunked:
                    writer.write(b"%x\r\n%s\r\n" % (len(value), value))
                else:
                    writer.write(value)
            if cut:
                await writer.drain()
                writer.transport.abort()
                return
            if chunked:
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            await reader.read()  # until the client closes
        except ConnectionError:
            pass
        finally:
            writer.close()

    return serve


async def _fetch(
    handler: Handler, backend: httpcore.AsyncNetworkBackend, *, read: float = 5.0
) -> tuple[str, bytes]:
    """What a client over ``backend`` reads: ``("ok", body)`` or ``(error class, bytes so far)``."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = ShardedTransport(httpx.Limits(max_connections=4), network_backend=backend)
    timeout = httpx.Timeout(5.0, read=read)
    got = bytearray()
    try:
        async with (
            httpx.AsyncClient(transport=transport, timeout=timeout) as client,
            client.stream("POST", f"http://127.0.0.1:{port}/x", content=b"{}") as response,
        ):
            async for chunk in response.aiter_bytes():
                got += chunk
        return "ok", bytes(got)
    except httpx.HTTPError as exc:
        return type(exc).__name__, bytes(got)
    finally:
        server.close()
        await server.wait_closed()


@st.composite
def bodies(draw: st.DrawFn) -> list[Step]:
    steps: list[Step] = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 3)) == 0:
            steps.append(("pause", draw(st.integers(0, 15))))
        else:
            size = draw(st.sampled_from([1, 7, 100, 4096, 70_000]))
            steps.append(("data", draw(st.binary(min_size=1, max_size=8)) * size))
    return steps


def _runner(loop: str) -> Callable[[Any], Any]:
    return asyncio.run if loop == "asyncio" else pytest.importorskip("uvloop").run


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=bodies(), chunked=st.booleans(), cut=st.booleans())
def test_the_asyncio_backend_reads_what_the_anyio_backend_reads(
    loop: str, steps: list[Step], chunked: bool, cut: bool
) -> None:
    handler = _scripted(steps, chunked, cut)

    async def both() -> tuple[tuple[str, bytes], tuple[str, bytes]]:
        return await _fetch(handler, AsyncioBackend()), await _fetch(
            handler, httpcore.AnyIOBackend()
        )

    fast, slow = _runner(loop)(both())
    assert fast[0] == slow[0]
    if fast[0] == "ok":
        assert fast[1] == slow[1] == b"".join(v for _, v in steps if isinstance(v, bytes))
    else:  # cut short: the bytes before the cut came whole, in order
        body = b"".join(v for _, v in steps if isinstance(v, bytes))
        assert body.startswith(fast[1])


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_read_times_out_after_read_seconds_of_silence_only(loop: str) -> None:
    # 8 chunks 0.1 s apart under a 0.35 s read timeout: 0.8 s in all, never 0.35 s silent
    run = _runner(loop)
    steady = _scripted([("p", 100), ("d", b"x")] * 8, chunked=True, cut=False)
    assert run(_fetch(steady, AsyncioBackend(), read=0.35)) == ("ok", b"x" * 8)
    stalled = _scripted([("d", b"a"), ("p", 600), ("d", b"b")], chunked=True, cut=False)
    assert run(_fetch(stalled, AsyncioBackend(), read=0.2)) == ("ReadTimeout", b"a")


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async def scenario() -> list[int]:
        peers: list[int] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            peers.append(writer.get_extra_info("peername")[1])
            await _head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
            writer.close()  # keep-alive refused after the fact: the pool must notice

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = ShardedTransport(httpx.Limits(max_connections=4))
        async with httpx.AsyncClient(transport=transport, timeout=5) as client:
            for _ in range(3):
                response = await client.get(f"http://127.0.0.1:{port}/")
                assert response.content == b"ok"
                await asyncio.sleep(0.05)
        server.close()
        await server.wait_closed()
        return peers

    peers = asyncio.run(scenario())
    assert len(set(peers)) == 3


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused

    async def scenario() -> None:
        async with httpx.AsyncClient(
            transport=ShardedTransport(httpx.Limits(max_connections=1)), timeout=5
        ) as client:
            await client.get(f"http://127.0.0.1:{port}/")

    with pytest.raises(httpx.ConnectError):
        asyncio.run(scenario())


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_large_bodies_go_both_ways(monkeypatch: pytest.MonkeyPatch, loop: str) -> None:
    monkeypatch.setattr(upstream_net, "READ_HIGH_WATER", 16 * 1024)
    sent = bytes(range(256)) * 16 * 1024  # 4 MiB up, echoed back

    async def scenario() -> bytes:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            assert b"content-length: %d" % len(sent) in head.lower()
            body = bytearray()
            while len(body) < len(sent):
                body += await reader.read(65536)
                await asyncio.sleep(0)  # a slow reader: the client's writes must wait
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        got = bytearray()
        transport = ShardedTransport(httpx.Limits(max_connections=1))
        async with (
            httpx.AsyncClient(transport=transport, timeout=10) as client,
            client.stream("POST", f"http://127.0.0.1:{port}/", content=sent) as response,
        ):
            async for chunk in response.aiter_bytes():
                got += chunk
                await asyncio.sleep(0.001)  # a slow consumer: the buffer pauses the socket
        server.close()
        await server.wait_closed()
        return bytes(got)

    assert _runner(loop)(scenario()) == sent


def test_the_shards_use_the_asyncio_backend() -> None:
    transport = ShardedTransport(httpx.Limits(max_connections=600), shard_connections=256)
    shard = transport._new_shard()
    assert isinstance(shard.transport._pool._network_backend, AsyncioBackend)


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_https_upstreams_read_the_same_over_tls(tmp_path: Path, loop: str) -> None:
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    steps: list[Step] = [("d", b"first "), ("p", 5), ("d", b"x" * 100_000), ("d", b" last")]
    handler = _scripted(steps, chunked=True, cut=False)

    async def fetch(backend: httpcore.AsyncNetworkBackend) -> bytes:
        server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        transport = ShardedTransport(
            httpx.Limits(max_connections=2), verify=client_ctx, network_backend=backend
        )
        try:
            async with httpx.AsyncClient(transport=transport, timeout=5) as client:
                response = await client.post(f"https://localhost:{port}/x", content=b"{}")
                assert response.extensions["network_stream"].get_extra_info("ssl_object")
                return response.content
        finally:
            server.close()
            await server.wait_closed()

    async def both() -> tuple[bytes, bytes]:
        return await fetch(AsyncioBackend()), await fetch(httpcore.AnyIOBackend())

    fast, slow = _runner(loop)(both())
    assert fast == slow == b"".join(v for _, v in steps if isinstance(v, bytes))


@settings(max_examples=200, deadline=None)
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=40), max_size=30),
    limits=st.lists(st.integers(1, 64), min_size=1, max_size=8),
)
def test_the_receive_buffer_gives_back_every_byte_in_order_within_each_read_limit(
    chunks: list[bytes], limits: list[int]
) -> None:
    """The buffer is a list (no deque per connection): takes of any size, chunks of any size,
    give back what arrived, in order, none larger than asked, never empty while data waits."""
    protocol = upstream_net._Protocol(asyncio.new_event_loop())
    try:
        for chunk in chunks:
            protocol.data_received(chunk)
        got: list[bytes] = []
        i = 0
        while protocol.chunks:
            limit = limits[i % len(limits)]
            i += 1
            part = protocol.take(limit)
            assert 0 < len(part) <= limit
            got.append(part)
        assert b"".join(got) == b"".join(chunks)
        assert protocol.buffered == 0
    finally:
        protocol.loop.close()
