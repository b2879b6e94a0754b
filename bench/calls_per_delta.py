"""Python calls per content delta through the whole app: a count the machine's load does not move.

What ``bench/added_latency.py`` measures as CPU per stream moves by half a millisecond between
runs on a shared machine; what the per-event path costs in Python is steadier counted. Each
run is one ``POST /v1/agui/gpt`` through the ASGI app in one process (auth and the per-tenant
quotas off, as the other benches; ``--quota`` keeps the default storage quota on: its
per-event check), a SQLite run store in a temporary directory (``--store off``: the app
without its lifespan, the store-off streaming path) and the in-process broker, whose
upstream is an in-memory OpenAI Chat stream (``bench/instrumentation.py``'s, ``--deltas``
text deltas) paced ``--pace-ms`` apart by chunk (``httpx.MockTransport``), ``--group`` SSE
events per network chunk. After ``-c`` warm-up runs, ``--rounds`` x ``-c`` runs (``-c`` at
once) are counted with ``sys.setprofile``: Python function calls (a resumed coroutine or
generator counts as a call, as it does there) and C calls, per content delta, and the
functions called most often per delta (``--top``). The pacing's own ``asyncio.sleep`` and the
mock's generator are counted too; they are the same for every variant.

Variants count builds side by side: ``--variant NAME[:src=PATH]`` runs this script again in a
child process with ``PATH`` and ``PATH/codecs`` first on ``sys.path`` (a checkout of another
commit).

Run: ``python bench/calls_per_delta.py --variant base:src=/tmp/main --variant now [--store off]
[--group 3] [--quota] [--top 40]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

_QUOTAS_OFF = {
    "GATEWAY_QUOTA_CONCURRENT_RUNS": "0",
    "GATEWAY_QUOTA_RATE": "",
    "GATEWAY_QUOTA_STORED_BYTES": "0",
}


async def _child(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).parent))
    import httpx
    import orjson
    from instrumentation import ROUTES, chat_stream, post

    from gateway.app import create_app
    from gateway.config import Settings

    parts = chat_stream(args.deltas)
    parts = [b"".join(parts[i : i + args.group]) for i in range(0, len(parts), args.group)]
    pace = args.pace_ms / 1000

    class Paced(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for part in parts:
                await asyncio.sleep(pace)
                yield part

    calls: collections.Counter[str] = collections.Counter()
    c_calls = 0
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..")) + os.sep

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal c_calls
        if event == "call":
            code = frame.f_code
            where = code.co_filename.split("/site-packages/")[-1]
            calls[f"{where.replace(root, '').replace(args.src, '')}:{code.co_name}"] += 1
        elif event == "c_call":
            c_calls += 1

    handler = httpx.MockTransport(lambda request: httpx.Response(200, stream=Paced()))
    client = httpx.AsyncClient(transport=handler)
    with tempfile.TemporaryDirectory() as folder:
        routes = Path(folder) / "routes.toml"
        routes.write_text(ROUTES, encoding="utf-8")
        store = {"database_url": f"sqlite:///{folder}/runs.db"} if args.store == "sqlite" else {}
        settings = Settings(config=routes, auth="off", retention_seconds=0, **store)
        app = create_app(settings, http_client=client)
        numbers = iter(range(10**9))

        async def one() -> None:
            n = next(numbers)
            message = {"id": f"m{n}", "role": "user", "content": "hi"}
            body = {"threadId": f"t{n}", "runId": f"r{n}", "messages": [message], "tools": []}
            body |= {"context": [], "state": None, "forwardedProps": {}}
            assert await post(app, orjson.dumps(body)) > 0

        async def counted() -> None:
            await asyncio.gather(*(one() for _ in range(args.c)))  # warm up
            sys.setprofile(profile)
            try:
                for _ in range(args.rounds):
                    await asyncio.gather(*(one() for _ in range(args.c)))
            finally:
                sys.setprofile(None)

        if args.store == "off":
            await counted()
        else:
            async with app.router.lifespan_context(app):
                await counted()
        await client.aclose()
    deltas = args.c * args.rounds * args.deltas
    return {
        "python": sum(calls.values()) / deltas,
        "c": c_calls / deltas,
        "top": [(name, count / deltas) for name, count in calls.most_common(args.top)],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", type=int, default=8, help="runs at once")
    parser.add_argument("--deltas", type=int, default=50, help="content deltas per run")
    parser.add_argument("--pace-ms", type=float, default=5.0, help="ms between chunks")
    parser.add_argument("--group", type=int, default=1, help="SSE events per network chunk")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--store", choices=("sqlite", "off"), default="sqlite")
    parser.add_argument("--quota", action="store_true", help="keep the default storage quota")
    parser.add_argument("--top", type=int, default=0, help="print the N most called")
    parser.add_argument("--variant", action="append", default=[], help="NAME[:src=PATH]")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if not args.quota:
            os.environ.update(_QUOTAS_OFF)
        print(json.dumps(asyncio.run(_child(args))))
        return 0
    print(
        f"C={args.c} deltas={args.deltas} pace={args.pace_ms} ms group={args.group} "
        f"store={args.store} quota={'on' if args.quota else 'off'}  (counts per content delta)"
    )
    results: dict[str, dict[str, Any]] = {}
    for text in args.variant or ["now"]:
        name, _, rest = text.partition(":")
        env = dict(os.environ)
        src = ""
        if rest.startswith("src="):
            src = os.path.abspath(rest[4:]) + os.sep
            env["PYTHONPATH"] = os.pathsep.join([src, str(Path(src) / "codecs")])
        command = [sys.executable, __file__, "--child", "--src", src, *_forwarded(args)]
        out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        results[name] = json.loads(out.stdout.strip().splitlines()[-1])
    first = next(iter(results.values()))
    for name, result in results.items():
        ratio = result["python"] / first["python"]
        print(
            f"{name:12} python calls {result['python']:7.1f}  C calls {result['c']:7.1f}"
            f"  python vs {next(iter(results))} {ratio:.3f}"
        )
        for function, count in result["top"]:
            print(f"    {count:7.2f}  {function}")
    return 0


def _forwarded(args: argparse.Namespace) -> Sequence[str]:
    out = ["-c", str(args.c), "--deltas", str(args.deltas), "--pace-ms", str(args.pace_ms)]
    out += ["--group", str(args.group), "--rounds", str(args.rounds), "--store", args.store]
    out += ["--top", str(args.top)] + (["--quota"] if args.quota else [])
    return out


if __name__ == "__main__":
    raise SystemExit(main())
