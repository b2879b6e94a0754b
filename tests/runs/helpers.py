"""Helpers of the run-core tests: settings, the store + broker stack, a steppable upstream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass
from typing import Any

from corpus import CORPUS_DIR, require_corpus
from run_backends import ManualClock, make_broker

from agui_codecs import get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import event_to_wire, parse_event
from gateway.broker import Broker, RedisStreamsBroker
from gateway.runs import RunSettings, build_snapshot_prelude
from gateway.store import Cursor, RunEvent, SqlRunStore

FAST = RunSettings(
    batch_interval=0.01,
    batch_max_events=8,
    heartbeat_interval=0.02,
    lease_timeout=5.0,
    reaper_interval=0.02,
    reader_idle_recheck=0.05,
    read_page_size=7,
)
"""Short intervals (the tests assert order and content, never durations)."""


@dataclass
class Stack:
    """One deployment: a store, a broker and the manual store clock."""

    kind: str
    store: SqlRunStore
    broker: Broker
    clock: ManualClock

    def replica_broker(self) -> AbstractAsyncContextManager[Broker]:
        """A second replica's broker: shares state with :attr:`broker` (Redis: same prefix)."""
        if isinstance(self.broker, RedisStreamsBroker):
            return make_broker("redis", prefix=self.broker.prefix)
        return _same(self.broker)


class _same(AbstractAsyncContextManager[Broker]):
    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    async def __aenter__(self) -> Broker:
        return self.broker

    async def __aexit__(self, *exc: object) -> None:
        return None


class Gate:
    """An upstream the test steps through: events pass only when released; it never ends on
    its own unless told to (``finish``), like a slow model."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self._allowed = 0
        self._cond = asyncio.Condition()
        self.sent = 0
        self.closed = False
        self.cancelled = False
        self._end = False

    @property
    def allowed(self) -> int:
        """How many events were released so far."""
        return self._allowed

    async def release(self, n: int = 1) -> None:
        async with self._cond:
            self._allowed += n
            self._cond.notify_all()

    async def finish(self) -> None:
        async with self._cond:
            self._end = True
            self._cond.notify_all()

    async def stream(self) -> AsyncIterator[dict[str, Any]]:
        try:
            while True:
                async with self._cond:
                    await self._cond.wait_for(lambda: self._allowed > self.sent or self._end)
                    if self.sent >= self._allowed:
                        return
                if self.sent >= len(self.events):
                    await asyncio.Event().wait()  # a model that stalls forever
                event = self.events[self.sent]
                self.sent += 1
                yield event
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self.closed = True


async def wait_until(predicate: Callable[[], Any], *, rounds: int = 2000) -> None:
    """Yield to the loop until ``predicate()`` holds (bounded; no duration asserted)."""
    for _ in range(rounds):
        if await predicate() if asyncio.iscoroutinefunction(predicate) else predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


async def from_list(events: list[Any]) -> AsyncIterator[Any]:
    """An upstream that yields ``events`` as fast as it is read."""
    for event in events:
        yield event


async def collect(events: AsyncIterator[RunEvent], *, limit: int | None = None) -> list[RunEvent]:
    """Read a reader to its end (or ``limit`` events), closing it."""
    out: list[RunEvent] = []
    async with aclosing(events) as it:  # type: ignore[type-var]
        async for event in it:
            out.append(event)
            if limit is not None and len(out) >= limit:
                break
    return out


def rich_run(thread_id: str = "thread-1", run_id: str = "run-1") -> list[dict[str, Any]]:
    """A run with a step, a reasoning span, text, two tool calls with streamed arguments and
    results, and an answer after the calls (wire dicts, legal per docs/protocols.md §2.3)."""
    return [
        {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "REASONING_START", "messageId": "r1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "Think"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "ing"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
        {"type": "REASONING_END", "messageId": "r1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Let me "},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "check."},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "weather",
            "parentMessageId": "m1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"city"'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": ': "Paris"}'},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c2",
            "toolCallName": "clock",
            "parentMessageId": "m1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": '{"tz":'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": ' "CET"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c2"},
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "res1",
            "toolCallId": "c1",
            "content": '{"temp": 21}',
        },
        {"type": "TOOL_CALL_RESULT", "messageId": "res2", "toolCallId": "c2", "content": "12:00"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "It is 21°C"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": " at noon."},
        {"type": "TEXT_MESSAGE_END", "messageId": "m2"},
        {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id},
    ]


def corpus_events(name: str, *, thread_id: str = "thread-1", run_id: str = "run-1") -> list[Any]:
    """The ``ag_ui.core`` events the openai-chat decoder makes of a recorded stream."""
    require_corpus("openai-chat")
    decoder = get_decoder("openai-chat", thread_id=thread_id, run_id=run_id)
    data = (CORPUS_DIR / "openai-chat" / name).read_bytes()
    return decoder.feed(data) + decoder.close()


def wires(events: list[Any]) -> list[dict[str, Any]]:
    """Wire dicts of ``ag_ui.core`` events (dicts pass through)."""
    return [e if isinstance(e, dict) else event_to_wire(e) for e in events]


class SpyBroker:
    """Wraps a broker; records each publish and whether the event was durable at that time."""

    def __init__(self, inner: Broker, store: SqlRunStore) -> None:
        self.inner = inner
        self.store = store
        self.published: list[tuple[Cursor, dict[str, Any], bool]] = []

    async def publish(self, run_id: str, cursor: Cursor, event: dict[str, Any]) -> bool:
        before = Cursor(cursor.epoch, cursor.seq - 1)
        found = await self.store.read_events(run_id, after=before, limit=1)
        durable = bool(found) and found[0].cursor == cursor
        self.published.append((cursor, event, durable))
        return await self.inner.publish(run_id, cursor, event)

    def subscribe(self, run_id: str, after: Cursor | None = None) -> Any:
        return self.inner.subscribe(run_id, after)

    async def close(self) -> None:
        await self.inner.close()


class LossyBroker(SpyBroker):
    """Accepts every publish but delivers only those ``keep(n)`` selects (n = publish count):
    readers must fill gaps from the store and end without the broker's terminal event."""

    def __init__(self, inner: Broker, store: SqlRunStore, keep: Callable[[int], bool]) -> None:
        super().__init__(inner, store)
        self.keep = keep

    async def publish(self, run_id: str, cursor: Cursor, event: dict[str, Any]) -> bool:
        self.published.append((cursor, event, False))
        if self.keep(len(self.published)):
            return await self.inner.publish(run_id, cursor, event)
        return True


