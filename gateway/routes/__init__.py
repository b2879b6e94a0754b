"""The gateway's HTTP endpoints, one module per room; :func:`endpoints` is the URL table.

==========================================================  ============  ======================
method and path                                             handler       reply
==========================================================  ============  ======================
``POST /v1/agui/{route}``                                   ``stream``    AG-UI SSE
``POST /v1/ai-sdk/{route}``                                 ``stream``    UIMessageChunk SSE
``GET  /v1/ai-sdk/{route}/{chat_id}/stream``                ``runs``      204, or AI SDK SSE
``DELETE /v1/ai-sdk/{route}/{chat_id}/stream``              ``runs``      200 JSON, or 204
``POST /v1/workflow/{route}/{chat_id}``                     ``workflow``  UIMessageChunk SSE
``GET  /v1/workflow/{route}/{chat_id}/{run_id}/stream``     ``workflow``  AI SDK SSE from
                                                                          ``?startIndex=``
``POST /api/v1/agent/runs``                                 ``runs``      201 JSON
``POST /api/v1/agent/runs/{thread_id}/cancel?runId=``       ``runs``      200 JSON
``POST /api/v1/agent/runs/{thread_id}/token?runId=``        ``runs``      200 JSON
``GET  /api/v1/agent/runs/{thread_id}/events?runId=``       ``runs``      AG-UI SSE
``GET  /api/v1/agent/history?threadId=``                    ``history``   200 JSON
``GET  /api/v1/agent/runs?threadId=``                       ``history``   200 JSON
``GET  /healthz``, ``GET /readyz``, ``GET /metrics``       ``health``    JSON, Prometheus text
``GET  /inspect``, ``/inspect/static/{name}``               ``inspect``   the inspector page
``GET  /inspect/api/threads|runs|verdicts``                 ``inspect``   200 JSON
==========================================================  ============  ======================

The shape of every room: a handler parses the request (:mod:`._http`), calls the app's
:class:`~gateway.services.Services`, answers. Every endpoint is registered through
:func:`~._endpoint.endpoint`, the one place a request's caller is resolved and checked
(:func:`~._endpoint.admit`); :class:`~._access.AccessLog` writes one access record per
request; :data:`~._http.EXCEPTION_HANDLERS` turn typed errors into the JSON refusal
``{"error": {"code", "message"}, "detail"?}``.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from ..services import Services
from . import health, history, inspect, runs, stream, workflow
from ._access import ACCESS_LOGGER, OVERHEAD_HEADER, AccessLog, annotate
from ._endpoint import ANONYMOUS, PUBLIC, Call, Caller, Handler, admit, endpoint
from ._http import EXCEPTION_HANDLERS

__all__ = [
    "ACCESS_LOGGER",
    "ANONYMOUS",
    "EXCEPTION_HANDLERS",
    "OVERHEAD_HEADER",
    "PUBLIC",
    "AccessLog",
    "Call",
    "Caller",
    "Handler",
    "admit",
    "annotate",
    "endpoint",
    "endpoints",
]

_PUBLIC = "public"  # no credential asked (health, readiness, metrics, the inspector's page)
_TOKENS = "tokens"  # a scoped token is accepted (?access_token=: a browser EventSource)

_TABLE: tuple[tuple[str, str, Handler, str], ...] = (
    ("GET", "/healthz", health.healthz, _PUBLIC),
    ("GET", "/readyz", health.readyz, _PUBLIC),
    ("GET", "/metrics", health.metrics, _PUBLIC),
    ("POST", "/v1/agui/{route}", stream.agui, ""),
    ("POST", "/v1/ai-sdk/{route}", stream.ai_sdk, ""),
    ("GET", "/v1/ai-sdk/{route}/{chat_id}/stream", runs.ai_sdk_resume, ""),
    ("DELETE", "/v1/ai-sdk/{route}/{chat_id}/stream", runs.ai_sdk_cancel, ""),
    ("POST", "/v1/workflow/{route}/{chat_id}", workflow.workflow_chat, ""),
    ("GET", "/v1/workflow/{route}/{chat_id}/{run_id}/stream", workflow.workflow_stream, ""),
    ("POST", "/api/v1/agent/runs", runs.create_run, ""),
    ("GET", "/api/v1/agent/runs", history.thread_runs, ""),
    ("POST", "/api/v1/agent/runs/{thread_id}/cancel", runs.cancel_run, ""),
    ("POST", "/api/v1/agent/runs/{thread_id}/token", runs.events_token, ""),
    ("GET", "/api/v1/agent/runs/{thread_id}/events", runs.events, _TOKENS),
    ("GET", "/api/v1/agent/history", history.history, ""),
    ("GET", "/inspect", inspect.page, _PUBLIC),
    ("GET", "/inspect/static/{name}", inspect.static, _PUBLIC),
    ("GET", "/inspect/api/threads", inspect.thread_list, ""),
    ("GET", "/inspect/api/runs", inspect.run_list, ""),
    ("GET", "/inspect/api/verdicts", inspect.verdicts, ""),
)


def endpoints(services: Services) -> list[BaseRoute]:
    """The starlette routes of every endpoint (the table above), bound to ``services``; every
    one but health, readiness and metrics asks the door for a credential."""
    return [
        Route(
            path,
            endpoint(handler, services, public=kind == _PUBLIC, tokens=kind == _TOKENS),
            methods=[method],
        )
        for method, path, handler, kind in _TABLE
    ]
