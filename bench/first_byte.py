"""Time to a durable run's first event: POST ``/v1/agui/slow`` to the first SSE event of its body.

Issue 13 item 2: creating the run and subscribing its reader must not delay the first byte;
RUN_STARTED is announced before the upstream is read, so this is the cost of recording the run
(its row and RUN_STARTED, written before it is published) and of opening the reader. The
upstream (``bench/mock_upstream.py``, route ``slow``: a delta every 5 s) plays no part.

Each ``--variant`` (as in ``bench/added_latency.py``: ``NAME:src=PATH,GATEWAY_X=...``) is one
gateway process over ``--store``; C closed-loop workers each open ``--per-worker`` streams one
after the other, closing each at its first event (``GATEWAY_ON_DISCONNECT=cancel`` unless the
variant sets it, so closed runs end instead of piling up); rounds alternate the variants' order
(ABBA).
Reported per variant and C: median, p90 and p99 milliseconds to the first event, and the
gateway's CPU milliseconds per stream opened.

Run: ``python bench/first_byte.py -c 1,16 --variant base:src=../main --variant new``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from added_latency import Variant, body_for, quantile, start_gateway
from sse_probe import Child, loadavg, post, run


async def first_event(port: int, body: bytes) -> float:
    """Seconds from the request's write to the end of its first SSE event."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    loop = asyncio.get_running_loop()
    try:
        t0 = loop.time()
        writer.write(post("/v1/agui/slow", body))
        await reader.readuntil(b"\r\n\r\n")
        buf = b""
        while b"\n\n" not in buf:
            chunk = await reader.read(65536)
            if not chunk:
                raise RuntimeError("closed before the first event")
            buf += chunk
        return loop.time() - t0
    finally:
        writer.close()


async def block(port: int, c: int, per_worker: int) -> list[float]:
    make = body_for("agui")
    out: list[float] = []

    async def worker() -> None:
        for _ in range(per_worker):
            out.append(await first_event(port, make()))

    await asyncio.gather(*(worker() for _ in range(c)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", default="1,16")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--per-worker", type=int, default=0, help="default 32/C, at least 2")
    parser.add_argument("--store", default="sqlite", choices=("sqlite", "postgres"))
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    variants = [Variant.parse(v) for v in args.variant] or [Variant("gateway")]
    for variant in variants:  # a closed stream cancels its run: no idle runs pile up
        variant.env.setdefault("GATEWAY_ON_DISCONNECT", "cancel")
    print(f"loadavg before: {loadavg()}  cpus: {os.cpu_count()}", flush=True)
    with Child("mock_upstream.py") as mock:
        gateways: dict[str, Child] = {
            v.name: start_gateway(v, args.store, mock.port, args.pg, args.redis) for v in variants
        }
        try:
            for c in (int(x) for x in args.c.split(",")):
                per = args.per_worker or max(2, 32 // c)
                times: dict[str, list[float]] = {v.name: [] for v in variants}
                cpu: dict[str, float] = {v.name: 0.0 for v in variants}
                for gw in gateways.values():  # warm-up: imports, first connections
                    run(block(gw.port, 1, 2))
                for r in range(args.rounds):
                    order = list(gateways.items())
                    for name, gw in order if r % 2 == 0 else reversed(order):
                        before = gw.cpu_seconds()
                        times[name] += run(block(gw.port, c, per))
                        cpu[name] += gw.cpu_seconds() - before
                for name, got in times.items():
                    ms = [t * 1000 for t in got]
                    print(
                        f"C={c:<3} {name:<10} first event p50 {statistics.median(ms):7.1f} ms"
                        f"  p90 {quantile(ms, 0.9):7.1f}  p99 {quantile(ms, 0.99):7.1f}"
                        f"  cpu {cpu[name] / len(ms) * 1000:6.1f} ms/stream  (n={len(ms)})",
                        flush=True,
                    )
        finally:
            for gw in gateways.values():
                gw.stop()
    print(f"loadavg after: {loadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
