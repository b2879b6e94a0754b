"""A live gateway for the browser tests: a scripted upstream the test controls, the gateway on
uvicorn, a page site, and pages bundled from the real client packages.

* :class:`ScriptedUpstream`: an OpenAI Chat Completions endpoint on ``127.0.0.1:0`` (a thread)
  that plays the scripts the test queued, one per request; a script may stop at a gate until the
  test opens it, and every request records whether the gateway hung up on it (the upstream
  request was cancelled) and how many parts it sent.
* :func:`serve_gateway`: ``create_app`` over a routes file pointing at it, on uvicorn port 0.
* :func:`bundle`: ``esbuild`` (from ``tests/harness``'s ``npm ci``) bundles a page entry of
  ``tests/harness/pages/`` with the pinned ``@ag-ui/client`` / ``ai`` into one browser script.
* :func:`serve_pages`: a loopback site serving a folder (the page's origin; the gateway allows
  it with CORS).
"""

from __future__ import annotations

import contextlib
import http.server
import io
import select
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus import require_service
from real_clients import HARNESS_DIR

from gateway.app import create_app
from gateway.config import Settings
from gateway.server import build_server

__all__ = ["Script", "ScriptedUpstream", "bundle", "serve_gateway", "serve_pages"]

PAGES_DIR = HARNESS_DIR / "pages"
ESBUILD = HARNESS_DIR / "node_modules" / ".bin" / "esbuild"


@dataclass
class Script:
    """One upstream response: SSE ``parts``; with ``gate_at`` the response stops before part
    ``gate_at`` until :attr:`gate` is set. Filled in as it plays: ``reached`` (the gate was
    reached), ``sent`` (parts written), ``disconnected`` (the gateway closed the connection
    before the end), ``done`` (the handler returned)."""

    parts: Sequence[bytes]
    gate_at: int | None = None
    gate: threading.Event = field(default_factory=threading.Event)
    reached: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    sent: int = 0
    body: bytes = b""


def _peer_closed(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class ScriptedUpstream:
    """The scripted OpenAI Chat upstream (see the module docstring); ``queue`` scripts in the
    order the requests will come; ``requests`` lists the scripts played."""

    def __init__(self) -> None:
        self._queue: list[Script] = []
        self.requests: list[Script] = []
        self._lock = threading.Lock()
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with upstream._lock:
                    script = upstream._queue.pop(0) if upstream._queue else None
                    if script is not None:
                        upstream.requests.append(script)
                if script is None:
                    self.send_error(500, "no script queued")
                    return
                script.body = body
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for index, part in enumerate(script.parts):
                        if index == script.gate_at:
                            script.reached.set()
                            while not script.gate.wait(0.05):
                                if _peer_closed(self.connection):
                                    script.disconnected.set()
                                    return
                        self.wfile.write(part)
                        self.wfile.flush()
                        script.sent += 1
                except OSError:
                    script.disconnected.set()
                finally:
                    script.done.set()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The ``upstream_url`` of a route on it (``.../v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def queue(self, script: Script) -> Script:
        """Play ``script`` for the next request; returns it."""
        with self._lock:
            self._queue.append(script)
        return script

    def __enter__(self) -> ScriptedUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for script in self.requests:
            script.gate.set()
        self._server.shutdown()
        self._server.server_close()


@contextlib.contextmanager
def serve_gateway(tmp: Path, upstream_url: str, *, cors_origin: str) -> Iterator[str]:
    """The gateway on uvicorn (``127.0.0.1:0``, a thread) with route ``gpt`` on the upstream;
    yields its base URL."""
    routes = tmp / "routes.toml"
    routes.write_text(
        f'[[routes]]\nname = "gpt"\nupstream_url = "{upstream_url}"\n'
        'protocol = "openai-chat"\nmodel = "gpt-4o-mini"\n',
        encoding="utf-8",
    )
    settings = Settings(
        config=routes,
        database_url=f"sqlite:///{tmp}/runs.db",
        cors_origins=cors_origin,
        batch_interval=0.01,
        reader_recheck=0.05,
    )
    srv = build_server(create_app(settings), "127.0.0.1", 0, out=io.StringIO(), log_level="warning")
    thread = threading.Thread(target=srv.run, name="gateway-browser", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while srv.bound_port is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert srv.bound_port is not None, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{srv.bound_port}"
    finally:
        srv.should_exit = True
        thread.join(30)


@contextlib.contextmanager
def serve_pages(folder: Path) -> Iterator[str]:
    """A loopback site serving ``folder``; yields its origin (``http://127.0.0.1:<port>``)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.daemon_threads = True
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


def bundle(entry: str, out_dir: Path) -> Path:
    """Bundle ``tests/harness/pages/<entry>`` for the browser into ``out_dir`` (an IIFE,
    ES2020); the page HTML next to it (``<entry stem>.html``) is copied too. Returns the
    script's path. Skips (locally) / fails (CI) when ``npm ci`` has not installed esbuild."""
    require_service(ESBUILD.exists(), "esbuild is missing: run `npm ci` in tests/harness")
    source = PAGES_DIR / entry
    script = out_dir / f"{source.stem}.bundle.js"
    subprocess.run(
        [
            str(ESBUILD),
            str(source),
            "--bundle",
            "--format=iife",
            "--target=es2020",
            "--platform=browser",
            "--log-level=warning",
            f"--outfile={script}",
        ],
        cwd=HARNESS_DIR,
        check=True,
        timeout=120,
    )
    html = PAGES_DIR / f"{source.stem}.html"
    (out_dir / html.name).write_text(html.read_text(encoding="utf-8"), encoding="utf-8")
    return script
