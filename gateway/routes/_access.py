"""Access records: one per HTTP request, written when its response has ended.

:class:`AccessLog` is the app's outermost middleware (inside starlette's error middleware), so
it sees every request: endpoints, the demo upstream, CORS preflights, 404s. For a streaming
response the record is written after the last byte (or the disconnect), with the status, the
bytes of body sent and the duration. Handlers add what only they know with :func:`annotate`
(the route name, the run id; :func:`~gateway.routes._endpoint.endpoint` adds the caller's
tenant).

Each record is one ``logging`` record on the ``gateway.access`` logger at INFO, its fields in
``record.access`` (a dict: ``method``, ``path``, ``status``, ``bytes``, ``duration_ms`` and the
annotations). The gateway configures no handler for it, so nothing is printed unless logging
is configured to show it.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ACCESS_LOGGER", "AccessLog", "annotate"]

ACCESS_LOGGER: Final = "gateway.access"
"""Name of the logger access records go to."""

_STATE_KEY: Final = "access"


def annotate(request: Request, **fields: Any) -> None:
    """Add ``fields`` to ``request``'s access record (ignored when none is kept)."""
    record = request.scope.get("state", {}).get(_STATE_KEY)
    if isinstance(record, dict):
        record.update(fields)


class AccessLog:
    """ASGI middleware writing one access record per HTTP request (see the module docstring).

    Args:
        app: the wrapped ASGI app.
        logger: where records go (default the ``gateway.access`` logger).
    """

    def __init__(self, app: ASGIApp, *, logger: logging.Logger | None = None) -> None:
        self.app = app
        self.logger = logger or logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        fields: dict[str, Any] = {}
        scope.setdefault("state", {})[_STATE_KEY] = fields
        status = 0
        sent = 0

        async def counting(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting)
        except BaseException:
            status = status or 500
            raise
        finally:
            record = {
                "method": scope.get("method", ""),
                "path": scope.get("path", ""),
                "status": status,
                "bytes": sent,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                **fields,
            }
            self.logger.info(
                "%s %s %s %dB %.1fms",
                record["method"],
                record["path"],
                record["status"],
                record["bytes"],
                record["duration_ms"],
                extra={"access": record},
            )
