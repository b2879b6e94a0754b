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
import gc
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from agui_codecs import DECODERS, get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import parse_event
from sqlalchemy.ext.asyncio import create_async_engine

from gateway.broker import Broker, InProcessBroker, RedisStreamsBroker
from gateway.runs import RunManager, RunSettings
from gateway.store import Cursor, RunEvent, RunStoreError, SqlRunStore, open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the codec bench's corpus + families
from codec_throughput import CORPUS, FAMILIES

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

JsonObject = dict[str, Any]


# -- deployments ------------------------------------------------------------------------------


@dataclass
class Deployment:
    """A store + broker pair behind one RunManager (one replica)."""

    name: str
    store: SqlRunStore
    broker: Broker
    manager: RunManager


@contextlib.asynccontextmanager
async def deployment(
    store_kind: str, broker_kind: str, *, workdir: Path, pg_url: str, redis_url: str
) -> AsyncIterator[Deployment]:
    """Open a private store (SQLite file / PostgreSQL schema) and broker (in-process / Redis
    prefix), yield them under a RunManager, then drop everything they created."""
    tag = uuid.uuid4().hex[:12]
    schema = f"bench_{tag}" if store_kind == "postgresql" else None
    url = f"sqlite+aiosqlite:///{workdir}/{tag}.db" if store_kind == "sqlite" else pg_url
    store = await open_store(url, schema=schema)
    broker: Broker
    if broker_kind == "redis":
        broker = RedisStreamsBroker.from_url(redis_url, prefix=f"bench:{tag}:")
        await broker.client.ping()
    else:
        broker = InProcessBroker()
    manager = RunManager(store, broker, settings=RunSettings())
    try:
        yield Deployment(f"{store_kind}+{broker_kind}", store, broker, manager)
    finally:
        await manager.aclose()
        if isinstance(broker, RedisStreamsBroker):
            keys = [k async for k in broker.client.scan_iter(match=f"{broker.prefix}*")]
            if keys:
                await broker.client.delete(*keys)
        await broker.close()
        if schema is not None:
            async with store.engine.begin() as conn:
                await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await store.close()


async def reachable(pg_url: str, redis_url: str) -> dict[str, str | None]:
    """``{"postgresql": reason or None, "redis": reason or None}``."""
    out: dict[str, str | None] = {"sqlite": None, "memory": None}
    engine = create_async_engine(pg_url)
    try:
        async with engine.connect() as conn:
            await conn.execute(sa.text("SELECT 1"))
        out["postgresql"] = None
    except Exception as exc:
        out["postgresql"] = f"{type(exc).__name__}: {exc}"
    finally:
        await engine.dispose()
    broker = RedisStreamsBroker.from_url(redis_url)
    try:
        await broker.client.ping()
        out["redis"] = None
    except Exception as exc:
        out["redis"] = f"{type(exc).__name__}: {exc}"
    finally:
        await broker.close()
    return out


# -- events -------------------------------------------------------------------------------------


def synthetic_run(n: int, thread_id: str, run_id: str) -> list[JsonObject]:
    """Exactly ``n`` legal AG-UI wire events: blocks of one text message (40 deltas) and one
    tool call (20 argument deltas, a result), then a last message filling up to ``n``."""
    if n < 4:
        raise ValueError("a run needs at least 4 events")
    events: list[JsonObject] = [{"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}]
    block = 42 + 23
    k = 0
    while n - 1 - len(events) - block >= 2:
        mid, call = f"m{k}", f"c{k}"
        events.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
        events += [
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": f"token {k}.{i} "}
            for i in range(40)
        ]
        events.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        events.append(
            {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": "lookup",
             "parentMessageId": mid}
        )
        events += [
            {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": f'"k{i}": {i}, ' if i else "{"}
            for i in range(19)
        ]
        events.append({"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": '"end": true}'})
        events.append({"type": "TOOL_CALL_END", "toolCallId": call})
        events.append(
            {"type": "TOOL_CALL_RESULT", "messageId": f"r{k}", "toolCallId": call,
             "content": '{"ok": true, "rows": 3}'}
        )
        k += 1
    rest = n - 1 - len(events)
    mid = f"m{k}"
    events.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
    events += [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": f"token {k}.{i} "}
        for i in range(rest - 2)
    ]
    events.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
    events.append({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id})
    assert len(events) == n
    return events


def openai_chat_stream(deltas: int) -> bytes:
    """A synthetic OpenAI Chat Completions SSE body with ``deltas`` content chunks."""
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
            "model": "bench"}
    frames = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None}]}]
    frames += [
        {**base, "choices": [{"index": 0, "delta": {"content": f"tok{i} "}, "finish_reason": None}]}
        for i in range(deltas)
    ]
    frames.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = b"".join(b"data: " + orjson.dumps(f) + b"\n\n" for f in frames)
    return body + b"data: [DONE]\n\n"


