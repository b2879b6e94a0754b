"""The per-run event pipeline: upstream → decoder → UI stage → (store) → encoder.

::

    ClientRequest ─build_body()─▶ upstream HTTP ─decoder─▶ AG-UI events ─UiStage─▶ run events
                                                                                     │
                       AguiEncoder / AiSdkEncoder ◀── encode_batches() ◀─────────────┤
                                                                         flatten() ──┘
                                                                            │
                                  RunManager.start(): pump ─▶ store + broker ─▶ reader
                                                                                  │
                       AguiEncoder / AiSdkEncoder ◀── encode_run_events() ◀───────┘

:class:`RunPipeline` (one per app) produces a run's canonical event batches: what a client of
either wire is sent, and what a durable run store records. UI (``agui_codecs.ui``) is added
*before* the encoder, so stored and replayed runs carry their surfaces, and both wires are
encoded from the same events: ``AguiEncoder`` sends the delivery profile's events as they are,
``AiSdkEncoder`` turns any of them into a ``data-ui-schema`` chunk.

A durable run (:mod:`gateway.runs`) is pumped from :func:`flatten` of the same batches and read
back as stored wire events (:class:`~gateway.store.RunEvent`: cursor + AG-UI wire dict);
:func:`encode_run_events` encodes those for a client, with ``id: <cursor>`` lines on AG-UI.

Locale of a run (ui labels): ``forwardedProps.locale``, else the request's
``Accept-Language``, else ``en`` (:func:`agui_codecs.ui.resolve_locale`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any, ClassVar, Protocol

import anyio
from ag_ui.core import Event

from agui_codecs import get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import parse_event
from agui_codecs.protocols import ClientRequest
from agui_codecs.ui import UiSchemaCompiler, UiStage, resolve_locale

from .config import RouteConfig
from .store.cursor import Cursor
from .store.models import JsonObject, RunEvent
from .upstream import Upstream, build_body

__all__ = [
    "Encoder",
    "RunPipeline",
    "encode_batches",
    "encode_run_events",
    "encode_wire",
    "flatten",
    "staged",
]

_log = logging.getLogger(__name__)


class Encoder(Protocol):
    """What :func:`encode_batches` needs of an encoder (``AguiEncoder``, ``AiSdkEncoder``)."""

    headers: ClassVar[dict[str, str]]

    def encode(self, event: Event) -> bytes: ...

    def close(self) -> bytes: ...


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
        return staged(self.upstream.events(route, body, decoder), stage)


async def staged(
    batches: AsyncGenerator[list[Event], None], stage: UiStage
) -> AsyncGenerator[list[Event], None]:
    """Map every event of ``batches`` through ``stage`` (batch boundaries kept)."""
    async with aclosing(batches):
        async for batch in batches:
            yield [out for event in batch for out in stage.process(event)]


async def flatten(batches: AsyncGenerator[list[Event], None]) -> AsyncGenerator[Event, None]:
    """The events of ``batches`` one at a time (for consumers of single events, e.g. a durable
    run's pump). Closing this generator closes ``batches``."""
    async with aclosing(batches):
        async for batch in batches:
            for event in batch:
                yield event


async def encode_batches(
    batches: AsyncGenerator[list[Event], None], encoder: Encoder
) -> AsyncGenerator[bytes, None]:
    """Encode event batches: one write per batch, then ``encoder.close()``.

    Closing this generator closes ``batches`` (and so the upstream request).
    """
    async with aclosing(batches):
        async for batch in batches:
            data = b"".join(encoder.encode(event) for event in batch)
            if data:
                yield data
    tail = encoder.close()
    if tail:
        yield tail


async def _aclose(iterator: AsyncIterator[Any]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is not None:
        await closer()


def encode_wire(encoder: Encoder, wire: JsonObject, cursor: Cursor | None = None) -> bytes:
    """Encode one stored AG-UI wire event (as :class:`~gateway.store.RunEvent` holds it).

    Args:
        encoder: the client's encoder (stateful: one per response).
        wire: AG-UI 1.0 wire dict (camelCase, optional fields omitted).
        cursor: written as the event's ``id:`` line; only :class:`AguiEncoder` writes ids.

    Raises:
        ValueError: ``cursor`` given for an encoder that cannot write ``id:`` lines.
        pydantic.ValidationError: ``wire`` is not an AG-UI event (the store only holds events
            the pump accepted, so this means a corrupted row).
    """
    event = parse_event(wire)
    if cursor is None:
        return encoder.encode(event)
    if not isinstance(encoder, AguiEncoder):
        raise ValueError(f"{type(encoder).__name__} does not write id: lines")
    return encoder.encode(event, id=str(cursor))


async def encode_run_events(
    events: AsyncIterator[RunEvent] | None,
    encoder: Encoder,
    *,
    ids: bool = False,
    prelude: Sequence[JsonObject] = (),
    prelude_cursor: Cursor | None = None,
    on_abandon: Callable[[], Awaitable[None]] | None = None,
) -> AsyncGenerator[bytes, None]:
    """Encode a durable run's events for one client: ``prelude``, then ``events``, then
    ``encoder.close()``; one chunk per event, so a published delta goes out at once.

    Args:
        events: the run's reader (``RunManager.reader``), or None (the prelude is all).
        encoder: the client's encoder.
        ids: write ``id: <cursor>`` on every event of ``events`` (AG-UI only; resume cursors,
            ``docs/runs.md`` §1: never on keep-alives or prelude events).
        prelude: wire events sent first (the ``?replay=snapshot`` prelude); the last one
            carries ``prelude_cursor`` as its id (the client then holds everything up to it).
        prelude_cursor: see ``prelude``.
        on_abandon: awaited (shielded from cancellation; its errors are logged) when the
            stream stops before ``events`` ended, i.e. the client went away or reading failed.

    Closing the generator closes ``events`` (releasing its broker subscription).

    Raises:
        ValueError: ``ids`` with an encoder that cannot write ``id:`` lines.
    """
    if ids and not isinstance(encoder, AguiEncoder):
        raise ValueError(f"{type(encoder).__name__} does not write id: lines")
    completed = False
    try:
        last = len(prelude) - 1
        for index, wire in enumerate(prelude):
            cursor = prelude_cursor if ids and index == last else None
            yield encode_wire(encoder, wire, cursor)
        if events is not None:
            try:
                async for stored in events:
                    data = encode_wire(encoder, stored.event, stored.cursor if ids else None)
                    if data:
                        yield data
            finally:
                await _aclose(events)
        completed = True
        tail = encoder.close()
        if tail:
            yield tail
    finally:
        if not completed and on_abandon is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await on_abandon()
                except Exception:
                    _log.exception("on_abandon of an abandoned run stream failed")
