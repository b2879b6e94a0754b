"""Chunk offsets (``gateway.chunk_offsets``): a resume by chunk index sends every chunk once.

The protocol is ``WorkflowChatTransport``'s (npm ``@workflow/ai`` 5.0.0,
``dist/workflow-chat-transport.js``): the client counts the ``data:`` JSON events it parsed
(``[DONE]`` is none) and asks for ``?startIndex=<that count>``; a negative index counts from the
end (``max(0, count + N)``, ``@workflow/world-local`` 4.x ``streamer.js``) and the answer's tail
index is ``count - 1``. The expected chunks come from one encoder over the whole run, parsed by
SSE lines (WHATWG HTML "Server-sent events", the ``data`` field), not by the module's framing.
"""

from __future__ import annotations

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
    encode_event_frames,
    frames_from,
    read_prefix,
    resolve_start,
    split_frames,
)
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


def _encoder_bytes(run: Sequence[RunEvent]) -> bytes:
    encoder = _encoder()
    return b"".join(encoder.encode_wire(e.event, id=str(e.cursor)) for e in run)


@given(st.lists(st.binary(max_size=20).filter(lambda b: b"\n\n" not in b), max_size=8))
def test_split_frames_gives_back_each_event(bodies: list[bytes]) -> None:
    frames = [b"data: " + body.replace(b"\n", b" ") + b"\n\n" for body in bodies]
    assert split_frames(b"".join(frames)) == frames
