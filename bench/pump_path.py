"""CPU per durable stream of the run core alone: pump -> writer -> store + broker -> reader ->
encoder, in one process, no HTTP.

What ``bench/added_latency.py`` measures end to end (CPU per stream of the gateway process)
mixes in the HTTP server, the upstream client and the decoder; on a shared machine its CPU
figure moves by a few ms between runs. This one keeps only the path issue 13 is about: C runs
at once over one SQLite store (its group committer) and the in-process broker, each with one
reader encoding AG-UI SSE (:class:`~gateway.runs.RunManager`: created with its RUN_STARTED,
started, read, as the streaming endpoints do; the runs start 50 ms / C apart); each run's
source yields RUN_STARTED, TEXT_MESSAGE_START, ``events``
TEXT_MESSAGE_CONTENT deltas ``pace_ms`` apart (one upstream event per wake-up, as a paced model
sends them), TEXT_MESSAGE_END and RUN_FINISHED. The figure is the process CPU time
(``time.process_time``: every thread, the aiosqlite workers included) per run, in ms, the
median of ``--rounds`` blocks. The source yields ``ag_ui.core`` event models, as the gateway's
pipeline hands them to the pump (the content deltas built once, outside the measured blocks).

``--store`` (repeatable; default ``sqlite`` and ``off``): ``sqlite`` (a fresh file),
``postgres`` (``--pg``, a fresh schema dropped at exit) or ``off``, the path the streaming
endpoints take when the gateway runs without its lifespan (no store: ``Services.live`` ->
:func:`gateway.encoding.encode_batches`, no pump, writer, broker or reader; see
``gateway/routes/stream.py``): the same source encoded straight to AG-UI SSE. With ``off``
and a store, each variant's line says what persistence costs per run: ``on-off`` (ms) and
``on/off`` (issue 13's goal: durable persistence adds < 20 % to the gateway's store-off CPU
per stream, about 10 ms for such a stream end to end, ``bench/added_latency.py``).

Variants compare builds in one invocation: ``--variant NAME[:src=PATH]`` runs this script again
in a child process with ``PATH`` and ``PATH/codecs`` first on ``sys.path`` (a checkout of
another commit), blocks interleaved round by round (ABAB), so both see the same machine.

``--events 50,500`` (a comma list) runs every store at each run length and splits its CPU per
run into a fixed part and a part per delta (the least-squares line through the medians): what
a run costs to record and end, and what each content delta costs; with ``off``, each store's
persistence cost per delta as on/off (issue 13's "durable persistence cost on the codec path,
< 20 %" is about the per-event part) and its fixed part as on - off.

``--counts`` adds, per run, the event loop's callbacks (task steps included), SQL statements,
transactions and aiosqlite calls (each a round trip to its worker thread): figures the machine's
load does not move.

Run: ``python bench/pump_path.py -c 16 --rounds 6 --variant base:src=/tmp/main --variant now
[--store sqlite --store off --store postgres]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any


def _body(events: int) -> list[Any]:
    """The events between RUN_STARTED and RUN_FINISHED, as models (shared by every run)."""
    from ag_ui.core import TextMessageContentEvent, TextMessageEndEvent, TextMessageStartEvent

    deltas = [TextMessageContentEvent(message_id="m", delta=f"token {k} ") for k in range(events)]
    return [
        TextMessageStartEvent(message_id="m", role="assistant"),
        *deltas,
        TextMessageEndEvent(message_id="m"),
    ]


async def _source(run_id: str, body: list[Any], pace: float) -> Any:
    from ag_ui.core import RunFinishedEvent, RunStartedEvent

    yield RunStartedEvent(thread_id="t", run_id=run_id)
    yield body[0]
    for event in body[1:-1]:
        await asyncio.sleep(pace)
        yield event
    yield body[-1]
    yield RunFinishedEvent(thread_id="t", run_id=run_id)


async def _batches(source: Any) -> Any:
    """The store-off path's input: one batch per upstream event (``Services.live``)."""
    async for event in source:
        yield [event]


STORES = ("sqlite", "postgres", "off")

COUNTS: dict[str, int] = {"callbacks": 0, "sql": 0, "transactions": 0, "aiosqlite": 0}
"""What a block did (child mode), per kind; reported per run beside the CPU figure."""


