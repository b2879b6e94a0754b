"""Health and metrics: ``GET /healthz`` -> ``{"status": "ok"}`` (liveness: the process answers)
and ``GET /metrics`` -> Prometheus text (0.0.4) of the ui_schema compiler's and the decoders'
counters (:mod:`gateway.metrics`)."""

from __future__ import annotations

from starlette.responses import Response

from agui_codecs.protocols.base import INTERNAL_ERRORS

from ..metrics import METRICS_CONTENT_TYPE, render_metrics
from ._endpoint import Call
from ._http import json_response

__all__ = ["healthz", "metrics"]


async def healthz(call: Call) -> Response:
    """``GET /healthz`` -> ``{"status": "ok"}``."""
    return json_response({"status": "ok"})


async def metrics(call: Call) -> Response:
    """``GET /metrics`` -> Prometheus text: ui_schema compiler and decoder counters."""
    body = render_metrics(call.services.pipeline.compiler.stats, INTERNAL_ERRORS)
    return Response(body, media_type=METRICS_CONTENT_TYPE)
