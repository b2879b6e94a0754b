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

    RunManager.reader() ─▶ encode_event_frames() ─▶ (cursor, frames) per event, then close()
                                 │
                                 ├─ read_prefix(): the frames stored so far (negative index)
                                 └─ frames_from(): only chunk N on ─▶ SSE bytes
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field

from agui_codecs import Encoder

from . import metrics
from .encoding import MAX_CHUNK_BYTES
from .types import Cursor, RunEvent

__all__ = [
    "EventFrames",
    "Prefix",
    "encode_event_frames",
    "frames_from",
    "is_chunk",
    "read_prefix",
    "resolve_start",
    "split_frames",
]

_DONE = b"data: [DONE]"


def split_frames(data: bytes) -> list[bytes]:
    """The SSE events of ``data`` (an encoder's output), each with its ``\\n\\n``.

    The AI SDK encoder writes one ``data: <compact JSON>\\n\\n`` per chunk (no line breaks
    inside: the JSON is compact), so an event ends at each blank line.
    """
    frames = []
    start = 0
    while True:
        end = data.find(b"\n\n", start)
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


@dataclass(frozen=True, slots=True)
class EventFrames:
    """The SSE events one stored event encodes to.

    Attributes:
        cursor: the stored event's cursor; None for the encoder's ``close()`` output.
        frames: its SSE events (possibly none).
        flush: the last event of what the reader had at hand (a store page, a broker batch:
            :meth:`~gateway.runs.reader.RunReader.batches`): :func:`frames_from` writes what it
            holds here, so a live delta goes out at once and a replay in few writes.
    """

    cursor: Cursor | None
    frames: Sequence[bytes]
    flush: bool = True

    @property
    def chunks(self) -> int:
        """How many of ``frames`` are UIMessageChunks (count toward the chunk index)."""
        return sum(1 for frame in self.frames if is_chunk(frame))


async def encode_event_frames(
    events: AsyncIterator[RunEvent], encoder: Encoder
) -> AsyncGenerator[EventFrames, None]:
    """Every event of ``events`` as its frames (``encoder.encode_serialized`` of the stored
    JSON, or ``encode_wire``), then ``encoder.close()`` (cursor None). The events are read
    as the batches the reader has (``events.batches()`` when it has it, else one by one), the
    last event of each marked ``flush``. Closing this generator closes ``events``."""
    name = encoder.name
    batches = getattr(events, "batches", None)
    source: AsyncIterator[Sequence[RunEvent]] = (
        batches() if batches is not None else _singles(events)
    )
    serialized = encoder.encode_serialized
    try:
        async for batch in source:
            counts: dict[str, int] = {}
            last = len(batch) - 1
            try:
                for index, stored in enumerate(batch):
                    kind = stored.type
                    counts[kind] = counts.get(kind, 0) + 1
                    cursor = stored.cursor
                    json = stored.json
                    if json is None:
                        data = encoder.encode_wire(stored.event, id=str(cursor))
                    else:
                        data = serialized(kind, json, stored.load, id=str(cursor))
                    yield EventFrames(cursor, split_frames(data), index == last)
            finally:
                for kind, count in counts.items():
                    metrics.count_event_out(kind, name, count)
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()
    yield EventFrames(None, split_frames(encoder.close()))


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
    has ended: its reader stops after the terminal event, so this never waits)."""
    prefix = Prefix()
    if through is None and not to_end:
        return prefix
    async for batch in frames:
        prefix.batches.append(batch)
        prefix.chunks += batch.chunks
        if batch.cursor is None:
            prefix.ended = True
            break
        if not to_end and through is not None and batch.cursor >= through:
            break
    return prefix


def resolve_start(start_index: int, count: int) -> int:
    """The absolute chunk index of ``?startIndex=``: itself when >= 0, else
    ``max(0, count + start_index)`` (``-5``: the last five chunks of ``count``)."""
    return start_index if start_index >= 0 else max(0, count + start_index)


async def frames_from(
    frames: AsyncGenerator[EventFrames, None], start: int, *, prefix: Prefix | None = None
) -> AsyncGenerator[bytes, None]:
    """SSE bytes of the chunks at index ``start`` and after: ``prefix``'s batches, then the
    rest of ``frames``; chunks before ``start`` are skipped, ``[DONE]`` always goes out.
    One write per batch of events the reader had together (:attr:`EventFrames.flush`), cut
    at about :data:`~gateway.encoding.MAX_CHUNK_BYTES`. Closing this generator closes
    ``frames``."""
    index = 0
    parts: list[bytes] = []
    size = 0

    def keep(batch: EventFrames) -> None:
        nonlocal index, size
        for frame in batch.frames:
            if is_chunk(frame):
                if index >= start:
                    parts.append(frame)
                    size += len(frame)
                index += 1
            else:
                parts.append(frame)
                size += len(frame)

    def take() -> bytes:
        nonlocal parts, size
        data = b"".join(parts)
        parts, size = [], 0
        return data

    async with aclosing(frames):
        for batch in prefix.batches if prefix is not None else ():
            keep(batch)
            if size >= MAX_CHUNK_BYTES:
                yield take()
        if parts:
            yield take()
        if prefix is not None and prefix.ended:
            return
        async for batch in frames:
            keep(batch)
            if parts and (batch.flush or size >= MAX_CHUNK_BYTES):
                yield take()
        if parts:
            yield take()
