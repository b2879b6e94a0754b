"""The composition root of the gateway: :func:`create_app` builds the ASGI app and, in its
lifespan, everything a run needs; nothing else constructs them.

::

    create_app(settings, *, store=None, broker=None, http_client=None)
      ├─ at once:   routes (the routes file), httpx client, Upstream, UiSchemaCompiler,
      │             RunPipeline, Services, the starlette app (gateway.routes), the self: client
      └─ lifespan:  RunStore (open_store, migrations applied), Broker (open_broker),
                    RunManager (its Reaper, retention purge) -> Services.manager;
                    on shutdown this replica's runs end with RUN_INTERRUPTED, then what the
                    app opened is closed

The endpoints are the rooms of :mod:`gateway.routes` (streaming, durable runs, history,
health; the URL table is :func:`gateway.routes.endpoints`), the handlers call
:class:`~gateway.services.Services`. Served without its lifespan (an embedding app with
``lifespan="off"``), the app streams without recording and the run endpoints answer 503
``RUNS_UNAVAILABLE``.

The demo upstream (:mod:`gateway.demo`, ``/demo/openai``) is mounted only when it serves: when
a route's ``upstream_url`` points into it (``self:/demo/openai/...``, as the embedded default
routes do), or with ``GATEWAY_DEMO=1``. Else its path is a 404 like any unknown path.

Before a stream starts, refusals are JSON ``{"error": {"code", "message"}, "detail"?}``: 404
``ROUTE_NOT_FOUND`` (also ``NOT_FOUND`` for unknown paths), 405 ``METHOD_NOT_ALLOWED``, 413
``REQUEST_TOO_LARGE``, 415 ``UNSUPPORTED_MEDIA_TYPE`` (a JSON endpoint's body not declared
``application/json`` or ``*+json``: cross-site "simple" POSTs cannot start runs), 422
``INVALID_REQUEST`` (``detail`` = pydantic's error list, without input echoes; also an empty
conversation for a provider route) or 422 ``UNSUPPORTED_CONTENT`` / ``INVALID_TOOL_ARGUMENTS``
/ ``INVALID_TOOL_RESULT`` (the input has no equivalent upstream). Once streaming, every failure
is a terminal event (see :mod:`gateway.upstream`).

Client auth (:mod:`gateway.auth`): every endpoint but ``/healthz``, ``/readyz``, ``/metrics``
and the inspector page's own files (``/inspect``, no data in them) asks for a
credential (``Authorization: Bearer``: an API key, a JWT when ``GATEWAY_JWT_JWKS_URL`` is set,
a scoped token on the events endpoint) unless ``GATEWAY_AUTH=off``; ``auto`` (the default) is
required here, and only ``serve`` opens it for the embedded demo on a loopback host.

CORS: off unless ``GATEWAY_CORS_ORIGINS`` lists origins (starlette ``CORSMiddleware``, which
also answers the ``OPTIONS`` preflight). The gateway authenticates to upstreams with the
route's key variable only; a client's ``Authorization`` header and cookies are never
forwarded.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute, Mount

from agui_codecs.ui import UiSchemaCompiler

from .asgi_transport import StreamingASGITransport
from .attempts import AttemptObserver
from .auth import Authenticator, JwtVerifier
from .broker import Broker, RedisStreamsBroker, open_broker
from .config import SELF_SCHEME, RouteConfig, Settings
from .demo import DEMO_MOUNT, create_demo_app
from .deployments import local_pool
from .deployments_redis import redis_pools
from .metrics import mark_process_dead
from .pipeline import RunPipeline
from .routes import EXCEPTION_HANDLERS, AccessLog, endpoints
from .routes._http import RUN_HEADERS
from .routes.workflow import WORKFLOW_HEADERS
from .runs import RunManager
from .services import Services
from .store import RunStore, open_store
from .upstream import SELF_BASE_URL, Upstream
from .upstream_client import UpstreamClient
from .upstream_pool import ShardedTransport

__all__ = ["CORS_ALLOW_HEADERS", "create_app", "demo_mounted", "upstream_limits"]


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
``DefaultChatTransport`` and an ``EventSource`` resume send; ``authorization`` carries the
client's credential, which the gateway checks and never forwards)."""


