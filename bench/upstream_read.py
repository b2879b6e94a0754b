"""CPU per upstream stream of the gateway's upstream client alone: httpx over
``gateway.upstream_pool.ShardedTransport`` reading the paced mock upstream's responses.

What it isolates: the client side of ``gateway/upstream.py`` without decoding, run core or
server (the pool, the HTTP/1.1 connection, the network backend, httpx's body iteration):
C streams at once, each ``POST``\\ ing to ``bench/mock_upstream.py`` (OpenAI Chat SSE, 50 deltas
``--delay-ms`` apart, each its own chunk) and reading the body with ``aiter_bytes`` as
``Upstream.events`` does. One worker process per block (``--variant NAME:src=DIR`` picks the
checkout it imports, uvloop as ``serve`` runs), blocks alternating the variants (ABAB...); per
block the worker's process CPU over its streams (after one warm-up block on the same
connections); printed: the median over blocks of CPU per stream, body chunks per stream, and
each variant's ratio to the first. The mock runs in its own process and is not counted.

Run: ``python bench/upstream_read.py -c 16 --rounds 6 --variant base:src=../base --variant
now:src=.``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


async def _worker(port: int, concurrency: int, streams: int) -> dict[str, float]:
    import httpx

    from gateway.upstream_pool import ShardedTransport

    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=512)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    body = b'{"model":"gpt-4o-mini","stream":true,"messages":[]}'
    chunks = 0
    size = 0

    async with httpx.AsyncClient(transport=ShardedTransport(limits), limits=limits) as client:

        async def one() -> None:
            nonlocal chunks, size
            request = client.build_request(
                "POST", url, content=body, headers={"content-type": "application/json"}
            )
            response = await client.send(request, stream=True)
            try:
                async for chunk in response.aiter_bytes():
                    chunks += 1
                    size += len(chunk)
            finally:
                await response.aclose()

        async def block(count: int) -> None:
            semaphore = asyncio.Semaphore(concurrency)

            async def guarded() -> None:
                async with semaphore:
                    await one()

            await asyncio.gather(*(guarded() for _ in range(count)))

        await block(concurrency)  # warm-up: connections made, imports done
        chunks = size = 0
        cpu = time.process_time()
        await block(streams)
        cpu = time.process_time() - cpu
    return {"cpu_ms": 1000 * cpu / streams, "chunks": chunks / streams, "bytes": size / streams}


def _run_worker(args: argparse.Namespace) -> int:
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover
        runner = asyncio.run
    result = runner(_worker(args.port, args.concurrency, args.streams))
    print(json.dumps(result))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--concurrency", type=int, default=16)
    parser.add_argument("--streams", type=int, default=0, help="per block (default 8 C)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--delay-ms", type=float, default=5.0)
    parser.add_argument("--variant", action="append", default=[], help="NAME[:src=DIR]")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.streams = args.streams or 8 * args.concurrency
    if args.worker:
        return _run_worker(args)
    variants: list[tuple[str, str]] = []
    for spec in args.variant or ["now"]:
        name, _, rest = spec.partition(":")
        src = rest.removeprefix("src=") if rest else str(HERE.parent)
        variants.append((name, str(Path(src).resolve())))
    print(f"loadavg before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    delay = str(args.delay_ms)
    mock = subprocess.Popen(
        [sys.executable, str(HERE / "mock_upstream.py"), "--port", "0", "--delay-ms", delay],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert mock.stdout is not None
        port = int(mock.stdout.readline().split()[1])
        worker_args = ["-c", str(args.concurrency), "--streams", str(args.streams)]
        results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in variants}
        for round_ in range(args.rounds):
            order = variants if round_ % 2 == 0 else variants[::-1]
            for name, src in order:
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, f"{src}/codecs"])}
                out = subprocess.run(
                    [sys.executable, __file__, "--worker", "--port", str(port), *worker_args],
                    env=env,
                    cwd=src,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        mock.terminate()
        mock.wait()
    first = None
    for name, _ in variants:
        runs = results[name]
        cpu = statistics.median(r["cpu_ms"] for r in runs)
        first = first if first is not None else cpu
        print(
            f"{name:12s} C={args.concurrency:<4d} cpu ms/stream {cpu:6.3f}  x{cpu / first:5.2f}"
            f"  chunks/stream {statistics.median(r['chunks'] for r in runs):5.1f}"
            f"  blocks [{' '.join(format(r['cpu_ms'], '.3f') for r in runs)}]"
        )
    print(f"loadavg after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
