"""Run the gateway under uvicorn: :func:`serve` (the CLI's ``serve`` subcommand calls it).

On start it prints, with the port actually bound (``port=0`` picks a free one), a ``curl``
line that streams from the ``demo`` route when there is one (its scripted upstream answers a
weather question), else the served routes with their endpoints (:func:`banner`).
"""

from __future__ import annotations

import shlex
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette

from .app import create_app
from .config import RouteConfig, Settings
from .errors import ConfigError
from .http_protocol import guarded_protocol

__all__ = [
    "DEMO_ROUTE",
    "LOOPBACK_HOSTS",
    "SHUTDOWN_GRACE_SECONDS",
    "GatewayServer",
    "banner",
    "build_server",
    "curl_example",
    "resolve_auth",
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


class GatewayServer(uvicorn.Server):
    """``uvicorn.Server`` that records the bound port and prints the :func:`banner` on start.

    Attributes:
        bound_port: the TCP port actually listened on (set once started; useful with port 0).
    """

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        routes: Mapping[str, RouteConfig],
        out: TextIO | None = None,
    ) -> None:
        super().__init__(config)
        self.routes = routes
        self.out = out
        self.bound_port: int | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.started:
            return
        self.bound_port = self.servers[0].sockets[0].getsockname()[1]
        if self.out is not None:
            for line in banner(self.config.host, self.bound_port, self.routes):
                print(line, file=self.out)
            self.out.flush()


def build_server(
    app: Starlette, host: str, port: int, *, out: TextIO | None = None, log_level: str = "info"
) -> GatewayServer:
    """A :class:`GatewayServer` for ``app`` (no access log; ``lifespan`` on).

    Open streams get :data:`SHUTDOWN_GRACE_SECONDS` to end on shutdown (SSE streams with
    keep-alives would otherwise hold the process open). Slow clients are bounded by the app's
    settings (:mod:`gateway.bounds_settings`): the HTTP protocol is
    :class:`~gateway.http_protocol.GuardedH11Protocol` (head and send timeouts, write-buffer
    high-water mark), and uvicorn's ``timeout_keep_alive``, ``h11_max_incomplete_event_size``
    and ``limit_concurrency`` come from ``GATEWAY_KEEP_ALIVE_SECONDS``,
    ``GATEWAY_MAX_HEADER_BYTES`` and ``GATEWAY_MAX_CONNECTIONS``.
    """
    settings: Settings = app.state.services.settings
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        http=guarded_protocol(
            header_timeout=settings.header_timeout_seconds,
            send_timeout=settings.send_timeout_seconds,
            write_buffer_bytes=settings.write_buffer_bytes,
            max_header_bytes=settings.max_header_bytes,
            socket_send_buffer=settings.socket_send_buffer_bytes,
        ),
        timeout_keep_alive=settings.keep_alive_seconds,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        limit_concurrency=settings.max_connections or None,
    )
    return GatewayServer(config, routes=app.state.services.routes, out=out)


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
            database URLs hold passwords); uvicorn could not bind or the app's lifespan could
            not open the run store (exit status 3).
    """
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
    build_server(app, host, port, out=sys.stdout).run()
