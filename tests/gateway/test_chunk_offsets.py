"""Chunk offsets (``gateway.chunk_offsets``): a resume by chunk index sends every chunk once.

The protocol is ``WorkflowChatTransport``'s (npm ``@workflow/ai`` 5.0.0,
``dist/workflow-chat-transport.js``): the client counts the ``data:`` JSON events it parsed
(``[DONE]`` is none) and asks for ``?startIndex=<that count>``; a negative index counts from the
end (``max(0, count + N)``, ``@workflow/world-local`` 4.x ``streamer.js``) and the answer's tail
index is ``count - 1``. The expected chunks come from one encoder over the whole run, parsed by
SSE lines (WHATWG HTML "Server-sent events", the ``data`` field), not by the module's framing.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
from ag_ui.core import EventType, RunFinishedEvent, RunStartedEvent
from event_strategies import event_sequences
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agui_codecs.core import StoreGuard
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from gateway.chunk_offsets import (
    count_chunks,
    encode_event_frames,
    frames_from,
    is_chunk,
    read_prefix,
    resolve_start,
    split_frames,
)
from gateway.encoding import MAX_CHUNK_BYTES
from gateway.types import Cursor, RunEvent

# drawing whole event sequences is slow on a loaded machine: no generation-speed check
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _encoder() -> AiSdkEncoder:
    return AiSdkEncoder(message_id="m1", message_metadata={"threadId": "t1", "runId": "r1"})


def _sse_chunks(data: bytes) -> list[Any]:
    """The JSON ``data`` of every SSE event of ``data`` (``[DONE]`` left out)."""
    chunks = []
    for block in data.decode().split("\n\n"):
        lines = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if lines and lines != ["[DONE]"]:
            chunks.append(json.loads("\n".join(lines)))
    return chunks


@st.composite
def stored_runs(draw: st.DrawFn) -> list[RunEvent]:
    """A run's stored events: RUN_STARTED, arbitrary events, sometimes RUN_FINISHED; each
    event's cursor ``1.<seq>``."""
    body = draw(event_sequences(max_size=10))
    events = [RunStartedEvent(type=EventType.RUN_STARTED, thread_id="t1", run_id="r1"), *body]
    if draw(st.booleans()):
        events.append(RunFinishedEvent(type=EventType.RUN_FINISHED, thread_id="t1", run_id="r1"))
    # what the store holds: the events as the pump's store guard lets them in
    guard = StoreGuard(thread_id="t1", run_id="r1")
    stored = [w for e in events for w in guard.push(event_to_wire(e))]
    return [RunEvent(Cursor(1, seq), wire) for seq, wire in enumerate(stored, 1)]


def _whole(run: Sequence[RunEvent]) -> list[Any]:
    encoder = _encoder()
    data = b"".join(encoder.encode_wire(e.event, id=str(e.cursor)) for e in run)
    return _sse_chunks(data + encoder.close())


async def _iter(run: Sequence[RunEvent]) -> AsyncIterator[RunEvent]:
    for event in run:
        yield event


def _encodable(run: Sequence[RunEvent]) -> list[Any]:
    try:
        return _whole(run)
    except Exception:  # a sequence the encoder refuses is not one the store would hold
        assume(False)
        raise


async def _resume(run: Sequence[RunEvent], start: int) -> bytes:
    body = frames_from(encode_event_frames(_iter(run), _encoder()), start)
    return b"".join([data async for data in body])


@SETTINGS
@given(run=stored_runs(), start=st.integers(-30, 30))
def test_a_resume_at_any_index_sends_the_chunks_from_there_once(
    run: list[RunEvent], start: int
) -> None:
    whole = _encodable(run)
    at = resolve_start(start, len(whole))
    sent = anyio.run(_resume, run, at)
    assert _sse_chunks(sent) == whole[at:]
    assert sent.endswith(b"data: [DONE]\n\n")


@SETTINGS
@given(run=stored_runs(), data=st.data())
def test_a_cut_after_any_chunk_then_a_resume_gives_every_chunk_once(
    run: list[RunEvent], data: st.DataObject
) -> None:
    whole = _encodable(run)
    received = data.draw(st.integers(0, len(whole)), label="chunks before the cut")
    rest = _sse_chunks(anyio.run(_resume, run, received))
    assert whole[:received] + rest == whole


@SETTINGS
@given(run=stored_runs(), data=st.data())
def test_a_negative_index_counts_from_what_is_stored_and_names_the_tail(
    run: list[RunEvent], data: st.DataObject
) -> None:
    """The request comes when ``stored`` events are durable (the rest arrive live): the tail
    index is the last chunk of those, the answer starts ``-start`` chunks before it."""
    whole = _encodable(run)
    stored = data.draw(st.integers(0, len(run)), label="events stored when the request came")
    start = data.draw(st.integers(-20, -1), label="startIndex")
    count = len(_sse_chunks(_encoder_bytes(run[:stored])))

    async def go() -> tuple[int, bytes]:
        frames = encode_event_frames(_iter(run), _encoder())
        through = run[stored - 1].cursor if stored else None
        prefix = await read_prefix(frames, through=through, to_end=False)
        body = frames_from(frames, resolve_start(start, prefix.chunks), prefix=prefix)
        return prefix.chunks - 1, b"".join([chunk async for chunk in body])

    tail, sent = anyio.run(go)
    assert tail == count - 1
    assert _sse_chunks(sent) == whole[max(0, tail + 1 + start) :]


