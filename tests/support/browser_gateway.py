"""A live gateway for the browser tests: a scripted upstream the test controls, the gateway on
uvicorn, a page site, and pages bundled from the real client packages.

* :class:`ScriptedUpstream`: an OpenAI Chat Completions endpoint on ``127.0.0.1:0`` (a thread)
  that plays the scripts the test queued, one per request; a script may stop at a gate until the
  test opens it, and every request records whether the gateway hung up on it (the upstream
  request was cancelled) and how many parts it sent.
* :func:`serve_gateway`: ``create_app`` over a routes file pointing at it, on uvicorn port 0.
* :func:`bundle`: ``esbuild`` (from ``tests/harness``'s ``npm ci``) bundles an example page of
  ``examples/`` with the pinned ``@ag-ui/client`` / ``ai`` into one browser script.
* :class:`CuttableProxy`: a TCP proxy the page talks through, whose connections the test cuts.
* :func:`serve_pages`: a loopback site serving a folder (the page's origin; the gateway allows
  it with CORS).
"""

from __future__ import annotations

import contextlib
import http.server
import io
import os
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

EXAMPLES_DIR = HARNESS_DIR.parents[1] / "examples"
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
def serve_gateway(
    tmp: Path, upstream_url: str, *, cors_origin: str, extra_routes: str = ""
) -> Iterator[str]:
    """The gateway on uvicorn (``127.0.0.1:0``, a thread) with route ``gpt`` on the upstream
    (and the ``[[routes]]`` TOML of ``extra_routes``); yields its base URL."""
    routes = tmp / "routes.toml"
    routes.write_text(
        f'[[routes]]\nname = "gpt"\nupstream_url = "{upstream_url}"\n'
        'protocol = "openai-chat"\nmodel = "gpt-4o-mini"\n' + extra_routes,
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


class CuttableProxy:
    """A TCP proxy on ``127.0.0.1:0`` in front of ``target`` (``host, port``): the page talks
    to the gateway through it, and :meth:`cut` drops every connection open now, as a network
    that goes away mid-stream (new connections work again at once)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.cuts = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self._open |= {client, server}
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._close(src, dst)

    def _close(self, *socks: socket.socket) -> None:
        for sock in socks:
            with self._lock:
                self._open.discard(sock)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> None:
        """Drop every open connection (both sides)."""
        with self._lock:
            socks = list(self._open)
        self.cuts += 1
        self._close(*socks)

    def __enter__(self) -> CuttableProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()
        self.cut()


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


def bundle(example: str, out_dir: Path) -> Path:
    """Bundle ``examples/<example>/app.js`` for the browser (an IIFE, ES2020, the packages
    resolved from ``tests/harness/node_modules``: the pinned clients) into
    ``out_dir/<example>/app.bundle.js``, next to a copy of its ``index.html``. Returns that
    folder. Skips (locally) / fails (CI) when ``npm ci`` has not installed esbuild."""
    require_service(ESBUILD.exists(), "esbuild is missing: run `npm ci` in tests/harness")
    source = EXAMPLES_DIR / example
    target = out_dir / example
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            str(ESBUILD),
            str(source / "app.js"),
            "--bundle",
            "--format=iife",
            "--target=es2020",
            "--platform=browser",
            "--log-level=warning",
            f"--outfile={target / 'app.bundle.js'}",
        ],
        cwd=HARNESS_DIR,
        env={**os.environ, "NODE_PATH": str(HARNESS_DIR / "node_modules")},
        check=True,
        timeout=120,
    )
    (target / "index.html").write_text(
        (source / "index.html").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return target
