"""Durable runs: replay to a reconnecting client, and translation throughput with the run store
on vs. off, against anchors measured in the same run.

(a) **Replay.** A run of ``--events`` (10,000) AG-UI events (text deltas, tool calls with
    streamed arguments and results) is pumped through :class:`gateway.runs.RunManager` into
    each deployment (SQLite / PostgreSQL store x in-process / Redis Streams broker). Then a
    client "reconnects": ``RunManager.reader`` from the start to the terminal event, alone and
    with the SSE encoding the runs endpoint sends (``id:`` / ``event:`` / ``data:``). Anchors:
    ``store.read_events`` paging through the same rows (the store's own floor, no reader), and
    SSE-encoding the same events already in memory (no store at all).

(b) **Translation throughput, store off vs. on.** Every corpus file of every decoder family
    (``bench/codec_throughput.py``'s corpus), plus one long synthetic OpenAI Chat stream, is
    translated to AG-UI SSE twice: *direct* (decode -> ``AguiEncoder``, the plain streaming
    endpoints) and *durable* (decode -> ``RunPump`` -> store + broker -> a reader attached
    from the start -> ``AguiEncoder`` with ids), same events, same decoder; printed side by
    side as events/s and the ratio durable / direct.

(c) **Live latency.** An upstream that delivers the same kind of run in small bursts (1-4
    events at once, as network chunks decode, one burst every ``--pace`` ms on a fixed
    schedule) is pumped while a reader is attached; per event, the time from its burst's
    arrival to the reader receiving it (p50 / p99 / max), deltas and control events apart (a
    control event waits for its write; so does whatever arrives while a write is under way).

PostgreSQL tables live in a fresh schema and Redis keys under a fresh prefix, both removed at
the end; a service that cannot be reached is reported and its deployments are skipped.

Run: ``python bench/resume.py [--events 10000] [--repeat 3] [--only replay|translation|latency]
[--pg URL] [--redis URL]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from agui_codecs.encoders.agui import AguiEncoder
from gateway.runs import RunSettings
from gateway.store import Cursor, RunEvent, RunStoreError

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the codec bench's corpus + families
from codec_throughput import CORPUS
from resume_latency import LatencyResult, bench_latency, percentiles
from resume_scenarios import (
    ReplayResult,
    Source,
    Totals,
    bench_replay,
    bench_translation,
    best_sync,
    cell,
    corpus_sources,
    deployment,
    openai_chat_stream,
    reachable,
    sse_frame,
    sse_frame_via_model,
    synthetic_run,
)

PG_URL = os.environ.get(
    "GATEWAY_TEST_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("GATEWAY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
DEPLOYMENTS = (
    ("sqlite", "memory"),
    ("sqlite", "redis"),
    ("postgresql", "memory"),
    ("postgresql", "redis"),
)

# -- (c) live latency --------------------------------------------------------------------------------


async def report_latency(
    args: argparse.Namespace, usable: list[tuple[str, str]], tmp: Path
) -> None:
    """(c): live latency in every usable deployment."""
    n = min(args.events, 2000)
    results: dict[str, LatencyResult] = {}
    for store_kind, broker_kind in usable:
        async with deployment(
            store_kind, broker_kind, workdir=tmp, pg_url=args.pg, redis_url=args.redis
        ) as dep:
            await bench_latency(dep, 200, args.pace / 1000)  # warm-up
            best: LatencyResult | None = None
            for _ in range(args.repeat):
                result = await bench_latency(dep, n, args.pace / 1000)
                if (
                    best is None
                    or sorted(result.deltas)[len(result.deltas) // 2]
                    < sorted(best.deltas)[len(best.deltas) // 2]
                ):
                    best = result
            assert best is not None
            results[dep.name] = best
    names = [f"{s}+{b}" for s, b in DEPLOYMENTS]
    width = 26
    print(
        f"(c) live latency, upstream arrival -> reader receive, ms p50 / p99 / max ({n:,} "
        f"events in bursts of 1-4 arriving every {args.pace:g} ms; run with the lowest delta "
        f"p50 of {args.repeat})"
    )
    print(f"{'':40}" + "".join(f"{name:>{width}}" for name in names))
    for label, get in (
        ("deltas (published before written)", lambda r: r.deltas),
        ("control events (written, then published)", lambda r: r.controls),
    ):
        cells = [percentiles(get(results[m])) if m in results else "skipped" for m in names]
        print(f"{label:40}" + "".join(f"{c:>{width}}" for c in cells))
    print()


# -- main -----------------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    """Run the parts chosen by ``--only`` and print their tables; 1 on a mismatch."""
    logging.basicConfig(level=logging.ERROR)
    status = await reachable(args.pg, args.redis)
    for service in ("postgresql", "redis"):
        if status[service]:
            print(f"{service} unreachable, its deployments are skipped: {status[service]}")
    usable = [(s, b) for s, b in DEPLOYMENTS if not status[s] and not status[b]]
    settings = RunSettings()
    print(
        f"Python {sys.version.split()[0]}, asyncio loop; best of {args.repeat}; "
        f"RunSettings defaults (batch {settings.batch_max_events} events / "
        f"{settings.batch_interval * 1000:.0f} ms, read page {settings.read_page_size})"
    )
    print()
    rc = 0
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as tmp:
        if args.only in (None, "replay"):
            await report_replay(args, usable, Path(tmp))
        if args.only in (None, "translation"):
            rc = await report_translation(args, usable, Path(tmp))
        if args.only in (None, "latency"):
            await report_latency(args, usable, Path(tmp))
    return rc


async def report_replay(args: argparse.Namespace, usable: list[tuple[str, str]], tmp: Path) -> None:
    """(a): replay of one stored run in every usable deployment, with its anchors."""
    n = args.events
    results: dict[str, ReplayResult] = {}
    for store_kind, broker_kind in usable:
        async with deployment(
            store_kind, broker_kind, workdir=tmp, pg_url=args.pg, redis_url=args.redis
        ) as dep:
            results[dep.name] = await bench_replay(dep, n, args.repeat)

    wire = synthetic_run(n, "t", "r")
    stored = [RunEvent(Cursor(1, i + 1), e) for i, e in enumerate(wire)]
    encoder = AguiEncoder(event_lines=True)
    t_encode, _ = best_sync(lambda: [sse_frame(e, encoder) for e in stored], args.repeat)
    t_frame, framed = best_sync(
        lambda: [sse_frame_via_model(e, encoder) for e in stored], args.repeat
    )
    differ = sum(
        a != b for a, b in zip(framed, [sse_frame(e, encoder) for e in stored], strict=True)
    )

    names = [f"{s}+{b}" for s, b in DEPLOYMENTS]
    width = 26
    print(
        f"(a) replay of one stored {n:,}-event run to a reconnecting client "
        f"(RunManager.reader from the start to RUN_FINISHED)"
    )
    print(f"{'':40}" + "".join(f"{name:>{width}}" for name in names))

    def row(label: str, get: Callable[[ReplayResult], float], count: int = n) -> None:
        cells = [cell(get(results[m]), count) if m in results else "skipped" for m in names]
        print(f"{label:40}" + "".join(f"{c:>{width}}" for c in cells))

    def ratio_row(label: str, get: Callable[[ReplayResult], float]) -> None:
        cells = [f"{get(results[m]):.2f}" if m in results else "-" for m in names]
        print(f"{label:40}" + "".join(f"{c:>{width}}" for c in cells))

    row("pump into store (write, for reference)", lambda r: r.write)
    row("replay: reader, start to end", lambda r: r.replay)
    row("replay + SSE (encode_wire, id, event)", lambda r: r.replay_sse)
    row("replay + SSE via a model per event", lambda r: r.replay_sse_model)
    row(f"resume after event {n // 2:,} (reader)", lambda r: r.resume_half, n - n // 2)
    row("anchor: store.read_events pages", lambda r: r.store_pages)
    print(
        f"{'first event after reconnect':40}"
        + "".join(
            f"{(f'{results[m].first_event * 1000:.2f} ms' if m in results else 'skipped'):>{width}}"
            for m in names
        )
    )
    print(
        f"{'anchor: SSE encode alone, no store':40}{cell(t_encode, n):>{width}}"
        f"   (encode_wire of the same wire dicts in memory)"
    )
    print(
        f"{'anchor: via a model alone':40}{cell(t_frame, n):>{width}}"
        f"   (parse_event + encode of the same dicts: the former path)"
    )
    ratio_row("ratio reader / store pages", lambda r: r.replay / r.store_pages)
    ratio_row("ratio replay+SSE / SSE alone", lambda r: r.replay_sse / t_encode)
    ratio_row("ratio replay+model / model alone", lambda r: r.replay_sse_model / t_frame)
    any_result = next(iter(results.values()), None)
    if any_result:
        print(
            f"SSE bytes sent for the whole run: {any_result.bytes_sse:,}; frames of the stored"
            f" dicts equal those via a model: {'all' if not differ else f'{differ} differ'}"
        )
    print()


async def report_translation(
    args: argparse.Namespace, usable: list[tuple[str, str]], tmp: Path
) -> int:
    """(b): translation store off vs on over the corpus and one long stream; 1 on mismatch."""
    n = args.events
    sources = corpus_sources(args.corpus) if args.corpus.is_dir() else []
    if not sources:
        print(f"(b) skipped: no corpus at {args.corpus}")
    long_run = Source(
        f"synthetic openai-chat, {n:,} deltas", "long run", "openai-chat", openai_chat_stream(n)
    )
    async with contextlib.AsyncExitStack() as stack:
        deps = {}
        for s, b in usable:
            dep = await stack.enter_async_context(
                deployment(s, b, workdir=tmp, pg_url=args.pg, redis_url=args.redis)
            )
            deps[dep.name] = dep
        totals, problems = await bench_translation(deps, [*sources, long_run], args.repeat)

    dep_names = [f"{s}+{b}" for s, b in DEPLOYMENTS]
    corpus_total = Totals()
    for family, t in totals.items():
        if family != "long run":
            corpus_total.files += t.files
            corpus_total.runs += t.runs
            corpus_total.events += t.events
            corpus_total.direct += t.direct
            for name, v in t.durable.items():
                corpus_total.durable[name] = corpus_total.durable.get(name, 0.0) + v
    rows = [(f, t) for f, t in totals.items() if f != "long run"]
    rows.append(("ALL corpus", corpus_total))
    if "long run" in totals:
        rows.append(("long run", totals["long run"]))

    print("(b) translation throughput to AG-UI SSE, store off vs on, same decoded events:")
    print("    direct  = decode -> AguiEncoder (the plain streaming endpoints)")
    print("    durable = decode -> RunPump -> store + broker -> reader attached from the start")
    print("              -> AguiEncoder with id/event lines (one durable run per run recorded)")
    print("    events/s over all files of the row; ratio = durable / direct")
    head = f"{'family':17} {'files':>5} {'runs':>5} {'events':>7} {'direct':>9}"
    head += "".join(f" {name:>17} {'ratio':>6}" for name in dep_names)
    print(head)
    for family, t in rows:
        direct = t.events / t.direct
        line = f"{family:17} {t.files:5d} {t.runs:5d} {t.events:7d} {direct:9.0f}"
        for name in dep_names:
            if name in t.durable:
                rate = t.events / t.durable[name]
                line += f" {rate:17.0f} {rate / direct:6.3f}"
            else:
                line += f" {'skipped':>17} {'-':>6}"
        print(line)
    print()
    print("    the same, as wall time per durable run (ms): the fixed cost of a durable run is")
    print("    create_run, the write-ahead of control events and the reader's subscribe + replay")
    head = f"{'family':17} {'direct':>9}" + "".join(f" {name:>17}" for name in dep_names)
    print(head)
    for family, t in rows:
        line = f"{family:17} {t.direct / t.runs * 1000:9.2f}"
        for name in dep_names:
            value = t.durable.get(name)
            line += f" {value / t.runs * 1000:17.2f}" if value else f" {'skipped':>17}"
        print(line)
    print(f"long run = one {long_run.label} stream.")
    if problems:
        print("MISMATCHES:")
        for p in problems:
            print("  " + p)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["replay", "translation", "latency"], help="run one part")
    parser.add_argument("--pace", type=float, default=2.0, help="(c): ms between upstream bursts")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--pg", default=PG_URL, help="PostgreSQL URL (a schema is created)")
    parser.add_argument("--redis", default=REDIS_URL, help="Redis URL (a key prefix is used)")
    args = parser.parse_args()
    try:
        return asyncio.run(run(args))
    except RunStoreError as exc:
        print(f"store error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
