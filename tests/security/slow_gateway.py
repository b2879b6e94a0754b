"""A gateway under a real uvicorn on 127.0.0.1 (port 0, in a thread), for the slow-client
tests: raw sockets against the HTTP protocol ``serve`` runs (:func:`gateway.server.build_server`)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from gateway.app import create_app
from gateway.config import Settings
from gateway.server import GatewayServer, build_server

STARTUP_DEADLINE_S = 30.0

ROUTES = """
[[routes]]
name = "gpt"
upstream_url = "https://openai.test/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"
"""


@contextmanager
def live_gateway(
    tmp_path: Path, upstream: httpx.MockTransport, **settings: Any
) -> Iterator[GatewayServer]:
    """Serve a gateway (auth off, a SQLite store in ``tmp_path``, route ``gpt`` answered by
    ``upstream``) until the block ends; the server's ``bound_port`` is set."""
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES, encoding="utf-8")
    app = create_app(
        Settings(
            config=routes,
            database_url=f"sqlite:///{tmp_path}/runs.db",
            auth="off",
            **settings,
        ),
        http_client=httpx.AsyncClient(transport=upstream),
    )
    server = build_server(app, "127.0.0.1", 0, log_level="warning")
    thread = threading.Thread(target=server.run, name="gateway-slow-clients", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while server.bound_port is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.bound_port is not None, "uvicorn did not start"
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(STARTUP_DEADLINE_S)


def connect(server: GatewayServer, *, rcvbuf: int | None = None) -> socket.socket:
    """A raw TCP connection to ``server`` (``rcvbuf``: SO_RCVBUF set before connecting)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(STARTUP_DEADLINE_S)
    assert server.bound_port is not None
    sock.connect(("127.0.0.1", server.bound_port))
    return sock


def read_until_closed(sock: socket.socket, *, deadline: float = 20.0) -> bytes:
    """Everything ``sock`` receives until the peer closes it (fails after ``deadline`` s)."""
    sock.settimeout(deadline)
    out = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return out
        if not data:
            return out
        out += data


def wait_for(predicate: Any, *, deadline: float = 20.0) -> None:
    """Poll ``predicate()`` until it holds (fails after ``deadline`` seconds)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached")
