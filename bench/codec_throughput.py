"""Codec throughput on the recorded corpus, against two anchors measured in the same run.

For every corpus file of every registered decoder's family, three timings over the same input,
all expressed in AG-UI events per second (the number of events the file decodes to, divided by
the time taken):

* ``ours``:   decode the upstream bytes and encode every event (``agui`` and ``ai-sdk``);
* ``EventEncoder``: only serialize the already-decoded events with ``ag_ui.encoder.EventEncoder``
  (the reference SDK's SSE encoder; no decoding at all);
* ``floor``:  ``orjson.loads`` of every upstream JSON payload + ``orjson.dumps`` of it again (the
  least any JSON-to-JSON translator must do).

Run: ``python bench/codec_throughput.py [--repeat N]`` (best of N, default 5).

Before and after in one run: ``python bench/codec_throughput.py --baseline REV`` extracts
the ``codecs/`` folder of ``REV`` (any git revision, ``git archive``) into a temporary folder,
installs nothing, and times the same
bench functions over the same corpus against that revision's ``agui_codecs`` (a subprocess with
``PYTHONPATH`` set to its package folder), alternating with the current code for ``--rounds``
rounds (best of all); it prints the events/s of both and their ratio per family, for decode +
encode and for encode only, and each side's decode + encode time over the ``floor``'s
(``x floor``, issue 13's measure) (``--clock cpu`` is steadier on a busy machine).
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from ag_ui.encoder import EventEncoder

import agui_codecs
from agui_codecs import DECODERS, get_decoder, get_encoder
from agui_codecs.framing import DONE, FrameDecoder
from agui_codecs.sse import DEFAULT_MAX_EVENT_SIZE

FAMILIES = {
    "openai-chat": "openai-chat",
    "anthropic": "anthropic",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
    "aisdk-ui": "ai-sdk",
    "agui": "agui",
    "bedrock-converse": "bedrock-converse",
    "a2a": "a2a",
    "langgraph": "langgraph",
}
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
"""``--clock``: wall time, or the process's CPU time (steadier on a shared machine)."""
_clock = [time.perf_counter]


def best(fn: Callable[[], object], repeat: int) -> float:
    clock = _clock[0]
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


Timings = dict[str, dict[str, Any]]
"""``"<family>/<file>"`` -> {"family", "events", "agui", "ai-sdk", "agui-enc", "ai-sdk-enc",
"ref", "floor"} (seconds; ``*-enc``: encoding the decoded events only)."""


def _frame_decoder(decoder: Any) -> Any:
    """The decoder's input framing (revisions before ``frame_decoder`` used ``FrameDecoder``)."""
    if hasattr(decoder, "frame_decoder"):
        return decoder.frame_decoder("auto", max_event_size=DEFAULT_MAX_EVENT_SIZE)
    return FrameDecoder("auto", max_event_size=DEFAULT_MAX_EVENT_SIZE)


def measure(corpus: Path, repeat: int) -> Timings:
    """Best-of-``repeat`` seconds of the three timings for every corpus file (module docstring)."""
    out: Timings = {}
    for family, name in FAMILIES.items():
        if name not in DECODERS or not (corpus / family).is_dir():
            continue
        for path in sorted((corpus / family).iterdir()):
            data = path.read_bytes()
            dec = get_decoder(name)
            events = dec.feed(data) + dec.close()
            fd = _frame_decoder(get_decoder(name))
            payloads = [
                orjson.dumps(f.data) for f in fd.feed(data) + fd.close() if f.data is not DONE
            ]

            def ours(encoder_name: str, data: bytes = data, name: str = name) -> None:
                d = get_decoder(name)
                enc = get_encoder(encoder_name)
                for e in d.feed(data) + d.close():
                    enc.encode(e)
                enc.close()

            def encode_only(encoder_name: str, events: list = events) -> None:  # type: ignore[type-arg]
                enc = get_encoder(encoder_name)
                for e in events:
                    enc.encode(e)
                enc.close()

            ref_encoder = EventEncoder()

            def ref(events: list = events, enc: EventEncoder = ref_encoder) -> None:  # type: ignore[type-arg]
                for e in events:
                    enc.encode(e)

            def floor(payloads: list[bytes] = payloads) -> None:
                for p in payloads:
                    orjson.dumps(orjson.loads(p))

            out[f"{family}/{path.name}"] = {
                "family": family,
                "events": len(events),
                "agui": best(lambda: ours("agui"), repeat),
                "ai-sdk": best(lambda: ours("ai-sdk"), repeat),
                "agui-enc": best(lambda: encode_only("agui"), repeat),
                "ai-sdk-enc": best(lambda: encode_only("ai-sdk"), repeat),
                "ref": best(ref, repeat),
                "floor": best(floor, repeat),
            }
    return out


