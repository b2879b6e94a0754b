"""Client bytes of a run: one encoder over a run's events, live or stored.

::

    RunPipeline.open() ─▶ event batches ─────────────▶ encode_batches() ────▶ SSE bytes
                                                       (store off: the streaming endpoints)
    RunManager.reader() ─▶ RunEvent (cursor + wire) ─▶ encode_run_events() ─▶ SSE bytes
                                                       (durable runs: every endpoint with a store)

Both take any :class:`agui_codecs.Encoder` (the one contract: ``agui``, ``ai-sdk``, plugins).
A durable run's events are encoded from the wire dicts the reader delivers
(:meth:`~agui_codecs.Encoder.encode_wire`): no model is built on the way from the store to
the client, and every stored event's cursor is passed as its ``id``, which the encoder writes
when its clients resume by cursor (AG-UI) and ignores otherwise (the AI SDK replays from the
first chunk): ``docs/runs.md`` §1, §5.
"""

from __future__ import annotations

import logging
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Sequence,
)
from contextlib import aclosing
from typing import Any

import anyio
from ag_ui.core import Event

from agui_codecs import Encoder

from . import metrics
from .open_items import CONTENT_TYPES, OpenItems
from .store.errors import RunStoreError
from .types import Cursor, JsonObject, RunEvent

__all__ = ["encode_batches", "encode_run_events"]

_log = logging.getLogger(__name__)


async def encode_batches(
    batches: AsyncGenerator[list[Event], None], encoder: Encoder
) -> AsyncGenerator[bytes, None]:
    """Encode live event batches: one write per batch, then ``encoder.close()``; the events
    out are counted once per type and batch (``agui_gateway_events_out_total``).

    Closing this generator closes ``batches`` (and so the upstream request).
    """
    name = encoder.name
    encode = encoder.encode
    async with aclosing(batches):
        async for batch in batches:
            if len(batch) == 1:
                metrics.count_event_out(batch[0].type, name)
            else:
                counts: dict[str, int] = {}
                for event in batch:
                    counts[event.type] = counts.get(event.type, 0) + 1
                for kind, count in counts.items():
                    metrics.count_event_out(kind, name, count)
            data = b"".join([encode(event) for event in batch])
            if data:
                yield data
    tail = encoder.close()
    if tail:
        yield tail


