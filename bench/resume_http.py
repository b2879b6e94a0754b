"""Resume over HTTP: a stored run of 10,000 events replayed to a client by the events endpoint.

One run is recorded through the gateway (``POST /api/v1/agent/runs`` on the ``bulk`` route: the
mock upstream sends 9,995 text deltas at once, which makes 10,000 AG-UI events with RUN_STARTED,
the message's start and end, and RUN_FINISHED); once it ended, ``GET
/api/v1/agent/runs/{thread}/events?runId=`` reads it from the start over a keep-alive
connection, ``--repeat`` times: the time from the request to the last byte (median and best),
events received and bytes. Anchor in the same run: the same number of bytes streamed by the
mock (no store) in one response, i.e. what the loopback HTTP path itself costs.

Run: ``python bench/resume_http.py [--store sqlite|postgres] [--repeat 7]``; ``--json PATH``
keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid

from added_latency import Variant, start_gateway
from sse_probe import Child, Connection, get, loadavg, post, run


async def measure(gw: Child, mock: Child, repeat: int) -> dict[str, object]:
    conn = Connection("127.0.0.1", gw.port)
    ids = uuid.uuid4().hex
    thread, run = f"t{ids}", f"r{ids}"
    create = {
        "route": "bulk",
        "input": {
            "threadId": thread,
            "runId": run,
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
    path = f"/api/v1/agent/runs/{thread}/events?runId={run}"
    first = await conn.send(get(path), timeout=120)  # waits for the run's end, live
    times, events = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        s = await conn.send(get(path), timeout=120)
        times.append(time.perf_counter() - t0)
        events, nbytes = s.events, s.nbytes
    direct = Connection("127.0.0.1", mock.port)
    body = b'{"model":"gpt-4o-mini","stream":true,"messages":[]}'
    mock_times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        m = await direct.send(post("/delay_ms=0,events=9995/v1/chat/completions", body))
        mock_times.append(time.perf_counter() - t0)
    conn.close()
    direct.close()
    return {
        "events": events,
        "bytes": nbytes,
        "first_read_events": first.events,
        "replay_ms_median": round(statistics.median(times) * 1000, 1),
        "replay_ms_best": round(min(times) * 1000, 1),
        "mock_ms_median": round(statistics.median(mock_times) * 1000, 1),
        "mock_bytes": m.nbytes,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="sqlite", choices=("sqlite", "postgres"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args()
    variants = [Variant.parse(v) for v in args.variant] or [Variant("gateway")]
    print(f"loadavg before: {loadavg()}", flush=True)
    results = []
    with Child("mock_upstream.py") as mock:
        for v in variants:
            with start_gateway(v, args.store, mock.port, args.pg, args.redis) as gw:
                result = run(measure(gw, mock, args.repeat))
            print(f"{v.name} {args.store}: {json.dumps(result)}", flush=True)
            results.append({"variant": v.name, "store": args.store, **result})
    print(f"loadavg after: {loadavg()}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
