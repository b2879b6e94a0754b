"""A reused keep-alive upstream connection the upstream closed while idle (no ``connection:
close``; Node's and uvicorn's keep-alive is 5 s) is sent again at once on a new connection
when it failed before any response byte (:class:`gateway.upstream_pool._Pool`); a new
connection's failure, and a failure after a response byte, are raised as before (never resent).

Against a real HTTP/1.1 server on 127.0.0.1 that misbehaves on the n-th request of a connection:
closes as the request line arrives (it had closed the connection idle: the client's request
meets a closed socket), closes in the middle of the request body, closes after a partial status
line, or closes after the whole response head.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from gwtest import RUN_INPUT, drive

from gateway.app import UPSTREAM_KEEPALIVE_EXPIRY, create_app
from gateway.config import Settings
from gateway.upstream_pool import ShardedTransport

BODY = b"x" * 4000


class Server:
    """Keep-alive server; on request ``fail_at`` of a connection (1: its first) it does ``mode``."""

    def __init__(self, mode: str, fail_at: int) -> None:
        self.mode, self.fail_at = mode, fail_at
        self.answered = 0  # requests answered in full
        self.connections = 0
        self.received = 0  # request lines seen

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        n = 0
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                n += 1
                self.received += 1
                failing = n == self.fail_at and self.connections == 1
                if failing and self.mode == "on_request":
                    return
                head = line + await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                if failing and self.mode == "during_body":
                    await reader.readexactly(length // 2)
                    return
                await reader.readexactly(length)
                if failing and self.mode == "partial_head":
                    writer.write(b"HTTP/1.1 20")
                    await writer.drain()
                    return
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
                if failing and self.mode == "after_head":
                    await writer.drain()
                    return
                writer.write(b"ok")
                await writer.drain()
                self.answered += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(server: Server) -> AsyncIterator[str]:
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        listener.close()
        await listener.wait_closed()


async def two_requests(server: Server) -> list[str]:
    """Two sequential POSTs on one client: the outcome of each (``ok`` or the error's name)."""
    transport = ShardedTransport(httpx.Limits(max_connections=4, max_keepalive_connections=4))
    outcomes = []
    async with serving(server) as url, httpx.AsyncClient(transport=transport) as client:
        for _ in range(2):
            try:
                response = await client.post(url, content=BODY)
                outcomes.append(response.text)
            except httpx.TransportError as exc:
                outcomes.append(type(exc).__name__)
    return outcomes


@pytest.mark.parametrize("mode", ["on_request", "during_body"])
async def test_a_stale_reused_connection_is_resent_once_on_a_new_one(mode: str) -> None:
    server = Server(mode, fail_at=2)
    assert await two_requests(server) == ["ok", "ok"]
    assert server.answered == 2  # the second request answered once, on a second connection
    assert server.connections == 2


@pytest.mark.parametrize("mode", ["partial_head", "after_head"])
async def test_a_failure_after_a_response_byte_is_not_resent(mode: str) -> None:
    server = Server(mode, fail_at=2)
    outcomes = await two_requests(server)
    assert outcomes[0] == "ok"
    assert outcomes[1] == "RemoteProtocolError"
    assert server.received == 2  # never sent again
    assert server.connections == 1


@pytest.mark.parametrize("mode", ["on_request", "during_body", "partial_head", "after_head"])
async def test_a_new_connections_failure_is_not_resent(mode: str) -> None:
    server = Server(mode, fail_at=1)
    outcomes = await two_requests(server)
    assert outcomes[0] != "ok"
    assert outcomes[1] == "ok"
    assert server.received == 2  # the first request once, the second once


class IdleClosingUpstream:
    """OpenAI-chat SSE upstream that closes a keep-alive connection idle for ``idle_ms`` or
    more when the next request arrives, unanswered and without ``connection: close`` (its idle
    timer and the request crossed); counts the requests it answered."""

    def __init__(self, idle_ms: float) -> None:
        self.idle = idle_ms / 1000
        self.answered = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        last: float | None = None
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if last is not None and loop.time() - last >= self.idle:
                    return
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                body = (
                    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}'
                    b'\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
                    b"data: [DONE]\n\n"
                )
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    + f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
                self.answered += 1
                last = loop.time()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def test_runs_through_the_gateway_survive_an_idle_closed_upstream_connection(
    tmp_path: Path,
) -> None:
    upstream = IdleClosingUpstream(idle_ms=50)
    listener = await asyncio.start_server(upstream.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    routes = tmp_path / "routes.toml"
    routes.write_text(
        f"""
[[routes]]
name = "r"
upstream_url = "http://127.0.0.1:{port}/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "none" }}
retry = {{ attempts = 1 }}
""",
        encoding="utf-8",
    )
    attempts: list[Any] = []
    app = create_app(Settings(config=routes, database_url="sqlite://"), on_attempt=attempts.append)
    try:
        for run in range(3):
            if run:
                await asyncio.sleep(0.1)  # idle past the upstream's 50 ms
            result = await drive(app, "/v1/agui/r", RUN_INPUT)
            end = [e for e in result.data() if isinstance(e, dict)][-1]
            assert end["type"] == "RUN_FINISHED", end
            assert [a["outcome"] for a in end["metadata"]["attempts"]] == ["success"]
            assert upstream.answered == run + 1  # one upstream request per run
    finally:
        await app.state.services.pipeline.upstream.client.aclose()
        listener.close()
        await listener.wait_closed()


def test_the_apps_idle_upstream_connections_expire_before_a_5_s_server_close() -> None:
    app = create_app(Settings(config=None, database_url="sqlite://"))
    transport = app.state.services.pipeline.upstream.client._transport
    assert isinstance(transport, ShardedTransport)
    assert transport._expiry == UPSTREAM_KEEPALIVE_EXPIRY < 5