def families(timings: Timings) -> dict[str, dict[str, float]]:
    """Per family and ``ALL``: events and seconds summed over the files."""
    totals: dict[str, dict[str, float]] = {}
    for row in timings.values():
        for key in (row["family"], "ALL"):
            bucket = totals.setdefault(key, dict.fromkeys(_COLUMNS, 0.0))
            for column in _COLUMNS:
                bucket[column] += row[column]
    if "ALL" in totals:
        totals["ALL"] = totals.pop("ALL")
    return totals


_COLUMNS = ("events", "agui", "ai-sdk", "agui-enc", "ai-sdk-enc", "ref", "floor")


def print_table(timings: Timings) -> None:
    head = f"{'file':62} {'events':>6} {'agui ev/s':>10} {'ai-sdk ev/s':>11} {'EventEnc ev/s':>13} {'floor ev/s':>11}"
    print(head)
    for f, r in timings.items():
        n = r["events"]
        print(
            f"{f[:62]:62} {n:6d} {n / r['agui']:10.0f} {n / r['ai-sdk']:11.0f}"
            f" {n / r['ref']:13.0f} {n / r['floor']:11.0f}"
        )
    print()
    print("per family (events/s over all its files) and ratios of decode+encode to the anchors")
    print(
        f"{'family':18} {'events':>6} {'agui':>9} {'ai-sdk':>9} {'EventEnc':>9} {'floor':>9}"
        f" {'agui/EE':>8} {'ai/EE':>6} {'agui/floor':>10} {'ai/floor':>8}"
    )
    for name, t in families(timings).items():
        n = t["events"]
        a, b, r, fl = n / t["agui"], n / t["ai-sdk"], n / t["ref"], n / t["floor"]
        print(
            f"{name:18} {n:6.0f} {a:9.0f} {b:9.0f} {r:9.0f} {fl:9.0f}"
            f" {a / r:8.2f} {b / r:6.2f} {a / fl:10.3f} {b / fl:8.3f}"
        )
    print()
    print("EventEncoder = ag_ui.encoder.EventEncoder serializing the already-decoded events (no")
    print(
        "decoding); floor = orjson.loads + orjson.dumps of the upstream payloads. Higher is faster."
    )


