"""Open streams held by one gateway process: how many open, RSS per stream, CPU while idle.

N clients each POST ``/v1/agui/<--route>`` (``slow``: the mock upstream sends a delta every 5 s,
so the streams sit nearly idle, though N = 10,000 of them still make 2,000 deltas a second;
``idle``: every 60 s, 167 a second at N = 10,000), at most ``--connect-concurrency`` opening at once; a stream counts as open at its
first byte of body. They are held for ``--hold`` seconds, then closed. Reported: opened, still
alive at the end of the hold, errors by kind; the gateway's CPU per opened stream during the
opening burst (ms; less sensitive to other load than its wall time); the gateway's RSS before, with all streams open
and per open stream; the gateway's CPU during the hold (% of one core: near 0 is the goal
for idle streams); the same for the mock (the anchor: a bare asyncio server holding the same
streams). A fresh gateway process per run (RSS "before" is its footprint at rest). Each stream
that ends during the hold is listed with how it ended (``ended_how``: when, the transport's
exception, the terminal chunk, its last event's type and code; the first five are printed with
the gateway's log path, all go to ``--json``). The gateway needs two descriptors per stream:
under a hard ``RLIMIT_NOFILE`` below 2 n + 256, ``serve`` answers the excess ``503`` (counted
in errors).

``--history N`` puts N earlier messages (alternating user / assistant, 228 characters each,
about 0.3 KiB of JSON apiece) before each request's user message: a long conversation, which
every stream of a real chat carries and the default one-message request does not. Each request
opens a thread of its own, so the store records the whole history for every stream (a
conversation's later requests record only their new messages).

Run: ``python bench/open_streams.py -n 1000 --hold 15 [--store sqlite|off|postgres]
[--variant NAME:key=value,...]`` (variants as in ``bench/added_latency.py``). ``--json PATH``
keeps the figures; ``--tracemalloc PATH`` runs the gateway under ``tracemalloc`` and writes its
live allocations by source line with the streams open (``PATH.<variant>``; the RSS figures are
then inflated by tracemalloc's own bookkeeping). ``--idle-profile PATH`` (``server=serve``
variants): a cProfile of the gateway during the hold only, written to ``PATH.<variant>``;
``--open-profile PATH`` the same of the opening burst only (one of the two).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import resource
import signal
import sys
import time
import uuid

from added_latency import Variant, start_gateway
from sse_probe import Child, loadavg, post, run

_TAIL = 8192

_LINE = "A line of an earlier turn of the conversation, as long as a short paragraph. " * 3
"""Each ``--history`` message's content (228 characters)."""


def ended_how(h: _Holder, t0: float) -> dict[str, object]:
    """How one held stream ended: when (s from the burst's start), the exception its transport
    reported, whether the body's last chunk was the terminal ``0`` chunk, its last SSE event's
    ``type`` and ``code`` (a ``RUN_ERROR``'s) and its first 400 characters."""
    events = [e for e in h.tail.split(b"\n\n") if b"data:" in e]
    last = events[-1].split(b"data:", 1)[1].strip().decode(errors="replace") if events else ""
    try:
        parsed = json.loads(last)
    except ValueError:
        parsed = {}
    return {
        "opened_s": round(h.t_open - t0, 2),
        "ended_s": round(h.t_end - t0, 2),
        "exc": h.exc,
        "terminal_chunk": h.tail.endswith(b"0\r\n\r\n"),
        "events": h.events,
        "last_type": parsed.get("type") if isinstance(parsed, dict) else None,
        "last_code": parsed.get("code") if isinstance(parsed, dict) else None,
        "last_event": last[:400],
    }


def ended_kinds(ended: list[dict[str, object]]) -> dict[str, int]:
    """The ended streams counted by (exception, terminal chunk, last event's type and code)."""
    kinds: collections.Counter[str] = collections.Counter()
    for e in ended:
        what = f"{e['last_type']} {e['last_code'] or ''}".strip()
        kinds[f"{e['exc']} | terminal={e['terminal_chunk']} | {what}"] += 1
    return dict(kinds)


class _Holder(asyncio.Protocol):
    def __init__(self, opened: asyncio.Future[None]) -> None:
        self.opened = opened
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.alive = True
        self.events = 0
        self.tail = b""  # the last bytes received (how an ended stream ended)
        self.t_open = 0.0
        self.t_end = 0.0
        self.exc: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if not self.opened.done():
            self.buf += data
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                status = self.buf[:end].split(b" ", 2)[1]
                if status != b"200":
                    self.opened.set_exception(RuntimeError(f"HTTP {status.decode()}"))
                elif len(self.buf) > end + 4:
                    self.opened.set_result(None)
        self.events += data.count(b"\n\n")
        self.tail = (self.tail + data)[-_TAIL:]

    def connection_lost(self, exc: Exception | None) -> None:
        self.alive = False
        self.t_end = time.monotonic()
        self.exc = None if exc is None else f"{type(exc).__name__}: {exc}"
        if not self.opened.done():
            self.opened.set_exception(RuntimeError("closed before the first byte"))


