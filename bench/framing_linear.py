"""Every framing handles one huge line in small reads in linear time (issue 12, item 4).

One line (an SSE ``data:`` line, a JSON line, a JSON array element) of ``--mb`` MiB, then
twice that, fed in ``--read``-byte pieces (128 by default: 32,768 reads for 4 MiB), through
:class:`~agui_codecs.framing.FrameDecoder`; prints CPU seconds, MB/s and the ratio of the 2n
time to the n time (about 2 for a linear framer, about 4 for a quadratic one). The anchor is
the same bytes fed whole. Before issue 12 JSON lines took 9.6 s for 4 MiB in 128-byte reads.

    .venv/bin/python bench/framing_linear.py [--mb 4] [--read 128]
"""

from __future__ import annotations

import argparse
import time

from agui_codecs.framing import FrameDecoder


def _body(framing: str, size: int) -> bytes:
    payload = b'{"x": "' + b"a" * size + b'"}'
    if framing == "sse":
        return b"data: " + payload + b"\n\n"
    if framing == "jsonl":
        return payload + b"\n"
    return b"[" + payload + b"]"


def _cpu(framing: str, body: bytes, read: int) -> float:
    framer = FrameDecoder(framing, max_event_size=2 * len(body))  # type: ignore[arg-type]
    start = time.process_time()
    for i in range(0, len(body), read):
        framer.feed(body[i : i + read])
    frames = framer.close()
    elapsed = time.process_time() - start
    assert all(f.error is None for f in frames)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--read", type=int, default=128)
    args = parser.parse_args()
    size = int(args.mb * 1024 * 1024)
    print(f"one {args.mb:g} MiB line in {args.read}-byte reads, CPU seconds")
    print(f"{'framing':8} {'whole':>8} {'n':>8} {'2n':>8} {'MB/s':>8} {'2n/n':>6}")
    for framing in ("sse", "jsonl", "json"):
        body, double = _body(framing, size), _body(framing, 2 * size)
        whole = _cpu(framing, body, len(body))
        n = _cpu(framing, body, args.read)
        n2 = _cpu(framing, double, args.read)
        rate = len(body) / n / 1e6 if n else float("inf")
        print(f"{framing:8} {whole:8.3f} {n:8.3f} {n2:8.3f} {rate:8.1f} {n2 / n:6.2f}")


if __name__ == "__main__":
    main()