def _middleware(settings: Settings) -> list[Middleware]:
    """The access log (outermost: it sees every request), then CORS for
    ``GATEWAY_CORS_ORIGINS`` (none when empty: no CORS headers, no preflight)."""
    stack = [Middleware(AccessLog)]
    origins = settings.cors_origin_list
    if origins:
        stack.append(
            Middleware(
                CORSMiddleware,
                allow_origins=origins,
                allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                allow_headers=list(CORS_ALLOW_HEADERS),
                expose_headers=[*RUN_HEADERS, *WORKFLOW_HEADERS],
                allow_credentials=False,
                max_age=600,
            )
        )
    return stack


def demo_mounted(settings: Settings, routes: Mapping[str, RouteConfig]) -> bool:
    """Whether the demo upstream is mounted: ``GATEWAY_DEMO`` is set, or a route's
    ``upstream_url`` is ``self:`` into :data:`~gateway.demo.DEMO_MOUNT` (the embedded
    ``demo`` route: ``self:/demo/openai/v1``)."""
    if settings.demo:
        return True
    for route in routes.values():
        parts = urlsplit(route.upstream_url)
        if parts.scheme == SELF_SCHEME and (
            parts.path == DEMO_MOUNT or parts.path.startswith(DEMO_MOUNT + "/")
        ):
            return True
    return False


def upstream_limits(settings: Settings) -> httpx.Limits:
    """The upstream client's connection pool limits (``GATEWAY_UPSTREAM_MAX_CONNECTIONS``,
    ``GATEWAY_UPSTREAM_MAX_KEEPALIVE``; :class:`~gateway.config.Settings`), spread over the
    shards of :class:`~gateway.upstream_pool.ShardedTransport`; idle connections expire
    after :data:`UPSTREAM_KEEPALIVE_EXPIRY` seconds)."""
    return httpx.Limits(
        max_connections=settings.upstream_max_connections,
        max_keepalive_connections=settings.upstream_max_keepalive,
        keepalive_expiry=UPSTREAM_KEEPALIVE_EXPIRY,
    )


