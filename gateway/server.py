"""Run the gateway under uvicorn: :func:`serve` (the CLI's ``serve`` subcommand calls it).

On start it prints what it runs on (:func:`runtime_lines`: the store, with the SQLite file's
path, the broker, the auth mode, the routes, the HTTP parser, log format and traces) and, with
the port actually bound (``port=0`` picks a free one), a ``curl`` line that streams from the
``demo`` route when there is one (its scripted upstream answers a weather question), else the
served routes with their endpoints (:func:`banner`). :func:`serve` configures logging first
(:func:`gateway.logs.configure_logging`: ``GATEWAY_LOG_FORMAT``, ``GATEWAY_LOG_LEVEL``;
uvicorn's own lines go through the same handler) and tracing
(:func:`gateway.tracing.configure_from_env`), and raises the open-files soft limit to the hard
one (:func:`gateway.open_files.raise_open_files_limit`: each stream holds two sockets; a
warning when the limit is below what ``GATEWAY_MAX_CONNECTIONS`` needs). Once started, the
server applies its garbage-collector policy (:func:`gc_policy`: ``GATEWAY_GC_FREEZE``,
``GATEWAY_GC_THRESHOLD``) and hands the interpreter's back when it stops.
"""

from __future__ import annotations

import gc
import logging
import os
import shlex
import socket
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette

from . import tracing
from .app import create_app
from .config import RouteConfig, Settings
from .errors import ConfigError
from .http_protocol import guarded_protocol, resolve_http_parser
from .logs import configure_logging
from .open_files import bounded_connections, raise_open_files_limit
from .store.engine import normalize_url, sqlite_path

__all__ = [
    "DEMO_ROUTE",
    "LOOPBACK_HOSTS",
    "SHUTDOWN_GRACE_SECONDS",
    "GatewayServer",
    "banner",
    "build_server",
    "curl_example",
    "gc_policy",
    "gc_policy_end",
    "resolve_auth",
    "runtime_lines",
    "serve",
]

SHUTDOWN_GRACE_SECONDS = 5
"""Seconds open streams get to finish when the server stops."""

_EXAMPLE_BODY = (
    '{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user",'
    '"content":"Weather in Paris?"}],"tools":[],"context":[],"state":null,"forwardedProps":{}}'
)


DEMO_ROUTE = "demo"
"""The route the demo curl line is aimed at (the embedded routes file defines it)."""


def _base_url(host: str, port: int) -> str:
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def curl_example(host: str, port: int, route: str = DEMO_ROUTE) -> str:
    """A ``curl`` command streaming AG-UI events from ``route`` on ``host:port`` (a weather
    question: what the demo upstream answers).

    Wildcard hosts (``0.0.0.0``, ``::``, empty) are shown as the loopback address.
    """
    return (
        f"curl -N -X POST {_base_url(host, port)}/v1/agui/{route} "
        f"-H 'content-type: application/json' -d {shlex.quote(_EXAMPLE_BODY)}"
    )


def banner(host: str, port: int, routes: Mapping[str, RouteConfig]) -> list[str]:
    """The start-up lines: the demo curl line when a ``demo`` route exists, else each route
    with its protocol and its two endpoints (no request body is guessed for a real model)."""
    if DEMO_ROUTE in routes:
        return ["Try the demo route:", curl_example(host, port, DEMO_ROUTE)]
    base = _base_url(host, port)
    lines = [f"Serving {len(routes)} route{'s' if len(routes) != 1 else ''} on {base}:"]
    for name, route in routes.items():
        lines.append(
            f"  {name} ({route.protocol}): POST {base}/v1/agui/{name}"
            f"  |  POST {base}/v1/ai-sdk/{name}"
        )
    return lines


def _store_line(settings: Settings) -> str:
    path = sqlite_path(settings.database_url)
    if path is not None:
        return f"sqlite {path}"
    url = normalize_url(settings.database_url)
    if url.get_backend_name() == "sqlite":
        return "sqlite in memory (runs are lost at exit)"
    shown = url.set(drivername=url.get_backend_name()).render_as_string(hide_password=True)
    schema = f" (schema {settings.database_schema})" if settings.database_schema else ""
    return f"{shown}{schema}"


