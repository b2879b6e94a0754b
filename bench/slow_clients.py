"""Memory per idle slow client: RSS of a gateway subprocess before and while N clients hold
connections they never finish or never read (issue 15).

Each phase runs its own ``agui-gateway serve`` process (auth off, quotas off, a SQLite store in
a temp folder, one ``openai-chat`` route to a local scripted upstream streaming ``--chunk``
bytes of text every ``--pace`` seconds for ``--seconds``):

1. **slowloris**: N connections each send a partial request head and nothing more; RSS with
   them held, then after ``GATEWAY_HEADER_TIMEOUT_SECONDS`` (``--timeout``);
2. **reading**: N clients each POST a run and read it to its end (the anchor: what N runs
   cost with clients that keep up);
3. **never reading**: N clients (``SO_RCVBUF`` 4096) each POST the same run and never read;
   the gateway drops each ``GATEWAY_SEND_TIMEOUT_SECONDS`` after its write buffers filled
   (first the kernel's socket buffer, autotuned up to ``net.ipv4.tcp_wmem``'s maximum unless
   ``--sndbuf`` fixes it, then the gateway's own) while its run goes on.

Printed: RSS (``/proc/<pid>/status`` VmRSS) before the clients, at the peak (every 2 s: RSS
and the client connections the gateway holds), per client, and at the end. Memory per idle
slow client is phase 3's per-client figure minus phase 2's (same runs; what not reading adds),
and phase 1's. RSS is what the allocator keeps, so freed memory may stay counted.

``--gateway-src DIR`` runs the gateway of another checkout (a folder holding ``gateway/``) for
a before/after comparison on one machine.

Run: ``python bench/slow_clients.py [--clients 100] [--seconds 40] [--timeout 10] [--sndbuf N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

ROUTES = """
[[routes]]
name = "slow"
upstream_url = "http://127.0.0.1:{port}/v1"
protocol = "openai-chat"
model = "bench"
"""


def upstream_app(chunk: int, pace: float, seconds: float) -> Starlette:
    """An OpenAI Chat stream of ``chunk``-byte text deltas every ``pace`` s for ``seconds``."""

    def frame(delta: dict[str, object], finish: str | None = None) -> bytes:
        body = {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + orjson.dumps(body) + b"\n\n"

    async def stream(length: float) -> AsyncIterator[bytes]:
        yield frame({"role": "assistant", "content": ""})
        end = time.monotonic() + length
        while time.monotonic() < end:
            yield frame({"content": "x" * chunk})
            await asyncio.sleep(pace)
        yield frame({}, "stop") + b"data: [DONE]\n\n"

    async def completions(request: Request) -> StreamingResponse:
        length = 0.2 if b"warm-up" in await request.body() else seconds
        return StreamingResponse(stream(length), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def start_upstream(app: Starlette) -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    return port


def rss_kib(pid: int) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", text, re.M)
    assert match is not None
    return int(match.group(1))


def held_connections(port: int) -> int:
    """Established TCP connections whose local port is the gateway's (its side of each)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                count += 1
    return count


def settle(pid: int, seconds: float = 2.0) -> int:
    time.sleep(seconds)
    return rss_kib(pid)


def start_gateway(
    routes: Path, db: Path, args: argparse.Namespace, src: str | None
) -> tuple[subprocess.Popen[str], int]:
    env = {
        **os.environ,
        "GATEWAY_AUTH": "off",
        "GATEWAY_DATABASE_URL": f"sqlite:///{db}",
        "GATEWAY_HEADER_TIMEOUT_SECONDS": str(args.timeout),
        "GATEWAY_SEND_TIMEOUT_SECONDS": str(args.timeout),
        "GATEWAY_SOCKET_SEND_BUFFER_BYTES": str(args.sndbuf),
        "GATEWAY_MAX_CONNECTIONS": "0",
        "GATEWAY_QUOTA_RATE": "",
        "GATEWAY_QUOTA_CONCURRENT_RUNS": "0",
    }
    if src:
        env["PYTHONPATH"] = src
    cmd = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(routes), "--port", "0"]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if found:
            return proc, int(found.group(1))
    raise SystemExit("the gateway did not start")


