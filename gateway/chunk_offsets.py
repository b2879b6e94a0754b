"""Chunk offsets: a durable run's UIMessageChunk stream, numbered, for resume by chunk index.

``WorkflowChatTransport`` (npm ``@workflow/ai`` 5.0.0, ``dist/workflow-chat-transport.js``)
counts the chunks it has parsed (every ``data:`` JSON event of the stream; ``data: [DONE]`` is
none: ``ai`` 6 ``parseJsonEventStream`` skips it) and resumes with ``?startIndex=N``, the
stream from chunk N on (chunk 0 is ``start``); a negative N counts from the end
(``max(0, count + N)``, ``@workflow/world-local`` ``streamer.js``), and the answer names the
last chunk's index in ``x-workflow-stream-tail-index`` (``count - 1``).

Chunk N of a run is defined by the run's stored events: the AI SDK encoder is deterministic,
so encoding the events from the first, in cursor order, with the encoder the first response
used (same ``messageId``, ``messageMetadata`` and ``ai`` major) gives the same chunks in the
same order; an event's chunk offset is the number of chunks its predecessors encode to. The
store keeps the events, so the offsets are recomputed on each resume (one pass over the
stored events, the same work as the AI SDK resume's replay from the first chunk) and nothing
is sent twice or left out.

::

    RunManager.reader() ─▶ encode_event_frames() ─▶ (frames, chunk count) per batch, then close()
                                 │
                                 ├─ read_prefix(): the frames stored so far (negative index)
                                 └─ frames_from(): only chunk N on ─▶ SSE bytes

A replay is mostly pages of thousands of events (issue 13: 10,000 stored events replayed in
< 150 ms), so the work is per batch (a store page, a broker batch), not per event: a batch is
encoded into one ``bytes`` with the collector paused (:func:`_encode_page`), its chunks are
counted on those bytes (:func:`count_chunks`, C-speed ``bytes.count``), and it is split into
frames only where a chunk index falls inside it (the ``startIndex`` of :func:`frames_from`, the
``through`` of :func:`read_prefix`). The bytes are the same as encoding event by event.
"""

from __future__ import annotations

import gc
from bisect import bisect_right
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from functools import partial

import orjson

from agui_codecs import Encoder

from . import metrics
from .encoding import MAX_CHUNK_BYTES
from .types import Cursor, RunEvent

__all__ = [
    "EventFrames",
    "Prefix",
    "count_chunks",
    "encode_event_frames",
    "frames_from",
    "is_chunk",
    "read_prefix",
    "resolve_start",
    "split_frames",
]

_DONE = b"data: [DONE]"
_END = b"\n\n"


def split_frames(data: bytes) -> list[bytes]:
    """The SSE events of ``data`` (an encoder's output), each with its ``\\n\\n``.

    The AI SDK encoder writes one ``data: <compact JSON>\\n\\n`` per chunk (no line breaks
    inside: the JSON is compact), so an event ends at each blank line.
    """
    frames = []
    start = 0
    while True:
        end = data.find(_END, start)
        if end < 0:
            break
        frames.append(data[start : end + 2])
        start = end + 2
    if start < len(data):
        frames.append(data[start:])
    return frames


def is_chunk(frame: bytes) -> bool:
    """True for a UIMessageChunk event (``data: {...}``); False for ``[DONE]`` and comments."""
    return frame.startswith(b"data:") and not frame.startswith(_DONE)


def count_chunks(data: bytes) -> tuple[int, bool]:
    """``(chunks, only_chunks)`` of ``data`` (an encoder's output): how many of
    ``split_frames(data)`` are :func:`is_chunk`, and whether all of them are.

    Counted on the bytes: when ``data`` ends with a blank line and holds no ``\\n\\n\\n``,
    every ``\\n\\n`` ends a frame and the next frame starts right after it, so a frame is a
    chunk where ``data:`` but not ``data: [DONE]`` follows (or starts ``data``). Other bytes
    (a frame left open, blank lines in a row) are split and looked at frame by frame.
    """
    if not data:
        return 0, True
    if not data.endswith(_END) or b"\n\n\n" in data:
        frames = split_frames(data)
        chunks = sum(1 for frame in frames if is_chunk(frame))
        return chunks, chunks == len(frames)
    chunks = data.count(b"\n\ndata:") - data.count(b"\n\ndata: [DONE]")
    if data.startswith(b"data:") and not data.startswith(_DONE):
        chunks += 1
    return chunks, chunks == data.count(_END)