# -- before and after ------------------------------------------------------------------------
def _extract_codecs(rev: str, into: Path) -> Path:
    """The ``codecs/`` folder of ``rev`` extracted under ``into``; returns the folder to put on
    ``PYTHONPATH`` (``codecs/`` itself when it holds ``agui_codecs/``; for revisions where
    ``codecs/`` *was* the package, mapped by ``package-dir``, a folder with a symlink
    ``agui_codecs -> codecs``)."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", rev, "--", "codecs"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    codecs = into / "codecs"
    if (codecs / "agui_codecs").is_dir():
        return codecs
    shim = into / "shim"
    shim.mkdir()
    (shim / "agui_codecs").symlink_to(codecs, target_is_directory=True)
    return shim


def _run(package_dir: Path, corpus: Path, repeat: int, clock: str) -> Timings:
    """:func:`measure` in a subprocess importing ``agui_codecs`` from ``package_dir``."""
    env = {**os.environ, "PYTHONPATH": str(package_dir)}
    cmd = [sys.executable, __file__, "--json", "--repeat", str(repeat), "--corpus", str(corpus)]
    cmd += ["--clock", clock]
    done = subprocess.run(cmd, env=env, check=True, capture_output=True)
    result = orjson.loads(done.stdout)
    module = Path(result["module"]).resolve()
    if not module.is_relative_to(package_dir.resolve()):
        raise RuntimeError(f"agui_codecs came from {module}, not from {package_dir}")
    timings: Timings = result["timings"]
    return timings


def compare(rev: str, corpus: Path, repeat: int, rounds: int, clock: str) -> int:
    """Time ``rev`` and the current code alternately (best of ``rounds`` x ``repeat``) and print
    both with their ratio; only files both revisions decode are compared."""
    current = Path(__file__).resolve().parent.parent / "codecs"
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        baseline = _extract_codecs(rev, Path(tmp))
        sides: dict[str, Timings] = {"base": {}, "now": {}}
        for _ in range(rounds):
            for side, package_dir in (("base", baseline), ("now", current)):
                for f, row in _run(package_dir, corpus, repeat, clock).items():
                    kept = sides[side].setdefault(f, row)
                    for column in _COLUMNS[1:]:
                        kept[column] = min(kept[column], row[column])
    common = [f for f in sides["now"] if f in sides["base"]]
    base = families({f: sides["base"][f] for f in common})
    now = families({f: sides["now"][f] for f in common})
    print(f"codec throughput, events/s, {rev} (base) vs the working tree (now)")
    for title, columns in (
        ("decode + encode", ("agui", "ai-sdk")),
        ("encode only (the decoded events)", ("agui-enc", "ai-sdk-enc")),
    ):
        print(f"-- {title}")
        print(
            f"{'family':18} {'events':>6}"
            + "".join(f" {c + ' base':>14} {c + ' now':>13} {'now/base':>8}" for c in columns)
        )
        for name, t in now.items():
            b, row = base[name], f"{name:18} {t['events']:6.0f}"
            for c in columns:
                r0, r1 = b["events"] / b[c], t["events"] / t[c]
                row += f" {r0:14.0f} {r1:13.0f} {r1 / r0:8.2f}"
            print(row)
    print("-- decode + encode time per event over the orjson floor's (x floor; lower is better)")
    wires = ("agui", "ai-sdk")
    print(f"{'family':18}" + "".join(f" {c + ' base':>14} {c + ' now':>13}" for c in wires))
    for name, t in now.items():
        b, row = base[name], f"{name:18}"
        floor = min(b["floor"], t["floor"])  # the same orjson work on both sides
        for c in wires:
            row += f" {b[c] / floor:14.1f} {t[c] / floor:13.1f}"
        print(row)
    skipped = sorted(set(sides["now"]) ^ set(sides["base"]))
    if skipped:
        print(f"({len(skipped)} corpus files decoded by one side only, not compared)")
    print(
        f"best of {rounds} rounds x {repeat} repeats, the two sides alternating; higher is faster"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--baseline", metavar="REV", help="also time git revision REV")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline (default 3)")
    parser.add_argument("--clock", choices=CLOCKS, default="wall", help="default: wall")
    parser.add_argument("--json", action="store_true", help="print the timings as JSON")
    args = parser.parse_args()
    _clock[0] = CLOCKS[args.clock]
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus}", file=sys.stderr)
        return 2
    if args.baseline:
        return compare(args.baseline, args.corpus.resolve(), args.repeat, args.rounds, args.clock)
    timings = measure(args.corpus, args.repeat)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps({"module": agui_codecs.__file__, "timings": timings}))
        return 0
    print_table(timings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