async def _aclose(iterator: AsyncIterator[Any]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is not None:
        await closer()


_STORE_LOST = frozenset({"STORE_UNAVAILABLE", "STORE_ERROR"})

MAX_CHUNK_BYTES = 16 * 1024
"""A batch's frames are joined into chunks of about this many bytes (the last frame joined
may cross it): few writes for a replay, and one chunk never a whole page of large events
(the bound :mod:`gateway.sse_response` keeps for a client that stops reading)."""


async def _singles(events: AsyncIterator[RunEvent]) -> AsyncIterator[Sequence[RunEvent]]:
    async for event in events:
        yield (event,)


def _encode_batch(
    batch: Sequence[RunEvent], encoder: Encoder, fold: OpenItems, suffix: str
) -> Iterator[bytes]:
    """The SSE bytes of ``batch``, in chunks of about :data:`MAX_CHUNK_BYTES`; counts the
    events out (one metric update per type and batch) and folds them into ``fold``."""
    counts: dict[str, int] = {}
    parts: list[bytes] = []
    size = 0
    serialized = encoder.encode_serialized
    content = CONTENT_TYPES  # never fold-relevant unless fold.folds_content
    try:
        for stored in batch:
            kind = stored.type
            counts[kind] = counts.get(kind, 0) + 1
            if kind not in content or fold.folds_content:
                fold.apply_stored(stored)
            json = stored.json
            event_id = f"{stored.cursor}{suffix}"
            if json is None:
                data = encoder.encode_wire(stored.event, id=event_id)
            else:  # the stored text, parsed only by an encoder that needs the dict
                data = serialized(kind, json, stored.load, id=event_id)
            if data:
                parts.append(data)
                size += len(data)
                if size >= MAX_CHUNK_BYTES:
                    yield b"".join(parts)
                    parts, size = [], 0
        if parts:
            yield parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        name = encoder.name
        for kind, count in counts.items():
            metrics.count_event_out(kind, name, count)


def _store_lost(exc: RunStoreError) -> JsonObject:
    return {
        "type": "RUN_ERROR",
        "message": "the run store is unavailable; reconnect to resume",
        "code": "STORE_UNAVAILABLE",
    }


async def encode_run_events(
    events: AsyncIterator[RunEvent] | None,
    encoder: Encoder,
    *,
    prelude: Sequence[JsonObject] = (),
    prelude_cursor: Cursor | None = None,
    on_abandon: Callable[[], Awaitable[None]] | None = None,
    cursor_tag: str | None = None,
) -> AsyncGenerator[bytes, None]:
    """Encode a durable run's events for one client: ``prelude``, then ``events``, then
    ``encoder.close()``; one chunk per batch of events that was available together (a store
    page, a broker batch: :meth:`~gateway.runs.reader.RunReader.batches`, when ``events``
    has it), cut at :data:`MAX_CHUNK_BYTES`, so a published delta goes out at once and a
    replay goes out in few writes (issue 13 item 6).

    Args:
        events: the run's reader (``RunManager.reader``), or None (the prelude is all).
        encoder: the client's encoder; every event of ``events`` goes through
            ``encode_wire(event, id=str(cursor), json=...)``, ``json`` being the serialized
            form the store or the broker handed over (:attr:`RunEvent.json`), if any.
        prelude: wire events sent first (the ``?replay=snapshot`` prelude); only the last one
            carries an id, ``prelude_cursor`` (the client then holds everything up to it;
            ``docs/runs.md`` §1: prelude events are not stored as such).
        prelude_cursor: see ``prelude``.
        on_abandon: awaited (shielded from cancellation; its errors are logged) when the
            stream stops before ``events`` ended, i.e. the client went away or reading failed.
        cursor_tag: the run's cursor tag: ids are written ``<epoch>.<seq>.<tag>``
            (:mod:`gateway.routes._cursor`, bound to the run); None writes ``<epoch>.<seq>``.

    A :class:`~gateway.store.errors.RunStoreError` out of ``events`` (the store lost while
    reading) ends the stream with what the client has open closed and RUN_ERROR
    ``STORE_UNAVAILABLE`` (no id), then ``encoder.close()``.

    Closing the generator closes ``events`` (releasing its broker subscription).
    """
    completed = False
    name = encoder.name
    suffix = "" if cursor_tag is None else f".{cursor_tag}"
    try:
        last = len(prelude) - 1
        frames = []
        for index, wire in enumerate(prelude):
            metrics.count_event_out(str(wire.get("type")), name)
            cursor = prelude_cursor if index == last and prelude_cursor is not None else None
            frames.append(
                encoder.encode_wire(wire, id=None if cursor is None else f"{cursor}{suffix}")
            )
        if frames:  # the prelude is there at once: one chunk (one write)
            yield b"".join(frames)
        if events is not None:
            fold = OpenItems()
            batches = getattr(events, "batches", None)
            source: AsyncIterator[Sequence[RunEvent]] = (
                batches() if batches is not None else _singles(events)
            )
            try:
                async for batch in source:
                    for data in _encode_batch(batch, encoder, fold, suffix):
                        yield data
            except RunStoreError as exc:
                if exc.code not in _STORE_LOST:
                    raise  # a refusal (cursor, run not found), not a lost store
                # The store was lost mid-stream (issue 12): close what the client has open and
                # end with a typed RUN_ERROR (no id: nothing stored names it), never a cut.
                _log.error("reading a run failed (%s: %s); ending the stream", exc.code, exc)
                if not fold.ended:
                    for wire in [*fold.closing_events(), _store_lost(exc)]:
                        data = encoder.encode_wire(wire)
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
