"""Run the gateway under uvicorn: :func:`serve` (the CLI's ``serve`` subcommand calls it).

On start it prints one ``curl`` line that streams from the ``demo`` route (or the first route
when there is no ``demo``), with the port actually bound (``port=0`` picks a free one).
"""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path
from typing import TextIO

import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette

from .app import create_app
from .config import Settings
from .errors import ConfigError

__all__ = ["SHUTDOWN_GRACE_SECONDS", "GatewayServer", "build_server", "curl_example", "serve"]

SHUTDOWN_GRACE_SECONDS = 5
"""Seconds open streams get to finish when the server stops."""

_EXAMPLE_BODY = (
    '{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user",'
    '"content":"Weather in Paris?"}],"tools":[],"context":[],"state":null,"forwardedProps":{}}'
)


def curl_example(host: str, port: int, route: str = "demo") -> str:
    """A ``curl`` command streaming AG-UI events from ``route`` on ``host:port``.

    Wildcard hosts (``0.0.0.0``, ``::``, empty) are shown as the loopback address.
    """
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return (
        f"curl -N -X POST http://{host}:{port}/v1/agui/{route} "
        f"-H 'content-type: application/json' -d {shlex.quote(_EXAMPLE_BODY)}"
    )


class GatewayServer(uvicorn.Server):
    """``uvicorn.Server`` that records the bound port and prints the curl example on start.

    Attributes:
        bound_port: the TCP port actually listened on (set once started; useful with port 0).
    """

    def __init__(self, config: uvicorn.Config, *, route: str, out: TextIO | None = None) -> None:
        super().__init__(config)
        self.route = route
        self.out = out
        self.bound_port: int | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.started:
            return
        self.bound_port = self.servers[0].sockets[0].getsockname()[1]
        if self.out is not None:
            print("Try the demo route:", file=self.out)
            print(curl_example(self.config.host, self.bound_port, self.route), file=self.out)
            self.out.flush()


def build_server(
    app: Starlette, host: str, port: int, *, out: TextIO | None = None, log_level: str = "info"
) -> GatewayServer:
    """A :class:`GatewayServer` for ``app`` (no access log; ``lifespan`` on).

    Open streams get :data:`SHUTDOWN_GRACE_SECONDS` to end on shutdown (SSE streams with
    keep-alives would otherwise hold the process open).
    """
    routes = app.state.gateway.routes
    route = "demo" if "demo" in routes else next(iter(routes))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )
    return GatewayServer(config, route=route, out=out)


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
