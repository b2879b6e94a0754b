"""The whole bench matrix of issue 13 (item 7) in one command, one table at the end.

Not product code. Runs the benches one after another (never two at once: on a 2-core machine
they would load each other), each as its own process with its figures written as JSON, then
prints one Markdown table whose every row carries the command that reproduces it alone:

1. the codec path (``codec_throughput.py --json``): per protocol family, our decode + encode
   (``agui`` and ``ai-sdk`` wires) beside ``ag_ui.encoder.EventEncoder`` (encode only) and the
   ``orjson`` loads + dumps floor, all in events/s, in the same process;
2. the added latency (``added_latency.py --json``): the direct-vs-direct (A/A) noise pass first,
   then ABBA rounds per point, C = 1 / 16 / 64, the wires, the stores (off, SQLite, PostgreSQL
   + Redis), one gateway per server variant (below), interleaved point by point: Δp50, the
   median over rounds of Δp99, the gateway's CPU per stream, failed streams;
3. the open-streams hold (``open_streams.py --json``) per store and server: streams alive at
   the end of the hold out of N, RSS per open stream, the gateway's CPU while they idle (the
   mock's beside it);
4. the resume of one stored run of 10,000 events over HTTP (``resume_http.py --json``).

Profiles: ``--quick`` (the default; about 15 minutes on 2 idle cores): latency on the ``agui``
wire, stores off and SQLite, C = 1 / 16 / 64, 2 rounds; open streams N = 1000 held 10 s
(store off and SQLite); resume with SQLite, 3 repeats; codecs best of 2. ``--full``: both
wires, every store (PostgreSQL + Redis skipped, and said so, when either cannot be reached),
8 rounds, N = 10,000 held 30 s, resume with SQLite and PostgreSQL, codecs best of 5.

``--servers``: the server variants, comma-separated (default ``uvicorn``): ``uvicorn``
(uvicorn on uvloop + httptools, what ``loop="auto"`` / ``http="auto"`` pick), ``serve``
(the server ``agui-gateway serve`` builds, its defaults: uvicorn with the guarded httptools protocol,
``gateway.http_protocol``'s head and send timeouts, ``GATEWAY_MAX_CONNECTIONS`` = 1000
concurrent connections), ``asyncio-h11`` (uvicorn on the stdlib loop and h11), ``granian`` (granian,
one worker, uvloop; skipped, and said so, when ``granian`` is not importable). ``--only``
picks benches (``codec,latency,open,resume``); ``--out DIR`` keeps every JSON and the table
(``table.md``).

Run: ``python bench/matrix.py`` (``make bench``), ``python bench/matrix.py --full``
(``make bench FULL=1``), ``python bench/matrix.py --servers uvicorn,granian --only latency``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent

SERVERS = {
    "uvicorn": "uvicorn:loop=uvloop,http=httptools",
    "serve": "serve:server=serve",
    "asyncio-h11": "asyncio-h11:loop=asyncio,http=h11",
    "granian": "granian:server=granian,loop=uvloop",
}
"""Server variant name -> ``--variant`` spec of ``added_latency.py`` (its docstring)."""


@dataclass
class Profile:
    """The sizes of one run of the matrix (module docstring)."""

    wires: list[str]
    stores: list[str]
    c: list[int]
    rounds: int
    open_n: int
    open_hold: float
    open_stores: list[str]
    resume_stores: list[str]
    resume_repeat: int
    codec_repeat: int


QUICK = Profile(
    ["agui"], ["off", "sqlite"], [1, 16, 64], 2, 1000, 10, ["off", "sqlite"], ["sqlite"], 3, 2
)
FULL = Profile(
    ["agui", "ai-sdk"],
    ["off", "sqlite", "postgres"],
    [1, 16, 64],
    8,
    10000,
    30,
    ["off", "sqlite"],
    ["sqlite", "postgres"],
    5,
    5,
)


@dataclass
class Row:
    """One line of the final table."""

    bench: str
    store: str
    wire: str
    c: str
    server: str
    figure: str
    anchor: str
    command: str


@dataclass
class Matrix:
    """What one invocation ran and measured."""

    out: Path
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def run(self, script: str, args: Sequence[str]) -> bool:
        """``python bench/<script> args``, its output passed through; False if it failed."""
        cmd = [sys.executable, str(BENCH / script), *args]
        print(f"\n$ {_shown(script, args)}", flush=True)
        done = subprocess.run(cmd, check=False)
        if done.returncode != 0:
            self.notes.append(f"`{_shown(script, args)}` exited {done.returncode}")
            return False
        return True


def _shown(script: str, args: Sequence[str]) -> str:
    """The command as a reader reruns it (the JSON output path left out)."""
    shown, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--json":
            skip = True
            continue
        shown.append(a)
    return shlex.join(["python", f"bench/{script}", *shown])


def _variant_args(servers: Sequence[str]) -> list[str]:
    out: list[str] = []
    for s in servers:
        out += ["--variant", SERVERS[s]]
    return out


def codec(m: Matrix, p: Profile) -> None:
    """The codec path beside EventEncoder and the orjson floor (events/s, per family)."""
    args = ["--repeat", str(p.codec_repeat), "--json"]
    print(f"\n$ {_shown('codec_throughput.py', args[:-1])}", flush=True)
    done = subprocess.run(
        [sys.executable, str(BENCH / "codec_throughput.py"), *args],
        check=False,
        capture_output=True,
    )
    if done.returncode != 0:
        m.notes.append(f"codec_throughput.py exited {done.returncode}: {done.stderr[-500:]!r}")
        return
    (m.out / "codec.json").write_bytes(done.stdout)
    sys.path.insert(0, str(BENCH))
    from codec_throughput import families

    totals = families(json.loads(done.stdout)["timings"])
    command = _shown("codec_throughput.py", args[:-1])
    for name, t in totals.items():
        n = t["events"]
        m.rows.append(
            Row(
                "codec path (events/s)",
                "-",
                "agui / ai-sdk",
                "-",
                name,
                f"{n / t['agui']:,.0f} / {n / t['ai-sdk']:,.0f}",
                f"EventEncoder {n / t['ref']:,.0f}; orjson floor {n / t['floor']:,.0f}",
                command,
            )
        )


def latency(m: Matrix, p: Profile, servers: Sequence[str]) -> None:
    """A/A first, then ABBA per (store, wire, C, server)."""
    path = m.out / "latency.json"
    args = ["-c", ",".join(map(str, p.c)), "--wires", ",".join(p.wires)]
    args += ["--stores", ",".join(p.stores), "--rounds", str(p.rounds)]
    args += [*_variant_args(servers), "--json", str(path)]
    if not m.run("added_latency.py", args) or not path.exists():
        return
    points = json.loads(path.read_text())
    noise = {pt["c"]: pt for pt in points if pt["label"].startswith("A/A")}
    for pt in points:
        if pt["label"].startswith("A/A"):
            continue
        server, store, wire = pt["label"].split(" ", 2)
        aa = noise.get(pt["c"])
        cpu = pt["cpu_ms_per_stream"]
        one = ["-c", str(pt["c"]), "--wires", wire, "--stores", store, "--rounds", str(p.rounds)]
        m.rows.append(
            Row(
                "added latency (ms)",
                store,
                wire,
                f"{pt['c']} ({pt['pace_ms']:g} ms)",
                server,
                f"Δp50 {pt['d_p50']:+,.1f}; round-median Δp99 {pt['round_median_d_p99']:+,.1f};"
                f" CPU {cpu:.1f} ms/stream"
                + (f"; {pt['errors']} of {pt['streams']} failed" if pt["errors"] else ""),
                "-" if aa is None else f"A/A round-median Δp99 {aa['round_median_d_p99']:+,.1f}",
                _shown("added_latency.py", [*one, "--variant", SERVERS[server]]),
            )
        )


def open_streams(m: Matrix, p: Profile, servers: Sequence[str]) -> None:
    """The open-streams hold per store (every server in one invocation)."""
    for store in p.open_stores:
        path = m.out / f"open-{store}.json"
        args = ["-n", str(p.open_n), "--hold", f"{p.open_hold:g}", "--store", store]
        args += [*_variant_args(servers), "--json", str(path)]
        if not m.run("open_streams.py", args) or not path.exists():
            continue
        for r in json.loads(path.read_text()):
            errors = (
                "; errors " + ", ".join(f"{k} x{v}" for k, v in r["errors"].items())
                if r["errors"]
                else ""
            )
            one = ["-n", str(p.open_n), "--hold", f"{p.open_hold:g}", "--store", store]
            m.rows.append(
                Row(
                    "open streams",
                    store,
                    "agui",
                    f"N={r['n']}",
                    r["variant"],
                    f"{r['alive_at_end']} alive of {r['opened']} opened ({r['open_seconds']:g} s to open);"
                    f" {r['kib_per_stream']:g} KiB/stream; idle CPU {r['gateway_cpu_pct_idle']:g} %{errors}",
                    f"mock idle CPU {r['mock_cpu_pct_idle']:g} %; load {r['loadavg_end']}",
                    _shown("open_streams.py", [*one, "--variant", SERVERS[r["variant"]]]),
                )
            )


def resume(m: Matrix, p: Profile, servers: Sequence[str]) -> None:
    """The replay of one stored run of 10,000 events per store."""
    for store in p.resume_stores:
        path = m.out / f"resume-{store}.json"
        args = ["--store", store, "--repeat", str(p.resume_repeat)]
        args += [*_variant_args(servers), "--json", str(path)]
        if not m.run("resume_http.py", args) or not path.exists():
            continue
        for r in json.loads(path.read_text()):
            m.rows.append(
                Row(
                    "resume of 10,000 events (ms)",
                    store,
                    r.get("wire", "agui"),
                    "1",
                    r["variant"],
                    f"median {r['replay_ms_median']:,.0f}, best {r['replay_ms_best']:,.0f},"
                    f" CPU {r.get('cpu_ms_per_replay', float('nan')):,.0f}"
                    f" ({r['events']} events, {r['bytes']:,} bytes)",
                    f"mock, same bytes: {r['mock_ms_median']:,.0f}",
                    _shown(
                        "resume_http.py",
                        [
                            "--store",
                            store,
                            "--repeat",
                            str(p.resume_repeat),
                            "--variant",
                            SERVERS[r["variant"]],
                        ],
                    ),
                )
            )


def table(m: Matrix) -> str:
    """The rows as one Markdown table."""
    head = ["bench", "store", "wire", "C", "server", "figure", "anchor (same run)", "command"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in m.rows:
        cells = [r.bench, r.store, r.wire, r.c, r.server, r.figure, r.anchor, f"`{r.command}`"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="the default profile")
    group.add_argument("--full", action="store_true")
    parser.add_argument("--servers", default="uvicorn", help=f"of {', '.join(SERVERS)}")
    parser.add_argument("--only", default="codec,latency,open,resume")
    parser.add_argument("--out", default=None, help="keep the JSON and table.md here")
    args = parser.parse_args(argv)
    profile = FULL if args.full else QUICK
    servers = [s for s in args.servers.split(",") if s]
    unknown = [s for s in servers if s not in SERVERS]
    if unknown:
        parser.error(f"unknown server(s) {unknown}: {', '.join(SERVERS)}")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="agui-bench-matrix-"))
    out.mkdir(parents=True, exist_ok=True)
    m = Matrix(out)
    if "granian" in servers and importlib.util.find_spec("granian") is None:
        servers.remove("granian")
        m.notes.append("granian is not installed (`pip install granian`): its variant skipped")
    started, load0 = time.monotonic(), _loadavg()
    only = set(args.only.split(","))
    if "codec" in only:
        codec(m, profile)
    if servers and "latency" in only:
        latency(m, profile, servers)
    if servers and "open" in only:
        open_streams(m, profile, servers)
    if servers and "resume" in only:
        resume(m, profile, servers)
    text = table(m)
    info: dict[str, Any] = {
        "profile": "full" if args.full else "quick",
        "servers": servers,
        "loadavg_before": load0,
        "loadavg_after": _loadavg(),
        "cpus": os.cpu_count(),
        "seconds": round(time.monotonic() - started),
    }
    summary = (
        f"profile {info['profile']}, servers {', '.join(servers) or '-'}; load average"
        f" {info['loadavg_before']} before, {info['loadavg_after']} after, {info['cpus']} CPUs;"
        f" {info['seconds']} s"
    )
    print(f"\n{summary}\n\n{text}")
    for note in m.notes:
        print(f"- {note}")
    (out / "table.md").write_text(
        summary + "\n\n" + text + "\n" + "".join(f"- {n}\n" for n in m.notes)
    )
    (out / "matrix.json").write_text(
        json.dumps({**info, "rows": [r.__dict__ for r in m.rows]}, indent=1)
    )
    print(f"\n(JSON and table.md in {out})")
    return 1 if m.notes and not m.rows else 0


if __name__ == "__main__":
    sys.exit(main())