def sse_frame(event: RunEvent, encoder: AguiEncoder) -> bytes:
    """What the runs endpoint sends for one stored event: ``AguiEncoder`` with id and type."""
    return encoder.encode(parse_event(event.event), id=str(event.cursor))


def sse_frame_direct(event: RunEvent) -> bytes:
    """The same frame built from the stored wire dict without re-validating it
    (``RunEvent.sse_frame()`` where the run core has it)."""
    frame = getattr(event, "sse_frame", None)
    if frame is not None:
        return frame()  # type: ignore[no-any-return]
    wire = event.event
    kind: str = wire["type"]
    return (
        b"event: " + kind.encode() + b"\nid: " + str(event.cursor).encode()
        + b"\ndata: " + orjson.dumps(wire) + b"\n\n"
    )


async def listed(events: list[Any]) -> AsyncIterator[Any]:
    """An upstream that yields ``events`` as fast as they are read."""
    for event in events:
        yield event


# -- timing -------------------------------------------------------------------------------------


def best_sync(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def cell(seconds: float | None, n: int) -> str:
    """``"<ms> ms <k events/s>"`` for ``n`` events in ``seconds``."""
    if seconds is None:
        return "skipped"
    return f"{seconds * 1000:8.1f} ms {n / seconds / 1000:7.1f}k/s"


# -- (a) replay -----------------------------------------------------------------------------------


@dataclass
class ReplayResult:
    """Timings (seconds, best of the repeats) of part (a) in one deployment."""

    write: float
    replay: float
    first_event: float
    replay_sse: float
    replay_sse_direct: float
    resume_half: float
    store_pages: float
    bytes_sse: int


async def bench_replay(dep: Deployment, n: int, repeat: int) -> ReplayResult:
    """Pump one ``n``-event run into ``dep``, then time readers over it (see part (a))."""
    manager, store = dep.manager, dep.store
    thread_id, run_id = f"bench-{uuid.uuid4().hex[:8]}", f"run-{uuid.uuid4().hex}"
    events = synthetic_run(n, thread_id, run_id)
    run = await manager.create_run(thread_id=thread_id, run_id=run_id)
    t0 = time.perf_counter()
    outcome = await manager.start(run, listed(events))
    write = time.perf_counter() - t0
    assert outcome.status == "completed", outcome

    first: list[float] = []

    async def replay(after: Cursor | None = None, encode: Callable[[RunEvent], bytes] | None = None
                     ) -> tuple[int, int]:
        start = time.perf_counter()
        count = size = 0
        reader = await manager.reader(run.id, after=after)
        async with contextlib.aclosing(reader) as it:  # type: ignore[type-var]
            async for ev in it:
                if count == 0 and after is None and encode is None:
                    first.append(time.perf_counter() - start)
                count += 1
                if encode is not None:
                    size += len(encode(ev))
        return count, size

    async def pages() -> tuple[int, int]:
        total, after, page_size = 0, None, RunSettings().read_page_size
        while True:
            page = await store.read_events(run.id, after=after, limit=page_size)
            total += len(page)
            if len(page) < page_size:
                return total, 0
            after = page[-1].cursor

    encoder = AguiEncoder(event_lines=True)
    half = Cursor(run.epoch, n // 2)
    variants: dict[str, tuple[Callable[[], Awaitable[tuple[int, int]]], int]] = {
        "replay": (replay, n),
        "sse": (lambda: replay(encode=lambda e: sse_frame(e, encoder)), n),
        "direct": (lambda: replay(encode=sse_frame_direct), n),
        "half": (lambda: replay(after=half), n - n // 2),
        "pages": (pages, n),
    }
    await replay(encode=sse_frame_direct)  # warm-up: caches, connections, first page plans
    times: dict[str, float] = {}
    sizes: dict[str, int] = {}
    for _ in range(repeat):  # rounds interleave the variants, so load bursts hit them alike
        for name, (fn, expected) in variants.items():
            gc.collect()
            t0 = time.perf_counter()
            count, size = await fn()
            elapsed = time.perf_counter() - t0
            assert count == expected, f"{dep.name} {name}: {count} events, expected {expected}"
            times[name] = min(times.get(name, elapsed), elapsed)
            sizes[name] = size
    assert sizes["sse"] == sizes["direct"], "direct framing must give the same bytes"
    t_replay, t_sse, t_direct, t_half, t_pages = (
        times[k] for k in ("replay", "sse", "direct", "half", "pages")
    )
    size = sizes["sse"]
    return ReplayResult(write, t_replay, min(first), t_sse, t_direct, t_half, t_pages, size)


# -- (b) translation ---------------------------------------------------------------------------------


@dataclass
class Source:
    """One upstream recording to translate."""

    label: str
    family: str
    decoder: str
    data: bytes


@dataclass
class Totals:
    """Sums over the files of one row of table (b)."""

    files: int = 0
    runs: int = 0
    events: int = 0
    direct: float = 0.0
    durable: dict[str, float] = field(default_factory=dict)


def corpus_sources(corpus: Path) -> list[Source]:
    sources = []
    for family, name in FAMILIES.items():
        if name not in DECODERS or not (corpus / family).is_dir():
            continue
        for path in sorted((corpus / family).iterdir()):
            if path.is_file():
                sources.append(Source(f"{family}/{path.name}", family, name, path.read_bytes()))
    return sources


def translate_direct(source: Source) -> list[bytes]:
    """decode -> AguiEncoder (the plain streaming endpoints)."""
    decoder = get_decoder(source.decoder, thread_id="t", run_id="r")
    encoder = AguiEncoder()
    out = [encoder.encode(e) for e in decoder.feed(source.data) + decoder.close()]
    out.append(encoder.close())
    return out


def split_runs(events: list[Any]) -> list[list[Any]]:
    """The decoded events cut after each terminal event (a recording may hold several runs,
    e.g. an agent loop's concatenated responses; a durable run ends at its terminal event)."""
    runs: list[list[Any]] = [[]]
    for event in events:
        runs[-1].append(event)
        if event.type.value in ("RUN_FINISHED", "RUN_ERROR"):
            runs.append([])
    return [r for r in runs if r]


async def translate_durable(dep: Deployment, source: Source) -> list[RunEvent]:
    """decode -> pump -> store + broker -> reader (attached from the start) -> AguiEncoder,
    one durable run per run of the recording."""
    manager = dep.manager
    thread_id = f"bench-{uuid.uuid4().hex[:8]}"
    decoder = get_decoder(source.decoder, thread_id=thread_id, run_id="r")
    encoder = AguiEncoder(event_lines=True)
    delivered: list[RunEvent] = []
    for segment in split_runs(decoder.feed(source.data) + decoder.close()):
        run = await manager.create_run(thread_id=thread_id, run_id=f"run-{uuid.uuid4().hex}")
        reader = await manager.reader(run.id)

        async def client(reader: AsyncIterator[RunEvent] = reader) -> None:
            async with contextlib.aclosing(reader) as it:  # type: ignore[type-var]
                async for ev in it:
                    sse_frame(ev, encoder)
                    delivered.append(ev)

        consumer = asyncio.create_task(client())
        await asyncio.sleep(0)  # a head start for the client (its reader is gap-free anyway)
        outcome = await manager.start(run, listed(segment))
        await consumer
        assert outcome.cursor is not None
    return delivered


def same_events(direct: list[Any], durable: list[RunEvent]) -> bool:
    """Same event types in the same order (ids differ: each durable run has its own)."""
    return [e.type.value for e in direct] == [e.type for e in durable]


async def bench_translation(
    deps: dict[str, Deployment], sources: list[Source], repeat: int
) -> tuple[dict[str, Totals], list[str]]:
    """Per family: best times of direct and durable translation of every source, summed;
    and the sources whose durable delivery differs from what was decoded."""
    totals: dict[str, Totals] = {}
    problems: list[str] = []
    for source in sources:
        decoder = get_decoder(source.decoder, thread_id="t", run_id="r")
        events = decoder.feed(source.data) + decoder.close()
        bucket = totals.setdefault(source.family, Totals())
        bucket.files += 1
        bucket.runs += len(split_runs(events))
        bucket.events += len(events)
        best_times: dict[str, float] = {}
        for round_ in range(repeat):  # rounds interleave direct and every deployment
            gc.collect()
            t0 = time.perf_counter()
            translate_direct(source)
            elapsed = time.perf_counter() - t0
            best_times["direct"] = min(best_times.get("direct", elapsed), elapsed)
            for name, dep in deps.items():
                gc.collect()
                t0 = time.perf_counter()
                delivered = await translate_durable(dep, source)
                elapsed = time.perf_counter() - t0
                best_times[name] = min(best_times.get(name, elapsed), elapsed)
                if round_ == 0 and not same_events(events, delivered):
                    problems.append(
                        f"{name} {source.label}: {len(delivered)} events delivered, "
                        f"{len(events)} decoded (types differ)"
                    )
        bucket.direct += best_times.pop("direct")
        for name, t in best_times.items():
            bucket.durable[name] = bucket.durable.get(name, 0.0) + t
    return totals, problems


# -- (c) live latency --------------------------------------------------------------------------------


BATCHED = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CHUNK",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CHUNK",
        "TOOL_CALL_ARGS",
    }
)
"""The event types a pump publishes before they are durable (gateway.runs.BATCHED_TYPES)."""


@dataclass
class LatencyResult:
    """Upstream-yield -> reader-receive latencies (seconds) of one live run."""

    deltas: list[float]
    controls: list[float]


async def bench_latency(dep: Deployment, n: int, pace: float) -> LatencyResult:
    """Pump an ``n``-event run whose upstream delivers bursts of 1-4 events every ``pace``
    seconds, with a reader attached; the latency of every event from its burst's arrival."""
    manager = dep.manager
    thread_id, run_id = f"bench-{uuid.uuid4().hex[:8]}", f"run-{uuid.uuid4().hex}"
    events = synthetic_run(n, thread_id, run_id)
    yielded: list[float] = []

    async def upstream() -> AsyncIterator[JsonObject]:
        # Burst k "arrives" at start + k * pace whether or not the pump is reading: latency
        # counts from then, so time an event waits because its pump is busy (not reading, or
        # holding it until a write ends) is counted either way.
        i = burst = 0
        start = time.perf_counter()
        while i < len(events):
            arrival = start + burst * pace
            delay = arrival - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            size = 1 + burst % 4
            burst += 1
            for event in events[i : i + size]:
                yielded.append(arrival)
                yield event
            i += size

    run = await manager.create_run(thread_id=thread_id, run_id=run_id)
    reader = await manager.reader(run.id)
    received: list[tuple[float, str]] = []

    async def client() -> None:
        async with contextlib.aclosing(reader) as it:  # type: ignore[type-var]
            async for ev in it:
                received.append((time.perf_counter(), ev.type))

    consumer = asyncio.create_task(client())
    await asyncio.sleep(0)
    outcome = await manager.start(run, upstream())
    await consumer
    assert outcome.status == "completed" and len(received) == len(yielded) == n
    deltas, controls = [], []
    for sent, (got, kind) in zip(yielded, received, strict=True):
        (deltas if kind in BATCHED else controls).append(got - sent)
    return LatencyResult(deltas, controls)


def percentiles(values: list[float]) -> str:
    """``p50 / p99 / max`` in ms."""
    ordered = sorted(values)
    if not ordered:
        return "-"

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return f"{at(0.5):.2f} / {at(0.99):.2f} / {ordered[-1] * 1000:.2f}"


async def report_latency(args: argparse.Namespace, usable: list[tuple[str, str]], tmp: Path
                         ) -> None:
    """(c): live latency in every usable deployment."""
    n = min(args.events, 2000)
    results: dict[str, LatencyResult] = {}
    for store_kind, broker_kind in usable:
        async with deployment(store_kind, broker_kind, workdir=tmp, pg_url=args.pg,
                              redis_url=args.redis) as dep:
            await bench_latency(dep, 200, args.pace / 1000)  # warm-up
            best: LatencyResult | None = None
            for _ in range(args.repeat):
                result = await bench_latency(dep, n, args.pace / 1000)
                if best is None or sorted(result.deltas)[len(result.deltas) // 2] < sorted(
                        best.deltas)[len(best.deltas) // 2]:
                    best = result
            assert best is not None
            results[dep.name] = best
    names = [f"{s}+{b}" for s, b in DEPLOYMENTS]
    width = 26
    print(f"(c) live latency, upstream arrival -> reader receive, ms p50 / p99 / max ({n:,} "
          f"events in bursts of 1-4 arriving every {args.pace:g} ms; run with the lowest delta "
          f"p50 of {args.repeat})")
    print(f"{'':40}" + "".join(f"{name:>{width}}" for name in names))
    for label, get in (("deltas (published before written)", lambda r: r.deltas),
                       ("control events (written, then published)", lambda r: r.controls)):
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
    print(f"Python {sys.version.split()[0]}, asyncio loop; best of {args.repeat}; "
          f"RunSettings defaults (batch {settings.batch_max_events} events / "
          f"{settings.batch_interval * 1000:.0f} ms, read page {settings.read_page_size})")
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


async def report_replay(args: argparse.Namespace, usable: list[tuple[str, str]], tmp: Path
                        ) -> None:
    """(a): replay of one stored run in every usable deployment, with its anchors."""
    n = args.events
    results: dict[str, ReplayResult] = {}
    for store_kind, broker_kind in usable:
        async with deployment(store_kind, broker_kind, workdir=tmp, pg_url=args.pg,
                              redis_url=args.redis) as dep:
            results[dep.name] = await bench_replay(dep, n, args.repeat)

    wire = synthetic_run(n, "t", "r")
    stored = [RunEvent(Cursor(1, i + 1), e) for i, e in enumerate(wire)]
    encoder = AguiEncoder(event_lines=True)
    t_encode, _ = best_sync(lambda: [sse_frame(e, encoder) for e in stored], args.repeat)
    t_frame, framed = best_sync(lambda: [sse_frame_direct(e) for e in stored], args.repeat)
    differ = sum(a != b for a, b in zip(framed, [sse_frame(e, encoder) for e in stored],
                                        strict=True))

    names = [f"{s}+{b}" for s, b in DEPLOYMENTS]
    width = 26
    print(f"(a) replay of one stored {n:,}-event run to a reconnecting client "
          f"(RunManager.reader from the start to RUN_FINISHED)")
    print(f"{'':40}" + "".join(f"{name:>{width}}" for name in names))

    def row(label: str, get: Callable[[ReplayResult], float], count: int = n) -> None:
        cells = [cell(get(results[m]), count) if m in results else "skipped" for m in names]
        print(f"{label:40}" + "".join(f"{c:>{width}}" for c in cells))

    def ratio_row(label: str, get: Callable[[ReplayResult], float]) -> None:
        cells = [f"{get(results[m]):.2f}" if m in results else "-" for m in names]
        print(f"{label:40}" + "".join(f"{c:>{width}}" for c in cells))

    row("pump into store (write, for reference)", lambda r: r.write)
    row("replay: reader, start to end", lambda r: r.replay)
    row("replay + SSE (AguiEncoder, id, event)", lambda r: r.replay_sse)
    row("replay + SSE (frame from stored dict)", lambda r: r.replay_sse_direct)
    row(f"resume after event {n // 2:,} (reader)", lambda r: r.resume_half, n - n // 2)
    row("anchor: store.read_events pages", lambda r: r.store_pages)
    print(f"{'first event after reconnect':40}" + "".join(
        f"{(f'{results[m].first_event * 1000:.2f} ms' if m in results else 'skipped'):>{width}}"
        for m in names))
    print(f"{'anchor: SSE encode alone, no store':40}{cell(t_encode, n):>{width}}"
          f"   (AguiEncoder of the same events in memory)")
    print(f"{'anchor: frame from dict alone':40}{cell(t_frame, n):>{width}}"
          f"   (the same frames built from the wire dicts)")
    ratio_row("ratio reader / store pages", lambda r: r.replay / r.store_pages)
    ratio_row("ratio replay+SSE / SSE alone", lambda r: r.replay_sse / t_encode)
    ratio_row("ratio replay+frame / frame alone", lambda r: r.replay_sse_direct / t_frame)
    any_result = next(iter(results.values()), None)
    if any_result:
        print(f"SSE bytes sent for the whole run: {any_result.bytes_sse:,}; frames built from the"
              f" stored dicts equal AguiEncoder's: {'all' if not differ else f'{differ} differ'}")
    print()


async def report_translation(args: argparse.Namespace, usable: list[tuple[str, str]], tmp: Path
                             ) -> int:
    """(b): translation store off vs on over the corpus and one long stream; 1 on mismatch."""
    n = args.events
    sources = corpus_sources(args.corpus) if args.corpus.is_dir() else []
    if not sources:
        print(f"(b) skipped: no corpus at {args.corpus}")
    long_run = Source(f"synthetic openai-chat, {n:,} deltas", "long run", "openai-chat",
                      openai_chat_stream(n))
    async with contextlib.AsyncExitStack() as stack:
        deps = {}
        for s, b in usable:
            dep = await stack.enter_async_context(
                deployment(s, b, workdir=tmp, pg_url=args.pg, redis_url=args.redis))
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
    parser.add_argument("--only", choices=["replay", "translation", "latency"],
                        help="run one part")
    parser.add_argument("--pace", type=float, default=2.0,
                        help="(c): ms between upstream bursts")
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
