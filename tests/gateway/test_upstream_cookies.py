"""The gateway's one upstream client serves every tenant, so it must not carry cookie state
from one run's upstream response into another run's request (``gateway/upstream_client.py``):
an upstream ``Set-Cookie`` (a sticky load-balancer cookie, a session cookie) is neither stored
nor sent back. httpx's own client does both, which the control test shows with the same
upstream, so the check below can fail."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from gwtest import RUN_INPUT, drive

from gateway.app import create_app
from gateway.config import Settings
from gateway.upstream_client import UpstreamClient
from gateway.upstream_pool import ShardedTransport

BODY = (
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


class CookieSettingUpstream:
    """OpenAI-chat SSE upstream that answers every request with a ``Set-Cookie`` (a sticky
    session for the domain) and records the ``Cookie`` header each request carried."""

    def __init__(self) -> None:
        self.cookies: list[bytes | None] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                found = [
                    line.split(b":", 1)[1].strip()
                    for line in lines
                    if line.lower().startswith(b"cookie:")
                ]
                self.cookies.append(found[0] if found else None)
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"set-cookie: AWSALB=tenant-a-sticky; Path=/\r\n"
                    + f"content-length: {len(BODY)}\r\n\r\n".encode()
                    + BODY
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def upstream() -> AsyncIterator[tuple[CookieSettingUpstream, int]]:
    server = CookieSettingUpstream()
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    try:
        yield server, listener.sockets[0].getsockname()[1]
    finally:
        listener.close()
        await listener.wait_closed()


async def test_runs_through_the_gateway_never_send_an_upstreams_cookie_back(
    tmp_path: Path,
) -> None:
    async with upstream() as (server, port):
        routes = tmp_path / "routes.toml"
        routes.write_text(
            f"""
[[routes]]
name = "r"
upstream_url = "http://127.0.0.1:{port}/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "none" }}
""",
            encoding="utf-8",
        )
        app = create_app(Settings(config=routes, database_url="sqlite://"))
        client = app.state.services.pipeline.upstream.client
        try:
            for _ in range(3):
                result = await drive(app, "/v1/agui/r", RUN_INPUT)
                end = [e for e in result.data() if isinstance(e, dict)][-1]
                assert end["type"] == "RUN_FINISHED", end
            assert server.cookies == [None, None, None]
            assert len(client.cookies) == 0
        finally:
            await client.aclose()


async def test_control_httpxs_own_client_sends_the_cookie_back() -> None:
    """The same upstream through a plain ``httpx.AsyncClient``: its second request carries the
    first response's cookie (what the gateway's client must not do)."""
    async with upstream() as (server, port):
        async with httpx.AsyncClient(transport=ShardedTransport(httpx.Limits())) as client:
            for _ in range(2):
                response = await client.post(f"http://127.0.0.1:{port}/v1/chat", json={})
                assert response.status_code == 200
        assert server.cookies == [None, b"AWSALB=tenant-a-sticky"]


async def test_the_upstream_client_refuses_cookies_it_would_not_keep() -> None:
    with pytest.raises(TypeError, match="keeps no cookies"):
        UpstreamClient(cookies={"a": "b"})
    async with UpstreamClient() as client:
        with pytest.raises(TypeError, match="keeps no cookies"):
            client.cookies = {"a": "b"}
        client.cookies.set("a", "b")  # a jar that keeps nothing
        assert len(client.cookies) == 0
        request = client.build_request("GET", "http://example.test/")
        assert "cookie" not in request.headers
