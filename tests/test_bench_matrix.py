"""``bench/matrix.py`` (issue 13 item 7): every row of its table names the one command that
reproduces that row, and the process figures count a server's worker processes.

No bench is run and nothing is timed: the matrix is fed the JSON a bench writes, and the
process-tree figures are checked on a child that holds a known amount of memory in a
grandchild (granian serves from a worker process under a supervisor).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import matrix  # noqa: E402
from added_latency import Variant  # noqa: E402
from sse_probe import Child  # noqa: E402


def _point(label: str, c: int, d99: float, errors: int = 0) -> dict[str, object]:
    return {
        "label": label,
        "c": c,
        "pace_ms": 20.0 if c == 64 else 5.0,
        "streams": 16,
        "errors": errors,
        "d_p50": 1.0,
        "d_p99": 2.0,
        "round_median_d_p99": d99,
        "rounds": [d99],
        "cpu_ms_per_stream": 12.5,
        "error_kinds": {},
    }


def test_latency_rows_each_name_their_own_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    points = [
        _point("A/A direct vs direct", 1, 0.5),
        _point("A/A direct vs direct", 16, 7.0),
        _point("uvicorn sqlite agui", 16, 30.0),
        _point("granian off ai-sdk", 1, 3.0, errors=2),
    ]
    seen: list[list[str]] = []

    def fake_run(self: matrix.Matrix, script: str, args: Sequence[str]) -> bool:
        seen.append([script, *args])
        Path(args[list(args).index("--json") + 1]).write_text(json.dumps(points))
        return True

    monkeypatch.setattr(matrix.Matrix, "run", fake_run)
    m = matrix.Matrix(tmp_path)
    matrix.latency(m, matrix.QUICK, ["uvicorn", "granian"])

    # one invocation for the whole sweep, every server variant in it (interleaved point by point)
    assert len(seen) == 1 and seen[0][0] == "added_latency.py"
    assert seen[0].count("--variant") == 2
    assert [r.server for r in m.rows] == ["uvicorn", "granian"]  # the A/A points are anchors
    uv, gr = m.rows
    assert "+7.0" in uv.anchor and "+0.5" in gr.anchor  # the noise pass at the row's own C
    assert "2 of 16 failed" in gr.figure and "failed" not in uv.figure
    for row, (c, wire, store) in ((uv, ("16", "agui", "sqlite")), (gr, ("1", "ai-sdk", "off"))):
        argv = shlex.split(row.command)
        assert argv[:2] == ["python", "bench/added_latency.py"]
        assert "--json" not in argv
        opts = dict(zip(argv[2::2], argv[3::2], strict=True))
        assert (opts["-c"], opts["--wires"], opts["--stores"]) == (c, wire, store)
        assert Variant.parse(opts["--variant"]).name == row.server
    assert Variant.parse(matrix.SERVERS["granian"]).server == "granian"
    assert Variant.parse(matrix.SERVERS["serve"]).server == "serve"


def test_open_stream_rows_carry_alive_memory_and_idle_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = {
        "variant": "uvicorn",
        "store": "sqlite",
        "n": 1000,
        "opened": 990,
        "alive_at_end": 980,
        "errors": {"HTTP 500": 10},
        "open_seconds": 12.0,
        "kib_per_stream": 41.5,
        "gateway_cpu_pct_idle": 1.5,
        "mock_cpu_pct_idle": 0.5,
        "loadavg_end": "1.00 1.00 1.00",
    }

    def fake_run(self: matrix.Matrix, script: str, args: Sequence[str]) -> bool:
        Path(args[list(args).index("--json") + 1]).write_text(json.dumps([result]))
        return True

    monkeypatch.setattr(matrix.Matrix, "run", fake_run)
    m = matrix.Matrix(tmp_path)
    matrix.open_streams(m, matrix.QUICK, ["uvicorn"])
    assert len(m.rows) == len(matrix.QUICK.open_stores)
    figure = m.rows[0].figure
    assert "980 alive of 990" in figure and "41.5 KiB/stream" in figure
    assert "idle CPU 1.5 %" in figure and "HTTP 500 x10" in figure
    table = matrix.table(m)
    assert table.count("\n") == 1 + len(m.rows)  # head, rule, one line per row


def test_child_figures_count_the_whole_process_tree() -> None:
    # The child spawns a grandchild that holds 64 MiB (written, so resident); the child's own
    # figure misses it, the tree's must not.
    hold = "import time; b = b'x' * (64 * 2**20); time.sleep(120)"
    outer = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {hold!r}]); time.sleep(120)"
    proc = subprocess.Popen([sys.executable, "-c", outer])
    child = Child.__new__(Child)
    child.pid = proc.pid
    try:

        def own() -> int:
            return int(Path(f"/proc/{proc.pid}/statm").read_text().split()[1]) * 4096

        for _ in range(600):  # until the grandchild has its 64 MiB (bounded: 30 s)
            if child.rss_bytes() > own() + 60 * 2**20:
                break
            time.sleep(0.05)
        pids = child.pids()
        assert pids[0] == proc.pid and len(pids) == 2
        assert child.rss_bytes() > own() + 60 * 2**20
        assert child.cpu_seconds() >= 0.0
    finally:
        for pid in reversed(child.pids()):
            subprocess.run(["kill", str(pid)], check=False)
        proc.wait(10)
