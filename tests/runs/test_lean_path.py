"""The lean durable path (issue 13 items 3 and 6) sends the bytes of the model path.

Fast path: the pump's writer serializes each event once (``RunEvent.json``), the store keeps
that text and hands it back (``read_wire``), the broker passes it on, and
:func:`gateway.encoding.encode_run_events` frames it (``encode_wire(..., json=...)``) a
store page or broker batch at a time. Reference: the existing encoder one event at a time over
the dicts the store's JSON column parses, serializing each itself; and, where every event is in
its model's field order, the model path (``parse_event``, then ``Encoder.encode``: the encoder
contract, ``codecs/agui_codecs/encoders/base.py``, ``encode(e) ==
encode_wire(event_to_wire(e))``, ``event_to_wire`` being ``model_dump``). Both
wires (``agui``, ``ai-sdk``), a reader replaying the store and a live reader fed by the
broker, and on the AI SDK wire the chunk-index replay (``gateway.chunk_offsets``, the
``WorkflowChatTransport`` resume from chunk 0), over hypothesis-drawn runs. The store hands
back each event's text and type without parsing it (``RunEvent.json``, parsed on demand).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from ag_ui.core import EventType, RunFinishedEvent, RunStartedEvent
from event_strategies import event_sequences
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agui_codecs import Encoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire, parse_event
from gateway.broker import InProcessBroker
from gateway.chunk_offsets import encode_event_frames, frames_from
from gateway.encoding import MAX_CHUNK_BYTES, encode_run_events
from gateway.runs import RunPump, RunSettings, read_run
from gateway.runs.reader import PAGE_BYTES
from gateway.store import RunEvent, open_store

from .helpers import from_list

pytestmark = pytest.mark.timeout(300)

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PAGED = RunSettings(batch_interval=0.01, heartbeat_interval=0.5, read_page_size=3)
WIRES = ("agui", "ai-sdk")


def _encoder(wire: str) -> Encoder:
    if wire == "agui":
        return AguiEncoder()
    return AiSdkEncoder(message_id="m1", message_metadata={"threadId": "t1", "runId": "r1"})


@st.composite
def upstream_runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """RUN_STARTED, arbitrary events, sometimes RUN_FINISHED, as wire dicts (the pump's
    guard makes them a legal stored run, closing it when it does not end)."""
    body = draw(event_sequences(max_size=12))
    events = [RunStartedEvent(type=EventType.RUN_STARTED, thread_id="t1", run_id="r1"), *body]
    if draw(st.booleans()):
        events.append(RunFinishedEvent(type=EventType.RUN_FINISHED, thread_id="t1", run_id="r1"))
    return [event_to_wire(e) for e in events]


def _reference(stored: list[RunEvent], wire: str) -> bytes | None:
    """The reference bytes: the existing encoder, one event at a time, over the wire dicts as
    the store's JSON column parses them, serializing each itself (None: a run this encoder
    refuses, which no client is sent). For an event in its model's field order (what a
    decoder emits) this is the model path, ``encode(parse_event(w))``: checked as well."""
    encoder, models = _encoder(wire), _encoder(wire)
    try:
        data = b"".join(encoder.encode_wire(e.event, id=str(e.cursor)) for e in stored)
        data += encoder.close()
    except Exception:
        return None
    if all(list(event_to_wire(parse_event(e.event))) == list(e.event) for e in stored):
        by_model = b"".join(models.encode(parse_event(e.event), id=str(e.cursor)) for e in stored)
        assert by_model + models.close() == data
    return data


async def _drain(body: AsyncIterator[bytes]) -> list[bytes]:
    return [chunk async for chunk in body]


async def _paths(events: list[dict[str, Any]], wire: str) -> tuple[Any, ...]:
    with tempfile.TemporaryDirectory() as tmp:
        return await _paths_in(Path(tmp), events, wire)


async def _paths_in(tmp: Path, events: list[dict[str, Any]], wire: str) -> tuple[Any, ...]:
    store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
    broker = InProcessBroker()
    try:
        run = await store.create_run(run_id="run-1", thread_id="t1", owner="a")
        live = asyncio.create_task(
            _drain(
                encode_run_events(read_run(store, broker, run.id, settings=PAGED), _encoder(wire))
            )
        )
        await asyncio.sleep(0)  # the live reader subscribes before the first event
        await RunPump(store, broker, run, settings=PAGED).run(from_list(events))
        live_chunks = await asyncio.wait_for(live, 20)
        replay = read_run(store, broker, run.id, settings=PAGED)
        replay_chunks = await _drain(encode_run_events(replay, _encoder(wire)))
        # the WorkflowChatTransport replay from chunk 0 (gateway.chunk_offsets), page by page
        indexed = read_run(store, broker, run.id, settings=PAGED)
        indexed_chunks = await _drain(frames_from(encode_event_frames(indexed, _encoder(wire)), 0))
        rows = await store.read_events(run.id, limit=10_000)  # parsed by the JSON column
        wires = await store.read_wire(run.id, limit=10_000)
        stored = [RunEvent(r.cursor, r.event) for r in rows]
        return stored, wires, live_chunks, replay_chunks, indexed_chunks
    finally:
        await broker.close()
        await store.close()


@pytest.mark.parametrize("wire", WIRES)
@SETTINGS
@given(events=upstream_runs())
def test_fast_path_bytes_equal_the_model_path(wire: str, events: list[dict[str, Any]]) -> None:
    stored, wires, live, replay, indexed = anyio.run(_paths, events, wire)
    expected = _reference(stored, wire)
    assume(expected is not None)
    assert b"".join(replay) == expected
    assert b"".join(live) == expected
    if wire == "ai-sdk":  # chunk offsets: the AI SDK encoder's chunks, ids not written
        assert b"".join(indexed) == expected
    # the store hands back each event's text, which is the writer's one serialization
    assert [w.json for w in wires] == [orjson.dumps(s.event) for s in stored]
    assert wires == stored


async def _bulk(
    n: int,
) -> tuple[list[bytes], list[list[RunEvent]], list[RunEvent], list[bytes]]:
    store = await open_store("sqlite+aiosqlite:///:memory:")
    broker = InProcessBroker()
    try:
        run = await store.create_run(run_id="run-1", thread_id="t1", owner="a")
        events: list[dict[str, Any]] = [
            {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
            *(
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i} "}
                for i in range(n)
            ),
            {"type": "TEXT_MESSAGE_END", "messageId": "m"},
            {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
        ]
        await RunPump(store, broker, run, settings=PAGED).run(from_list(events))
        settings_ = RunSettings(read_page_size=500)
        chunks = await _drain(
            encode_run_events(read_run(store, broker, run.id, settings=settings_), AguiEncoder())
        )
        reader = read_run(store, broker, run.id, settings=settings_)
        pages = [page async for page in reader.batches()]
        singles = [e async for e in read_run(store, broker, run.id, settings=settings_)]
        indexed = await _drain(
            frames_from(
                encode_event_frames(
                    read_run(store, broker, run.id, settings=settings_),
                    AiSdkEncoder(message_id="m1"),
                ),
                0,
            )
        )
        return chunks, pages, singles, indexed
    finally:
        await broker.close()
        await store.close()


def test_a_replay_goes_out_a_page_at_a_time_in_bounded_chunks() -> None:
    chunks, pages, singles, indexed = anyio.run(_bulk, 2000)
    # the store's pages, as they are (growing: 500, then twice the last), the same events as
    # one by one
    assert [len(p) for p in pages] == [500, 1000, 504]
    assert [e for p in pages for e in p] == singles
    # one write per ~MAX_CHUNK_BYTES, not one per event; no chunk much past the bound
    frames = sum(chunk.count(b"\n\n") for chunk in chunks)
    assert frames == 2004
    assert len(chunks) <= sum(len(c) for c in chunks) // MAX_CHUNK_BYTES + len(pages)
    assert max(len(c) for c in chunks) < MAX_CHUNK_BYTES + 1024
    # the chunk-index replay too: one write per page or ~MAX_CHUNK_BYTES, not one per event
    # (start, start-step, text-start, 2000 text-delta, text-end, finish-step, finish, [DONE])
    assert sum(chunk.count(b"\n\n") for chunk in indexed) == 2007
    assert len(indexed) <= sum(len(c) for c in indexed) // MAX_CHUNK_BYTES + len(pages) + 1
    assert max(len(c) for c in indexed) < MAX_CHUNK_BYTES + 1024


async def _large_pages() -> list[int]:
    store = await open_store("sqlite+aiosqlite:///:memory:")
    broker = InProcessBroker()
    try:
        run = await store.create_run(run_id="run-1", thread_id="t1", owner="a")
        events: list[dict[str, Any]] = [
            {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
            *(
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i:08d}" * 1024}
                for i in range(300)
            ),
            {"type": "TEXT_MESSAGE_END", "messageId": "m"},
            {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
        ]
        await RunPump(store, broker, run, settings=PAGED).run(from_list(events))
        reader = read_run(store, broker, run.id, settings=RunSettings(read_page_size=100))
        return [len(page) async for page in reader.batches()]
    finally:
        await broker.close()
        await store.close()


def test_pages_of_large_events_keep_the_page_size() -> None:
    # 100 events of 8 KiB are 800 KiB: twice that is past PAGE_BYTES, so no page grows
    assert PAGE_BYTES < 2 * 100 * 8192
    assert anyio.run(_large_pages) == [100, 100, 100, 4]
