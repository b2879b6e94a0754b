"""Start the gateway for a bench: one uvicorn process in front of the mock upstream.

Not product code. ``python bench/gateway_proc.py --upstream http://127.0.0.1:PORT --store
sqlite`` serves three ``openai-chat`` routes (model ``gpt-4o-mini``) into the mock:
``p5`` and ``p20`` (deltas 5 / 20 ms apart), ``slow`` and ``idle`` (5 s / 60 s apart, for the
open-streams hold) and ``bulk`` (9,996 deltas at once: a run of 10,000 events), with client auth and the per-tenant quotas off, on 127.0.0.1 and a free port, printed as ``PORT <n>`` once listening.

``--store``: ``off`` (served without the lifespan: the streaming endpoints stream unrecorded,
as an embedding app with ``lifespan="off"`` does), ``sqlite`` (a fresh file in a temp dir, the
default deployment), ``postgres`` (``--pg`` URL, a fresh schema dropped at exit; with
``--redis`` the Redis Streams broker under a fresh prefix). ``--loop`` and ``--http`` pick
uvicorn's event loop and HTTP parser (``auto`` is uvicorn's own choice: uvloop and httptools
when installed; ``guarded``: the h11 protocol with ``agui-gateway serve``'s head and send timeouts,
:mod:`gateway.http_protocol`, which ``serve`` runs with ``GATEWAY_HTTP_PROTOCOL=h11``).

``--server serve``: the server ``agui-gateway serve`` builds (``gateway.server.build_server``
with its defaults: the guarded httptools protocol (``GATEWAY_HTTP_PROTOCOL``), ``GATEWAY_MAX_CONNECTIONS`` as uvicorn's
``limit_concurrency``), uvicorn's loop ``auto``. ``--server granian``: the same app under granian (the Rust HTTP server, ``pip install granian``;
not a dependency of the gateway) instead of uvicorn: one worker process (``workers=1``, its
``mp`` server: a supervisor process and the worker, the benches count the whole process tree),
HTTP/1.1 only, ``--loop`` its event loop (``auto``: uvloop when installed), the ASGI interface
with lifespan (``asginl`` with ``--store off``). ``PORT <n>`` is printed once ``GET /healthz``
answers (granian binds a port given to it: a free one is picked first).

``BENCH_TRACEMALLOC=PATH`` (uvicorn and ``serve``): ``tracemalloc`` runs from the start, and each
``SIGUSR1`` writes the live allocations grouped by source line, largest first (top 40), to
``PATH`` and the whole snapshot to ``PATH.snap`` (``tracemalloc.Snapshot.load``; group it by
file or traceback at leisure) (``bench/open_streams.py --tracemalloc PATH`` sends it with the
streams open).
``BENCH_IDLE_PROFILE=PATH`` (``serve`` only): two ``SIGUSR2`` start and write a cProfile
(``bench/open_streams.py --idle-profile PATH``: the hold only).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

ROUTE = """
[[routes]]
name = "{name}"
upstream_url = "{url}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "none" }}
"""

PACED = {
    "p5": "delay_ms=5",
    "p20": "delay_ms=20",
    "slow": "delay_ms=5000,events=1000",
    "idle": "delay_ms=60000,events=100",
    "bulk": "delay_ms=0,events=9996",
}
"""Routes into the mock: ``{upstream}/<segment>/v1`` (the mock reads its pacing from the path)."""

QUOTAS_OFF = {
    "GATEWAY_QUOTA_CONCURRENT_RUNS": "0",
    "GATEWAY_QUOTA_RATE": "",
    "GATEWAY_QUOTA_STORED_BYTES": "0",
}
"""Per-tenant quotas off (0 / empty): every bench request is the one anonymous tenant, whose
defaults (32 concurrent runs, 600 requests a minute) would answer 429 under the load the
benches make."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the mock's base URL")
    parser.add_argument("--store", choices=("off", "sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default=None)
    parser.add_argument("--loop", default="auto", choices=("auto", "asyncio", "uvloop"))
    parser.add_argument("--http", default="auto", choices=("auto", "h11", "httptools", "guarded"))
    parser.add_argument("--server", default="uvicorn", choices=("uvicorn", "serve", "granian"))
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agui-bench-"))
    routes = tmp / "routes.toml"
    routes.write_text(
        "".join(ROUTE.format(name=n, url=f"{args.upstream}/{seg}/v1") for n, seg in PACED.items())
    )
    os.environ["GATEWAY_CONFIG"] = str(routes)
    os.environ["GATEWAY_AUTH"] = "off"
    for quota, value in QUOTAS_OFF.items():  # a variant may set them back
        os.environ.setdefault(quota, value)
    schema = None
    if args.store == "sqlite":
        os.environ["GATEWAY_DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp / 'runs.db'}"
    elif args.store == "postgres":
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        os.environ["GATEWAY_DATABASE_URL"] = args.pg
        os.environ["GATEWAY_DATABASE_SCHEMA"] = schema
    if args.redis:
        os.environ["GATEWAY_REDIS_URL"] = args.redis
        os.environ["GATEWAY_REDIS_PREFIX"] = f"bench:{uuid.uuid4().hex[:10]}:"

    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        if args.server == "granian":
            _serve_granian(args.store, args.loop)
        elif args.server == "serve":
            _serve_as_shipped(args.store)
        else:
            _serve_uvicorn(args.store, args.loop, args.http)
    finally:
        if schema is not None:
            _drop_schema(args.pg, schema)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def bench_app() -> object:
    """The gateway app from the ``GATEWAY_*`` environment :func:`main` set (granian's factory
    target ``gateway_proc:bench_app``, called in its worker process)."""
    from gateway.app import create_app
    from gateway.config import Settings

    return create_app(Settings())


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _print_port_when_ready(port: int) -> None:
    """In a thread: ``PORT <port>`` once ``GET /healthz`` answers 200 (the worker has loaded the
    app and, with lifespan, opened the store)."""
    import threading
    import time
    import urllib.request

    def poll() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        print(f"PORT {port}", flush=True)
                        return
            except OSError:
                pass
            time.sleep(0.1)
        print("NOT READY", flush=True)

    threading.Thread(target=poll, daemon=True).start()


def _serve_granian(store: str, loop: str) -> None:
    from granian import Granian  # type: ignore[import-not-found]
    from granian.constants import HTTPModes, Interfaces, Loops  # type: ignore[import-not-found]

    port = _free_port()
    server = Granian(
        "gateway_proc:bench_app",
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGINL if store == "off" else Interfaces.ASGI,
        workers=1,
        loop=Loops(loop) if loop != "auto" else Loops.auto,
        http=HTTPModes.http1,
        backlog=4096,
        log_level="warning",
        log_access=False,
        workers_kill_timeout=1,
        factory=True,
    )
    _print_port_when_ready(port)
    profile_path = os.environ.get("BENCH_PROFILE")
    if profile_path:
        print("BENCH_PROFILE is not supported with --server granian", file=sys.stderr)
    server.serve()


def _serve_as_shipped(store: str) -> None:
    """The server ``agui-gateway serve`` runs (:func:`gateway.server.build_server`, its
    defaults: the guarded httptools protocol (``GATEWAY_HTTP_PROTOCOL``), ``GATEWAY_MAX_CONNECTIONS`` as uvicorn's
    ``limit_concurrency``, keep-alive and shutdown grace), lifespan off with ``--store off``."""
    from gateway.app import create_app
    from gateway.config import Settings
    from gateway.server import build_server

    trace_path = os.environ.get("BENCH_TRACEMALLOC")
    if trace_path:
        _install_tracemalloc(trace_path)
    idle_path = os.environ.get("BENCH_IDLE_PROFILE")
    if idle_path:
        _install_idle_profile(idle_path)
    server = build_server(create_app(Settings()), "127.0.0.1", 0, log_level="warning")
    if store == "off":
        server.config.lifespan = "off"
    started = server.startup

    async def startup(sockets: object = None) -> None:
        await started(sockets)  # type: ignore[arg-type]
        print(f"PORT {server.bound_port}", flush=True)

    server.startup = startup  # type: ignore[method-assign]
    shutdown = server.shutdown

    async def quiet_shutdown(sockets: object = None) -> None:
        await shutdown(sockets)  # type: ignore[arg-type]
        server._captured_signals.clear()

    server.shutdown = quiet_shutdown  # type: ignore[method-assign]
    profile_path = os.environ.get("BENCH_PROFILE")
    if profile_path:  # cProfile of the whole process, written at exit (pstats format)
        import cProfile

        cProfile.runctx("server.run()", globals(), {"server": server}, profile_path)
    else:
        server.run()


def _serve_uvicorn(store: str, loop: str, http: str) -> None:
    import uvicorn

    from gateway.app import create_app
    from gateway.config import Settings

    trace_path = os.environ.get("BENCH_TRACEMALLOC")
    if trace_path:
        _install_tracemalloc(trace_path)
    settings = Settings()
    app = create_app(settings)
    protocol: object = http
    if http == "guarded":
        from gateway.http_protocol import guarded_protocol

        protocol = guarded_protocol(
            header_timeout=settings.header_timeout_seconds,
            send_timeout=settings.send_timeout_seconds,
            write_buffer_bytes=settings.write_buffer_bytes,
            max_header_bytes=settings.max_header_bytes,
            socket_send_buffer=settings.socket_send_buffer_bytes,
        )
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        access_log=False,
        lifespan="off" if store == "off" else "on",
        loop=loop,
        http=protocol,  # type: ignore[arg-type]
        backlog=4096,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    started = server.startup

    async def startup(sockets: object = None) -> None:
        await started(sockets)  # type: ignore[arg-type]
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)

    server.startup = startup  # type: ignore[method-assign]
    shutdown = server.shutdown

    async def quiet_shutdown(sockets: object = None) -> None:
        await shutdown(sockets)  # type: ignore[arg-type]
        # uvicorn re-raises the SIGTERM it caught once stopped, which would kill the process
        # before the profile is written and the temp folder removed
        server._captured_signals.clear()

    server.shutdown = quiet_shutdown  # type: ignore[method-assign]
    profile_path = os.environ.get("BENCH_PROFILE")
    if profile_path:  # cProfile of the whole process, written at exit (pstats format)
        import cProfile

        cProfile.runctx("server.run()", globals(), {"server": server}, profile_path)
    else:
        server.run()


def _install_idle_profile(path: str) -> None:
    """``BENCH_IDLE_PROFILE=PATH``: the first ``SIGUSR2`` starts a cProfile of the process, the
    second writes it to ``PATH`` (pstats format): the hold of ``bench/open_streams.py
    --idle-profile PATH`` alone, not the opening burst."""
    import cProfile
    import signal

    profile = cProfile.Profile()
    running = [False]

    def toggle(_signum: int, _frame: object) -> None:
        if not running[0]:
            running[0] = True
            profile.enable()
        else:
            profile.disable()
            running[0] = False
            profile.dump_stats(path)

    signal.signal(signal.SIGUSR2, toggle)


def _install_tracemalloc(path: str) -> None:
    import signal
    import tracemalloc

    frames = int(os.environ.get("BENCH_TRACEMALLOC_FRAMES", "1"))
    tracemalloc.start(frames)

    def dump(_signum: int, _frame: object) -> None:
        snapshot = tracemalloc.take_snapshot()
        snapshot.dump(f"{path}.snap")  # the whole snapshot, for tracemalloc.Snapshot.load
        stats = snapshot.statistics("lineno")
        total = sum(s.size for s in stats)
        lines = [f"total {total / 2**20:.1f} MiB in {sum(s.count for s in stats)} blocks"]
        lines += [f"{s.size / 1024:10.1f} KiB {s.count:8d} {s.traceback[0]}" for s in stats[:40]]
        if frames > 1:  # BENCH_TRACEMALLOC_FRAMES=N: the top allocations with N callers
            for s in snapshot.statistics("traceback")[:25]:
                lines.append(f"{s.size / 1024:10.1f} KiB {s.count:8d}")
                lines += [f"    {frame}" for frame in s.traceback.format()[::2]]
        Path(path).write_text("\n".join(lines) + "\n")

    signal.signal(signal.SIGUSR1, dump)


def _drop_schema(url: str, schema: str) -> None:
    import asyncio

    import asyncpg

    async def drop() -> None:
        dsn = url.replace("postgresql+asyncpg://", "postgresql://")
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    try:
        asyncio.run(drop())
    except Exception as exc:  # reported, not fatal: the schema name is unique
        print(f"could not drop schema {schema}: {exc}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
