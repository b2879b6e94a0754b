"""A deterministic, paced OpenAI Chat Completions SSE upstream for the gateway benches.

Not product code: the fixed point the added-latency bench measures against (the gateway in front
of it vs. it directly). A bare asyncio protocol, HTTP/1.1 keep-alive, no framework, so its own
cost is small and the same in both arms.

* ``POST .../chat/completions`` answers ``text/event-stream`` in OpenAI's chunk envelope
  (``openai`` Python SDK 1.x ``ChatCompletionChunk``): a role chunk, ``events`` content chunks
  whose deltas read `` tok0``, `` tok1``, ... (the bench aligns events by that number in every
  dialect), a ``finish_reason: "stop"`` chunk, a usage chunk (``stream_options.include_usage``
  shape) and ``data: [DONE]``.
* Pacing: frame k is written at ``t_request + ttfb + k * delay`` on an absolute schedule (no
  drift), each frame its own HTTP/1.1 chunk, TCP_NODELAY.
* Overrides per request, as path segments ``key=value[,key=value]`` before ``/v1`` (so a
  gateway route's ``upstream_url`` can carry them): ``delay_ms``, ``ttfb_ms``, ``events``.
  ``http://127.0.0.1:PORT/delay_ms=5000,events=1000/v1`` streams slowly (the open-streams hold).
* ``GET /health`` answers ``ok``.

Run alone: ``python bench/mock_upstream.py --port 0`` prints ``PORT <n>`` once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import orjson

MODEL = "gpt-4o-mini"
"""The model every chunk names (priced by genai-prices, so the gateway's cost path runs)."""


@dataclass(frozen=True, slots=True)
class Pace:
    """One stream's schedule: ``events`` content chunks, ``delay_ms`` apart, first after
    ``ttfb_ms``."""

    events: int = 50
    delay_ms: float = 5.0
    ttfb_ms: float = 0.0


def frames(events: int) -> list[bytes]:
    """The SSE frames of one stream (``data: <json>\\n\\n`` each, ``[DONE]`` last)."""
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": MODEL}

    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        body = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + orjson.dumps(body) + b"\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": f" tok{k}"}) for k in range(events)]
    out.append(chunk({}, "stop"))
    usage = {"prompt_tokens": 12, "completion_tokens": events, "total_tokens": 12 + events}
    out.append(b"data: " + orjson.dumps({**base, "choices": [], "usage": usage}) + b"\n\n")
    out.append(b"data: [DONE]\n\n")
    return out


_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


def _chunked(frame: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(frame), frame)


def _pace_of(path: str, default: Pace) -> Pace:
    pace = default
    for segment in path.split("/"):
        if "=" not in segment:
            continue
        for item in segment.split(","):
            key, _, value = item.partition("=")
            if key == "events":
                pace = replace(pace, events=int(value))
            elif key == "delay_ms":
                pace = replace(pace, delay_ms=float(value))
            elif key == "ttfb_ms":
                pace = replace(pace, ttfb_ms=float(value))
    return pace


class _Conn(asyncio.Protocol):
    def __init__(self, default: Pace, cache: Callable[[int], list[bytes]]) -> None:
        self.default = default
        self.cache = cache
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.busy: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.busy is not None:
            self.busy.cancel()

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._next()

    def _next(self) -> None:
        if self.busy is not None and not self.busy.done():
            return
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buf[:end].decode("latin-1")
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if len(self.buf) < end + 4 + length:
            return
        self.buf = self.buf[end + 4 + length :]
        method, path, _ = head.split("\r\n", 1)[0].split(" ", 2)
        t0 = time.monotonic()
        self.busy = asyncio.ensure_future(self._answer(method, path, t0))

    async def _answer(self, method: str, path: str, t0: float) -> None:
        transport = self.transport
        assert transport is not None
        if method == "GET" and path.startswith("/health"):
            transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        elif method == "POST" and path.split("?")[0].endswith("/chat/completions"):
            pace = _pace_of(path, self.default)
            stream = self.cache(pace.events)
            loop = asyncio.get_running_loop()
            start = t0 + pace.ttfb_ms / 1000
            for k, frame in enumerate(stream):
                delay = start + k * pace.delay_ms / 1000 - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if transport.is_closing():
                    return
                transport.write((_HEAD if k == 0 else b"") + _chunked(frame))
            transport.write(b"0\r\n\r\n")
        else:
            transport.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
        asyncio.get_running_loop().call_soon(self._next)


async def serve(host: str, port: int, default: Pace, ready: Callable[[int], None]) -> None:
    """Serve until cancelled; ``ready(port)`` once listening."""
    cache: dict[int, list[bytes]] = {}

    def stream(events: int) -> list[bytes]:
        if events not in cache:
            cache[events] = frames(events)
        return cache[events]

    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Conn(default, stream), host, port, backlog=4096)
    ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--delay-ms", type=float, default=5.0)
    parser.add_argument("--ttfb-ms", type=float, default=0.0)
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        print("loopback only", file=sys.stderr)
        return 2
    pace = Pace(args.events, args.delay_ms, args.ttfb_ms)

    def ready(port: int) -> None:
        print(f"PORT {port}", flush=True)

    try:
        import uvloop

        uvloop.run(serve(args.host, args.port, pace, ready))
    except ImportError:
        asyncio.run(serve(args.host, args.port, pace, ready))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
