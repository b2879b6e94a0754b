"""What the HTTP handlers call: :class:`Services`, one per app, built by the composition root.

:func:`gateway.app.create_app` builds the object graph (settings, routes, the run pipeline with
its upstream client and ui_schema compiler) and, while the app lifespan runs, the
:class:`~gateway.runs.RunManager` over the store and broker; the handlers in
:mod:`gateway.routes` only parse a request, call one of these methods and answer. Nothing here
knows HTTP: errors are raised typed (:mod:`gateway.errors`, :mod:`gateway.store.errors`) and
the routes' error handlers answer them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncGenerator, Mapping
from typing import Final

from ag_ui.core import Event, RunAgentInput

from agui_codecs.protocols import ClientRequest

from .config import RouteConfig, Settings
from .errors import RequestError, RouteNotFoundError
from .pipeline import RunPipeline, flatten
from .runs import RunManager
from .store import RunExistsError, RunRecord
from .types import JsonObject

__all__ = ["RENAME_ATTEMPTS", "Services"]

_log = logging.getLogger(__name__)

RENAME_ATTEMPTS: Final[int] = 3
"""Fresh run ids a streaming endpoint tries when the client's ``runId`` is taken."""


def _wire_messages(run_input: RunAgentInput) -> list[JsonObject]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in run_input.messages]


class Services:
    """The gateway's services, bound to one app.

    Args:
        settings: process settings.
        routes: the served routes by name (file order).
        pipeline: the app's run pipeline (upstream -> decoder -> UI stage).

    Attributes:
        manager: the :class:`~gateway.runs.RunManager` while the app lifespan runs (set and
            cleared by :func:`gateway.app.create_app`'s lifespan), else None: then the run
            endpoints answer 503 and the streaming endpoints stream without recording.
    """

    def __init__(
        self, settings: Settings, routes: Mapping[str, RouteConfig], pipeline: RunPipeline
    ) -> None:
        self.settings = settings
        self.routes = routes
        self.pipeline = pipeline
        self.manager: RunManager | None = None

    def route(self, name: str) -> RouteConfig:
        """The route named ``name``.

        Raises:
            RouteNotFoundError: 404 ``ROUTE_NOT_FOUND``; the message lists the known names.
        """
        route = self.routes.get(name)
        if route is None:
            known = ", ".join(sorted(self.routes)) or "none"
            raise RouteNotFoundError(f"no route named {name!r} (known: {known})")
        return route

    def runs(self) -> RunManager:
        """The open run manager.

        Raises:
            RequestError: 503 ``RUNS_UNAVAILABLE`` when the run store is not open (the app
                is served without its lifespan).
        """
        if self.manager is None:
            raise RequestError(
                "durable runs are unavailable: the run store is opened by the app lifespan",
                code="RUNS_UNAVAILABLE",
                status=503,
            )
        return self.manager

    def live(
        self, route: RouteConfig, client: ClientRequest, *, accept_language: str | None
    ) -> AsyncGenerator[list[Event], None]:
        """The run's event batches, not recorded (the app runs without its lifespan).

        Raises:
            RequestTranslationError: the request has no equivalent upstream (422).
        """
        return self.pipeline.open(route, client, accept_language=accept_language)

    async def start_run(
        self,
        route: RouteConfig,
        client: ClientRequest,
        *,
        accept_language: str | None,
        message_id: str | None = None,
        rename: bool,
    ) -> RunRecord:
        """Build the upstream request, record the run, pump it in the background.

        Args:
            route: the route to run on.
            client: what the client posted (its ``RunAgentInput`` names thread and run).
            accept_language: the request's ``Accept-Language`` (UI labels).
            message_id: the assistant message id to record (AI SDK continuation).
            rename: when the ``runId`` is taken, record the run as ``<runId>-<8 hex>``
                instead of refusing (stock streaming clients cannot handle a 409).

        Returns:
            The recorded run (its ``id`` is the one to resume with).

        Raises:
            RequestError: 503 without a store.
            RequestTranslationError: 422, the input has no upstream equivalent (nothing is
                recorded then).
            RunExistsError: 409 ``RUN_EXISTS``, the ``runId`` is taken and ``rename`` is
                False (or every fresh id was taken too).
        """
        manager = self.runs()
        batches = self.pipeline.open(route, client, accept_language=accept_language)
        try:
            run = await self._create(
                manager, route, client.run_input, message_id=message_id, rename=rename
            )
        except BaseException:
            await batches.aclose()
            raise
        manager.start(run, flatten(batches))
        return run

    async def _create(
        self,
        manager: RunManager,
        route: RouteConfig,
        run_input: RunAgentInput,
        *,
        message_id: str | None,
        rename: bool,
    ) -> RunRecord:
        run_id = run_input.run_id
        for _attempt in range(RENAME_ATTEMPTS):
            try:
                return await manager.create_run(
                    thread_id=run_input.thread_id,
                    run_id=run_id,
                    route=route.name,
                    upstream=route.upstream_url,
                    model=route.model,
                    message_id=message_id,
                    input_messages=_wire_messages(run_input),
                )
            except RunExistsError:
                if not rename:
                    raise
            run_id = f"{run_input.run_id}-{uuid.uuid4().hex[:8]}"
            _log.info("run id %r is taken: recording the run as %r", run_input.run_id, run_id)
        raise RunExistsError(f"run id {run_input.run_id!r} is taken")
