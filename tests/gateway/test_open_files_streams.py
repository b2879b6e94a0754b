"""Streams that open stay open when the open-files limit is short (issue 13 item 5).

The bench's 10,000 idle streams under a hard ``RLIMIT_NOFILE`` of 20,000 (below the 20,256
two sockets per stream need): the last 31 streams answered 200 and ``RUN_STARTED``, then their
upstream connect failed with ``EMFILE`` and they ended with ``RUN_ERROR UPSTREAM_UNAVAILABLE``.
Here the same at small scale: a child process serves the gateway (the ``serve`` server,
:func:`gateway.server.build_server`) with a soft limit of 296 and an upstream transport that
holds one descriptor per stream, as a socket does; the test opens more streams than the
descriptors serve. Expected: each stream either is refused ``503`` before its run starts, or
answers 200 and stays open (no ``RUN_ERROR``); at most ``(296 - FD_MARGIN) // 2`` are served.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from gateway.open_files import FD_MARGIN

SOFT = FD_MARGIN + 40
STREAMS = 160  # more than SOFT descriptors hold at two each, with the process's own

CHILD = textwrap.dedent(
    """
    import asyncio, os, resource, sys, threading, time
    import httpx
    from gateway.app import create_app
    from gateway.config import Settings
    from gateway.server import build_server

    soft, tmp = int(sys.argv[1]), sys.argv[2]
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    ROLE = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",'
            b'"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\\n\\n')

    class Holding(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request):
            try:
                fd = os.open(os.devnull, os.O_RDONLY)  # the upstream socket's descriptor
            except OSError as exc:
                raise httpx.ConnectError(str(exc), request=request) from exc

            async def body():
                try:
                    yield ROLE
                    await asyncio.sleep(3600)
                finally:
                    os.close(fd)

            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    routes = os.path.join(tmp, "routes.toml")
    with open(routes, "w") as f:
        f.write('[[routes]]\\nname = "gpt"\\nupstream_url = "https://openai.test/v1"\\n'
                'protocol = "openai-chat"\\nmodel = "gpt-4o-mini"\\n')
    settings = Settings(config=routes, database_url=f"sqlite:///{tmp}/runs.db", auth="off",
                        quota_concurrent_runs=0, quota_rate="")
    app = create_app(settings, http_client=httpx.AsyncClient(transport=Holding()))
    server = build_server(app, "127.0.0.1", 0, log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while server.bound_port is None and thread.is_alive():
        time.sleep(0.02)
    print("PORT", server.bound_port, flush=True)
    sys.stdin.read()  # until the test closes it
    server.should_exit = True
    thread.join(10)
    """
)

BODY = (
    b'{"threadId":"t%d","runId":"r%d","messages":[{"id":"m1","role":"user","content":"hi"}],'
    b'"tools":[],"context":[],"state":null,"forwardedProps":{}}'
)


def _request(i: int) -> bytes:
    body = BODY % (i, i)
    return (
        b"POST /v1/agui/gpt HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"accept: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )


def _read_for(socks: list[socket.socket], seconds: float) -> dict[int, bytes]:
    """Everything each socket receives within ``seconds`` (index -> bytes; b"" never read)."""
    got = {i: b"" for i in range(len(socks))}
    index = {s.fileno(): i for i, s in enumerate(socks)}
    poller = select.poll()
    for s in socks:
        poller.register(s, select.POLLIN)
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        for fd, _ev in poller.poll(left * 1000):
            i = index[fd]
            try:
                data = socks[i].recv(65536)
            except OSError:
                data = b""
            if not data:
                poller.unregister(fd)
                got[i] += b"<closed>"
            else:
                got[i] += data
    return got


def test_streams_beyond_the_descriptors_are_refused_not_ended(tmp_path: Path) -> None:
    env = {**os.environ, "GATEWAY_LOG_FORMAT": "text"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(SOFT), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
    )
    socks: list[socket.socket] = []
    try:
        assert child.stdout is not None
        line = child.stdout.readline().decode()
        assert line.startswith("PORT "), line
        port = int(line.split()[1])
        for i in range(STREAMS):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(_request(i))
            socks.append(sock)
        got = _read_for(socks, 6.0)  # the upstream retries' back-off is ~1.5 s in all
    finally:
        for sock in socks:
            sock.close()
        assert child.stdin is not None
        child.stdin.close()
        child.wait(20)
    served = [b for b in got.values() if b.startswith(b"HTTP/1.1 200")]
    refused = [b for b in got.values() if b.startswith(b"HTTP/1.1 503")]
    assert len(served) + len(refused) == STREAMS, [b[:80] for b in got.values()]
    for body in served:
        assert b"RUN_STARTED" in body
        assert b"RUN_ERROR" not in body and b"<closed>" not in body, body[-400:]
    assert 0 < len(served) <= (SOFT - FD_MARGIN) // 2
