"""The HTTP surface of the gateway (starlette): ``create_app(settings, *, http_client=None)``.

Endpoints:

* ``POST /v1/agui/{route}``: body ``RunAgentInput`` (AG-UI 1.0, ``ag_ui.core``) -> AG-UI SSE
  (:class:`~agui_codecs.encoders.agui.AguiEncoder`), as ``@ag-ui/client`` ``HttpAgent`` posts it;
* ``POST /v1/ai-sdk/{route}``: body ``{id, messages: UIMessage[], trigger, messageId?, ...}``
  (``ai`` 7 ``DefaultChatTransport``) -> UIMessageChunk SSE
  (:class:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder`) ending with ``data: [DONE]``;
* durable runs (:mod:`gateway.routes_runs`, :mod:`gateway.routes_history`):
  ``POST /api/v1/agent/runs``, ``POST /api/v1/agent/runs/{thread_id}/cancel``,
  ``GET /api/v1/agent/runs/{thread_id}/events`` (SSE, ``Last-Event-ID`` resume),
  ``GET /v1/ai-sdk/{route}/{chatId}/stream`` (AI SDK resume), ``GET /api/v1/agent/history``;
* ``GET /healthz`` -> ``{"status": "ok"}``;
* ``GET /metrics`` -> Prometheus text: the ui_schema compiler's and the decoders' counters
  (:mod:`gateway.metrics`);
* ``/demo/openai/v1/chat/completions``: the scripted demo upstream (:mod:`gateway.demo`).

Both stream endpoints run the same per-run pipeline (:class:`~gateway.pipeline.RunPipeline`:
upstream → decoder → UI stage) and differ only in the request model and the encoder. The app
lifespan opens the run store and broker (:meth:`gateway.routes_runs.DurableRuns.opened`); with
it, both record their runs, which a background pump carries on whether or not the client stays
(``GATEWAY_ON_DISCONNECT``), and the response reads the run back. Served without its lifespan
(an embedding app with ``lifespan="off"``), the app streams without recording and the run
endpoints answer 503.

Before a stream starts, refusals are JSON ``{"error": {"code", "message"}, "detail"?}``: 404
``ROUTE_NOT_FOUND`` (also ``NOT_FOUND`` for unknown paths), 405 ``METHOD_NOT_ALLOWED``, 413
``REQUEST_TOO_LARGE``, 415 ``UNSUPPORTED_MEDIA_TYPE`` (a JSON endpoint's body not declared
``application/json`` or ``*+json``: cross-site "simple" POSTs cannot start runs), 422
``INVALID_REQUEST`` (``detail`` = pydantic's error list, without input echoes; also an empty
conversation for a provider route) or 422 ``UNSUPPORTED_CONTENT`` / ``INVALID_TOOL_ARGUMENTS``
/ ``INVALID_TOOL_RESULT`` (the input has no equivalent upstream). Once streaming, every failure
is a terminal event (see :mod:`gateway.upstream`).

CORS: off unless ``GATEWAY_CORS_ORIGINS`` lists origins (starlette ``CORSMiddleware``, which
also answers the ``OPTIONS`` preflight). The gateway authenticates to upstreams with the
route's key variable only; a client's ``Authorization`` header and cookies are never
forwarded (put a reverse proxy in front for client auth).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TypeVar

import httpx
from ag_ui.core import RunAgentInput
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.errors import CodecError
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.ai_sdk.chat_request import (
    AiSdkChatRequest,
    response_message_id,
    to_run_agent_input,
)
from agui_codecs.protocols.base import INTERNAL_ERRORS
from agui_codecs.ui import UiSchemaCompiler

from .asgi_transport import StreamingASGITransport
from .config import RouteConfig, Settings
from .demo import DEMO_MOUNT, create_demo_app
from .errors import InvalidRequestError, RequestError, RouteNotFoundError
from .metrics import METRICS_CONTENT_TYPE, render_metrics
from .pipeline import Encoder, RunPipeline, encode_batches
from .routes_history import history
from .routes_runs import DurableRuns, RunRequest
from .routes_runs import json_response as _json_response
from .sse_response import SSEResponse
from .store import RunStoreError
from .upstream import SELF_BASE_URL, Upstream

__all__ = ["create_app"]

_M = TypeVar("_M", bound=BaseModel)


class _Gateway:
    """The endpoint handlers, bound to one app's settings, routes and run pipeline."""

    def __init__(
        self, settings: Settings, routes: Mapping[str, RouteConfig], pipeline: RunPipeline
    ) -> None:
        self.settings = settings
        self.routes = routes
        self.pipeline = pipeline
        self.runs = DurableRuns(settings, pipeline)

    @property
    def upstream(self) -> Upstream:
        """The upstream client of the pipeline."""
        return self.pipeline.upstream

    def _route(self, request: Request) -> RouteConfig:
        return self._named_route(request.path_params["route"])

    def _named_route(self, name: str) -> RouteConfig:
        route = self.routes.get(name)
        if route is None:
            known = ", ".join(sorted(self.routes)) or "none"
            raise RouteNotFoundError(f"no route named {name!r} (known: {known})")
        return route

    async def _parse(self, request: Request, model: type[_M]) -> tuple[_M, bytes]:
        _require_json(request)
        limit = self.settings.max_request_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > limit:
                raise _too_large(limit)
        body = bytes(raw)
        try:
            return model.model_validate_json(body), body
        except ValidationError as exc:
            raise InvalidRequestError(
                f"request body is not a valid {model.__name__}",
                detail=exc.errors(include_url=False, include_input=False),
            ) from exc

    async def _stream(
        self,
        request: Request,
        route: RouteConfig,
        client: ClientRequest,
        encoder: Encoder,
        *,
        message_id: str | None = None,
    ) -> SSEResponse:
        language = request.headers.get("accept-language")
        if self.runs.manager is not None:
            return await self.runs.stream(
                route, client, encoder, accept_language=language, message_id=message_id
            )
        batches = self.pipeline.open(route, client, accept_language=language)
        return SSEResponse(
            encode_batches(batches, encoder),
            keepalive_seconds=self.settings.keepalive_seconds,
            headers=type(encoder).headers,
        )

    async def agui(self, request: Request) -> Response:
        """``POST /v1/agui/{route}``: RunAgentInput -> AG-UI SSE."""
        route = self._route(request)
        run_input, raw = await self._parse(request, RunAgentInput)
        client = ClientRequest(run_input, wire="agui", raw=raw)
        return await self._stream(request, route, client, AguiEncoder())

    async def ai_sdk(self, request: Request) -> Response:
        """``POST /v1/ai-sdk/{route}``: AI SDK chat request -> UIMessageChunk SSE + [DONE]."""
        route = self._route(request)
        chat, raw = await self._parse(request, AiSdkChatRequest)
        run_input = to_run_agent_input(chat, run_id=f"run_{uuid.uuid4().hex}")
        message_id = response_message_id(chat)
        if message_id is None and route.protocol != "ai-sdk":
            # An AI SDK backend picks its own messageId (``start``, kept in RUN_STARTED
            # metadata), which the encoder falls back to; other upstreams have none.
            message_id = f"msg_{uuid.uuid4().hex}"
        client = ClientRequest(run_input, wire="ai-sdk", raw=raw)
        encoder = AiSdkEncoder(message_id=message_id, ai_sdk_major=route.ai_sdk_major)
        return await self._stream(request, route, client, encoder, message_id=message_id)

    async def ai_sdk_resume(self, request: Request) -> Response:
        """``GET /v1/ai-sdk/{route}/{chatId}/stream``: 204, or the chat's active run replayed
        from its first chunk and then live (``ai`` ``DefaultChatTransport.reconnectToStream``)."""
        route = self._route(request)
        return await self.runs.ai_sdk_resume(request.path_params["chat_id"], route)

    async def create_run(self, request: Request) -> Response:
        """``POST /api/v1/agent/runs``: ``{route, input}`` -> ``201 {threadId, runId}``."""
        self.runs.require()
        body, _raw = await self._parse(request, RunRequest)
        route = self._named_route(body.route)
        language = request.headers.get("accept-language")
        return await self.runs.create(route, body.input, accept_language=language)

    async def cancel_run(self, request: Request) -> Response:
        """``POST /api/v1/agent/runs/{thread_id}/cancel?runId=``."""
        return await self.runs.cancel(request)

    async def run_events(self, request: Request) -> Response:
        """``GET /api/v1/agent/runs/{thread_id}/events?runId=``: the run's AG-UI SSE."""
        return await self.runs.events(request)

    async def history(self, request: Request) -> Response:
        """``GET /api/v1/agent/history?threadId=&limit=&before_sequence=``."""
        return await history(self.runs, request)

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz`` -> ``{"status": "ok"}``."""
        return _json_response({"status": "ok"})

    async def metrics(self, request: Request) -> Response:
        """``GET /metrics`` -> Prometheus text: ui_schema compiler and decoder counters."""
        body = render_metrics(self.pipeline.compiler.stats, INTERNAL_ERRORS)
        return Response(body, media_type=METRICS_CONTENT_TYPE)


def _is_json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _require_json(request: Request) -> None:
    """Refuse a body that is not declared JSON (415).

    A cross-site page may POST ``text/plain``, form or multipart bodies without a CORS
    preflight ("simple requests"); JSON is only sent after the preflight, which the gateway
    answers only for ``GATEWAY_CORS_ORIGINS``. So a ``text/plain`` body holding JSON must not
    start a (paid) run.
    """
    content_type = request.headers.get("content-type", "")
    if not _is_json_media_type(content_type):
        got = content_type.split(";", 1)[0].strip()[:100] or "none"
        raise RequestError(
            f"request body must be JSON: send content-type: application/json (got {got})",
            code="UNSUPPORTED_MEDIA_TYPE",
            status=415,
        )


def _too_large(limit: int) -> RequestError:
    return RequestError(f"request body exceeds {limit} bytes", code="REQUEST_TOO_LARGE", status=413)


async def _request_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestError)
    return _json_response(exc.to_json(), exc.status)


async def _codec_error(request: Request, exc: Exception) -> Response:
    """A codec error before any stream started: its ``status_hint`` (422 for a request that has
    no equivalent upstream) with its code and message; without a hint, a 500."""
    assert isinstance(exc, CodecError)
    if exc.status_hint is None:
        raise exc
    return _json_response({"error": {"code": exc.code, "message": exc.message}}, exc.status_hint)


async def _store_error(request: Request, exc: Exception) -> Response:
    """A run-store error before any stream started (404 run, 400 cursor, 409 run id, 500)."""
    assert isinstance(exc, RunStoreError)
    return _json_response({"error": {"code": exc.code, "message": exc.message}}, exc.status)


_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
    response = _json_response({"error": {"code": code, "message": exc.detail}}, exc.status_code)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


CORS_ALLOW_HEADERS: tuple[str, ...] = (
    "accept",
    "accept-language",
    "authorization",
    "cache-control",
    "content-type",
    "last-event-id",
    "x-vercel-ai-ui-message-stream",
)
"""Request headers a cross-origin client may send (what ``@ag-ui/client``, ``ai``'s
``DefaultChatTransport`` and an ``EventSource`` resume send; ``authorization`` for a reverse
proxy in front: the gateway itself never reads nor forwards it)."""


def _cors_middleware(settings: Settings) -> list[Middleware]:
    """CORS for ``GATEWAY_CORS_ORIGINS`` (none when empty: no CORS headers, no preflight)."""
    origins = settings.cors_origin_list
    if not origins:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=list(CORS_ALLOW_HEADERS),
            allow_credentials=False,
            max_age=600,
        )
    ]


def create_app(
    settings: Settings | None = None, *, http_client: httpx.AsyncClient | None = None
) -> Starlette:
    """Build the gateway ASGI app.

    Args:
        settings: process settings; ``None`` reads them from ``GATEWAY_*`` variables.
        http_client: client for ``http(s)`` upstreams. When given, the caller owns it (tests
            pass one with a mock transport); else the app creates one and closes it at
            lifespan shutdown. ``self:`` upstreams always use an in-process client
            (:class:`~gateway.asgi_transport.StreamingASGITransport` over this app).

    Returns:
        The starlette application (``app.state.gateway`` holds settings, routes, the run
        pipeline: upstream client and the app's one ui_schema compiler, and ``runs``: the
        durable-run layer, whose ``manager`` is set while the lifespan runs). The lifespan
        opens the run store (migrations applied) and the broker, starts the reaper and the
        retention purge, and on shutdown ends this replica's runs with RUN_INTERRUPTED.

    Raises:
        ConfigError: the routes file is invalid (message names route and field; for a bad
            ``ui_hints`` entry also the tool and the JSON Pointer).
    """
    settings = settings if settings is not None else Settings()
    routes = settings.load_routes()
    owned: list[httpx.AsyncClient] = []
    if http_client is None:
        http_client = httpx.AsyncClient()
        owned.append(http_client)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with gateway.runs.opened():
                yield
        finally:
            for client in owned:
                await client.aclose()

    pipeline = RunPipeline(
        Upstream(http_client), UiSchemaCompiler(), max_event_size=settings.max_event_size
    )
    gateway = _Gateway(settings, routes, pipeline)
    app = Starlette(
        routes=[
            Route("/healthz", gateway.healthz, methods=["GET"]),
            Route("/metrics", gateway.metrics, methods=["GET"]),
            Route("/v1/agui/{route}", gateway.agui, methods=["POST"]),
            Route("/v1/ai-sdk/{route}", gateway.ai_sdk, methods=["POST"]),
            Route("/v1/ai-sdk/{route}/{chat_id}/stream", gateway.ai_sdk_resume, methods=["GET"]),
            Route("/api/v1/agent/runs", gateway.create_run, methods=["POST"]),
            Route("/api/v1/agent/runs/{thread_id}/cancel", gateway.cancel_run, methods=["POST"]),
            Route("/api/v1/agent/runs/{thread_id}/events", gateway.run_events, methods=["GET"]),
            Route("/api/v1/agent/history", gateway.history, methods=["GET"]),
            Mount(DEMO_MOUNT, app=create_demo_app()),
        ],
        middleware=_cors_middleware(settings),
        exception_handlers={
            RequestError: _request_error,
            CodecError: _codec_error,
            RunStoreError: _store_error,
            HTTPException: _http_error,
        },
        lifespan=lifespan,
    )
    self_client = httpx.AsyncClient(transport=StreamingASGITransport(app), base_url=SELF_BASE_URL)
    owned.append(self_client)
    gateway.upstream.self_client = self_client
    app.state.gateway = gateway
    return app
