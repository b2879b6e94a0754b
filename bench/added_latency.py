"""Added latency per event: the gateway in front of a paced mock upstream vs. the mock directly.

The method (ai-gateway-bench's, with ABBA blocks): everything on 127.0.0.1; one deterministic
mock upstream (``bench/mock_upstream.py``: OpenAI Chat SSE, 50 text deltas, paced on an absolute
schedule); the direct arm streams from the mock, the gateway arm from the gateway whose route
points at the same mock. For each concurrency C, C closed-loop workers stream back to back in
blocks; round r runs the direct block first when r is even, the gateway block first when r is
odd (ABBA), so both arms see the same machine drift.

Metric. For the k-th content delta of a stream: its arrival time minus the median arrival time
of the k-th delta over the *direct* streams at that C (the *excess*). Per round, Δp99 =
p99(gateway excess) - p99(direct excess); the figure is the **median over rounds of Δp99**
(one stalled round cannot move it). Pooled Δp50 / Δp99 over all rounds are printed beside it.
Before the gateway, the same measurement of direct vs. direct (A/A) gives the noise floor of
the day at each C.

Matrix: ``--wires`` (agui, ai-sdk) x ``--stores`` (off, sqlite, postgres: PostgreSQL + Redis
Streams, skipped when either cannot be reached) x ``-c`` (1, 16, 64; C=64 paced at 20 ms, the
others at 5 ms) x ``--variant``s: each variant is one gateway process per store, so a
before/after pair runs in the same invocation, interleaved point by point. A variant is
``NAME`` or ``NAME:key=value,...`` with keys ``src`` (a checkout whose ``gateway`` and
``codecs`` are imported instead of this one's), ``loop`` / ``http`` (uvicorn's; ``http=guarded``
is the guarded h11 protocol, ``agui-gateway serve``'s with ``GATEWAY_HTTP_PROTOCOL=h11``), ``server`` (``uvicorn``; ``serve``: the server
``agui-gateway serve`` builds, its defaults; ``granian``), and any
``GATEWAY_*`` setting (``GATEWAY_UPSTREAM_MAX_CONNECTIONS=100``), and ``BENCH_PROFILE=PATH`` (a cProfile of
the gateway process, written when it stops).

``--by-delta`` splits each point: a paced upstream starts its clock at the gateway's request,
so whatever delays that request (the run's setup) delays every delta of the stream; the line
under the point gives the first delta's Δ (the start) and the p99 of each delta's excess
beyond its stream's first (what the gateway adds once the stream flows).

Run: ``python bench/added_latency.py`` (quick: agui, off + sqlite, 4 rounds) or ``--full``
(both wires, every store, 8 rounds); ``--json PATH`` keeps every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sse_probe import Child, Connection, Stream, loadavg, post, run

PACE_MS = {1: 5.0, 16: 5.0, 64: 20.0}
"""Pacing per C (ms between deltas); other C values use 5 ms."""

EVENTS = 50
"""Content deltas per stream."""


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) with linear interpolation (numpy's default); nan if empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass
class Variant:
    """One gateway build/configuration under test (see the module docstring)."""

    name: str
    src: str | None = None
    loop: str = "auto"
    http: str = "auto"
    server: str = "uvicorn"
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Variant:
        name, _, rest = text.partition(":")
        variant = cls(name)
        for item in filter(None, rest.split(",")):
            key, _, value = item.partition("=")
            if key == "src":
                variant.src = os.path.abspath(value)
            elif key in ("loop", "http", "server"):
                setattr(variant, key, value)
            elif key.startswith(("GATEWAY_", "BENCH_")):
                variant.env[key] = value
            else:
                raise SystemExit(f"unknown variant key {key!r} in {text!r}")
        return variant


def start_gateway(variant: Variant, store: str, mock_port: int, pg: str, redis: str) -> Child:
    """A gateway process for ``variant`` over ``store`` with routes ``p5``/``p20`` (5 / 20 ms
    pacing) and ``slow`` into the mock."""
    base = f"http://127.0.0.1:{mock_port}"
    env = dict(variant.env)
    if variant.src is not None:
        env["PYTHONPATH"] = os.pathsep.join([variant.src, os.path.join(variant.src, "codecs")])
    args = ["--upstream", base, "--store", "postgres" if store == "postgres" else store]
    args += ["--loop", variant.loop, "--http", variant.http, "--server", variant.server]
    args += ["--pg", pg]
    if store == "postgres":
        args += ["--redis", redis]
    return Child("gateway_proc.py", *args, env=env)


def body_for(wire: str) -> Callable[[], bytes]:
    """A fresh request body per call (a new thread and run id: a durable gateway never replays
    an old run)."""
    if wire == "openai":
        fixed = json.dumps(
            {
                "model": "gpt-4o-mini",
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            }
        ).encode()
        return lambda: fixed
    if wire == "agui":

        def agui() -> bytes:
            ids = uuid.uuid4().hex
            return json.dumps(
                {
                    "threadId": f"t{ids}",
                    "runId": f"r{ids}",
                    "messages": [{"id": "m1", "role": "user", "content": "hi"}],
                    "tools": [],
                    "context": [],
                    "state": None,
                    "forwardedProps": {},
                }
            ).encode()

        return agui

    def ai_sdk() -> bytes:
        ids = uuid.uuid4().hex
        message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        return json.dumps(
            {"id": f"c{ids}", "messages": [message], "trigger": "submit-message"}
        ).encode()

    return ai_sdk


@dataclass
class Arm:
    """One side of a comparison: where it streams from and how its requests look."""

    name: str
    port: int
    path: str
    body: Callable[[], bytes]
    conns: list[Connection] = field(default_factory=list)
    child: Child | None = None

    def pool(self, c: int) -> list[Connection]:
        while len(self.conns) < c:
            self.conns.append(Connection("127.0.0.1", self.port))
        return self.conns[:c]

    def close(self) -> None:
        for conn in self.conns:
            conn.close()
        self.conns.clear()


async def block(arm: Arm, c: int, per_worker: int, stagger_ms: float = 50.0) -> list[Stream]:
    """C workers, ``per_worker`` requests each, back to back; first requests staggered."""
    conns = arm.pool(c)
    out: list[Stream] = []

    async def worker(i: int, conn: Connection) -> None:
        await asyncio.sleep(stagger_ms / 1000 * i / max(c, 1))
        for _ in range(per_worker):
            out.append(await conn.send(post(arm.path, arm.body())))

    await asyncio.gather(*(worker(i, conn) for i, conn in enumerate(conns)))
    return out


@dataclass
class Point:
    """The figures of one (arm B vs. direct) comparison at one C."""

    label: str
    c: int
    pace_ms: float
    streams: int
    errors: int
    d_p50: float
    d_p99: float
    round_median_d_p99: float
    rounds: list[float]
    cpu_ms_per_stream: float | None
    error_kinds: dict[str, int] = field(default_factory=dict)
    first_d_p50: float = float("nan")
    first_d_p99: float = float("nan")
    within_d_p99: float = float("nan")


def _excess(streams: list[Stream], median: dict[int, float]) -> list[float]:
    return [t - median[k] for s in streams for k, t in s.times.items() if k in median]


def _first_excess(streams: list[Stream], median: dict[int, float]) -> list[float]:
    """The first delta's excess of each stream: what the stream's start (the gateway's setup
    before its upstream request, which a paced upstream's clock waits for) adds to every one
    of its deltas."""
    return [s.times[0] - median[0] for s in streams if 0 in s.times and 0 in median]


def _within(streams: list[Stream], median: dict[int, float]) -> list[float]:
    """Each delta's excess beyond its stream's first delta's: what the gateway adds per
    event once the stream flows."""
    return [
        (t - s.times[0]) - (median[k] - median[0])
        for s in streams
        if 0 in s.times and 0 in median
        for k, t in s.times.items()
        if k in median
    ]


def _ok(streams: list[Stream]) -> list[Stream]:
    return [s for s in streams if s.error is None and s.status == 200 and len(s.times) == EVENTS]


async def compare(
    direct: Arm, other: Arm, c: int, rounds: int, per_worker: int, label: str
) -> Point:
    """ABBA rounds of ``direct`` vs. ``other`` at C=c (the module docstring's metric)."""
    await block(direct, c, 1)  # warm-up: connections open, caches warm; discarded
    await block(other, c, 1)
    per_round: list[tuple[list[Stream], list[Stream]]] = []
    cpu = 0.0
    for r in range(rounds):
        order = (direct, other) if r % 2 == 0 else (other, direct)
        got: dict[str, list[Stream]] = {}
        for arm in order:
            before = arm.child.cpu_seconds() if arm.child is not None else 0.0
            got[arm.name] = await block(arm, c, per_worker)
            if arm is other and arm.child is not None:
                cpu += arm.child.cpu_seconds() - before
        per_round.append((got[direct.name], got[other.name]))
    all_direct = [s for d, _ in per_round for s in _ok(d)]
    all_other = [s for _, o in per_round for s in o]
    ok_other = _ok(all_other)
    median = {
        k: statistics.median([s.times[k] for s in all_direct]) for k in range(EVENTS) if all_direct
    }
    d_ex, o_ex = _excess(all_direct, median), _excess(ok_other, median)
    deltas = []
    for d, o in per_round:
        de, oe = _excess(_ok(d), median), _excess(_ok(o), median)
        if de and oe:
            deltas.append((quantile(oe, 0.99) - quantile(de, 0.99)) * 1000)
    return Point(
        label=label,
        c=c,
        pace_ms=PACE_MS.get(c, 5.0),
        streams=len(all_other),
        errors=len(all_other) - len(ok_other),
        d_p50=(quantile(o_ex, 0.5) - quantile(d_ex, 0.5)) * 1000,
        d_p99=(quantile(o_ex, 0.99) - quantile(d_ex, 0.99)) * 1000,
        round_median_d_p99=statistics.median(deltas) if deltas else float("nan"),
        rounds=deltas,
        cpu_ms_per_stream=cpu / len(all_other) * 1000 if other.child and all_other else None,
        error_kinds=_error_kinds([s for s in all_other if s not in ok_other]),
        first_d_p50=_d(_first_excess(ok_other, median), _first_excess(all_direct, median), 0.5),
        first_d_p99=_d(_first_excess(ok_other, median), _first_excess(all_direct, median), 0.99),
        within_d_p99=_d(_within(ok_other, median), _within(all_direct, median), 0.99),
    )


def _d(other: list[float], direct: list[float], q: float) -> float:
    """``q`` quantile of ``other`` less that of ``direct``, in ms."""
    return (quantile(other, q) - quantile(direct, q)) * 1000


def _error_kinds(streams: list[Stream]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for s in streams:
        kind = s.error or (f"HTTP {s.status}" if s.status != 200 else f"{len(s.times)} deltas")
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


async def _reachable(pg: str, redis_url: str) -> str | None:
    """None when PostgreSQL and Redis answer, else why not."""

    async def check() -> None:
        import asyncpg
        import redis.asyncio as aioredis

        conn = await asyncpg.connect(pg.replace("postgresql+asyncpg://", "postgresql://"))
        await conn.close()
        client = aioredis.from_url(redis_url)
        try:
            await client.ping()
        finally:
            await client.aclose()

    try:
        await asyncio.wait_for(check(), 5)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def print_by_delta(p: Point) -> None:
    """``--by-delta``: the point's added latency split into its streams' start (the first
    delta's excess, which every later delta of the stream carries too) and what each delta
    adds beyond its stream's first (within the stream)."""
    print(
        f"{'':34}   first delta Δp50 {p.first_d_p50:+8.2f}  Δp99 {p.first_d_p99:+9.2f}"
        f"  within the stream Δp99 {p.within_d_p99:+9.2f}",
        flush=True,
    )


def print_point(p: Point) -> None:
    cpu = "" if p.cpu_ms_per_stream is None else f"{p.cpu_ms_per_stream:8.1f}"
    rounds = " ".join(f"{x:+.1f}" for x in p.rounds)
    print(
        f"{p.label:34} C={p.c:<3d} {p.pace_ms:4.0f}ms n={p.streams:<4d} err={p.errors:<3d}"
        f" Δp50 {p.d_p50:+8.2f}  Δp99 {p.d_p99:+9.2f}  round-median Δp99 {p.round_median_d_p99:+9.2f}"
        f"  cpu ms/stream {cpu}  [{rounds}]" + (f" errors {p.error_kinds}" if p.errors else ""),
        flush=True,
    )


def per_worker(args: argparse.Namespace, c: int) -> int:
    """Requests per worker per block: ``--per-worker``, else 8 (16 with ``--full``) streams per
    block at least."""
    if args.per_worker:
        return int(args.per_worker)
    return max(1, (16 if args.full else 8) // c)


async def sweep(args: argparse.Namespace, mock: Child, variants: list[Variant]) -> list[Point]:
    points: list[Point] = []

    def path_for(c: int) -> str:
        return f"/delay_ms={PACE_MS.get(c, 5.0):g}/v1/chat/completions"

    # The A/A noise floor first: direct vs. direct at each C.
    for c in args.c:
        a = Arm("direct", mock.port, path_for(c), body_for("openai"))
        b = Arm("direct-b", mock.port, path_for(c), body_for("openai"))
        p = await compare(a, b, c, args.rounds, per_worker(args, c), "A/A direct vs direct")
        a.close()
        b.close()
        print_point(p)
        points.append(p)
    for store in args.stores:
        if store == "postgres":
            why = await _reachable(args.pg, args.redis)
            if why is not None:
                print(f"postgres+redis skipped: {why}", flush=True)
                continue
        gateways = {
            v.name: start_gateway(v, store, mock.port, args.pg, args.redis) for v in variants
        }
        try:
            for wire in args.wires:
                for c in args.c:
                    for v in variants:
                        gw = gateways[v.name]
                        route = "p20" if PACE_MS.get(c, 5.0) == 20 else "p5"
                        prefix = "/v1/agui/" if wire == "agui" else "/v1/ai-sdk/"
                        direct = Arm("direct", mock.port, path_for(c), body_for("openai"))
                        other = Arm(v.name, gw.port, prefix + route, body_for(wire), child=gw)
                        label = f"{v.name} {store} {wire}"
                        p = await compare(direct, other, c, args.rounds, per_worker(args, c), label)
                        direct.close()
                        other.close()
                        print_point(p)
                        if args.by_delta:
                            print_by_delta(p)
                        points.append(p)
        finally:
            for gw in gateways.values():
                gw.stop()
    return points


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="both wires, every store, 8 rounds")
    parser.add_argument("-c", type=lambda s: [int(x) for x in s.split(",")], default=[1, 16, 64])
    parser.add_argument("--wires", type=lambda s: s.split(","), default=None)
    parser.add_argument("--stores", type=lambda s: s.split(","), default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument(
        "--per-worker", type=int, default=None, help="requests per worker per block (8/C, 16/C)"
    )
    parser.add_argument("--variant", action="append", default=[], help="see the docstring")
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--by-delta",
        action="store_true",
        help="also print each point's first-delta and within-stream Δ (the setup's share)",
    )
    args = parser.parse_args()
    args.wires = args.wires or (["agui", "ai-sdk"] if args.full else ["agui"])
    args.stores = args.stores or (["off", "sqlite", "postgres"] if args.full else ["off", "sqlite"])
    args.rounds = args.rounds or (8 if args.full else 4)
    variants = [Variant.parse(v) for v in args.variant] or [Variant("gateway")]
    print(f"loadavg before: {loadavg()}  cpus: {os.cpu_count()}", flush=True)
    started = time.monotonic()
    with Child("mock_upstream.py", "--events", str(EVENTS)) as mock:
        points = run(sweep(args, mock, variants))
    print(f"loadavg after: {loadavg()}  took {time.monotonic() - started:.0f} s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([p.__dict__ for p in points], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
