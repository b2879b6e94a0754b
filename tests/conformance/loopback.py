"""Serve an ASGI app with uvicorn on 127.0.0.1 (a free port) for the duration of a test."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["serve"]


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Run ``app`` on uvicorn at 127.0.0.1 on a free port; yield its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    ready = threading.Event()
    try:
        for _ in range(1000):  # wait for readiness (not a timing assertion)
            if server.started:
                break
            ready.wait(0.01)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
