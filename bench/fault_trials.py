"""Fault trials (issue 12, item 7): ``kill -9`` of a replica and store / broker outages, mid-run,
counted as lost / duplicated / never-ended events.

    .venv/bin/python bench/fault_trials.py                  # 100 kill -9 trials + outages
    .venv/bin/python bench/fault_trials.py --trials 3 --outage-trials 1 --seconds 240

Two real ``agui-gateway serve`` replicas (``tests/replicas/replica_processes.py``) share a
fresh schema of the machine's PostgreSQL and a fresh key prefix of its Redis, both reached
through TCP forwarders this script starts on loopback (``tests/support/tcp_proxy.py``); the
upstream is the paced mock (``bench/mock_upstream.py``). The servers themselves are never
stopped or flushed: an outage is the forwarder cutting every connection and refusing new ones.

Kinds of trial:

* ``kill-9`` (``--trials``, default 100): a run is created on replica A and read from A; after
  a random number of events (seeded) A gets ``kill -9``; the client resumes on B with
  ``Last-Event-ID``; B's reaper closes the run (RUN_ERROR ``RUN_INTERRUPTED``). A fresh
  replica replaces A for the next trial (the survivor becomes A).
* ``pg-short`` / ``pg-long``: the PostgreSQL forwarder is cut mid-run (random start, seeded)
  for ``--short-outage`` / ``--long-outage`` seconds, shorter / longer than
  ``GATEWAY_STORE_OUTAGE_GRACE`` (``--grace``); ``redis-short`` / ``redis-long`` the same
  with Redis. ``--outage-trials`` of each; two clients per trial, one starting on each
  replica. A short PostgreSQL outage and any Redis outage must lose nothing and the run must
  complete; a long PostgreSQL outage must end each client with a typed RUN_ERROR
  ``STORE_UNAVAILABLE``.

The client resumes like a ``Last-Event-ID`` client: after a cut connection, a 503, or a
RUN_ERROR without an ``id:`` (a reader's own store failure, docs/runs.md §6) it reconnects on
the other replica (the survivor after a kill) after its last ``id:``, until it gets a terminal
event with an ``id:`` or ``--end-bound`` seconds pass. Each client is judged by
``bench/fault_checks.py`` against the run as stored (read from PostgreSQL directly once the run
ended) and the mock's token sequence.

Prints a progress line per trial, then a table per kind (trials, lost, duplicated,
never-ended, illegal, untyped, unstored deltas, the slowest end) and the seed. Exit status 1 if
a count is non-zero or not every trial ran within ``--seconds``; 2 when PostgreSQL or Redis
cannot be reached. Logs of the processes go to a temp folder, kept (and named) on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [
    str(ROOT / "bench"),
    str(ROOT / "tests" / "replicas"),
    str(ROOT / "tests" / "support"),
]

import httpx  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from durable_support import Frame  # noqa: E402
from fault_checks import TERMINAL, TERMINAL_STATUSES, Verdict, judge  # noqa: E402
from gateway_proc import QUOTAS_OFF  # noqa: E402
from replica_client import StatusError, create_run, read_events, stored  # noqa: E402
from replica_processes import (  # noqa: E402
    PG_URL,
    REDIS_URL,
    Process,
    replica_env,
    start_gateway,
    start_gateways,
    start_script,
)
from replica_services import (  # noqa: E402
    ServiceMissing,
    delete_prefix,
    drop_schema,
    new_prefix,
    new_schema,
)
from tcp_proxy import TcpProxy  # noqa: E402

from gateway.routes._cursor import bind_cursor, cursor_tag  # noqa: E402
from gateway.tenancy import run_key  # noqa: E402

T = TypeVar("T")

KILL_EVENTS, KILL_DELAY_MS = 150, 10
"""The kill-9 trials' run: 150 tokens 10 ms apart (about 1.5 s of upstream)."""
OUTAGE_EVENTS, OUTAGE_DELAY_MS = 600, 15
"""The outage trials' run: 600 tokens 15 ms apart (about 9 s): the pump of a long outage gives
up (a batch fills, then the grace and the last backoff pass) before the upstream ends."""
KINDS = ("pg-short", "pg-long", "redis-short", "redis-long", "kill-9")
RESUME_PAUSE = 0.3
"""Seconds a client waits before it reconnects."""


