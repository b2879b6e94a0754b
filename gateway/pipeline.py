"""The live run pipeline: client request → upstream → decoder → UI stage → event batches.

::

    ClientRequest ─build_body()─▶ upstream HTTP ─decoder─▶ AG-UI events ─UiStage─▶ run events
                                                                                     │
                    encoder ◀── gateway.encoding.encode_batches() ◀── (store off) ──┤
                                                                         flatten() ──┘
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
client ids and remapped when refused (:mod:`gateway.upstream_ids`), so every store keeps them.

A durable run (:mod:`gateway.runs`) is pumped from :func:`flatten` of the same batches; turning
events into a client's bytes is :mod:`gateway.encoding`'s job.

Locale of a run (ui labels): ``forwardedProps.locale``, else the request's
``Accept-Language``, else ``en`` (:func:`agui_codecs.ui.resolve_locale`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

from ag_ui.core import Event

from agui_codecs import get_decoder
from agui_codecs.protocols import ClientRequest
from agui_codecs.ui import UiSchemaCompiler, UiStage, resolve_locale

from .config import RouteConfig
from .upstream import Upstream, build_body
from .upstream_ids import UpstreamIds

__all__ = ["RunPipeline", "flatten", "staged"]


class RunPipeline:
    """Builds the event stream of one run; holds what runs share (one instance per app).

    Args:
        upstream: sends requests upstream and decodes the replies.
        compiler: the process-wide ui_schema compiler (its caches and counters are shared by
            every run; export ``compiler.stats`` as metrics).
        max_event_size: cap in bytes on one upstream event, passed to each decoder.
    """

    def __init__(
        self, upstream: Upstream, compiler: UiSchemaCompiler, *, max_event_size: int
    ) -> None:
        self.upstream = upstream
        self.compiler = compiler
        self.max_event_size = max_event_size

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

    def open(
        self, route: RouteConfig, request: ClientRequest, *, accept_language: str | None = None
    ) -> AsyncGenerator[list[Event], None]:
        """Start one run: the upstream request is built now, the stream when iterated.

        Args:
            route: the route the client addressed.
            request: what the client posted.
            accept_language: the request's ``Accept-Language`` header, if any.

        Returns:
            The run's event batches (one per upstream chunk, UI events inserted after the tool
            results they belong to); the last batch ends with RUN_FINISHED or RUN_ERROR, and
            upstream failures become RUN_ERROR (:mod:`gateway.upstream`). Closing the
            generator cancels the upstream request.

        Raises:
            RequestTranslationError: the request has no equivalent in the route's upstream
                protocol (raised here, before any stream starts; status hint 422).
        """
        body = build_body(route, request)
        run_input = request.run_input
        decoder = get_decoder(
            route.protocol,
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            max_event_size=self.max_event_size,
        )
        stage = self.ui_stage(route, run_input.forwarded_props, accept_language)
        batches = self.upstream.events(route, body, decoder, thread_id=run_input.thread_id)
        return staged(batches, stage, UpstreamIds())


async def staged(
    batches: AsyncGenerator[list[Event], None], stage: UiStage, ids: UpstreamIds | None = None
) -> AsyncGenerator[list[Event], None]:
    """Map every event of ``batches`` through ``ids`` (upstream ids checked like client ids,
    :mod:`gateway.upstream_ids`), then ``stage`` (batch boundaries kept)."""
    fix = ids.process if ids is not None else (lambda event: event)
    async with aclosing(batches):
        async for batch in batches:
            yield [out for event in batch for out in stage.process(fix(event))]


async def flatten(batches: AsyncGenerator[list[Event], None]) -> AsyncGenerator[Event, None]:
    """The events of ``batches`` one at a time (for consumers of single events, e.g. a durable
    run's pump). Closing this generator closes ``batches``."""
    async with aclosing(batches):
        async for batch in batches:
            for event in batch:
                yield event
