"""The benches' HTTP/1.1 + SSE client: a bare asyncio protocol that time-stamps every content
event as its bytes arrive, plus the process helpers (start a child, read its ``PORT <n>``, its
CPU and RSS from ``/proc``).

Not product code. Keep-alive connections, one per worker; chunked or content-length bodies.
A *content event* is one whose JSON carries the mock upstream's delta `` tok<k>`` (an OpenAI
chunk, an AG-UI ``TEXT_MESSAGE_CONTENT``, an AI SDK ``text-delta``): ``k`` aligns the k-th
delta of the direct and of the gateway stream whatever the dialect. Times run from just before
the request is written (a fresh connection's connect time is counted too).
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_TOKEN = re.compile(rb" tok(\d+)")
_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(slots=True)
class Stream:
    """One response: status, content-event arrival times (s from the request), bytes, error."""

    status: int = 0
    times: dict[int, float] = field(default_factory=dict)
    ttfb: float | None = None
    nbytes: int = 0
    error: str | None = None
    events: int = 0


class _Client(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = asyncio.get_running_loop().create_future()
        self._reset(None)

    def _reset(self, done: asyncio.Future[Stream] | None) -> None:
        self.done = done
        self.stream = Stream()
        self.t0 = 0.0
        self.head = b""
        self.in_body = False
        self.chunked = False
        self.remaining = -1  # content-length left, -1 unknown
        self.raw = b""  # undecoded body bytes (chunked framing)
        self.body = b""  # decoded body bytes not yet scanned to an event end
        self.chunk_left = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        if self.done is not None and not self.done.done():
            self.stream.error = f"connection lost: {exc}"
            self.done.set_result(self.stream)

    def request(self, data: bytes) -> asyncio.Future[Stream]:
        assert self.transport is not None
        self._reset(asyncio.get_running_loop().create_future())
        self.t0 = time.perf_counter()
        self.transport.write(data)
        assert self.done is not None
        return self.done

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter() - self.t0
        if self.done is None:
            return
        if not self.in_body:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data = self.head[:end].decode("latin-1"), self.head[end + 4 :]
            lines = head.split("\r\n")
            self.stream.status = int(lines[0].split(" ", 2)[1])
            self.stream.ttfb = now
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name, value = name.strip().lower(), value.strip().lower()
                if name == "transfer-encoding" and "chunked" in value:
                    self.chunked = True
                elif name == "content-length":
                    self.remaining = int(value)
            self.in_body = True
        self.stream.nbytes += len(data)
        if self.chunked:
            finished = self._dechunk(data)
        else:
            self.body += data
            if self.remaining >= 0:
                self.remaining -= len(data)
            finished = self.remaining == 0
        self._scan(now, finished)
        if finished:
            self.done.set_result(self.stream)

    def _dechunk(self, data: bytes) -> bool:
        raw = self.raw + data
        pos = 0
        out = []
        while True:
            if self.chunk_left > 0:
                take = min(self.chunk_left, len(raw) - pos)
                out.append(raw[pos : pos + take])
                pos += take
                self.chunk_left -= take
                if self.chunk_left > 0:
                    break
                self.chunk_left = -2  # the CRLF after the data
            if self.chunk_left == -2:
                if len(raw) - pos < 2:
                    break
                pos += 2
                self.chunk_left = 0
            end = raw.find(b"\r\n", pos)
            if end < 0:
                break
            size = int(raw[pos:end].split(b";")[0], 16)
            pos = end + 2
            if size == 0:
                self.raw = b""
                self.body += b"".join(out)
                return True
            self.chunk_left = size
        self.raw = raw[pos:]
        self.body += b"".join(out)
        return False

    def _scan(self, now: float, finished: bool) -> None:
        body = self.body
        end = len(body) if finished else body.rfind(b"\n\n") + 2
        if end <= 1:
            return
        part, self.body = body[:end], body[end:]
        self.stream.events += part.count(b"\n\n")
        times = self.stream.times
        for match in _TOKEN.finditer(part):
            times.setdefault(int(match.group(1)), now)


class Connection:
    """One keep-alive connection to ``host:port``, reopened when the server closed it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.proto: _Client | None = None
        self.fresh = 0

    async def send(self, data: bytes, timeout: float = 60.0) -> Stream:
        if self.proto is None or self.proto.closed.done():
            loop = asyncio.get_running_loop()
            _, proto = await loop.create_connection(_Client, self.host, self.port)
            self.proto = proto
            self.fresh += 1
        try:
            return await asyncio.wait_for(self.proto.request(data), timeout)
        except TimeoutError:
            self.close()
            return Stream(error="timeout")

    def close(self) -> None:
        if self.proto is not None and self.proto.transport is not None:
            self.proto.transport.close()
        self.proto = None


def post(path: str, body: bytes, host: str = "127.0.0.1") -> bytes:
    """The bytes of one keep-alive JSON POST."""
    return (
        f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        f"accept: text/event-stream\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body


def get(path: str, headers: Sequence[str] = (), host: str = "127.0.0.1") -> bytes:
    """The bytes of one keep-alive GET."""
    extra = "".join(f"{h}\r\n" for h in headers)
    return f"GET {path} HTTP/1.1\r\nhost: {host}\r\n{extra}\r\n".encode()


# -- processes ---------------------------------------------------------------------------------


BENCH = Path(__file__).resolve().parent


class Child:
    """A bench child process (``python bench/<script> ...``) that prints ``PORT <n>``."""

    def __init__(self, script: str, *args: str, env: dict[str, str] | None = None) -> None:
        # The child's log (warnings, tracebacks at shutdown) goes to a file, not the report.
        self.log = tempfile.NamedTemporaryFile(  # closed in stop()
            prefix=f"agui-bench-{Path(script).stem}-", suffix=".log", delete=False
        )
        self.proc = subprocess.Popen(
            [sys.executable, str(BENCH / script), *args],
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**os.environ, **(env or {})},
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            tail = Path(self.log.name).read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{script} did not start: {line!r}\n{tail}")
        self.port = int(line.split()[1])
        self.pid = self.proc.pid

    def pids(self) -> list[int]:
        """The child and its live descendants (a server with worker processes, e.g. granian's:
        its figures are the whole tree's), from ``/proc/<pid>/task/*/children``."""
        out, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            for task in Path(f"/proc/{pid}/task").glob("*/children"):
                try:
                    todo.extend(int(c) for c in task.read_text().split())
                except OSError:  # exited meanwhile
                    continue
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU seconds so far of the process tree (``/proc/<pid>/stat``)."""
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / _TICKS

    def rss_bytes(self) -> int:
        """Resident set size now of the process tree (``/proc/<pid>/statm``)."""
        pages = 0
        for pid in self.pids():
            try:
                pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            except OSError:
                continue
        return pages * _PAGE

    def stop(self) -> None:
        """Terminate the child (kill it after 10 s); its log file is kept (``self.log.name``)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(float(os.environ.get("BENCH_STOP_WAIT", "10")))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on uvloop when it is installed (less client overhead, the same in every
    arm), else on asyncio."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def loadavg() -> str:
    """The 1/5/15-minute load average (the machine is shared: every report prints it)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
