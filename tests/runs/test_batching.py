"""The pump's coalesced I/O: events available together share one transaction and one broker
round trip, without publishing a control event before it is durable, reordering anything or
delaying an event that arrived alone; and readers' wire frames equal the encoder's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from corpus import corpus_files

from agui_codecs import DECODERS, ENCODERS, get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import parse_event
from gateway.broker import Broker
from gateway.runs import BATCHED_TYPES, RunManager, RunPump, read_run
from gateway.store import Cursor, RunEvent, SqlRunStore

from .agui_rules import verify
from .helpers import FAST, Gate, Stack, collect, from_list, rich_run, wait_until, wires

pytestmark = pytest.mark.timeout(120)

FAMILIES = {
    "openai-chat": "openai-chat",
    "anthropic": "anthropic",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
    "aisdk-ui": "ai-sdk",
    "agui": "agui",
}


class BatchSpy:
    """Wraps a broker (``publish`` and ``publish_many``); records every call's cursors and
    whether each control event was durable when it was published."""

    def __init__(self, inner: Broker, store: SqlRunStore) -> None:
        self.inner = inner
        self.store = store
        self.calls: list[list[Cursor]] = []
        self.undurable_controls: list[Cursor] = []

    async def _check(self, run_id: str, events: list[RunEvent]) -> None:
        self.calls.append([e.cursor for e in events])
        for event in events:
            if event.event["type"] in BATCHED_TYPES:
                continue
            before = Cursor(event.cursor.epoch, event.cursor.seq - 1)
            found = await self.store.read_events(run_id, after=before, limit=1)
            if not found or found[0].cursor != event.cursor:
                self.undurable_controls.append(event.cursor)

    async def publish(self, run_id: str, cursor: Cursor, event: dict[str, Any]) -> bool:
        await self._check(run_id, [RunEvent(cursor, event)])
        return await self.inner.publish(run_id, cursor, event)

    async def publish_many(self, run_id: str, events: list[RunEvent]) -> int:
        await self._check(run_id, list(events))
        return await self.inner.publish_many(run_id, events)

    def subscribe(self, run_id: str, after: Cursor | None = None) -> Any:
        return self.inner.subscribe(run_id, after)

    async def close(self) -> None:
        await self.inner.close()


def long_run(deltas: int) -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i} "}
            for i in range(deltas)
        ),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "c", "content": "ok"},
        {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "run-1"},
    ]


async def test_available_events_share_writes_and_broker_round_trips(stack: Stack) -> None:
    events = long_run(200)
    sizes: list[int] = []
    append = stack.store.append_events

    async def spy_append(run_id: str, epoch: int, batch: Any, **kw: Any) -> Any:
        sizes.append(len(batch))
        return await append(run_id, epoch, batch, **kw)

    stack.store.append_events = spy_append  # type: ignore[method-assign]
    spy = BatchSpy(stack.broker, stack.store)
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    outcome = await RunPump(stack.store, spy, run, settings=FAST).run(from_list(events))
    assert outcome.status == "completed"
    stored = await stack.store.read_events(run.id, limit=10_000)
    assert [s.event for s in stored] == events
    assert [s.durable for s in stored] == [s.event["type"] not in BATCHED_TYPES for s in stored]
    published = [c for call in spy.calls for c in call]
    assert published == [Cursor(1, n) for n in range(1, len(events) + 1)]
    assert spy.undurable_controls == []
    # batch_max_events=8: every write holds at most 8 events, and there are far fewer broker
    # calls and writes than events (7 control events, 201 deltas)
    assert sum(sizes) == len(events) and max(sizes) <= FAST.batch_max_events
    assert len(sizes) <= len(events) // FAST.batch_max_events + 8
    assert len(spy.calls) < len(events) // 3


async def test_an_event_that_arrives_alone_is_published_at_once(stack: Stack) -> None:
    """Coalescing never waits for more input: each released event is published (and each
    control event written) while the upstream holds back the next one."""
    gate = Gate(rich_run())
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    pump = RunPump(stack.store, stack.broker, run, settings=FAST)
    task = asyncio.create_task(pump.run(gate.stream()))
    for n in range(1, 13):
        await gate.release(1)
        await wait_until(lambda n=n: pump.cursor == Cursor(1, n))
        if rich_run()[n - 1]["type"] not in BATCHED_TYPES:
            assert (await stack.store.get_run(run.id)).last_seq == n
    pump.cancel()
    assert (await task).status == "cancelled"


async def test_read_ahead_is_bounded_while_the_store_is_slow(stack: Stack) -> None:
    events = long_run(300)
    release = asyncio.Event()
    append = stack.store.append_events

    async def slow_append(*args: Any, **kw: Any) -> Any:
        await release.wait()
        return await append(*args, **kw)

    stack.store.append_events = slow_append  # type: ignore[method-assign]
    run = await stack.store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    pump = RunPump(stack.store, stack.broker, run, settings=FAST)
    consumed = 0

    async def counted() -> Any:
        nonlocal consumed
        for event in events:
            consumed += 1
            yield event

    task = asyncio.create_task(pump.run(counted()))
    for _ in range(50):
        await asyncio.sleep(0)
    # the pump waits on its first write (RUN_STARTED); the feeder stopped 2 x batch ahead
    assert consumed <= 2 * FAST.batch_max_events + FAST.batch_max_events + 1
    release.set()
    assert (await task).status == "completed"
    assert [s.event for s in await stack.store.read_events(run.id, limit=1000)] == events


def decoded_sources() -> list[tuple[str, list[Any]]]:
    sources = []
    for family, decoder_name in FAMILIES.items():
        if decoder_name not in DECODERS:
            continue
        for path in corpus_files(family):
            decoder = get_decoder(decoder_name, thread_id="thread-1", run_id="run-1")
            events = decoder.feed(path.read_bytes()) + decoder.close()
            cut = next(
                (
                    i + 1
                    for i, e in enumerate(events)
                    if e.type.value in ("RUN_FINISHED", "RUN_ERROR")
                ),
                len(events),
            )
            sources.append((f"{family}/{path.name}", events[:cut]))
    return sources


async def test_wire_frames_equal_the_encoders_for_every_corpus_run(memory_stack: Stack) -> None:
    """Every encoder gives, for the wire dicts a reader delivers (the durable path: no model
    built), the bytes it gives for the ``ag_ui.core`` events those dicts stand for, for every
    run pumped from decoded corpus events: the stored form is the wire form."""
    sources = decoded_sources()
    assert sources, "the corpus travels with the repository (tests/corpus)"
    manager = RunManager(memory_stack.store, memory_stack.broker, settings=FAST)
    checked = 0
    for index, (label, events) in enumerate(sources):
        run = await manager.create_run(thread_id=f"t{index}", run_id=f"r{index}")
        await manager.start(run, from_list(events))
        read = await collect(await manager.reader(run.id))
        assert_wire_frames_equal_model_frames(read, label)
        checked += len(read)
        assert read[0].event["type"] == "RUN_STARTED" and read[-1].terminal, label
    assert checked >= len(sources)


def assert_wire_frames_equal_model_frames(read: list[RunEvent], label: str) -> None:
    """``encode_wire(stored dict)`` == ``encode(parse_event(stored dict))``, event by event and
    for ``close()``, for every registered encoder (AG-UI also with ``event:`` lines)."""
    pairs = [(cls(), cls()) for cls in ENCODERS.values()]
    pairs.append((AguiEncoder(event_lines=True), AguiEncoder(event_lines=True)))
    for from_wire, from_model in pairs:
        for ev in read:
            cursor = str(ev.cursor)
            wire = from_wire.encode_wire(ev.event, id=cursor)
            assert wire == from_model.encode(parse_event(ev.event), id=cursor), label
        assert from_wire.close() == from_model.close(), label


async def test_wire_frames_of_synthesised_closing_events(memory_stack: Stack) -> None:
    gate = Gate(wires(rich_run()))
    store, broker = memory_stack.store, memory_stack.broker
    run = await store.create_run(run_id="run-1", thread_id="thread-1", owner="a")
    pump = RunPump(store, broker, run, settings=FAST)
    task = asyncio.create_task(pump.run(gate.stream()))
    await gate.release(17)
    await wait_until(lambda: pump.cursor == Cursor(1, 17))
    pump.cancel()
    await task
    read = await collect(read_run(store, broker, run.id, settings=FAST))
    assert_wire_frames_equal_model_frames(read, "synthesised closing events")
    verify(e.event for e in read)