class Proxies:
    """The PostgreSQL and Redis forwarders, on their own event loop in a thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        pg, rd = sa.make_url(PG_URL), sa.make_url(REDIS_URL)
        self.pg = self._call(self._open(TcpProxy(pg.host or "127.0.0.1", pg.port or 5432)))
        self.redis = self._call(self._open(TcpProxy(rd.host or "127.0.0.1", rd.port or 6379)))
        self.pg_url = pg.set(host="127.0.0.1", port=self.pg.port).render_as_string(
            hide_password=False
        )
        self.redis_url = rd.set(host="127.0.0.1", port=self.redis.port).render_as_string(
            hide_password=False
        )

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    @staticmethod
    async def _open(proxy: TcpProxy) -> TcpProxy:
        await proxy.__aenter__()
        return proxy

    def cut(self, proxy: TcpProxy) -> None:
        self._call(proxy.cut())

    def restore(self, proxy: TcpProxy) -> None:
        self.loop.call_soon_threadsafe(proxy.restore)

    def close(self) -> None:
        for proxy in (self.pg, self.redis):
            self._call(proxy.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@dataclass
class Follow:
    """What one resuming client got: every event frame, and how each connection ended
    (``terminal``, ``typed`` (RUN_ERROR without id), ``cut``, ``status <n>``, ``empty``)."""

    frames: list[Frame] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    ended_at: float | None = None


def follow(
    bases: Callable[[int], str],
    thread_id: str,
    run_id: str,
    deadline: Callable[[], float],
    on_frame: Callable[[Frame], None] | None = None,
) -> Follow:
    """Read a run like a resuming client (module docstring); ``bases(n)`` is the replica of
    connection ``n``; ``deadline()`` the monotonic time after which it stops reconnecting."""
    out = Follow()
    attempt = 0
    while True:
        got: list[Frame] = []

        def keep(frame: Frame, got: list[Frame] = got) -> None:
            got.append(frame)
            if on_frame is not None:
                on_frame(frame)

        after = next((f.id for f in reversed(out.frames) if f.id is not None), None)
        try:
            read_events(bases(attempt), thread_id, run_id, after=after, on_frame=keep)
            end = "empty"
            if got and got[-1].event in TERMINAL:
                end = "terminal" if got[-1].id is not None else "typed"
        except StatusError as exc:
            end = f"status {exc.status}"
        except httpx.HTTPError:
            end = "cut"
        out.frames += got
        out.ends.append(end)
        if end == "terminal" or end == "status 204":
            out.ended_at = time.monotonic()
            return out
        if time.monotonic() > deadline():
            return out
        attempt += 1
        time.sleep(RESUME_PAUSE)


@dataclass
class Tally:
    """The counts of one kind over its trials."""

    trials: int = 0
    lost: int = 0
    duplicated: int = 0
    never_ended: int = 0
    illegal: int = 0
    untyped: int = 0
    unstored_deltas: int = 0
    slowest_end: float = 0.0

    def add(self, verdict: Verdict, untyped: int, end_seconds: float | None) -> None:
        self.lost += verdict.lost
        self.duplicated += verdict.duplicated
        self.never_ended += verdict.never_ended
        self.illegal += verdict.illegal
        self.untyped += untyped
        self.unstored_deltas += verdict.unstored_deltas
        if end_seconds is not None:
            self.slowest_end = max(self.slowest_end, end_seconds)

    @property
    def bad(self) -> int:
        return self.lost + self.duplicated + self.never_ended + self.illegal + self.untyped


class Trials:
    """The replicas, the mock and the forwarders of one invocation, and the trials on them."""

    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.folder = folder
        self.rng = random.Random(args.seed)
        self.schema = new_schema("faults")
        self.prefix = new_prefix("faults")
        self.proxies = Proxies()
        self.mock = start_script(
            "mock",
            [sys.executable, str(ROOT / "bench" / "mock_upstream.py"), "--port", "0"],
            folder,
            r"PORT (\d+)",
        )
        self.routes = folder / "routes.toml"
        self.routes.write_text(
            "".join(
                f'[[routes]]\nname = "{name}"\nupstream_url = "{self.mock.url}/{pace}/v1"\n'
                'protocol = "openai-chat"\nmodel = "gpt-4o-mini"\n'
                for name, pace in (
                    ("kill", f"delay_ms={KILL_DELAY_MS},events={KILL_EVENTS}"),
                    ("outage", f"delay_ms={OUTAGE_DELAY_MS},events={OUTAGE_EVENTS}"),
                )
            ),
            encoding="utf-8",
        )
        self.env = {
            **replica_env(
                self.schema,
                self.prefix,
                pg_url=self.proxies.pg_url,
                redis_url=self.proxies.redis_url,
            ),
            **QUOTAS_OFF,
            "GATEWAY_AUTH": "off",
            "AGUI_CODECS_STRICT": "1",
            "GATEWAY_STORE_OUTAGE_GRACE": str(args.grace),
        }
        self.spawned = 0
        self.replicas: list[Process] = start_gateways(
            [self._name(), self._name()], folder, self.routes, self.env
        )
        self.pool = ThreadPoolExecutor(1)
        self.spare: Future[Process] | None = None
        self.tallies = {kind: Tally() for kind in KINDS}

    def _name(self) -> str:
        self.spawned += 1
        return f"replica{self.spawned}"

    def _start_spare(self) -> None:
        """Start the replica that replaces the next killed one while the trials go on (a
        start takes seconds on a busy machine; the spare is idle until it joins)."""
        self.spare = self.pool.submit(
            start_gateway, self._name(), self.folder, self.routes, self.env
        )

    def _replace(self, killed: Process) -> None:
        """The survivor becomes A, the spare B; a new spare starts."""
        if self.spare is None:
            self._start_spare()
        assert self.spare is not None
        fresh = self.spare.result()
        self.replicas = [p for p in self.replicas if p is not killed] + [fresh]
        killed.stop()  # closes its log
        self._start_spare()

    def close(self) -> None:
        spare = [self.spare.result()] if self.spare is not None else []
        self.pool.shutdown()
        for process in [*self.replicas, *spare, self.mock]:
            process.stop()
        self.proxies.close()
        drop_schema(self.schema)
        delete_prefix(self.prefix)

    def _stored(
        self, thread_id: str, run_id: str, bound: float
    ) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
        """The stored run once it ended (or as it is after ``bound`` seconds)."""
        key = run_key(None, thread_id, run_id)
        tag = cursor_tag(key)
        deadline = time.monotonic() + bound
        while True:
            try:
                record, events = stored(self.schema, key)
                status: str | None = record.status
            except Exception:  # no record yet: judged as never ended
                status, events = None, []
            if status in TERMINAL_STATUSES or time.monotonic() > deadline:
                return status, [(bind_cursor(e.cursor, tag), e.event) for e in events]
            time.sleep(0.2)

    def kill_trial(self, number: int) -> tuple[Verdict, str]:
        if self.spare is None:
            self._start_spare()
        a, b = self.replicas
        thread_id, run_id = f"faults-{number}", f"run-{uuid.uuid4().hex[:10]}"
        kill_after = self.rng.randint(1, KILL_EVENTS + 1)
        killed_at: list[float] = []

        def kill() -> None:
            a.kill9()
            killed_at.append(time.monotonic())

        def on_frame(frame: Frame) -> None:
            seq = int(frame.id.split(".")[1]) if frame.id is not None else 0
            if not killed_at and seq >= kill_after:
                kill()

        create_run(a.url, thread_id, run_id, "go", route="kill")
        got = follow(
            lambda n: a.url if n == 0 else b.url,
            thread_id,
            run_id,
            lambda: (killed_at[0] if killed_at else time.monotonic()) + self.args.end_bound,
            on_frame,
        )
        if not killed_at:  # the run ended before the kill point: kill now, for the next trial
            kill()
        status, events = self._stored(thread_id, run_id, self.args.end_bound)
        verdict = judge(
            got.frames,
            events,
            status,
            upstream_tokens=KILL_EVENTS,
            must_complete=False,
            unstored_control_allowed=False,
        )
        end = None if got.ended_at is None else got.ended_at - killed_at[0]
        self.tallies["kill-9"].add(verdict, 0, end)
        self._replace(a)
        line = (
            f"kill after seq {kill_after}, ends {got.ends}, status {status}, end {end or 0:.1f} s"
        )
        return verdict, line

    def outage_trial(self, kind: str, number: int) -> tuple[Verdict, str]:
        a, b = self.replicas
        target = self.proxies.pg if kind.startswith("pg") else self.proxies.redis
        seconds = self.args.long_outage if kind.endswith("long") else self.args.short_outage
        thread_id, run_id = f"faults-{kind}-{number}", f"run-{uuid.uuid4().hex[:10]}"
        start_after = self.rng.uniform(0.3, 1.5)
        restored: list[float] = []

        def deadline() -> float:
            return (restored[0] if restored else time.monotonic()) + self.args.end_bound

        create_run(a.url, thread_id, run_id, "go", route="outage")
        with ThreadPoolExecutor(2) as pool:
            clients = [
                pool.submit(
                    follow, lambda n, f=first, s=second: (f, s)[n % 2], thread_id, run_id, deadline
                )
                for first, second in ((a.url, b.url), (b.url, a.url))
            ]
            time.sleep(start_after)
            self.proxies.cut(target)
            time.sleep(seconds)
            self.proxies.restore(target)
            restored.append(time.monotonic())
            follows = [c.result() for c in clients]
        status, events = self._stored(thread_id, run_id, self.args.end_bound)
        merged = Verdict()
        ends = []
        for got in follows:
            verdict = judge(
                got.frames,
                events,
                status,
                upstream_tokens=OUTAGE_EVENTS,
                must_complete=kind != "pg-long",
                unstored_control_allowed=kind == "pg-long",
            )
            untyped = sum(1 for e in got.ends if e == "cut")
            if kind == "pg-long" and not verdict.typed_store_error:
                untyped += 1
                verdict.notes.append("no typed STORE_UNAVAILABLE")
            end = None if got.ended_at is None else got.ended_at - restored[0]
            self.tallies[kind].add(verdict, untyped, end)
            for name in ("lost", "duplicated", "never_ended", "illegal", "unstored_deltas"):
                setattr(merged, name, getattr(merged, name) + getattr(verdict, name))
            merged.notes += verdict.notes + ([f"{untyped} untyped"] if untyped else [])
            ends.append(got.ends)
        line = f"cut at {start_after:.1f} s for {seconds:.1f} s, ends {ends}, status {status}"
        return merged, line

    def run(self) -> bool:
        args = self.args
        plan = [(kind, n) for kind in KINDS[:4] for n in range(args.outage_trials)]
        plan += [("kill-9", n) for n in range(args.trials)]
        began = time.monotonic()
        done = 0
        for index, (kind, number) in enumerate(plan, 1):
            if time.monotonic() - began > args.seconds:
                print(
                    f"time bound of {args.seconds:.0f} s reached after {done} of {len(plan)} trials"
                )
                break
            if kind == "kill-9":
                verdict, line = self.kill_trial(number)
            else:
                verdict, line = self.outage_trial(kind, number)
            self.tallies[kind].trials += 1
            done += 1
            flag = "ok" if verdict.clean and "untyped" not in " ".join(verdict.notes) else "FAIL"
            notes = f" [{'; '.join(verdict.notes[:4])}]" if verdict.notes else ""
            print(
                f"[{index}/{len(plan)} {kind} {time.monotonic() - began:6.1f} s] {flag}: {line}{notes}",
                flush=True,
            )
        return done == len(plan)


def table(tallies: dict[str, Tally]) -> str:
    head = (
        "kind",
        "trials",
        "lost",
        "duplicated",
        "never-ended",
        "illegal",
        "untyped",
        "unstored deltas",
        "slowest end s after fault",
    )
    rows = [head]
    for kind, t in tallies.items():
        if t.trials:
            rows.append(
                (
                    kind,
                    *map(
                        str,
                        (
                            t.trials,
                            t.lost,
                            t.duplicated,
                            t.never_ended,
                            t.illegal,
                            t.untyped,
                            t.unstored_deltas,
                        ),
                    ),
                    f"{t.slowest_end:.1f}",
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100, help="kill -9 trials")
    parser.add_argument("--outage-trials", type=int, default=3, help="trials of each outage kind")
    parser.add_argument("--seconds", type=float, default=3600.0, help="no new trial after this")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--grace", type=float, default=2.0, help="GATEWAY_STORE_OUTAGE_GRACE")
    parser.add_argument("--short-outage", type=float, default=1.0)
    parser.add_argument("--long-outage", type=float, default=8.0)
    parser.add_argument(
        "--end-bound", type=float, default=20.0, help="s for a run to end after the fault"
    )
    args = parser.parse_args(argv)
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "big")
    if not args.short_outage < args.grace < args.long_outage:
        parser.error("--short-outage < --grace < --long-outage")
    folder = Path(tempfile.mkdtemp(prefix="agui-faults-"))
    print(f"seed {args.seed}; load average {os.getloadavg()[0]:.1f}; logs in {folder}", flush=True)
    began = time.monotonic()
    try:
        trials = Trials(args, folder)
    except ServiceMissing as exc:
        print(f"cannot run the fault trials: {exc}")
        return 2
    try:
        complete = trials.run()
    finally:
        trials.close()
    print(table(trials.tallies))
    bad = sum(t.bad for t in trials.tallies.values())
    print(
        f"seed {args.seed}; wall {time.monotonic() - began:.0f} s; "
        f"load average {os.getloadavg()[0]:.1f}; grace {args.grace} s, outages "
        f"{args.short_outage} / {args.long_outage} s"
    )
    if bad or not complete:
        print(
            f"FAILED ({bad} bad counts{'' if complete else ', incomplete'}); logs kept in {folder}"
        )
        return 1
    shutil.rmtree(folder, ignore_errors=True)
    print("all trials clean")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
