"""RunWriter: the one place that assigns cursors, writes events and publishes them.

Shared by the pump (a run's producer) and the reaper (which closes a dead producer's run in a
new epoch). The ordering rules of ``docs/runs.md`` §2 (latency against durability):

* every event gets the next seq of the writer's epoch, and the cursor ``<epoch>.<seq>``;
* **deltas** (:data:`BATCHED_TYPES`: text/reasoning openings and content, tool arguments) are
  published at once and written later in a batch (:meth:`RunWriter.flush`), exactly once and
  in order;
* **control** events (everything else: run start/end, steps, tool start/end/result, message
  ends, errors, state, custom) are written together with the pending deltas *before* they are
  published, so what closes a message is always durable before any client sees it;
* writes are serialised by a lock and go to the store in seq order; a write that fails for a
  transient reason puts its batch back so nothing is lost or reordered; a rejected write
  (:class:`~gateway.store.errors.WriteRejectedError`: fenced epoch, closed run) is final.

Several events that are available together (the pump reads ahead of its upstream) are staged
with :meth:`RunWriter.stage` and handled by one :meth:`RunWriter.commit`, which keeps those
rules but coalesces the I/O: the deltas before the first control event are published at once
(one broker call), then everything up to the last control event is written in one transaction
(with the pending deltas), then the rest is published (one broker call). Nothing is held for
an event that has not arrived, and an event waits for at most the one transaction of its chunk
(one at a time, a control event waited for its own write, and every later event for it too).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Final

import orjson

from agui_codecs.core import RunFold

from .. import metrics, tracing
from ..broker.protocol import Broker
from ..store.cursor import Cursor
from ..store.errors import (
    RunClosedError,
    RunStoreError,
    SequenceError,
    StoreUnavailableError,
    WriteRejectedError,
)
from ..store.models import JsonObject, NewEvent, RunEvent, RunFinal, RunRecord, RunStatus
from ..store.protocol import RunStore
from .history import run_item

__all__ = ["BATCHED_TYPES", "RunWriter", "terminal_status"]

_log = logging.getLogger(__name__)

BATCHED_TYPES: Final[frozenset[str]] = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CHUNK",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CHUNK",
        "TOOL_CALL_ARGS",
    }
)
"""Event types published before they are durable. Their loss with a dead producer leaves at
most an open item, which the closing RUN_ERROR makes legal; ENDs are control events, so a
closing event is never published without being durable (a reaper never re-closes it)."""

_BACKOFF: Final[tuple[float, ...]] = (0.05, 0.25, 1.0, 2.0)

# ``agui_gateway_broker_operation_seconds`` / ``_errors_total`` {operation="publish"} (what
# :func:`gateway.metrics.broker_call` records), their children bound once: the publish path
# runs once per published batch (issue 13: CPU per durable stream).
_PUBLISH_SECONDS: Final = metrics.BROKER_SECONDS.labels("publish")
_PUBLISH_ERRORS: Final = metrics.BROKER_ERRORS.labels("publish")


def _serialized(event: JsonObject) -> bytes | None:
    """``orjson.dumps(event)`` (the store's own serializer, ``gateway/store/engine.py``), or
    None for an event orjson cannot serialize: the store's write then reports it as before."""
    try:
        raw = orjson.dumps(event)
    except TypeError:
        return None
    # orjson's bytes keep their whole output buffer (orjson 3.13: 4 KiB resident for a 60-byte
    # delta): a copy of the exact size is what the broker's tail (bounded by these lengths),
    # the readers' queues and the writer's batch hold
    return bytes(memoryview(raw))


def terminal_status(event: JsonObject) -> RunStatus:
    """Run status for a terminal wire event.

    RUN_FINISHED -> completed; RUN_ERROR with code RUN_CANCELED -> cancelled, RUN_INTERRUPTED
    -> interrupted, any other -> failed.
    """
    if event.get("type") == "RUN_FINISHED":
        return "completed"
    code = event.get("code")
    if code == "RUN_CANCELED":
        return "cancelled"
    if code == "RUN_INTERRUPTED":
        return "interrupted"
    return "failed"


class RunWriter:
    """Cursor assignment, durable writes and publishing for one run in one epoch.

    Args:
        store, broker: where events go.
        run: the run record; its ``epoch`` is the writer's epoch and numbering continues
            after its ``last_seq``.
        fold: the fold of the events already stored (the reaper passes the replayed fold).
        message_id: id of the run's assistant history item (default: run's, else run id).
        write_retries: attempts of a write before a transient failure is raised.
        outage_grace: seconds a write keeps retrying (backoff up to 2 s) while the store is
            unreachable (:class:`~gateway.store.errors.StoreUnavailableError`), so a short
            database outage loses nothing; 0 retries it like any failure.
    """

    def __init__(
        self,
        store: RunStore,
        broker: Broker,
        run: RunRecord,
        *,
        fold: RunFold | None = None,
        message_id: str | None = None,
        write_retries: int = 3,
        outage_grace: float = 0.0,
    ) -> None:
        self.store = store
        self.outage_grace = max(0.0, outage_grace)
        self._broker_failing = False
        self.broker = broker
        self.run_id = run.id
        self.thread_id = run.thread_id
        self.route = run.route
        self.model = run.model
        self.epoch = run.epoch
        self.seq = run.last_seq
        self.fold = fold or RunFold()
        self.message_id = message_id or run.message_id or run.public_run_id
        self.write_retries = max(1, write_retries)
        self.pending: list[NewEvent] = []
        self.last_published: Cursor | None = None
        self._staged: list[RunEvent] = []
        self._lock = asyncio.Lock()
        self._unsure = False  # a write failed after it may have committed

    def _message(self, event: JsonObject) -> RunEvent:
        """The next cursor for ``event`` (folded) with its one serialization (issue 13 item 3),
        which the store, the broker and the readers' encoders reuse (:attr:`RunEvent.json`).
        Once per event: the cursor's step is inline, and ``type`` is given (RunEvent would
        read it back through its ``event`` property)."""
        self.seq += 1
        self.fold.apply(event)
        json = _serialized(event)
        return RunEvent(Cursor(self.epoch, self.seq), event, json, type=str(event.get("type", "")))

    async def _publish(self, messages: Sequence[RunEvent]) -> None:
        """Publish ``messages`` in cursor order: one ``publish_many`` call when the broker has
        it (one Redis round trip; the messages' ``json`` reused), else one ``publish`` per
        event."""
        if not messages:
            return
        publish_many = getattr(self.broker, "publish_many", None)
        if publish_many is not None:  # even for one: it carries each event's serialized form
            started = time.perf_counter()
            try:
                await publish_many(self.run_id, messages)
            except Exception as exc:  # a broker must not fail the run; readers use the store
                _PUBLISH_SECONDS.observe(time.perf_counter() - started)
                _PUBLISH_ERRORS.inc()
                self._broker_failed(exc, messages[0].cursor)
            else:
                _PUBLISH_SECONDS.observe(time.perf_counter() - started)
                self._broker_ok()
        else:
            for message in messages:
                started = time.perf_counter()
                try:
                    await self.broker.publish(self.run_id, message.cursor, message.event)
                except Exception as exc:  # see above
                    _PUBLISH_SECONDS.observe(time.perf_counter() - started)
                    _PUBLISH_ERRORS.inc()
                    self._broker_failed(exc, message.cursor)
                else:
                    _PUBLISH_SECONDS.observe(time.perf_counter() - started)
                    self._broker_ok()
        last = messages[-1]
        if last.terminal:  # published once per run: its outcome, tokens, cost and repairs
            metrics.record_terminal(last.event, route=self.route, model=self.model)
        self.last_published = messages[-1].cursor

    def _broker_failed(self, exc: Exception, cursor: Cursor) -> None:
        """Log a lost broker once per outage (issue 12: not once per event); readers fall
        back to the store (``docs/runs.md`` §3)."""
        if not self._broker_failing:
            self._broker_failing = True
            _log.error(
                "run %s: publishing failed at %s; readers fall back to the store until the "
                "broker is back",
                self.run_id,
                cursor,
                exc_info=exc,
            )

    def _broker_ok(self) -> None:
        if self._broker_failing:
            self._broker_failing = False
            _log.warning("run %s: publishing works again", self.run_id)

    async def announce(self, events: Sequence[JsonObject]) -> None:
        """Publish ``events`` without writing them: only when the store is lost for good, so
        live readers get a typed terminal event instead of a cut stream. Their cursors lie past
        the durable end; whoever closes the run in the store (the reaper) writes in a new epoch
        (``docs/runs.md`` §2), so no cursor a client saw names another event."""
        await self._publish([self._message(event) for event in events])

    async def adopt(self, events: Sequence[JsonObject]) -> list[Cursor]:
        """Fold and publish ``events`` that are already durable as the writer's last seqs
        (``run.last_seq - len(events) + 1 ..``: stored with the run by ``create_run``, issue 13
        item 2), without writing them. Call first, before anything else is staged.

        Raises:
            ValueError: the run's durable end cannot hold them.
        """
        first = self.seq - len(events) + 1
        if first < 1 or self._staged or self.pending or self.last_published is not None:
            raise ValueError("adopt() takes the run's first stored events, before anything else")
        messages = []
        for offset, event in enumerate(events):
            self.fold.apply(event)
            messages.append(RunEvent(Cursor(self.epoch, first + offset), event))
        await self._publish(messages)
        return [m.cursor for m in messages]

    def _queue(self, messages: Sequence[RunEvent]) -> None:
        pending = self.pending
        for m in messages:
            pending.append(NewEvent(m.cursor.seq, m.event, False, m.json))

    async def delta(self, event: JsonObject) -> Cursor:
        """Assign a cursor to a batched event, publish it now, queue it for the next write."""
        await self.commit()
        message = self._message(event)
        self._queue((message,))
        await self._publish((message,))
        return message.cursor

    async def control(self, events: Sequence[JsonObject]) -> list[Cursor]:
        """Write the pending deltas and ``events`` in one transaction, then publish ``events``.

        When ``events`` holds the terminal event, the run's terminal status, usage, error and
        history item are written in the same transaction.

        Raises:
            WriteRejectedError: the run no longer accepts this writer (fenced or closed).
            RunStoreError: the write failed ``write_retries`` times.
        """
        await self.commit()
        messages = [self._message(event) for event in events]
        batch = [NewEvent(m.cursor.seq, m.event, durable=True, json=m.json) for m in messages]
        final = self._final() if self.fold.ended else None
        await self._write(batch, final)
        await self._publish(messages)
        return [m.cursor for m in messages]

    def stage(self, event: JsonObject) -> Cursor:
        """Assign the next cursor to ``event`` (and fold it); the next :meth:`commit` writes and
        publishes it. Staging is synchronous, so the fold is current for the next event."""
        message = self._message(event)
        self._staged.append(message)
        return message.cursor

    async def commit(self, *, flush_at: int | None = None) -> None:
        """Write and publish the staged events, following the delta / control rules.

        1. the deltas before the first control event: published (one broker call), queued;
        2. the pending deltas and the staged events up to the last control event: written in
           one transaction (with the run's terminal update when the terminal event is in it);
        3. the staged events from the first control event on: published (one broker call); the
           deltas after the last control event are queued for the next write.

        Then, when ``flush_at`` is given and at least that many deltas are pending, they are
        written, with the retries (and the outage grace) of a control write: the caller waits,
        so a store outage shorter than ``outage_grace`` holds the pump back instead of ending
        the run (:meth:`flush` alone tries once).

        Raises:
            WriteRejectedError: the run no longer accepts this writer (fenced or closed).
            RunStoreError: the write failed (``write_retries`` times for control events).
        """
        staged, self._staged = self._staged, []
        if staged:
            first = last = -1
            for index, message in enumerate(staged):
                if message.type not in BATCHED_TYPES:
                    if first < 0:
                        first = index
                    last = index
            if first < 0:
                self._queue(staged)
                await self._publish(staged)
            else:
                if first:
                    self._queue(staged[:first])
                    await self._publish(staged[:first])
                batch = [
                    NewEvent(m.cursor.seq, m.event, m.type not in BATCHED_TYPES, m.json)
                    for m in staged[first : last + 1]
                ]
                final = self._final() if self.fold.ended else None
                await self._write(batch, final)
                self._queue(staged[last + 1 :])
                await self._publish(staged[first:])
        if flush_at is not None and len(self.pending) >= flush_at:
            await self._write([], None)

    @property
    def pending_commit(self) -> bool:
        """True while events are staged and not committed yet."""
        return bool(self._staged)

    def commit_now(self, *, flush_at: int) -> bool:
        """:meth:`commit` (``flush_at``) without awaiting, when it would do no I/O but publish:
        every staged event is a delta, fewer than ``flush_at`` deltas would then be pending
        and the broker publishes without I/O (its ``publish_nowait``, the in-process broker's).
        Returns False, with nothing done, otherwise (the caller then awaits :meth:`commit`).
        Publishes and queues exactly what :meth:`commit` would, in the same order; only the
        broker call is synchronous. Call only when no other commit is under way."""
        staged = self._staged
        publish = getattr(self.broker, "publish_nowait", None)
        if publish is None or not staged or len(self.pending) + len(staged) >= flush_at:
            return False
        for message in staged:
            if message.type not in BATCHED_TYPES:
                return False
        self._staged = []
        self._queue(staged)
        started = time.perf_counter()
        try:
            publish(self.run_id, staged)
        except Exception as exc:  # as _publish: a broker must not fail the run
            _PUBLISH_SECONDS.observe(time.perf_counter() - started)
            _PUBLISH_ERRORS.inc()
            self._broker_failed(exc, staged[0].cursor)
        else:
            _PUBLISH_SECONDS.observe(time.perf_counter() - started)
            if self._broker_failing:
                self._broker_ok()
        self.last_published = staged[-1].cursor  # deltas: never the terminal event
        return True

    async def flush(self) -> None:
        """Write the pending deltas (no-op when none); a transient failure keeps them queued.

        Raises:
            WriteRejectedError: the run no longer accepts this writer.
            RunStoreError: the write failed (the deltas stay pending for the next write).
        """
        if self.pending:
            await self._write([], None, attempts=1)

    async def _write(
        self, batch: list[NewEvent], final: RunFinal | None, *, attempts: int | None = None
    ) -> None:
        async with self._lock:
            events = self.pending + batch
            self.pending = []
            if not events:
                return
            tries = attempts or self.write_retries
            attempt = 0
            started = time.monotonic()
            while True:
                try:
                    with tracing.span(
                        "store.write", **{"agui.run_id": self.run_id, "agui.events": len(events)}
                    ):
                        await self.store.append_events(self.run_id, self.epoch, events, final=final)
                    self._unsure = False
                    return
                except (SequenceError, RunClosedError):
                    if not self._unsure:
                        raise
                    left = await self._not_yet_stored(events, final)
                    if left is None:
                        raise
                    if not left:
                        self._unsure = False
                        return
                    events = left
                    continue
                except WriteRejectedError:
                    raise
                except RunStoreError as exc:
                    # the commit may have landed with only its acknowledgement lost (a
                    # connection cut after COMMIT): the next SequenceError is checked against
                    # the durable end before it is taken for another writer
                    self._unsure = True
                    attempt += 1
                    in_grace = (
                        attempts is None
                        and isinstance(exc, StoreUnavailableError)
                        and time.monotonic() - started < self.outage_grace
                    )
                    if attempt >= tries and not in_grace:
                        self.pending = events[: len(events) - len(batch)] + self.pending
                        raise
                    _log.warning("write of run %s failed (%s); retrying", self.run_id, exc)
                    await asyncio.sleep(_BACKOFF[min(attempt - 1, len(_BACKOFF) - 1)])

    async def _not_yet_stored(
        self, events: list[NewEvent], final: RunFinal | None
    ) -> list[NewEvent] | None:
        """After a write whose outcome was unknown, a :class:`SequenceError` (or
        :class:`RunClosedError`, when that write held the terminal update): the ``events``
        the run's durable end does not hold yet, when the store holds a prefix of them in this
        writer's epoch (an earlier attempt committed; only this writer writes its epoch, so
        those rows are these events); None when it does not (the error stands) or the run
        cannot be read. ``[]``: all are stored (and ``final`` with them: one transaction)."""
        try:
            record = await self.store.get_run(self.run_id)
        except RunStoreError:
            return None
        if record.last_epoch != self.epoch or not events:
            return None
        stored_end = record.last_seq
        if stored_end < events[0].seq or stored_end > events[-1].seq:
            return None  # none of them stored (the error stands), or more than them
        left = [e for e in events if e.seq > stored_end]
        if not left and final is not None and not record.is_terminal:
            return None  # the events landed without the terminal update: not ours to guess
        _log.info(
            "run %s: an earlier write whose outcome was unknown had committed seqs %s..%s",
            self.run_id,
            events[0].seq,
            stored_end,
        )
        return left

    def _final(self) -> RunFinal:
        terminal = self.fold.terminal or {}
        status = terminal_status(terminal)
        error = None
        if terminal.get("type") == "RUN_ERROR":
            error = {"code": terminal.get("code"), "message": terminal.get("message")}
        metadata = terminal.get("metadata")
        model = metadata.get("model") if isinstance(metadata, dict) else None
        item = run_item(self.fold, run_id=self.run_id, message_id=self.message_id, status=status)
        return RunFinal(
            status=status,
            usage=terminal.get("usage"),
            error=error,
            model=model if isinstance(model, str) else None,
            messages=[item] if item is not None else [],
        )
