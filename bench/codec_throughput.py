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
from agui_codecs.framing import DONE
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
    totals = {"events": 0.0, "agui": 0.0, "ai-sdk": 0.0, "ref": 0.0, "floor": 0.0}
    family_totals: dict[str, dict[str, float]] = {}
    for family, name in FAMILIES.items():
        if name not in DECODERS or not (args.corpus / family).is_dir():
            continue
        for path in sorted((args.corpus / family).iterdir()):
            data = path.read_bytes()
            dec = get_decoder(name)
            events = dec.feed(data) + dec.close()
            fd = get_decoder(name).frame_decoder("auto", max_event_size=DEFAULT_MAX_EVENT_SIZE)
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
            for bucket in (totals, family_totals.setdefault(family, dict.fromkeys(totals, 0.0))):
                bucket["events"] += n
                bucket["agui"] += t_agui
                bucket["ai-sdk"] += t_ai
                bucket["ref"] += t_ref
                bucket["floor"] += t_floor

    head = f"{'file':62} {'events':>6} {'agui ev/s':>10} {'ai-sdk ev/s':>11} {'EventEnc ev/s':>13} {'floor ev/s':>11}"
    print(head)
    for f, n, a, b, r, fl in rows:
        print(f"{f[:62]:62} {n:6d} {a:10.0f} {b:11.0f} {r:13.0f} {fl:11.0f}")
    print()
    print("per family (events/s over all its files) and ratios of decode+encode to the anchors")
    print(
        f"{'family':18} {'events':>6} {'agui':>9} {'ai-sdk':>9} {'EventEnc':>9} {'floor':>9}"
        f" {'agui/EE':>8} {'ai/EE':>6} {'agui/floor':>10} {'ai/floor':>8}"
    )
    for name, t in [*family_totals.items(), ("ALL", totals)]:
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