def run_body(n: int, text: str = "go") -> bytes:
    return orjson.dumps(
        {
            "threadId": f"t{n}",
            "runId": f"r{n}",
            "messages": [{"id": "m1", "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
        }
    )


def connect(port: int, rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    return sock


def report(name: str, before: int, after: int, clients: int, held: int) -> None:
    per = (after - before) / clients
    print(
        f"{name:<14} RSS before {before / 1024:7.1f} MiB   with {clients} clients "
        f"{after / 1024:7.1f} MiB   per client {per:7.1f} KiB   connections held {held}"
    )


def sample(pid: int, port: int, seconds: float, before: int) -> tuple[int, int]:
    """Print RSS and held connections every 2 s for ``seconds`` (or until none is held);
    returns the peak RSS and the connections held then."""
    started = time.monotonic()
    peak, peak_held = before, 0
    while time.monotonic() - started < seconds:
        time.sleep(2.0)
        now, held = rss_kib(pid), held_connections(port)
        if now > peak:
            peak, peak_held = now, held
        print(
            f"{'':16}t={time.monotonic() - started:4.0f} s  RSS {now / 1024:7.1f} MiB  held {held}"
        )
        if held == 0:
            break
    return peak, peak_held


def warm_up(port: int) -> None:
    """One whole short run first: lazy imports and caches are paid before measuring."""
    sock = connect(port)
    sock.sendall(_post(run_body(-1, "warm-up"), close=True))
    sock.settimeout(60)
    while sock.recv(65536):
        pass
    sock.close()


def drain(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while sock.recv(65536):
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=40.0, help="length of each run")
    parser.add_argument("--chunk", type=int, default=1024, help="bytes per text delta")
    parser.add_argument("--pace", type=float, default=0.01, help="seconds between deltas")
    parser.add_argument("--timeout", type=float, default=10.0, help="head and send timeouts")
    parser.add_argument("--sndbuf", type=int, default=0, help="GATEWAY_SOCKET_SEND_BUFFER_BYTES")
    parser.add_argument("--gateway-src", default=None)
    args = parser.parse_args()
    port = start_upstream(upstream_app(args.chunk, args.pace, args.seconds))
    n = args.clients
    print(
        f"{n} clients per phase; runs of {args.seconds:g} s, {args.chunk} B every {args.pace:g} s;"
        f" head/send timeouts {args.timeout:g} s; SO_SNDBUF {args.sndbuf or 'kernel'}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        routes = Path(tmp) / "routes.toml"
        routes.write_text(ROUTES.format(port=port), encoding="utf-8")
        for phase in ("slowloris", "reading", "never reading"):
            db = Path(tmp) / f"{phase.replace(' ', '-')}.db"
            proc, gw = start_gateway(routes, db, args, args.gateway_src)
            try:
                warm_up(gw)
                before = settle(proc.pid)
                socks = [
                    connect(gw, rcvbuf=4096 if phase == "never reading" else None) for _ in range(n)
                ]
                if phase == "slowloris":
                    for sock in socks:
                        sock.sendall(b"POST /v1/agui/slow HTTP/1.1\r\nHost: gateway\r\nx-slow: 1")
                    report(phase, before, settle(proc.pid), n, held_connections(gw))
                    time.sleep(args.timeout)
                    report("  then", before, rss_kib(proc.pid), n, held_connections(gw))
                else:
                    for i, sock in enumerate(socks):
                        sock.sendall(_post(run_body(i)))
                    if phase == "reading":
                        for sock in socks:
                            threading.Thread(target=drain, args=(sock,), daemon=True).start()
                    peak, held = sample(proc.pid, gw, args.seconds + args.timeout, before)
                    report(f"{phase} (peak)", before, peak, n, held)
                    report("  then", before, rss_kib(proc.pid), n, held_connections(gw))
                for sock in socks:
                    sock.close()
            finally:
                proc.terminate()
                proc.wait(30)


def _post(body: bytes, *, close: bool = False) -> bytes:
    return (
        b"POST /v1/agui/slow HTTP/1.1\r\nHost: gateway\r\ncontent-type: application/json\r\n"
        + (b"connection: close\r\n" if close else b"")
        + b"content-length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


if __name__ == "__main__":
    main()
