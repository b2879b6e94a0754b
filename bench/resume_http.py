"""Resume over HTTP: a stored run of 10,000 events replayed to a client, on both wires.

One run is recorded per gateway (``POST /api/v1/agent/runs`` on the ``bulk`` route: the mock
upstream sends 9,996 text deltas at once, which makes 10,000 AG-UI events with RUN_STARTED,
TEXT_MESSAGE_START, TEXT_MESSAGE_END and RUN_FINISHED); once it ended, it is read from the
start over a keep-alive connection, ``--repeat`` times per wire:

* ``agui``: ``GET /api/v1/agent/runs/{thread}/events?runId=`` (AG-UI SSE, one ``event:`` /
  ``id:`` / ``data:`` frame per stored event: 10,000 frames);
* ``ai-sdk``: ``GET /v1/workflow/bulk/{thread}/{run}/stream?startIndex=0`` (the
  ``WorkflowChatTransport`` resume, UIMessageChunk SSE from chunk 0: ``start``,
  ``start-step``, ``text-start``, 9,996 ``text-delta``, ``text-end``, ``finish-step``,
  ``finish`` and ``[DONE]``: 10,003 frames).

Figures per wire: the time from the request to the last byte (median and best), the gateway
process's CPU per replay (its ``/proc`` user + system time over all the replays of that wire,
divided by their number), frames received (``\\n\\n``-terminated SSE events) and bytes. The
variants (``--variant``) run at once, one gateway each, and their replays alternate (one
replay of each variant in turn, for every repeat), so load drifts hit every variant alike.
Anchor in the same run: the mock streaming 9,996 deltas (no store) in one response, i.e. what
the loopback HTTP path itself costs for about as many bytes.

Run: ``python bench/resume_http.py [--store sqlite|postgres] [--repeat 7] [--wires agui,ai-sdk]
[--variant base:src=DIR --variant now]``; ``--json PATH`` keeps the figures (one record per
variant and wire).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from contextlib import ExitStack

from added_latency import Variant, start_gateway
from sse_probe import Child, Connection, Stream, get, loadavg, post, run

DELTAS = 9996
"""Text deltas of the recorded run: with its four other events, 10,000 AG-UI events."""

WIRES = ("agui", "ai-sdk")


async def record(gw: Child) -> tuple[str, str]:
    """Record one run of 10,000 events on ``gw`` and wait for its end; its thread and run id."""
    conn = Connection("127.0.0.1", gw.port)
    ids = uuid.uuid4().hex
    thread, run_id = f"t{ids}", f"r{ids}"
    create = {
        "route": "bulk",
        "input": {
            "threadId": thread,
            "runId": run_id,
            "messages": [{"id": "m1", "role": "user", "content": "hi"}],
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
        },
    }
    created = await conn.send(post("/api/v1/agent/runs", json.dumps(create).encode()))
    if created.status != 201:
        raise RuntimeError(f"create run: HTTP {created.status}")
    first = await conn.send(get(_path("agui", thread, run_id)), timeout=120)  # live, to its end
    conn.close()
    if first.events != 10_000:
        raise RuntimeError(f"the recorded run has {first.events} events, not 10,000")
    return thread, run_id


def _path(wire: str, thread: str, run_id: str) -> str:
    if wire == "agui":
        return f"/api/v1/agent/runs/{thread}/events?runId={run_id}"
    return f"/v1/workflow/bulk/{thread}/{run_id}/stream?startIndex=0"


async def measure(
    gateways: list[tuple[str, Child]], mock: Child, wires: list[str], repeat: int
) -> list[dict[str, object]]:
    runs = [await record(gw) for _, gw in gateways]
    conns = [Connection("127.0.0.1", gw.port) for _, gw in gateways]
    results = []
    for wire in wires:
        times: list[list[float]] = [[] for _ in gateways]
        cpu = [0.0 for _ in gateways]
        last: list[Stream] = [Stream() for _ in gateways]
        for _ in range(repeat):
            for i, (_, gw) in enumerate(gateways):  # one replay of each variant in turn
                thread, run_id = runs[i]
                c0 = gw.cpu_seconds()
                t0 = time.perf_counter()
                s = await conns[i].send(get(_path(wire, thread, run_id)), timeout=120)
                times[i].append(time.perf_counter() - t0)
                cpu[i] += gw.cpu_seconds() - c0
                if s.status != 200 or s.error:
                    raise RuntimeError(f"{wire} replay: HTTP {s.status} {s.error or ''}")
                last[i] = s
        for i, (name, _) in enumerate(gateways):
            results.append(
                {
                    "variant": name,
                    "wire": wire,
                    "events": last[i].events,
                    "bytes": last[i].nbytes,
                    "replay_ms_median": round(statistics.median(times[i]) * 1000, 1),
                    "replay_ms_best": round(min(times[i]) * 1000, 1),
                    "cpu_ms_per_replay": round(cpu[i] / repeat * 1000, 1),
                }
            )
    for conn in conns:
        conn.close()
    direct = Connection("127.0.0.1", mock.port)
    body = b'{"model":"gpt-4o-mini","stream":true,"messages":[]}'
    mock_times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        m = await direct.send(post(f"/delay_ms=0,events={DELTAS}/v1/chat/completions", body))
        mock_times.append(time.perf_counter() - t0)
    direct.close()
    for r in results:
        r["mock_ms_median"] = round(statistics.median(mock_times) * 1000, 1)
        r["mock_bytes"] = m.nbytes
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="sqlite", choices=("sqlite", "postgres"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--wires", default=",".join(WIRES), help="comma-separated: agui,ai-sdk")
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    wires = [w for w in args.wires.split(",") if w]
    if not wires or any(w not in WIRES for w in wires):
        parser.error(f"--wires takes {', '.join(WIRES)}")
    variants = [Variant.parse(v) for v in args.variant] or [Variant("gateway")]
    print(f"loadavg before: {loadavg()}", flush=True)
    with Child("mock_upstream.py") as mock, ExitStack() as stack:
        gateways = [
            (
                v.name,
                stack.enter_context(start_gateway(v, args.store, mock.port, args.pg, args.redis)),
            )
            for v in variants
        ]
        results = run(measure(gateways, mock, wires, args.repeat))
    for r in results:
        for key in ("store",):
            r[key] = args.store
        print(f"{r['variant']} {args.store} {r['wire']}: {json.dumps(r)}", flush=True)
    print(f"loadavg after: {loadavg()}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