def numbered(events: list[dict[str, Any]]) -> list[RunEvent]:
    return [RunEvent(Cursor(1, i + 1), e) for i, e in enumerate(events)]


def resumed_stream(
    events: list[dict[str, Any]], cut: int, prior: list[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """What a client re-joining after ``cut`` events receives: prelude, then the tail."""
    prelude = build_snapshot_prelude(numbered(events)[:cut], prior_messages=list(prior))
    assert prelude.cursor == (Cursor(1, cut) if cut else None)
    return prelude.events + events[cut:]


def sse(events: list[dict[str, Any]]) -> bytes:
    encoder = AguiEncoder()
    return b"".join(encoder.encode(parse_event(e)) for e in events)


def tool_args_delivered(stream: list[dict[str, Any]]) -> dict[str, str]:
    """Each tool call's arguments as the client accumulates them (snapshot + ARGS)."""
    args: dict[str, str] = {}
    for event in stream:
        if event["type"] == "MESSAGES_SNAPSHOT":
            for msg in event["messages"]:
                for call in msg.get("toolCalls", ()):
                    args[call["id"]] = args.get(call["id"], "") + call["function"]["arguments"]
        elif event["type"] == "TOOL_CALL_ARGS":
            args[event["toolCallId"]] = args.get(event["toolCallId"], "") + event["delta"]
    return args


def encrypted_run(thread_id: str = "thread-1", run_id: str = "run-1") -> list[dict[str, Any]]:
    """A run whose reasoning messages and tool calls carry REASONING_ENCRYPTED_VALUEs (AG-UI 1.0
    ``subtype`` "message" | "tool-call"): one after the reasoning content and before
    REASONING_MESSAGE_END (what ``RunBuilder.hold_reasoning_encrypted`` emits), one before any
    content, one alone (redacted thinking: no content), one on a call still streaming its
    arguments, one on a call already ended."""

    def value(subtype: str, entity: str, blob: str) -> dict[str, Any]:
        return {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": subtype,
            "entityId": entity,
            "encryptedValue": blob,
        }

    return [
        {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
        {"type": "REASONING_START", "messageId": "r1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "Think"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "ing"},
        value("message", "r1", "sig-r1"),
        {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
        {"type": "REASONING_END", "messageId": "r1"},
        {"type": "REASONING_START", "messageId": "r2"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r2", "role": "reasoning"},
        value("message", "r2", "sig-r2-first"),
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r2", "delta": "More"},
        value("message", "r2", "sig-r2"),
        {"type": "REASONING_MESSAGE_END", "messageId": "r2"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r3", "role": "reasoning"},
        value("message", "r3", "redacted-r3"),
        {"type": "REASONING_MESSAGE_END", "messageId": "r3"},
        {"type": "REASONING_END", "messageId": "r2"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Let me check."},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "weather",
            "parentMessageId": "m1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"city"'},
        value("tool-call", "c1", "sig-c1"),
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": ': "Paris"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "clock"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c2"},
        value("tool-call", "c2", "sig-c2"),
        {"type": "TOOL_CALL_RESULT", "messageId": "res1", "toolCallId": "c1", "content": "21"},
        {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id},
    ]


RUNS = {
    "rich": rich_run(),
    "encrypted": encrypted_run(),
    "reasoning-tool": wires(corpus_events("compat-deepseek-reasoner-tool-call.jsonl")),
    "parallel-tools": wires(corpus_events("gpt4o-parallel-tool-calls.sse")),
}