@SETTINGS
@given(run=stored_runs(), start=st.integers(-20, -1))
def test_a_negative_index_on_an_ended_run_counts_the_whole_stream(
    run: list[RunEvent], start: int
) -> None:
    whole = _encodable(run)

    async def go() -> tuple[int, bytes]:
        frames = encode_event_frames(_iter(run), _encoder())
        prefix = await read_prefix(frames, through=run[-1].cursor, to_end=True)
        assert prefix.ended
        body = frames_from(frames, resolve_start(start, prefix.chunks), prefix=prefix)
        return prefix.chunks - 1, b"".join([chunk async for chunk in body])

    tail, sent = anyio.run(go)
    assert tail == len(whole) - 1
    assert _sse_chunks(sent) == whole[max(0, len(whole) + start) :]


def _encoder_bytes(run: Sequence[RunEvent], encoder: AiSdkEncoder | None = None) -> bytes:
    encoder = encoder or _encoder()
    return b"".join(encoder.encode_wire(e.event, id=str(e.cursor)) for e in run)


@given(st.lists(st.binary(max_size=20).filter(lambda b: b"\n\n" not in b), max_size=8))
def test_split_frames_gives_back_each_event(bodies: list[bytes]) -> None:
    frames = [b"data: " + body.replace(b"\n", b" ") + b"\n\n" for body in bodies]
    assert split_frames(b"".join(frames)) == frames


class _Batched:
    """A reader with :meth:`~gateway.runs.reader.RunReader.batches`: ``run`` cut at
    ``cuts`` (event indexes), as store pages and broker batches come."""

    def __init__(self, run: Sequence[RunEvent], cuts: Sequence[int]) -> None:
        bounds = [0, *sorted({c for c in cuts if 0 < c < len(run)}), len(run)]
        self.pages = [list(run[a:b]) for a, b in itertools.pairwise(bounds) if b > a]
        self.closed = False

    async def batches(self) -> AsyncIterator[list[RunEvent]]:
        for page in self.pages:
            yield page

    def __aiter__(self) -> AsyncIterator[RunEvent]:
        raise AssertionError("read by batches")

    async def aclose(self) -> None:
        self.closed = True


@SETTINGS
@given(run=stored_runs(), cuts=st.lists(st.integers(0, 40), max_size=6), data=st.data())
def test_pages_give_the_bytes_of_one_event_at_a_time(
    run: list[RunEvent], cuts: list[int], data: st.DataObject
) -> None:
    """The batched path (a page encoded at once, counted on its bytes, split only where an
    index falls inside it) sends what the reader one event at a time sends, byte for byte,
    for every start index and every stored prefix of a negative one."""
    _encodable(run)
    start = data.draw(st.integers(-30, 30), label="startIndex")
    stored = data.draw(st.integers(0, len(run)), label="events stored when the request came")

    async def go(events: Any) -> tuple[bytes, int, bytes]:
        whole = frames_from(encode_event_frames(events(), _encoder()), max(start, 0))
        sent = b"".join([chunk async for chunk in whole])
        frames = encode_event_frames(events(), _encoder())
        through = run[stored - 1].cursor if stored else None
        prefix = await read_prefix(frames, through=through, to_end=False)
        body = frames_from(frames, resolve_start(start, prefix.chunks), prefix=prefix)
        return sent, prefix.chunks, b"".join([chunk async for chunk in body])

    assert anyio.run(go, lambda: _Batched(run, cuts)) == anyio.run(go, lambda: _iter(run))


def test_a_page_is_written_in_pieces_of_whole_frames() -> None:
    """A replay page of 10,000 deltas goes out in writes of about MAX_CHUNK_BYTES, each a
    run of whole frames, together the page's bytes."""
    wires = [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{i} "}
            for i in range(10_000)
        ),
    ]
    run = [RunEvent(Cursor(1, seq), wire) for seq, wire in enumerate(wires, 1)]

    async def go() -> list[bytes]:
        body = frames_from(encode_event_frames(_Batched(run, [3000]), _encoder()), 0)  # type: ignore[arg-type]
        return [chunk async for chunk in body]

    writes = anyio.run(go)
    encoder = _encoder()
    assert b"".join(writes) == _encoder_bytes(run, encoder) + encoder.close()
    assert all(w.endswith(b"\n\n") for w in writes)
    assert all(len(w) < MAX_CHUNK_BYTES + 200 for w in writes)
    assert len(writes) > 2 * len(b"".join(writes)) // (3 * MAX_CHUNK_BYTES)


_FRAME = st.one_of(
    st.builds(lambda b: b"data: " + b + b"\n\n", st.binary(max_size=8)),
    st.just(b"data: [DONE]\n\n"),
    st.just(b": keep-alive\n\n"),
    st.just(b"\n\n"),
    st.binary(max_size=6),
)


@given(st.lists(_FRAME, max_size=8))
def test_count_chunks_counts_what_split_frames_gives(parts: list[bytes]) -> None:
    data = b"".join(parts)
    frames = split_frames(data)
    chunks = sum(1 for frame in frames if is_chunk(frame))
    assert count_chunks(data) == (chunks, chunks == len(frames))