@dataclass(frozen=True, slots=True)
class EventFrames:
    """The SSE bytes a batch of stored events encodes to (or the encoder's ``close()``).

    Attributes:
        cursor: the batch's last event's cursor; None for the encoder's ``close()`` output.
        data: the frames of the batch's events, in order (possibly empty).
        chunks: how many of them are UIMessageChunks (count toward the chunk index).
        only_chunks: every frame of ``data`` is a chunk (no ``[DONE]``, no comment).
        cursors: the cursor of each event of the batch, in order.
        ends: the end offset in ``data`` of each event's frames (``ends[i]``: the bytes of
            events ``0..i``), so a batch can be counted up to one of its events.
    """

    cursor: Cursor | None
    data: bytes
    chunks: int
    only_chunks: bool = True
    cursors: Sequence[Cursor] = ()
    ends: Sequence[int] = ()

    @property
    def frames(self) -> list[bytes]:
        """The SSE events of :attr:`data` (:func:`split_frames`)."""
        return split_frames(self.data)

    def chunks_through(self, cursor: Cursor) -> int:
        """How many UIMessageChunks the batch's events at or before ``cursor`` encode to."""
        if self.cursor is None or self.cursor <= cursor:
            return self.chunks
        held = bisect_right(self.cursors, cursor)
        return count_chunks(self.data[: self.ends[held - 1]])[0] if held else 0


def _encode_page(batch: Sequence[RunEvent], encoder: Encoder) -> EventFrames:
    """The frames of ``batch`` (``encoder.encode_serialized`` of each stored JSON, else
    ``encode_wire``; ``id=`` only to an encoder that writes it) as one :class:`EventFrames`,
    with the collector paused: a page is thousands of short-lived dicts, none in a cycle
    (:mod:`gateway.store.wire_read`). No await inside."""
    ids = encoder.writes_ids
    serialized = encoder.encode_serialized
    loads = orjson.loads
    parts: list[bytes] = []
    ends: list[int] = []
    size = 0
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        for stored in batch:
            json = stored.json
            cursor = str(stored.cursor) if ids else None
            if json is None:
                data = encoder.encode_wire(stored.event, id=cursor)
            else:  # parsed without keeping the dict on the event (it would outlive the page)
                data = serialized(stored.type, json, partial(loads, json), id=cursor)
            parts.append(data)
            size += len(data)
            ends.append(size)
    finally:
        if paused:
            gc.enable()
    data = parts[0] if len(parts) == 1 else b"".join(parts)
    chunks, only = count_chunks(data)
    cursors = [stored.cursor for stored in batch]
    return EventFrames(batch[-1].cursor, data, chunks, only, cursors, ends)


async def encode_event_frames(
    events: AsyncIterator[RunEvent], encoder: Encoder
) -> AsyncGenerator[EventFrames, None]:
    """Every batch of ``events`` as its frames (:func:`_encode_page`), then
    ``encoder.close()`` (cursor None). The events are read as the batches the reader has
    (``events.batches()`` when it has it, else one by one); each batch is one write of
    :func:`frames_from`. Closing this generator closes ``events``."""
    name = encoder.name
    batches = getattr(events, "batches", None)
    source: AsyncIterator[Sequence[RunEvent]] = (
        batches() if batches is not None else _singles(events)
    )
    try:
        async for batch in source:
            if not batch:
                continue
            for kind, count in Counter([stored.type for stored in batch]).items():
                metrics.count_event_out(kind, name, count)  # one update per type and batch
            yield _encode_page(batch, encoder)
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()
    tail = encoder.close()
    chunks, only = count_chunks(tail)
    yield EventFrames(None, tail, chunks, only)


