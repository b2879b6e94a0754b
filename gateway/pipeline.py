"""The live run pipeline: client request → upstream → decoder → UI stage → event batches.

::

    ClientRequest ─build_body()─▶ upstream HTTP ─decoder─▶ AG-UI events ─UiStage─▶ run events
                                                                                     │
                    encoder ◀── gateway.encoding.encode_batches() ◀── (store off) ──┤
                                                                    (the batches) ──┘
                                                                            │
                                  RunManager.start(): pump ─▶ store + broker ─▶ reader
                                                                                  │
                    encoder ◀── gateway.encoding.encode_run_events() ◀────────────┘

:class:`RunPipeline` (one per app) produces a run's canonical event batches: what a client of
either wire is sent, and what a durable run store records. UI (``agui_codecs.ui``) is added
*before* the encoder, so stored and replayed runs carry their surfaces, and both wires are
encoded from the same events: ``AguiEncoder`` sends the delivery profile's events as they are,
``AiSdkEncoder`` turns any of them into a ``data-ui-schema`` chunk.

Before the UI stage, ids the upstream chose (message, tool-call, reasoning ids) are checked like
client ids and remapped when refused (:mod:`gateway.upstream_ids`), so every store keeps them;
a durable run has its store keep each remapping for the thread (``keep``) before the batch
naming it goes on, so the next request restores the provider's id.

A durable run (:mod:`gateway.runs`) is pumped from the same batches, each one upstream chunk's
events, which the pump stages together (issue 13: one call per chunk, not per event);
turning events into a client's bytes is :mod:`gateway.encoding`'s job.

Every run goes through :func:`gateway.attempts.run_attempts`: retries, deployments and
fallbacks of its route (issue 19), invisible to the client until content was sent. A route
with ``models`` lets the request pick its model (``forwardedProps.model``; on the AI SDK
endpoint the body's ``model``, which the chat request conversion puts there): one outside the
list is refused with 422 ``MODEL_NOT_ALLOWED`` (:func:`requested_model`).

Locale of a run (ui labels): ``forwardedProps.locale``, else the request's
``Accept-Language``, else ``en`` (:func:`agui_codecs.ui.resolve_locale`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from ag_ui.core import Event

from agui_codecs.protocols import ClientRequest
from agui_codecs.ui import UiSchemaCompiler, UiStage, resolve_locale

from . import metrics
from .attempts import AttemptObserver, RunPlan, Sleep, run_attempts
from .config import RouteConfig
from .deployments import Deployments, PoolFactory, local_pool
from .errors import RequestError
from .upstream import Upstream, build_body
from .upstream_ids import UpstreamIds

__all__ = [
    "KeepIds",
    "ModelNotAllowedError",
    "PreparedRun",
    "RunPipeline",
    "requested_model",
    "staged",
]


class ModelNotAllowedError(RequestError):
    """422 ``MODEL_NOT_ALLOWED``: the request picked a model its route does not allow."""

    status = 422
    code = "MODEL_NOT_ALLOWED"


def requested_model(route: RouteConfig, request: ClientRequest) -> str | None:
    """The model the run asks for: the request's ``forwardedProps.model`` when the route has
    ``models`` (an allowlist), else the route's ``model`` (a route without ``models`` ignores
    the client's choice, as it always did: ``model`` is a reserved parameter).

    Raises:
        ModelNotAllowedError: the route has ``models`` and the request picked one outside
            them, or a value that is not a string (the message lists the allowed ones).
    """
    props = request.run_input.forwarded_props
    picked = props.get("model") if isinstance(props, Mapping) else None
    if not route.models or picked is None or picked == route.model:
        return route.model  # without an allowlist the client's model is ignored, as before
    if not isinstance(picked, str) or picked not in route.models:
        allowed = ", ".join(route.models)
        raise ModelNotAllowedError(
            f"model {picked!r} is not allowed on route {route.name!r} (allowed: {allowed})"
        )
    return picked


class RunPipeline:
    """Builds the event stream of one run; holds what runs share (one instance per app).

    Args:
        upstream: sends requests upstream and decodes the replies.
        compiler: the process-wide ui_schema compiler (its caches and counters are shared by
            every run; export ``compiler.stats`` as metrics).
        max_event_size: cap in bytes on one upstream event, passed to each decoder.
        routes: every route by name (fallbacks are looked up here; default: none, so a
            fallback is never found).
        observer: called with each finished upstream attempt
            (:class:`~gateway.attempts.AttemptRecord`): the hook for attempt metrics.
        sleep: how backoff waits (tests pass one that records the delays).
        rng: the jitter's random source (default: the ``random`` module).
    """

    def __init__(
        self,
        upstream: Upstream,
        compiler: UiSchemaCompiler,
        *,
        max_event_size: int,
        routes: Mapping[str, RouteConfig] | None = None,
        observer: AttemptObserver | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.upstream = upstream
        self.compiler = compiler
        self.max_event_size = max_event_size
        self.routes: Mapping[str, RouteConfig] = routes or {}
        self.observer = observer
        self.sleep = sleep
        self.rng = rng
        self.pools: dict[str, Deployments] = {}
        """Deployment pools by route name (:mod:`gateway.deployments`)."""
        self.new_pool: PoolFactory = local_pool
        """Makes a route's pool: in-process, or Redis-backed when the app has Redis
        (:func:`gateway.deployments_redis.redis_pools`, set by the app's lifespan)."""

    def ui_stage(
        self, route: RouteConfig, forwarded_props: Any, accept_language: str | None
    ) -> UiStage:
        """The UI stage of one run on ``route`` (its hints, catalog profile and delivery)."""
        props = forwarded_props if isinstance(forwarded_props, Mapping) else None
        return UiStage(
            self.compiler,
            route_hints=route.route_hints,
            locale=resolve_locale(props, accept_language),
            profile=route.ui_profile,
            delivery=route.ui_delivery,
        )

    def prepare(
        self, route: RouteConfig, request: ClientRequest, *, accept_language: str | None = None
    ) -> PreparedRun:
        """Build the upstream request of one run now; the stream starts with
        :meth:`PreparedRun.stream`, once the run's ids are fixed.

        Args:
            route: the route the client addressed.
            request: what the client posted.
            accept_language: the request's ``Accept-Language`` header, if any.

        Raises:
            RequestTranslationError: the request has no equivalent in the route's upstream
                protocol (raised here, before any stream starts; status hint 422).
            ModelNotAllowedError: 422, the request picked a model the route does not allow.
        """
        model = requested_model(route, request)
        served = route if model == route.model else route.model_copy(update={"model": model})
        body = build_body(served, request)
        stage = self.ui_stage(route, request.run_input.forwarded_props, accept_language)
        return PreparedRun(self, served, request, body, stage)

    def open(
        self, route: RouteConfig, request: ClientRequest, *, accept_language: str | None = None
    ) -> AsyncGenerator[list[Event], None]:
        """Start one run under the ids of its ``RunAgentInput``: :meth:`prepare`, then
        :meth:`PreparedRun.stream` (see both)."""
        run_input = request.run_input
        prepared = self.prepare(route, request, accept_language=accept_language)
        return prepared.stream(thread_id=run_input.thread_id, run_id=run_input.run_id)


class PreparedRun:
    """A run whose upstream request is built and whose stream has not started
    (:meth:`RunPipeline.prepare`)."""

    def __init__(
        self,
        pipeline: RunPipeline,
        route: RouteConfig,
        request: ClientRequest,
        body: Any,
        stage: UiStage,
    ) -> None:
        self._pipeline, self._route, self._request = pipeline, route, request
        self._body, self._stage = body, stage

    def stream(
        self, *, thread_id: str, run_id: str, keep: KeepIds | None = None
    ) -> AsyncGenerator[list[Event], None]:
        """The run's event batches under ``thread_id`` / ``run_id``, the ids every attempt's
        decoder stamps on RUN_STARTED and RUN_FINISHED (fixed once, here: a durable run passes
        the ids it was recorded under, and nothing rewrites them later).

        Args:
            keep: awaited with ``{safe id: upstream id}`` of the upstream ids remapped in a
                batch, before that batch is yielded (a durable run: the store keeps them for
                the thread, :meth:`gateway.store.RunStore.keep_upstream_ids`).

        Returns:
            The run's event batches (one per upstream chunk, UI events inserted after the tool
            results they belong to); the last batch ends with RUN_FINISHED or RUN_ERROR, and
            upstream failures become RUN_ERROR (:mod:`gateway.upstream`). Closing the
            generator cancels the upstream request.
        """
        pipeline, request = self._pipeline, self._request
        run_input = request.run_input
        if (run_input.thread_id, run_input.run_id) != (thread_id, run_id):
            ids = {"thread_id": thread_id, "run_id": run_id}
            request = replace(request, run_input=run_input.model_copy(update=ids))
        plan = RunPlan(
            route=self._route,
            request=request,
            body=self._body,
            routes=pipeline.routes,
            pools=pipeline.pools,
            new_pool=pipeline.new_pool,
            max_event_size=pipeline.max_event_size,
        )
        batches = run_attempts(
            pipeline.upstream,
            plan,
            observer=pipeline.observer,
            sleep=pipeline.sleep,
            rng=pipeline.rng,
        )
        return staged(batches, self._stage, UpstreamIds(), keep=keep)


KeepIds = Callable[[dict[str, str]], Awaitable[None]]
"""Keeps a run's new id remappings (``{safe id: upstream id}``) for its thread."""


async def staged(
    batches: AsyncGenerator[list[Event], None],
    stage: UiStage,
    ids: UpstreamIds | None = None,
    *,
    keep: KeepIds | None = None,
) -> AsyncGenerator[list[Event], None]:
    """Map every event of ``batches`` through ``ids`` (upstream ids checked like client ids,
    :mod:`gateway.upstream_ids`), then ``stage`` (batch boundaries kept); each event out is
    counted in ``agui_gateway_events_in_total`` (:mod:`gateway.metrics`). The remappings a
    batch made are awaited in ``keep`` before it is yielded (its error ends the stream)."""
    process = stage.process
    fix = ids.process if ids is not None else None
    take_new = ids.take_new if keep is not None and ids is not None else None
    async with aclosing(batches):
        async for batch in batches:
            out: list[Event] = []
            for event in batch:  # a loop, not a comprehension: no frame per batch
                out += process(event if fix is None else fix(event))
            if take_new is not None and keep is not None:
                new = take_new()
                if new:
                    await keep(new)
            for event in out:
                metrics.count_event_in(event.type)
            yield out