def _count_work() -> None:
    """Count the event loop's callbacks (task steps included), SQL statements, transactions
    and aiosqlite calls (each a hop to its worker thread and back): figures that do not move
    with the machine's load, unlike CPU time. The counting itself costs the same to every
    variant."""
    import aiosqlite
    import sqlalchemy as sa
    from sqlalchemy.engine import Engine

    run = asyncio.events.Handle._run

    def counted_run(self: asyncio.events.Handle) -> None:
        COUNTS["callbacks"] += 1
        run(self)

    asyncio.events.Handle._run = counted_run  # type: ignore[method-assign]
    execute = aiosqlite.Connection._execute

    async def counted_execute(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        COUNTS["aiosqlite"] += 1
        return await execute(self, fn, *args, **kwargs)

    aiosqlite.Connection._execute = counted_execute  # type: ignore[method-assign]

    @sa.event.listens_for(Engine, "before_cursor_execute")
    def _sql(*_args: Any) -> None:
        COUNTS["sql"] += 1

    @sa.event.listens_for(Engine, "begin")
    def _begin(*_args: Any) -> None:
        COUNTS["transactions"] += 1


async def _block(manager: Any, c: int, body: list[Any], pace: float, stagger: float) -> float:
    """One block of ``c`` runs; the process CPU ms per run. ``manager`` None: store off."""
    from agui_codecs.encoders.agui import AguiEncoder
    from gateway.encoding import encode_batches, encode_run_events

    async def one(index: int) -> int:
        await asyncio.sleep(stagger * index / c)  # runs start spread as clients come
        if manager is None:
            size = 0
            source = _source(f"r{uuid.uuid4().hex}", body, pace)
            async for chunk in encode_batches(_batches(source), AguiEncoder()):
                size += len(chunk)
            return size
        thread = f"t{uuid.uuid4().hex}"
        user = {"id": "u1", "role": "user", "content": "hi"}
        record = await manager.create_run(thread_id=thread, input_messages=[user], announce=True)
        task = manager.start(record, _source(record.id, body, pace))
        await asyncio.sleep(0)  # the gateway's response starts reading after the pump began
        reader = await manager.reader(record.id, run=record)
        size = 0
        async for chunk in encode_run_events(reader, AguiEncoder()):
            size += len(chunk)
        outcome = await task
        assert outcome.status == "completed", outcome
        return size

    for key in COUNTS:
        COUNTS[key] = 0
    started = time.process_time()
    sizes = await asyncio.gather(*(one(i) for i in range(c)))
    assert all(sizes)
    return (time.process_time() - started) / c * 1000


async def _child(args: argparse.Namespace) -> None:
    """Child mode: one line of JSON per block (CPU ms per run), on a signal line from stdin."""
    from gateway.broker import InProcessBroker
    from gateway.runs import RunManager
    from gateway.store import open_store

    c, pace, counts, kind = args.c, args.pace_ms / 1000, args.counts, args.store[-1]
    if counts:
        _count_work()
    body = _body(int(args.events))

    with tempfile.TemporaryDirectory(prefix="agui-pump-path-") as tmp:
        store: Any = None
        schema = None
        if kind == "sqlite":
            store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
        elif kind == "postgres":
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            store = await open_store(args.pg, schema=schema)
        manager = None if store is None else RunManager(store, InProcessBroker())
        stagger = 0.05  # bench/added_latency.py's: the first requests 50 ms / C apart
        try:
            await _block(manager, c, body, pace, stagger)  # warm-up
            print("READY", flush=True)
            for _ in range(args.rounds):
                sys.stdin.readline()
                ms = await _block(manager, c, body, pace, stagger)
                per_run = {key: value / c for key, value in COUNTS.items()} if counts else {}
                print(json.dumps({"cpu_ms_per_run": ms, **per_run}), flush=True)
        finally:
            if store is not None:
                await store.close()
            if schema is not None:
                await _drop_schema(args.pg, schema)


def _loadavg() -> str:
    """The 1/5/15-minute load average as the other benches print it (``0.52 0.58 0.59``)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def _drop_schema(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def _name(variant: str, store: str, events: int, stores: list[str], sizes: list[int]) -> str:
    """A child's name: the variant, then the store and the deltas per run when several."""
    name = variant if len(stores) == 1 else f"{variant}/{store}"
    return name if len(sizes) == 1 else f"{name}/{events}"


def _split(
    medians: dict[tuple[str, int], float], store: str, sizes: list[int]
) -> tuple[float, float]:
    """A store's CPU per run as ``fixed + per_delta * deltas`` (ms, ms per delta): the least
    squares line through its medians at each run length."""
    xs = [float(n) for n in sizes]
    ys = [medians[store, n] for n in sizes]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return my - slope * mx, slope


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", type=int, default=16, help="runs at once")
    parser.add_argument(
        "--events",
        default="50",
        help="content deltas per run; a comma list (50,500) also splits each figure into a"
        " per-run part and a per-delta part (see the docstring)",
    )
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--variant", action="append", default=[], help="NAME[:src=PATH]")
    parser.add_argument(
        "--counts",
        action="store_true",
        help="also count loop callbacks, SQL statements, transactions, aiosqlite calls per run",
    )
    parser.add_argument(
        "--store",
        action="append",
        choices=STORES,
        help="sqlite, postgres or off (repeatable; default: sqlite and off)",
    )
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(_child(args))
        return 0
    variants = args.variant or ["now"]
    stores = list(dict.fromkeys(args.store or ["sqlite", "off"]))
    sizes = sorted({int(n) for n in str(args.events).split(",")})
    children: dict[str, subprocess.Popen[str]] = {}
    for text in variants:
        variant, _, rest = text.partition(":")
        env = dict(os.environ)
        if rest.startswith("src="):
            src = os.path.abspath(rest[4:])
            env["PYTHONPATH"] = os.pathsep.join([src, str(Path(src) / "codecs")])
        for store, events in itertools.product(stores, sizes):
            name = _name(variant, store, events, stores, sizes)
            command = [sys.executable, __file__, "--child", "-c", str(args.c)]
            command += ["--events", str(events), "--pace-ms", str(args.pace_ms)]
            command += ["--rounds", str(args.rounds), "--store", store, "--pg", args.pg]
            command += ["--counts"] if args.counts else []
            child = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
            )
            assert child.stdout is not None
            if child.stdout.readline().strip() != "READY":
                raise SystemExit(f"variant {name} did not start")
            children[name] = child
    print(f"loadavg before: {_loadavg()}  C={args.c} events={args.events}", flush=True)
    figures: dict[str, list[float]] = {name: [] for name in children}
    counted: dict[str, dict[str, list[float]]] = {name: {} for name in children}
    for _ in range(args.rounds):
        for name, child in children.items():  # one block at a time: ABAB
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write("go\n")
            child.stdin.flush()
            block = json.loads(child.stdout.readline())
            figures[name].append(block.pop("cpu_ms_per_run"))
            for key, value in block.items():
                counted[name].setdefault(key, []).append(value)
    for name, child in children.items():
        child.wait()
        values = figures[name]
        print(
            f"{name:14} C={args.c:<3d} cpu ms/run median {statistics.median(values):6.2f}"
            f"  [{' '.join(f'{v:.2f}' for v in values)}]"
            + "".join(f"  {k}/run {statistics.median(v):.1f}" for k, v in counted[name].items()),
            flush=True,
        )
    for text in variants:
        variant = text.partition(":")[0]
        medians = {
            (store, n): statistics.median(figures[_name(variant, store, n, stores, sizes)])
            for store in stores
            for n in sizes
        }
        if "off" in stores and len(stores) > 1:
            for store in stores:
                if store == "off":
                    continue
                on, off = medians[store, sizes[0]], medians["off", sizes[0]]
                print(
                    f"{variant:10} {store:8} persistence on-off {on - off:6.2f} ms/run"
                    f"  on/off {on / off:5.2f}  ({sizes[0]} deltas)",
                    flush=True,
                )
        if len(sizes) > 1:
            split = {store: _split(medians, store, sizes) for store in stores}
            for store, (fixed, per_delta) in split.items():
                print(
                    f"{variant:10} {store:8} per run {fixed:6.2f} ms + per delta"
                    f" {per_delta * 1000:6.1f} µs",
                    flush=True,
                )
            if "off" in split:
                off_fixed, off_delta = split["off"]
                for store, (fixed, per_delta) in split.items():
                    if store != "off":
                        print(
                            f"{variant:10} {store:8} persistence per delta on/off"
                            f" {per_delta / off_delta:5.2f}, per run on-off"
                            f" {fixed - off_fixed:6.2f} ms",
                            flush=True,
                        )
    print(f"loadavg after: {_loadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