async def _singles(events: AsyncIterator[RunEvent]) -> AsyncIterator[Sequence[RunEvent]]:
    async for event in events:
        yield (event,)


@dataclass(slots=True)
class Prefix:
    """The frames of a run up to a point, read before the response starts.

    Attributes:
        batches: what was read, in order.
        chunks: how many UIMessageChunks ``batches`` hold (the tail index is ``chunks - 1``).
        ended: ``close()`` was read (the whole stream is in ``batches``).
    """

    batches: list[EventFrames] = field(default_factory=list)
    chunks: int = 0
    ended: bool = False


async def read_prefix(
    frames: AsyncIterator[EventFrames], *, through: Cursor | None, to_end: bool
) -> Prefix:
    """Read ``frames`` through the event at ``through`` (the run's last durable event when
    the request came; None: nothing is stored yet), or to the end when ``to_end`` (the run
    has ended: its reader stops after the terminal event, so this never waits). The batch
    holding ``through`` is kept whole; only its chunks up to ``through`` are counted."""
    prefix = Prefix()
    if through is None and not to_end:
        return prefix
    async for batch in frames:
        prefix.batches.append(batch)
        if batch.cursor is None:
            prefix.chunks += batch.chunks
            prefix.ended = True
            break
        if not to_end and through is not None and batch.cursor >= through:
            prefix.chunks += batch.chunks_through(through)
            break
        prefix.chunks += batch.chunks
    return prefix


def resolve_start(start_index: int, count: int) -> int:
    """The absolute chunk index of ``?startIndex=``: itself when >= 0, else
    ``max(0, count + start_index)`` (``-5``: the last five chunks of ``count``)."""
    return start_index if start_index >= 0 else max(0, count + start_index)


def _cut(data: bytes) -> list[bytes]:
    """``data`` in writes of about :data:`~gateway.encoding.MAX_CHUNK_BYTES`, each ending
    with the frame that crosses it (a frame is never split)."""
    if len(data) <= MAX_CHUNK_BYTES:
        return [data]
    pieces = []
    start = 0
    while True:
        end = data.find(_END, start + MAX_CHUNK_BYTES - 2)
        if end < 0 or end + 2 >= len(data):
            pieces.append(data[start:] if start else data)
            return pieces
        pieces.append(data[start : end + 2])
        start = end + 2


async def frames_from(
    frames: AsyncGenerator[EventFrames, None], start: int, *, prefix: Prefix | None = None
) -> AsyncGenerator[bytes, None]:
    """SSE bytes of the chunks at index ``start`` and after: ``prefix``'s batches, then the
    rest of ``frames``; chunks before ``start`` are skipped, ``[DONE]`` always goes out.
    One write per batch of events the reader had together (the prefix's batches joined),
    cut at about :data:`~gateway.encoding.MAX_CHUNK_BYTES`. A batch wholly before or after
    ``start`` is kept or skipped as it is; only one with ``start`` inside (or a frame that is
    no chunk before it) is split into frames. Closing this generator closes ``frames``."""
    index = 0
    parts: list[bytes] = []
    size = 0

    def keep(batch: EventFrames) -> None:
        nonlocal index, size
        if index >= start:  # every frame goes out
            if batch.data:
                parts.append(batch.data)
                size += len(batch.data)
            index += batch.chunks
            return
        if batch.only_chunks and index + batch.chunks <= start:  # every frame skipped
            index += batch.chunks
            return
        for frame in batch.frames:
            if is_chunk(frame):
                if index >= start:
                    parts.append(frame)
                    size += len(frame)
                index += 1
            else:
                parts.append(frame)
                size += len(frame)

    def take() -> list[bytes]:
        nonlocal size
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        parts.clear()
        size = 0
        return _cut(data)

    async with aclosing(frames):
        for batch in prefix.batches if prefix is not None else ():
            keep(batch)
            if size >= MAX_CHUNK_BYTES:
                for piece in take():
                    yield piece
        if parts:
            for piece in take():
                yield piece
        if prefix is not None and prefix.ended:
            return
        async for batch in frames:
            keep(batch)
            if parts:
                for piece in take():
                    yield piece