def _broker_line(settings: Settings) -> str:
    if not settings.redis_url:
        return "in-process (one replica: set GATEWAY_REDIS_URL for several)"
    parts = urlsplit(settings.redis_url)
    host = parts.hostname or parts.path or "?"
    port = f":{parts.port}" if parts.port else ""
    shown = f"{parts.scheme}://{host}{port}{parts.path if parts.hostname else ''}"
    return f"redis {shown} (prefix {settings.redis_prefix})"  # replicas must share it


def runtime_lines(settings: Settings, routes: Mapping[str, RouteConfig]) -> list[str]:
    """What the process runs on: store (the SQLite file's absolute path; URLs without their
    password), broker (Redis: with its key prefix), auth mode, routes, HTTP parser, logs,
    traces, the collector policy (:func:`gc_policy`)."""
    auth: str = settings.auth
    if auth == "required" and settings.jwt_enabled:
        auth = "required (API keys, JWT)"
    elif auth == "required":
        auth = "required (API keys)"
    traces = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or "OTLP default endpoint"
        if tracing.enabled()
        else "off"
    )
    handlers = [h for h in logging.getLogger().handlers if hasattr(h, "_agui_gateway_handler")]
    logs = "json" if handlers and "Json" in type(handlers[0].formatter).__name__ else "text"
    level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
    return [
        f"  store:   {_store_line(settings)}",
        f"  broker:  {_broker_line(settings)}",
        f"  auth:    {auth}",
        f"  routes:  {', '.join(routes)} ({len(routes)})",
        f"  http:    {resolve_http_parser(settings.http_protocol)}"
        f" (GATEWAY_HTTP_PROTOCOL={settings.http_protocol})",
        f"  logs:    {logs}, {level}; metrics GET /metrics; readiness GET /readyz",
        f"  traces:  {traces}",
        f"  gc:      {_gc_line(settings)}",
    ]


def _gc_line(settings: Settings) -> str:
    frozen = "start-up frozen" if settings.gc_freeze else "nothing frozen"
    threshold = settings.gc_threshold or f"{gc.get_threshold()[0]} (the interpreter's)"
    return f"{frozen}, generation-0 threshold {threshold} (GATEWAY_GC_FREEZE, GATEWAY_GC_THRESHOLD)"


class _GcState:
    """The policy's bookkeeping in this process (in-process tests run several servers): how
    many servers applied it, the thresholds the first one replaced, whether one froze."""

    lock = threading.Lock()
    holders = 0
    saved: tuple[int, int, int] = (0, 0, 0)
    frozen = False


def gc_policy(settings: Settings) -> bool:
    """Apply ``serve``'s policy for the cyclic garbage collector, once the app has started
    (imports done, routes built, store opened: what start-up made lives as long as the process).

    ``GATEWAY_GC_FREEZE`` (default on): ``gc.collect()``, then ``gc.freeze()``: the objects
    alive now go to the permanent generation, which later collections do not scan (a full
    collection scanned the whole import-time object graph: about 50 ms, one every ~8 replays
    of 10,000 events). Their memory is freed by reference counting as before; only a cycle
    among them outlives its last reference (the start-up's cycles were collected first).
    ``GATEWAY_GC_THRESHOLD`` (default :data:`~gateway.bounds_settings.DEFAULT_GC_THRESHOLD`,
    0: unchanged): generation 0 is collected after that many net container allocations instead
    of Python's 700 (the older generations' thresholds, 10 and 10, are kept), so a stream's
    short-lived events are freed by reference counting before a young collection looks at
    them (no collection at all during a replay; 12 young ones a replay at 700); cycles are
    still collected, at most that many net allocations later (up to that many containers of
    cyclic garbage wait: what they hold is the memory cost).

    The practice: Instagram's "Dismissing Python Garbage Collection at Instagram" (2017,
    https://instagram-engineering.com/dismissing-python-garbage-collection-at-instagram-4dca40b29172),
    which led to ``gc.freeze`` (CPython 3.7, https://bugs.python.org/issue31558), and
    "20% Faster Python with a Single GC Tweak" (https://engineered.at/articles/20-faster-python-with-a-single-gc-tweak:
    ``gc.collect``, ``gc.freeze`` and ``gc.set_threshold(50_000, ...)`` in a web service);
    the figures here are in README Performance ("The garbage collector of serve").

    Returns:
        Whether anything was applied (then :func:`gc_policy_end` undoes it when the server
        stops; with several servers in one process, the last to stop does).
    """
    threshold = settings.gc_threshold
    if not settings.gc_freeze and not threshold:
        return False
    with _GcState.lock:
        if not _GcState.holders:
            _GcState.saved = gc.get_threshold()
        _GcState.holders += 1
        if threshold:
            gc.set_threshold(threshold, *gc.get_threshold()[1:])
        if settings.gc_freeze:
            gc.collect()
            gc.freeze()
            _GcState.frozen = True
    return True