async def hold(
    port: int,
    path: str,
    n: int,
    hold_s: float,
    conc: int,
    gw: Child,
    mock: Child,
    open_timeout: float,
    trace: bool = False,
    idle_profile: bool = False,
    open_profile: bool = False,
    history_messages: int = 0,
) -> dict[str, object]:
    loop = asyncio.get_running_loop()
    history = [
        {"id": f"h{k}", "role": "user" if k % 2 == 0 else "assistant", "content": _LINE}
        for k in range(history_messages)
    ]
    holders: list[_Holder] = []
    errors: collections.Counter[str] = collections.Counter()
    gate = asyncio.Semaphore(conc)
    rss0 = gw.rss_bytes()
    cpu_open = gw.cpu_seconds()
    t0 = time.monotonic()

    async def one() -> None:
        async with gate:
            opened: asyncio.Future[None] = loop.create_future()
            try:
                _, proto = await loop.create_connection(lambda: _Holder(opened), "127.0.0.1", port)
            except OSError as exc:
                errors[type(exc).__name__] += 1
                return
            assert proto.transport is not None
            ids = uuid.uuid4().hex
            body = json.dumps(
                {
                    "threadId": f"t{ids}",
                    "runId": f"r{ids}",
                    "messages": [*history, {"id": "m1", "role": "user", "content": "hi"}],
                    "tools": [],
                    "context": [],
                    "state": None,
                    "forwardedProps": {},
                }
            ).encode()
            proto.transport.write(post(path, body))
            try:
                await asyncio.wait_for(opened, open_timeout)
            except (TimeoutError, RuntimeError) as exc:
                errors[str(exc) or type(exc).__name__] += 1
                proto.transport.close()
                return
            proto.t_open = time.monotonic()
            holders.append(proto)

    if open_profile:
        os.kill(gw.pid, signal.SIGUSR2)  # start
    await asyncio.gather(*(one() for _ in range(n)))
    open_s = time.monotonic() - t0
    cpu_open = gw.cpu_seconds() - cpu_open
    if open_profile:
        os.kill(gw.pid, signal.SIGUSR2)  # stop and write
    opened = len(holders)
    await asyncio.sleep(1.0)  # let the opening burst settle before measuring idle CPU
    rss_open = gw.rss_bytes()
    if idle_profile:
        os.kill(gw.pid, signal.SIGUSR2)  # start (the figures below include its overhead)
    cpu_gw, cpu_mock = gw.cpu_seconds(), mock.cpu_seconds()
    await asyncio.sleep(hold_s)
    cpu_gw, cpu_mock = gw.cpu_seconds() - cpu_gw, mock.cpu_seconds() - cpu_mock
    if idle_profile:
        os.kill(gw.pid, signal.SIGUSR2)  # stop and write
    alive = sum(h.alive for h in holders)
    ended = [ended_how(h, t0) for h in holders if not h.alive]
    rss_end = gw.rss_bytes()
    if trace:
        os.kill(gw.pid, signal.SIGUSR1)
        await asyncio.sleep(5.0)  # the snapshot is taken while the streams are still open
    for h in holders:
        if h.transport is not None:
            h.transport.close()
    return {
        "n": n,
        "opened": opened,
        "alive_at_end": alive,
        "errors": dict(errors),
        "open_seconds": round(open_s, 2),
        "gateway_cpu_ms_per_open": round(cpu_open * 1000 / max(opened, 1), 2),
        "rss_before_mib": round(rss0 / 2**20, 1),
        "rss_open_mib": round(rss_open / 2**20, 1),
        "rss_end_mib": round(rss_end / 2**20, 1),
        "kib_per_stream": round((rss_open - rss0) / 1024 / max(opened, 1), 1),
        "gateway_cpu_pct_idle": round(cpu_gw / hold_s * 100, 1),
        "mock_cpu_pct_idle": round(cpu_mock / hold_s * 100, 1),
        "loadavg_end": loadavg(),
        "ended": ended,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--connect-concurrency", type=int, default=200)
    parser.add_argument("--open-timeout", type=float, default=60.0)
    parser.add_argument("--store", default="sqlite", choices=("off", "sqlite", "postgres"))
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--route", default="slow", choices=("slow", "idle"))
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="earlier messages in each request (a long conversation: about 0.3 KiB each)",
    )
    parser.add_argument("--json", default=None, help="write the figures here")
    parser.add_argument("--tracemalloc", default=None, help="see the docstring")
    parser.add_argument("--idle-profile", default=None, help="see the docstring")
    parser.add_argument("--open-profile", default=None, help="see the docstring")
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.n + 64 > hard:
        print(f"RLIMIT_NOFILE {hard} < n + 64: n cut to {hard - 64}", file=sys.stderr)
        args.n = hard - 64
    variants = [Variant.parse(v) for v in args.variant] or [Variant("gateway")]
    print(f"loadavg before: {loadavg()}", flush=True)
    results = []
    with Child("mock_upstream.py") as mock:
        for v in variants:
            if args.tracemalloc:
                v.env["BENCH_TRACEMALLOC"] = f"{args.tracemalloc}.{v.name}"
            if args.idle_profile or args.open_profile:
                path = args.idle_profile or args.open_profile
                v.env["BENCH_IDLE_PROFILE"] = f"{path}.{v.name}"
            with start_gateway(v, args.store, mock.port, args.pg, args.redis) as gw:
                time.sleep(0.5)
                result = run(
                    hold(
                        gw.port,
                        f"/v1/agui/{args.route}",
                        args.n,
                        args.hold,
                        args.connect_concurrency,
                        gw,
                        mock,
                        args.open_timeout,
                        bool(args.tracemalloc),
                        bool(args.idle_profile),
                        bool(args.open_profile),
                        args.history,
                    )
                )
            ended = result.pop("ended")
            print(f"{v.name} {args.store}: {json.dumps(result)}", flush=True)
            if ended:
                print(f"  ended during the hold, by kind: {json.dumps(ended_kinds(ended))}")
                for e in ended[:5]:
                    print(f"  e.g. {json.dumps(e)}")
                print(f"  the gateway's log: {gw.log.name}", flush=True)
            result["ended"] = ended
            results.append(
                {
                    "variant": v.name,
                    "store": args.store,
                    "route": args.route,
                    "history": args.history,
                    **result,
                }
            )
    print(f"loadavg after: {loadavg()}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
