"""Access records: one per HTTP request, written when its response has ended.

:class:`AccessLog` is the app's outermost middleware (inside starlette's error middleware), so
it sees every request: endpoints, the demo upstream, CORS preflights, 404s. For a streaming
response the record is written after the last byte (or the disconnect), with the status, the
bytes of body sent and the duration. Handlers add what only they know with :func:`annotate`
(the route name, the run id; :func:`~gateway.routes._endpoint.endpoint` adds the caller's
tenant).

Each record is one ``logging`` record on the ``gateway.access`` logger at INFO, its fields in
``record.access`` (a dict: ``method``, ``path``, ``status``, ``bytes``, ``duration_ms`` and the
annotations: ``endpoint``, the matched path template, ``route``, ``run_id``, ``tenant``,
``subject``); :func:`gateway.logs.configure_logging` (what ``serve`` installs) prints them as
JSON or text. The annotations are also the request's log context (:mod:`gateway.logs`), so
every line logged while serving it names its route and run.

Every streaming response (``content-type: text/event-stream``) gets the
:data:`OVERHEAD_HEADER` here, when its headers go out. With tracing on (:mod:`gateway.tracing`)
this is also where each request's SERVER span starts and ends.

Body messages need not pass through every wrapper: each request's scope carries a
:data:`~gateway.sse_response.BODY_WRITER` that sends an ``http.response.body`` message straight
to the ``send`` this middleware was given, counting its bytes into the record. Every layer
inside this one (CORS, starlette's exception middleware and route wrappers) looks at the
``http.response.start`` message only, so a response that sent its start through ``send`` may
send its body there (:class:`~gateway.sse_response.SSEResponse` does, about 55 messages per
run: issue 13). A middleware that rewrites bodies must not be placed inside this one.

The same place counts the request in ``agui_gateway_http_requests_total`` and
``agui_gateway_http_request_duration_seconds`` (:mod:`gateway.metrics`), labelled by the
matched path template (``other`` for unmatched paths: no label per unknown URL).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from typing import Any, Final

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import metrics, tracing
from ..logs import reset_context, use_context
from ..sse_response import BODY_WRITER

__all__ = ["ACCESS_LOGGER", "OVERHEAD_HEADER", "AccessLog", "annotate"]

ACCESS_LOGGER: Final = "gateway.access"
"""Name of the logger access records go to."""

OVERHEAD_HEADER: Final = "x-agui-gateway-overhead-duration-ms"
"""Response header of every streaming (``text/event-stream``) response: milliseconds of the
gateway's own time from the request's arrival to the response's first byte (parsing, auth,
recording the run; the upstream is called after it, in the background), after LiteLLM's
``x-litellm-overhead-duration-ms``."""

OVERHEAD_HEADER_RAW: Final = OVERHEAD_HEADER.encode("latin-1")

_STATE_KEY: Final = "access"


def annotate(request: Request, **fields: Any) -> None:
    """Add ``fields`` to ``request``'s access record (ignored when none is kept)."""
    record = request.scope.get("state", {}).get(_STATE_KEY)
    if isinstance(record, dict):
        record.update(fields)


class _BodyWriter:
    """The scope's :data:`~gateway.sse_response.BODY_WRITER`: one body message to ``send``,
    its bytes counted in ``sent``."""

    __slots__ = ("send", "sent")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.sent = 0

    def write(self, body: bytes, more_body: bool = True) -> Awaitable[None]:
        self.sent += len(body)
        return self.send({"type": "http.response.body", "body": body, "more_body": more_body})


class AccessLog:
    """ASGI middleware writing one access record per HTTP request (see the module docstring).

    Args:
        app: the wrapped ASGI app.
        logger: where records go (default the ``gateway.access`` logger).
    """

    def __init__(self, app: ASGIApp, *, logger: logging.Logger | None = None) -> None:
        self.app = app
        self.logger = logger or logging.getLogger(ACCESS_LOGGER)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # a plain function returning the coroutine to await: one frame less that every open
        # stream holds for its whole life (issue 13)
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        if tracing.enabled():
            return self._traced(scope, receive, send)
        return self._serve(scope, receive, send, None)

    async def _traced(self, scope: Scope, receive: Receive, send: Send) -> None:
        with tracing.server_span(scope) as span:
            await self._serve(scope, receive, send, span)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, span: Any) -> None:
        started = time.perf_counter()
        fields: dict[str, Any] = {}
        scope.setdefault("state", {})[_STATE_KEY] = fields
        token = use_context(fields)
        status = 0
        sent = 0
        writer = _BodyWriter(send)
        scope[BODY_WRITER] = writer.write

        async def counting(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers") or []
                if _is_stream(headers):
                    overhead = f"{(time.perf_counter() - started) * 1000:.3f}".encode()
                    message = {**message, "headers": [*headers, (OVERHEAD_HEADER_RAW, overhead)]}
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting)
        except BaseException:
            status = status or 500
            raise
        finally:
            elapsed = time.perf_counter() - started
            sent += writer.sent
            method = scope.get("method", "")
            matched = scope.get("route")
            endpoint = getattr(matched, "path", None) or "other"
            metrics.REQUESTS.labels(method, endpoint, fields.get("route") or "", str(status)).inc()
            metrics.REQUEST_SECONDS.labels(method, endpoint).observe(elapsed)
            if span is not None:
                span.update_name(f"{method} {endpoint}" if matched is not None else method)
                span.set_attribute("http.response.status_code", status)
                if matched is not None:
                    span.set_attribute("http.route", endpoint)
                for key in ("route", "run_id"):
                    if fields.get(key) is not None:
                        span.set_attribute(f"agui.{key}", str(fields[key]))
            record = {
                "method": method,
                "path": scope.get("path", ""),
                "status": status,
                "bytes": sent,
                "duration_ms": round(elapsed * 1000, 3),
                "endpoint": endpoint,
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
            reset_context(token)


def _is_stream(headers: Any) -> bool:
    for name, value in headers:
        if name.lower() == b"content-type":
            return bytes(value).lower().startswith(b"text/event-stream")
    return False