def gc_policy_end() -> None:
    """Undo one :func:`gc_policy`; the last one applied in the process restores the thresholds
    it found and unfreezes (``gc.unfreeze``: the frozen objects join the oldest generation)."""
    with _GcState.lock:
        if not _GcState.holders:
            return
        _GcState.holders -= 1
        if _GcState.holders:
            return
        gc.set_threshold(*_GcState.saved)
        if _GcState.frozen:
            gc.unfreeze()
            _GcState.frozen = False


class GatewayServer(uvicorn.Server):
    """``uvicorn.Server`` that records the bound port, applies :func:`gc_policy` (its
    ``settings``') and prints the :func:`banner` on start, and ends the policy when it stops.

    Attributes:
        bound_port: the TCP port actually listened on (set once started; useful with port 0).
        gc_applied: whether this server's :func:`gc_policy` is in force.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        routes: Mapping[str, RouteConfig],
        out: TextIO | None = None,
        settings: Settings | None = None,
    ) -> None:
        super().__init__(config)
        self.routes = routes
        self.settings = settings
        self.out = out
        self.bound_port: int | None = None
        self.gc_applied = False

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.started:
            return
        if self.settings is not None:
            self.gc_applied = gc_policy(self.settings)
        self.bound_port = self.servers[0].sockets[0].getsockname()[1]
        if self.out is not None:
            lines = []
            if self.settings is not None:
                lines = ["agui-gateway:", *runtime_lines(self.settings, self.routes)]
            for line in [*lines, *banner(self.config.host, self.bound_port, self.routes)]:
                print(line, file=self.out)
            self.out.flush()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().shutdown(sockets)
        finally:
            if self.gc_applied:
                self.gc_applied = False
                gc_policy_end()


def build_server(
    app: Starlette, host: str, port: int, *, out: TextIO | None = None, log_level: str = "info"
) -> GatewayServer:
    """A :class:`GatewayServer` for ``app`` (no uvicorn access log: the gateway writes its own,
    :mod:`gateway.routes._access`; no uvicorn log config: its loggers propagate to the
    handler :func:`gateway.logs.configure_logging` installed; ``lifespan`` on).

    Open streams get :data:`SHUTDOWN_GRACE_SECONDS` to end on shutdown (SSE streams with
    keep-alives would otherwise hold the process open). Slow clients are bounded by the app's
    settings (:mod:`gateway.bounds_settings`): the HTTP protocol is
    :class:`~gateway.http_httptools.GuardedHttpToolsProtocol` (``GATEWAY_HTTP_PROTOCOL=auto``
    with httptools importable, or ``httptools``) or :class:`~gateway.http_protocol.
    GuardedH11Protocol` (``h11``), both with head and send timeouts and a write-buffer
    high-water mark; uvicorn's ``timeout_keep_alive``, ``h11_max_incomplete_event_size``
    and ``limit_concurrency`` come from ``GATEWAY_KEEP_ALIVE_SECONDS``,
    ``GATEWAY_MAX_HEADER_BYTES`` and ``GATEWAY_MAX_CONNECTIONS`` (lowered to what the open-files
    limit serves, :func:`gateway.open_files.bounded_connections`); the event loop is uvicorn's
    ``auto`` (uvloop when installed).
    """
    settings: Settings = app.state.services.settings
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        http=guarded_protocol(
            header_timeout=settings.header_timeout_seconds,
            send_timeout=settings.send_timeout_seconds,
            write_buffer_bytes=settings.write_buffer_bytes,
            max_header_bytes=settings.max_header_bytes,
            socket_send_buffer=settings.socket_send_buffer_bytes,
            parser=resolve_http_parser(settings.http_protocol),
        ),
        timeout_keep_alive=settings.keep_alive_seconds,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        limit_concurrency=_uvicorn_limit(bounded_connections(settings.max_connections)),
    )
    services = app.state.services
    return GatewayServer(config, routes=services.routes, out=out, settings=services.settings)


def _uvicorn_limit(connections: int) -> int | None:
    """uvicorn's ``limit_concurrency`` that serves ``connections`` at once (``0``: no bound).

    uvicorn (0.30 to 0.54, ``protocols/http/*_impl.py`` ``handle_events`` / ``on_url``) answers
    503 when ``len(connections) >= limit_concurrency`` at a request's start, a count that
    includes the connection asking: a limit of ``L`` serves ``L - 1``. The one refused beyond
    the bound costs one descriptor (no upstream), within :mod:`gateway.open_files`' margin."""
    return connections + 1 if connections > 0 else None


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts on which ``GATEWAY_AUTH=auto`` leaves the embedded demo open."""


def resolve_auth(settings: Settings, host: str) -> Settings:
    """``settings`` with ``auth = "auto"`` resolved for a server bound to ``host``: ``off``
    when it serves the embedded demo routes (no routes file) on a loopback host (what ``make
    run`` does, so its curl line needs no key), else ``required``."""
    if settings.auth != "auto":
        return settings
    is_open = settings.config is None and (host in LOOPBACK_HOSTS or host.startswith("127."))
    return settings.model_copy(update={"auth": "off" if is_open else "required"})


def serve(config_path: str | None, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the gateway until interrupted (Ctrl-C / SIGTERM).

    Args:
        config_path: routes TOML file; ``None`` uses ``GATEWAY_CONFIG``, else the embedded
            demo routes.
        host: interface to bind (``0.0.0.0`` for all).
        port: TCP port (``0`` = any free port; the printed curl line shows the real one).

    Raises:
        SystemExit: the routes file or a ``GATEWAY_*`` setting is invalid (the message, on
            stderr, names the file, route and field, or the variable; never its value, since
            database URLs hold passwords; ``GATEWAY_HTTP_PROTOCOL=httptools`` without an
            importable ``httptools``); uvicorn could not bind or the app's lifespan could
            not open the run store (exit status 3).
    """
    try:
        configure_logging()
    except ValueError as exc:
        raise SystemExit(f"agui-gateway: invalid GATEWAY_* setting:\n{exc}") from None
    tracing.configure_from_env()
    try:
        settings = Settings(config=Path(config_path)) if config_path else Settings()
        settings = resolve_auth(settings, host)
        app = create_app(settings)
    except ConfigError as exc:
        raise SystemExit(f"agui-gateway: invalid configuration:\n{exc.message}") from None
    except ValidationError as exc:  # GATEWAY_* settings; inputs left out (URLs hold passwords)
        problems = "\n".join(
            f"GATEWAY_{'_'.join(str(p) for p in err['loc']).upper() or '*'}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False)
        )
        raise SystemExit(f"agui-gateway: invalid GATEWAY_* setting:\n{problems}") from None
    except ValueError as exc:
        raise SystemExit(f"agui-gateway: invalid GATEWAY_* setting:\n{exc}") from None
    raise_open_files_limit(settings.max_connections)
    level = logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower()
    try:
        server = build_server(app, host, port, out=sys.stdout, log_level=level)
    except ImportError as exc:  # GATEWAY_HTTP_PROTOCOL's httptools, not importable
        if resolve_http_parser(settings.http_protocol) != "httptools":
            raise
        raise SystemExit(
            "agui-gateway: invalid GATEWAY_* setting:\nGATEWAY_HTTP_PROTOCOL: "
            f"{settings.http_protocol} needs the httptools package, which cannot be imported "
            f"({exc}): install it or set h11"
        ) from None
    server.run()
