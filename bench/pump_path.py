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
median of ``--rounds`` blocks.

Variants compare builds in one invocation: ``--variant NAME[:src=PATH]`` runs this script again
in a child process with ``PATH`` and ``PATH/codecs`` first on ``sys.path`` (a checkout of
another commit), blocks interleaved round by round (ABAB), so both see the same machine.

``--counts`` adds, per run, the event loop's callbacks (task steps included), SQL statements,
transactions and aiosqlite calls (each a round trip to its worker thread): figures the machine's
load does not move.

Run: ``python bench/pump_path.py -c 16 --rounds 6 --variant base:src=/tmp/main --variant now``.
"""

from __future__ import annotations

import argparse
import asyncio
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


async def _source(run_id: str, events: int, pace: float) -> Any:
    yield {"type": "RUN_STARTED", "threadId": "t", "runId": run_id}
    yield {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
    for k in range(events):
        await asyncio.sleep(pace)
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"token {k} "}
    yield {"type": "TEXT_MESSAGE_END", "messageId": "m"}
    yield {"type": "RUN_FINISHED", "threadId": "t", "runId": run_id}


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


async def _block(manager: Any, c: int, events: int, pace: float, stagger: float) -> float:
    from agui_codecs.encoders.agui import AguiEncoder
    from gateway.encoding import encode_run_events

    async def one(index: int) -> int:
        await asyncio.sleep(stagger * index / c)  # runs start spread as clients come
        thread = f"t{uuid.uuid4().hex}"
        user = {"id": "u1", "role": "user", "content": "hi"}
        record = await manager.create_run(thread_id=thread, input_messages=[user], announce=True)
        task = manager.start(record, _source(record.id, events, pace))
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


async def _child(c: int, events: int, pace: float, rounds: int, counts: bool) -> None:
    """Child mode: one line of JSON per block (CPU ms per run), on a signal line from stdin."""
    from gateway.broker import InProcessBroker
    from gateway.runs import RunManager
    from gateway.store import open_store

    if counts:
        _count_work()

    with tempfile.TemporaryDirectory(prefix="agui-pump-path-") as tmp:
        store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
        manager = RunManager(store, InProcessBroker())
        stagger = 0.05  # bench/added_latency.py's: the first requests 50 ms / C apart
        try:
            await _block(manager, c, events, pace, stagger)  # warm-up
            print("READY", flush=True)
            for _ in range(rounds):
                sys.stdin.readline()
                ms = await _block(manager, c, events, pace, stagger)
                per_run = {key: value / c for key, value in COUNTS.items()} if counts else {}
                print(json.dumps({"cpu_ms_per_run": ms, **per_run}), flush=True)
        finally:
            await store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", type=int, default=16, help="runs at once")
    parser.add_argument("--events", type=int, default=50, help="content deltas per run")
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--variant", action="append", default=[], help="NAME[:src=PATH]")
    parser.add_argument(
        "--counts",
        action="store_true",
        help="also count loop callbacks, SQL statements, transactions, aiosqlite calls per run",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(_child(args.c, args.events, args.pace_ms / 1000, args.rounds, args.counts))
        return 0
    variants = args.variant or ["now"]
    children: dict[str, subprocess.Popen[str]] = {}
    for text in variants:
        name, _, rest = text.partition(":")
        env = dict(os.environ)
        if rest.startswith("src="):
            src = os.path.abspath(rest[4:])
            env["PYTHONPATH"] = os.pathsep.join([src, str(Path(src) / "codecs")])
        command = [sys.executable, __file__, "--child", "-c", str(args.c)]
        command += ["--events", str(args.events), "--pace-ms", str(args.pace_ms)]
        command += ["--rounds", str(args.rounds)] + (["--counts"] if args.counts else [])
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
        )
        assert child.stdout is not None
        if child.stdout.readline().strip() != "READY":
            raise SystemExit(f"variant {name} did not start")
        children[name] = child
    print(f"loadavg before: {os.getloadavg()}  C={args.c} events={args.events}", flush=True)
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
            f"{name:10} C={args.c:<3d} cpu ms/run median {statistics.median(values):6.2f}"
            f"  [{' '.join(f'{v:.2f}' for v in values)}]"
            + "".join(f"  {k}/run {statistics.median(v):.1f}" for k, v in counted[name].items()),
            flush=True,
        )
    print(f"loadavg after: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