UPSTREAM_KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle upstream connection is kept: below the 5 s idle close of Node's and
uvicorn's servers (httpx's default is 5 s, the same), so the gateway drops such a connection
before the upstream closes it instead of racing its close. A reused connection the upstream
closed anyway is sent again once (:class:`gateway.upstream_pool._Pool`)."""


def _local_pools(pipeline: RunPipeline) -> None:
    """Back to in-process deployment pools (the lifespan that shared them through Redis
    ended)."""
    pipeline.new_pool = local_pool
    pipeline.pools.clear()


def create_app(
    settings: Settings | None = None,
    *,
    store: RunStore | None = None,
    broker: Broker | None = None,
    http_client: httpx.AsyncClient | None = None,
    on_attempt: AttemptObserver | None = None,
) -> Starlette:
    """Build the gateway ASGI app (the composition root: see the module docstring).

    Ownership: what is injected belongs to the caller, who opened it and closes it (the app
    never closes an injected store, broker or client, so several apps, e.g. two replicas in
    one test, can share them); what the app creates it closes at lifespan shutdown. The
    :class:`~gateway.runs.RunManager` is always the app's own, one per lifespan.

    Args:
        settings: process settings; ``None`` reads them from ``GATEWAY_*`` variables.
        store: the run store (migrated, e.g. :func:`gateway.store.open_store`); ``None``
            opens ``GATEWAY_DATABASE_URL`` / ``GATEWAY_DATABASE_SCHEMA`` when the lifespan
            starts, applying migrations.
        broker: the broker; ``None`` opens ``GATEWAY_REDIS_URL`` (in-process when unset) when
            the lifespan starts.
        http_client: client for ``http(s)`` upstreams (tests pass one with a mock
            transport); ``None`` creates one now. ``self:`` upstreams always use an
            in-process client (:class:`~gateway.asgi_transport.StreamingASGITransport` over
            this app), which the app owns.
        on_attempt: called with every finished upstream attempt of every run
            (:class:`~gateway.attempts.AttemptRecord`: route, deployment, model, outcome,
            code, waits): the hook for attempt metrics.

    Returns:
        The starlette application; ``app.state.services`` is its
        :class:`~gateway.services.Services` (settings, routes, the run pipeline: upstream
        client and the app's one ui_schema compiler, and ``manager``, set while the lifespan
        runs).

    Raises:
        ConfigError: the routes file is invalid (message names route and field; for a bad
            ``ui_hints`` entry also the tool and the JSON Pointer).

    The lifespan raises ``RunStoreError`` when the database cannot be reached or migrated.
    """
    settings = settings if settings is not None else Settings()
    routes = settings.load_routes()
    owned: list[httpx.AsyncClient] = []
    if http_client is None:
        limits = upstream_limits(settings)  # proxies from the environment get them too
        http_client = UpstreamClient(transport=ShardedTransport(limits), limits=limits)
        owned.append(http_client)
    pipeline = RunPipeline(
        Upstream(http_client),
        UiSchemaCompiler(),
        max_event_size=settings.max_event_size,
        routes=routes,
        observer=on_attempt,
    )
    jwt = None
    if settings.jwt_enabled:
        jwks_client = httpx.AsyncClient()  # its own: the upstream client may be a test mock
        owned.append(jwks_client)
        jwt = JwtVerifier(settings, jwks_client)
    holder: list[Services] = []

    def current_store() -> RunStore | None:
        manager = holder[0].manager if holder else None
        return manager.store if manager is not None else None

    auth = Authenticator(settings, store=current_store, jwt=jwt)
    services = Services(settings, routes, pipeline, auth=auth)
    holder.append(services)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(mark_process_dead)  # multi-process metrics: this worker's gauges go
            for client in owned:
                stack.push_async_callback(client.aclose)
            run_store = store
            if run_store is None:
                run_store = await open_store(
                    settings.database_url,
                    schema=settings.database_schema,
                    max_readers=settings.database_max_readers,
                )
                stack.push_async_callback(run_store.close)
            run_broker = broker
            if run_broker is None:
                run_broker = open_broker(
                    settings.redis_url, prefix=settings.redis_prefix, **settings.broker_bounds()
                )
                stack.push_async_callback(run_broker.close)
                # An unreachable Redis at start-up is a clear error, not a silent fallback
                # (issue 12); the store was checked by open_store (migrations ran).
                await run_broker.check()
            if isinstance(run_broker, RedisStreamsBroker):  # deployment state shared too
                pipeline.new_pool = redis_pools(run_broker.client, run_broker.prefix)
                pipeline.pools.clear()
                stack.callback(_local_pools, pipeline)
            manager = RunManager(run_store, run_broker, settings=settings.run_settings())
            stack.push_async_callback(manager.aclose)
            await manager.start_background()
            services.manager = manager
            try:
                yield
            finally:
                services.manager = None

    mounted: list[BaseRoute] = endpoints(services)
    if demo_mounted(settings, routes):
        mounted.append(Mount(DEMO_MOUNT, app=create_demo_app()))
    app = Starlette(
        routes=mounted,
        middleware=_middleware(settings),
        exception_handlers=dict(EXCEPTION_HANDLERS),
        lifespan=lifespan,
    )
    self_client = httpx.AsyncClient(transport=StreamingASGITransport(app), base_url=SELF_BASE_URL)
    owned.append(self_client)
    pipeline.upstream.self_client = self_client
    app.state.services = services
    return app
