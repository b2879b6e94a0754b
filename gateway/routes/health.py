"""Health and metrics, public (no credential asked):

* ``GET /healthz`` -> 200 ``{"status": "ok"}``: liveness, the process answers (it checks
  nothing else: a replica whose database is down is alive and is not to be restarted for it);
* ``GET /readyz`` -> 200 or 503 ``{"status": "ready"|"unavailable", "failing": [...],
  "checks": {...}}``: readiness, the store answers a query, its migrations are at head and the
  broker answers a ping (:mod:`gateway.readiness`); load balancers route to ready replicas;
* ``GET /metrics`` -> Prometheus text (0.0.4) of the gateway's metrics (:mod:`gateway.metrics`).
"""

from __future__ import annotations

from starlette.responses import Response

from agui_codecs.protocols.base import INTERNAL_ERRORS

from ..metrics import METRICS_CONTENT_TYPE, render_metrics
from ..readiness import check_readiness
from ._endpoint import Call
from ._http import json_response

__all__ = ["healthz", "metrics", "readyz"]


async def healthz(call: Call) -> Response:
    """``GET /healthz`` -> ``{"status": "ok"}``."""
    return json_response({"status": "ok"})


async def readyz(call: Call) -> Response:
    """``GET /readyz`` -> 200 when every check passes, else 503 naming the failing ones."""
    readiness = await check_readiness(call.services.manager)
    return json_response(
        readiness.to_json(),
        status=200 if readiness.ready else 503,
        headers={"cache-control": "no-store"},
    )


async def metrics(call: Call) -> Response:
    """``GET /metrics`` -> Prometheus text: the process's metrics, then the app's ui_schema
    compiler and decoder counters."""
    body = render_metrics(call.services.pipeline.compiler.stats, INTERNAL_ERRORS)
    return Response(body, media_type=METRICS_CONTENT_TYPE)
