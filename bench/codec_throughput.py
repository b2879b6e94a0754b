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
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from ag_ui.encoder import EventEncoder
from agui_codecs import DECODERS, get_decoder, get_encoder
from agui_codecs.framing import DONE, FrameDecoder

FAMILIES = {
    "openai-chat": "openai-chat",
    "anthropic": "anthropic",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
    "aisdk-ui": "ai-sdk",
    "agui": "agui",
}
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus}", file=sys.stderr)
        return 2

    rows = []
    totals = {"events": 0, "agui": 0.0, "ai-sdk": 0.0, "ref": 0.0, "floor": 0.0}
    for family, name in FAMILIES.items():
        if name not in DECODERS or not (args.corpus / family).is_dir():
            continue
        for path in sorted((args.corpus / family).iterdir()):
            data = path.read_bytes()
            dec = get_decoder(name)
            events = dec.feed(data) + dec.close()
            fd = FrameDecoder()
            payloads = [
                orjson.dumps(f.data) for f in fd.feed(data) + fd.close() if f.data is not DONE
            ]

            def ours(encoder_name: str, data: bytes = data, name: str = name) -> None:
                d = get_decoder(name)
                enc = get_encoder(encoder_name)
                for e in d.feed(data) + d.close():
                    enc.encode(e)
                enc.close()

            ref_encoder = EventEncoder()

            def ref(events: list = events, enc: EventEncoder = ref_encoder) -> None:  # type: ignore[type-arg]
                for e in events:
                    enc.encode(e)

            def floor(payloads: list[bytes] = payloads) -> None:
                for p in payloads:
                    orjson.dumps(orjson.loads(p))

            t_agui = best(lambda: ours("agui"), args.repeat)
            t_ai = best(lambda: ours("ai-sdk"), args.repeat)
            t_ref = best(ref, args.repeat)
            t_floor = best(floor, args.repeat)
            n = len(events)
            rows.append((f"{family}/{path.name}", n, n / t_agui, n / t_ai, n / t_ref, n / t_floor))
            totals["events"] += n
            totals["agui"] += t_agui
            totals["ai-sdk"] += t_ai
            totals["ref"] += t_ref
            totals["floor"] += t_floor

    head = f"{'file':62} {'events':>6} {'agui ev/s':>10} {'ai-sdk ev/s':>11} {'EventEnc ev/s':>13} {'floor ev/s':>11}"
    print(head)
    for f, n, a, b, r, fl in rows:
        print(f"{f[:62]:62} {n:6d} {a:10.0f} {b:11.0f} {r:13.0f} {fl:11.0f}")
    n = totals["events"]
    a, b = n / totals["agui"], n / totals["ai-sdk"]
    r, fl = n / totals["ref"], n / totals["floor"]
    print(f"{'ALL':62} {n:6d} {a:10.0f} {b:11.0f} {r:13.0f} {fl:11.0f}")
    print()
    print("ratios (higher is faster; decode+encode vs. anchors, same events, same run):")
    print(f"  agui   decode+encode / EventEncoder serialize-only : {a / r:5.2f}")
    print(f"  ai-sdk decode+encode / EventEncoder serialize-only : {b / r:5.2f}")
    print(f"  agui   decode+encode / orjson floor               : {a / fl:5.2f}")
    print(f"  ai-sdk decode+encode / orjson floor               : {b / fl:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
