"""RunWriter: the one place that assigns cursors, writes events and publishes them.

Shared by the pump (a run's producer) and the reaper (which closes a dead producer's run in a
new epoch). The ordering rules of ``shared/docs/RUNS.md`` "Latency against durability":

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
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Final

from ..broker.protocol import Broker
from ..store.cursor import Cursor
from ..store.errors import RunStoreError, WriteRejectedError
from ..store.models import JsonObject, NewEvent, RunFinal, RunRecord, RunStatus
from ..store.protocol import RunStore
from .fold import RunFold
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
    ) -> None:
        self.store = store
        self.broker = broker
        self.run_id = run.id
        self.thread_id = run.thread_id
        self.epoch = run.epoch
        self.seq = run.last_seq
        self.fold = fold or RunFold()
        self.message_id = message_id or run.message_id or run.id
        self.write_retries = max(1, write_retries)
        self.pending: list[NewEvent] = []
        self.last_published: Cursor | None = None
        self._lock = asyncio.Lock()

    def _assign(self, event: JsonObject) -> Cursor:
        self.seq += 1
        self.fold.apply(event)
        return Cursor(self.epoch, self.seq)

    async def _publish(self, cursor: Cursor, event: JsonObject) -> None:
        try:
            await self.broker.publish(self.run_id, cursor, event)
        except Exception:  # a broker must not fail the run; readers fall back to the store
            _log.exception("publish failed for run %s at %s", self.run_id, cursor)
        self.last_published = cursor

    async def delta(self, event: JsonObject) -> Cursor:
        """Assign a cursor to a batched event, publish it now, queue it for the next write."""
        cursor = self._assign(event)
        self.pending.append(NewEvent(cursor.seq, event, durable=False))
        await self._publish(cursor, event)
        return cursor

    async def control(self, events: Sequence[JsonObject]) -> list[Cursor]:
        """Write the pending deltas and ``events`` in one transaction, then publish ``events``.

        When ``events`` holds the terminal event, the run's terminal status, usage, error and
        history item are written in the same transaction.

        Raises:
            WriteRejectedError: the run no longer accepts this writer (fenced or closed).
            RunStoreError: the write failed ``write_retries`` times.
        """
        cursors = [self._assign(event) for event in events]
        batch = [NewEvent(c.seq, e, durable=True) for c, e in zip(cursors, events, strict=True)]
        final = self._final() if self.fold.ended else None
        await self._write(batch, final)
        for cursor, event in zip(cursors, events, strict=True):
            await self._publish(cursor, event)
        return cursors

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
            for attempt in range(tries):
                try:
                    await self.store.append_events(self.run_id, self.epoch, events, final=final)
                    return
                except WriteRejectedError:
                    raise
                except RunStoreError as exc:
                    if attempt + 1 >= tries:
                        self.pending = events[: len(events) - len(batch)] + self.pending
                        raise
                    _log.warning("write of run %s failed (%s); retrying", self.run_id, exc)
                    await asyncio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])

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
