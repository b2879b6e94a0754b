"""Measured scenarios of ``bench/resume.py``: the deployments (store + broker under one
RunManager, set up and torn down per use), the synthetic events, timing helpers, and parts
(a) replay and (b) translation throughput. See ``bench/resume.py`` for what each part measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from codec_throughput import FAMILIES
from sqlalchemy.ext.asyncio import create_async_engine

from agui_codecs import DECODERS, get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import parse_event
from agui_codecs.sse import encode_data, encode_event
from gateway.broker import Broker, InProcessBroker, RedisStreamsBroker
from gateway.runs import RunManager, RunSettings
from gateway.store import Cursor, RunEvent, SqlRunStore, open_store

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
            {
                "type": "TOOL_CALL_START",
                "toolCallId": call,
                "toolCallName": "lookup",
                "parentMessageId": mid,
            }
        )
        events += [
            {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": f'"k{i}": {i}, ' if i else "{"}
            for i in range(19)
        ]
        events.append({"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": '"end": true}'})
        events.append({"type": "TOOL_CALL_END", "toolCallId": call})
        events.append(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": f"r{k}",
                "toolCallId": call,
                "content": '{"ok": true, "rows": 3}',
            }
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
    base = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
    }
    frames = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        }
    ]
    frames += [
        {**base, "choices": [{"index": 0, "delta": {"content": f"tok{i} "}, "finish_reason": None}]}
        for i in range(deltas)
    ]
    frames.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join([encode_data(orjson.dumps(f)) for f in frames]) + encode_event("[DONE]")


def sse_frame(event: RunEvent, encoder: AguiEncoder) -> bytes:
    """What the runs endpoint sends for one stored event: the encoder's frame of the stored
    wire dict with its cursor (``gateway.encoding.encode_run_events``; no model built)."""
    return encoder.encode_wire(event.event, id=str(event.cursor))


def sse_frame_via_model(event: RunEvent, encoder: AguiEncoder) -> bytes:
    """The same frame through an ``ag_ui.core`` model (``parse_event`` then ``encode``): the
    durable path before the encoder contract, kept as an anchor."""
    return encoder.encode(parse_event(event.event), id=str(event.cursor))


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
    replay_sse_model: float
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

    async def replay(
        after: Cursor | None = None, encode: Callable[[RunEvent], bytes] | None = None
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
        "model": (lambda: replay(encode=lambda e: sse_frame_via_model(e, encoder)), n),
        "half": (lambda: replay(after=half), n - n // 2),
        "pages": (pages, n),
    }
    await replay(
        encode=lambda e: sse_frame(e, encoder)
    )  # warm-up: caches, connections, first page plans
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
    assert sizes["sse"] == sizes["model"], "framing via a model must give the same bytes"
    t_replay, t_sse, t_model, t_half, t_pages = (
        times[k] for k in ("replay", "sse", "model", "half", "pages")
    )
    size = sizes["sse"]
    return ReplayResult(write, t_replay, min(first), t_sse, t_model, t_half, t_pages, size)


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
