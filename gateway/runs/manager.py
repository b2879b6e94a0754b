"""RunManager: the run core as the HTTP layer uses it (one per process).

It owns nothing but the local pumps and the background loops; everything durable is in the
store, everything live in the broker, so any replica can serve any run::

    manager = RunManager(store, broker, settings=RunSettings())
    await manager.start_background()                       # reaper + retention
    run = await manager.create_run(thread_id=t, input_messages=run_input["messages"],
                                   announce=True)          # RUN_STARTED stored with the run
    task = manager.start(run, decoder_events, announce=True)   # pump in the background
    events = await manager.reader(run.id, after=last_event_id)   # validates first
    async with contextlib.aclosing(events):
        async for ev in events: ...                        # RunEvent(cursor, wire)
    await manager.cancel(run.id)
    await manager.aclose()                                  # shutdown: runs end interrupted

Leases (issue 13 item 5): the manager heartbeats this replica once per ``heartbeat_interval``
for all its runs (:meth:`~gateway.store.protocol.RunStore.heartbeat_replica`), and the answer
(its active runs, their epochs and cancel flags) fences or cancels the local pumps, which keep
no heartbeat of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Sequence
from datetime import timedelta

from agui_codecs.core import RunFold, StoreGuard

from .. import metrics
from ..broker.memory import InProcessBroker
from ..broker.protocol import Broker
from ..store.cursor import Cursor, parse_cursor
from ..store.errors import RunStoreError, WriteRejectedError
from ..store.models import HistoryPage, JsonObject, NewEvent, ReplicaDigest, RunEvent, RunRecord
from ..store.protocol import HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, RunStore
from ..tenancy import public_id
from .flush_ticks import FlushTicks
from .history import agui_messages_from_parts, history_items_to_agui, input_items
from .prelude import Prelude, build_snapshot_prelude
from .pump import PumpSource, RunOutcome, RunPump
from .reader import RunReader, read_run
from .reaper import Reaper
from .recheck import IdleRechecker
from .settings import RunSettings
from .ui_history import ui_messages

__all__ = ["RunManager", "replica_id"]

_log = logging.getLogger(__name__)


def replica_id() -> str:
    """A unique id for this process: ``<hostname>:<pid>:<random>`` (the lease owner)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class RunManager:
    """Create, pump, read, cancel and reap durable runs.

    Args:
        store: the run store (see :func:`gateway.store.open_store`).
        broker: the broker (see :func:`gateway.broker.open_broker`).
        settings: run-core settings.
        owner: this replica's lease owner id (default :func:`replica_id`).
    """

    def __init__(
        self,
        store: RunStore,
        broker: Broker,
        *,
        settings: RunSettings | None = None,
        owner: str | None = None,
    ) -> None:
        self.store = store
        self.broker = broker
        self.settings = settings or RunSettings()
        self.owner = owner or replica_id()
        self.reaper = Reaper(store, broker, owner=self.owner, settings=self.settings)
        self._pumps: dict[str, tuple[RunPump, asyncio.Task[RunOutcome]]] = {}
        self._ticks = FlushTicks()  # the pumps' flush ticks: one timer per tick for all
        # a run pumped here over the in-process broker ends its readers through the broker:
        # the re-check leaves it alone while its pump lives (gateway.runs.recheck)
        local_end = isinstance(broker, InProcessBroker)
        self.rechecker = IdleRechecker(
            store,
            interval=self.settings.reader_idle_recheck,
            pumped=self._pumps if local_end else None,
        )
        """The batched idle re-check of every reader of this manager (issue 13 item 5)."""
        # runs whose pump gave up on the store (``store_error``) -> the epoch it held: this
        # replica still owns them and beats for them, so no reaper sees them stale; the next
        # beat that reaches the store closes them here (:meth:`_close_abandoned`)
        self._abandoned: dict[str, int] = {}
        self._background: list[asyncio.Task[None]] = []
        self._announced: set[str] = set()  # created with their RUN_STARTED, not started yet
        self._lease: asyncio.Task[None] | None = None
        self.lease_beats = 0
        """Replica heartbeats written (a figure for tests and benches)."""

    # -- runs -----------------------------------------------------------------------------
    async def create_run(
        self,
        *,
        thread_id: str,
        run_id: str | None = None,
        route: str | None = None,
        upstream: str | None = None,
        model: str | None = None,
        message_id: str | None = None,
        input_messages: Sequence[JsonObject] = (),
        tenant: str | None = None,
        answers: Sequence[tuple[str, str]] = (),
        announce: bool = False,
        continues: Sequence[str] = (),
    ) -> RunRecord:
        """Record a new queued run leased to this replica.

        Args:
            thread_id, run_id: AG-UI ids (``run_id`` generated when None).
            route, upstream, model: what serves it (informational).
            message_id: the assistant message id (AI SDK continuation); default the run id.
            input_messages: ``RunAgentInput.messages`` (AG-UI wire dicts), recorded in the
                thread's history when not already there.
            tenant: the tenant starting it (``thread_id`` / ``run_id`` are then its store keys,
                :mod:`gateway.tenancy`).
            answers: ``(interruptId, status)`` of its ``resume[]`` entries, claimed once for the
                thread with the run (:meth:`RunStore.create_run`).
            announce: store the run's RUN_STARTED (``protocolVersion``, the public ids: what
                :meth:`start` with ``announce`` sends first) in the same transaction as the
                run (issue 13 item 2): the run is then ``running`` at seq 1 and its first byte
                waits for this one commit only, still written before it is published
                (``docs/runs.md`` §2).
            continues: the tool call ids an AI SDK continuation continues
                (:attr:`~gateway.store.RunRecord.continues`).

        Raises:
            RunExistsError: ``run_id`` is taken.
            InterruptAnsweredError: another run of the thread answered one of ``answers``.
        """
        run_id = run_id or f"run_{uuid.uuid4().hex}"
        first: list[NewEvent] = []
        if announce:
            guard = StoreGuard(thread_id=public_id(thread_id), run_id=public_id(run_id))
            first.append(NewEvent(1, guard.run_started(), durable=True))
        record = await self.store.create_run(
            run_id=run_id,
            thread_id=thread_id,
            owner=self.owner,
            route=route,
            upstream=upstream,
            model=model,
            message_id=message_id,
            input_messages=input_items(input_messages, run_id=run_id),
            tenant=tenant,
            answers=answers,
            events=first,
            continues=continues,
        )
        if announce:
            self._announced.add(record.id)
        return record

    def start(
        self,
        run: RunRecord,
        source: PumpSource,
        *,
        announce: bool = False,
    ) -> asyncio.Task[RunOutcome]:
        """Pump ``source`` (events, or lists of events that arrived together) into ``run`` in
        a background task (returned; never raises).

        ``announce``: RUN_STARTED goes out before the upstream is read (see
        :class:`~gateway.runs.pump.RunPump`); implied for a run created with ``announce``, whose
        RUN_STARTED is already stored (then only published). The pump's lease is this
        replica's (module docstring)."""
        announced = run.id in self._announced
        self._announced.discard(run.id)
        pump = RunPump(
            self.store,
            self.broker,
            run,
            settings=self.settings,
            announce=announce or announced,
            announced=announced,
            replica_lease=True,
            ticks=self._ticks,
        )
        self._ensure_lease()
        task = asyncio.create_task(pump.run(source), name=f"pump:{run.id}")
        self._pumps[run.id] = (pump, task)
        metrics.ACTIVE_RUNS.inc()

        def forget(_task: asyncio.Task[RunOutcome]) -> None:
            self._pumps.pop(run.id, None)
            self.rechecker.producer_gone(run.id)
            metrics.ACTIVE_RUNS.dec()
            if not _task.cancelled() and _task.exception() is None:
                if _task.result().status == "store_error":
                    self._abandoned[run.id] = pump.writer.epoch

        task.add_done_callback(forget)
        return task

    async def cancel(self, run_id: str) -> RunRecord:
        """Cancel a run (idempotent): RUN_ERROR ``RUN_CANCELED`` after closing what is open.

        The pump is cancelled at once when it runs here, else at its next heartbeat on its
        replica, else by the reaper. Returns the run record as it was when flagged.

        Raises:
            RunNotFoundError: unknown run.
        """
        record = await self.store.request_cancel(run_id)
        local = self._pumps.get(run_id)
        if local is not None:
            local[0].cancel()
        return record

    async def get_run(self, run_id: str) -> RunRecord:
        """The run record. Raises RunNotFoundError."""
        return await self.store.get_run(run_id)

    async def active_run(self, thread_id: str) -> RunRecord | None:
        """The newest queued/running run of a thread (AI SDK resume: None -> 204)."""
        runs = await self.store.list_runs(thread_id, active_only=True, limit=1)
        return runs[0] if runs else None

    # -- reading --------------------------------------------------------------------------
    async def reader(
        self, run_id: str, *, after: Cursor | str | None = None, run: RunRecord | None = None
    ) -> RunReader:
        """Validate, then return the run's event iterator strictly after ``after`` (its
        :meth:`~gateway.runs.reader.RunReader.batches` give the events as they came: pages).

        Validation happens here, before any byte is sent, so the HTTP layer can answer 404 /
        400. Close the iterator (``contextlib.aclosing``) when the client goes away.
        ``run``: the run's record when the caller has it (a run it just started): saves the
        store read on the way to the first byte (issue 13 item 2).

        Raises:
            RunNotFoundError: unknown run (404).
            InvalidCursorError, CursorMismatchError: bad ``after`` (400).
        """
        cursor = parse_cursor(after) if isinstance(after, str) else after
        if run is None or run.id != run_id:
            run = await self.store.get_run(run_id)
        if cursor is not None:
            run.check_cursor(cursor, slack=self.settings.cursor_slack)
        return read_run(
            self.store,
            self.broker,
            run_id,
            after=cursor,
            settings=self.settings,
            run=run,
            rechecker=self.rechecker,
        )

    async def ended_at(self, run_id: str, cursor: Cursor | str) -> bool:
        """True when the run has ended and the store holds nothing after ``cursor`` (a resume
        from there has nothing to send: the events endpoint answers 204).

        Raises:
            RunNotFoundError: unknown run; InvalidCursorError: ``cursor`` is not one.
        """
        after = parse_cursor(cursor) if isinstance(cursor, str) else cursor
        run = await self.store.get_run(run_id)
        if not run.is_terminal:
            return False
        return not await self.store.read_wire(run_id, after=after, limit=1)

    async def snapshot_prelude(self, run_id: str) -> Prelude:
        """The ``?replay=snapshot`` prelude from the durable events, with the thread's earlier
        history as prior messages; tail with ``reader(run_id, after=prelude.cursor)``.

        Raises:
            RunNotFoundError: unknown run.
        """
        run = await self.store.get_run(run_id)
        stored = await self._all_events(run_id)
        prior = [
            item
            for item in await self._thread_items(run.thread_id)
            if not (item.get("role") == "assistant" and item.get("runId") == run_id)
        ]
        return build_snapshot_prelude(stored, prior_messages=history_items_to_agui(prior))

    async def thread_message_ids(self, thread_id: str) -> set[str]:
        """The ids of the thread's stored messages (every run's input included, as soon as the
        run exists, before any of its events is stored)."""
        items = await self._thread_items(thread_id)
        return {m["id"] for m in history_items_to_agui(items) if isinstance(m.get("id"), str)}

    async def client_history(self, thread_id: str, *, format: str) -> list[JsonObject]:
        """The whole thread as a client loads it: ``format="agui"`` AG-UI messages (the active
        runs' messages as far as they are stored included), ``"ai-sdk"`` UIMessages (active
        runs left out); :mod:`gateway.runs.ui_history`."""
        items = await self._thread_items(thread_id)
        active = await self.store.list_runs(thread_id, active_only=True)
        if format == "ai-sdk":
            return ui_messages(items, skip_runs=[run.id for run in active])
        messages = history_items_to_agui(items)
        seen = {m["id"] for m in messages}
        for run in reversed(active):  # oldest first, as the runs started
            fold = RunFold()
            for stored in await self._all_events(run.id):
                fold.apply(stored.event)
            for message in agui_messages_from_parts(fold.parts):
                if message["id"] not in seen:
                    seen.add(message["id"])
                    messages.append(message)
        return messages

    async def _all_events(self, run_id: str) -> list[RunEvent]:
        stored: list[RunEvent] = []
        after: Cursor | None = None
        while True:
            page = await self.store.read_wire(
                run_id, after=after, limit=self.settings.read_page_size
            )
            stored += page
            if len(page) < self.settings.read_page_size:
                return stored
            after = page[-1].cursor

    async def _thread_items(self, thread_id: str) -> list[JsonObject]:
        items: list[JsonObject] = []
        before: int | None = None
        while True:
            page = await self.store.history(
                thread_id, limit=HISTORY_MAX_LIMIT, before_sequence=before
            )
            items = page.items + items
            if not page.has_more:
                return items
            before = page.next_before_sequence

    async def history(
        self,
        thread_id: str,
        *,
        limit: int = HISTORY_DEFAULT_LIMIT,
        before_sequence: int | None = None,
    ) -> HistoryPage:
        """One page of the thread's history (``page.to_json()`` is the response body)."""
        return await self.store.history(thread_id, limit=limit, before_sequence=before_sequence)

    # -- lifecycle ------------------------------------------------------------------------
    def _ensure_lease(self) -> None:
        if self._lease is None or self._lease.done():
            self._lease = asyncio.create_task(self._lease_forever(), name="replica-lease")

    async def beat(self) -> None:
        """One replica heartbeat: refresh this replica's lease for all its runs, then fence
        the local pumps whose run another replica took over (or that ended elsewhere) and
        cancel those with a cancel requested on another replica. The beat says what the
        replica holds (:class:`~gateway.store.ReplicaDigest`), so the store answers only the
        cancelled runs unless something else changed (:meth:`RunStore.beat_replica`).

        Raises:
            RunStoreError: the heartbeat failed (nothing fenced or cancelled).
        """
        # before the query: a run started later is not judged by it
        local = {run_id: pump for run_id, (pump, task) in self._pumps.items() if not task.done()}
        known = ReplicaDigest(len(local), sum(pump.writer.epoch for pump in local.values()))
        beat = await self.store.beat_replica(self.owner, known=known)
        owned = {run.run_id: run for run in beat.runs}
        self.lease_beats += 1
        for run_id, pump in local.items():
            seen = owned.get(run_id)
            if seen is None:
                if beat.complete:  # left this replica (taken over, ended elsewhere)
                    pump.fence()
            elif seen.epoch != pump.writer.epoch:
                pump.fence()
            elif seen.cancel_requested:
                pump.cancel()
        if self._abandoned:
            await self._close_abandoned()

    async def _close_abandoned(self) -> None:
        """Close the runs whose pump here gave up on the store, now that it answers again:
        in a new epoch, with the reaper's closing events and RUN_ERROR RUN_INTERRUPTED
        (``docs/runs.md`` §6). The replica's own lease keeps them from ever looking stale to a
        reaper while it lives, so without this they stayed ``running`` until it stopped. A run
        ended or taken over meanwhile is left to whoever holds it."""
        never_fresh = self.store.now() + timedelta(days=1)  # the owner is us: skip the age test
        claimed, self._abandoned = self._abandoned, {}  # a beat running beside: nothing left
        for run_id, epoch in claimed.items():
            try:
                taken = await self.store.take_over(
                    run_id, owner=self.owner, expected_epoch=epoch, stale_before=never_fresh
                )
                if taken is not None:
                    await self.reaper.close_run(taken)
            except WriteRejectedError:
                pass  # a later takeover or the end won
            except RunStoreError as exc:
                _log.warning("run %s: closing after the store outage failed (%s)", run_id, exc)
                self._abandoned.setdefault(run_id, epoch)  # the next beat tries again

    async def _lease_forever(self) -> None:
        """Beat every ``heartbeat_interval``; without :meth:`start_background` (a manager used
        as a library), only while local runs are pumped (:meth:`start` beats again)."""
        while True:
            try:
                await self.beat()
            except RunStoreError as exc:
                _log.warning("replica heartbeat failed (%s)", exc.message)
            except Exception:
                _log.exception("replica heartbeat: unexpected error")
            await asyncio.sleep(self.settings.heartbeat_interval)
            if not self._pumps and not self._background:
                self._lease = None
                return

    async def start_background(self) -> None:
        """Start the replica lease, the reaper and the retention purge loops (idempotent)."""
        self._ensure_lease()
        if self._background:
            return
        self._background.append(asyncio.create_task(self.reaper.run_forever(), name="reaper"))
        if self.settings.retention > 0:
            self._background.append(asyncio.create_task(self._purge_forever(), name="retention"))

    async def _purge_forever(self) -> None:
        while True:
            try:
                before = self.store.now() - timedelta(seconds=self.settings.retention)
                result = await self.store.purge(before)
                if result.runs or result.threads:
                    _log.info("retention: purged %s", result)
            except RunStoreError as exc:
                # the driver's reason is chained for the log (gateway.store.sql_errors)
                _log.warning("retention: store error (%s: %r)", exc.message, exc.__cause__)
            await asyncio.sleep(self.settings.purge_interval)

    async def aclose(self, *, timeout: float = 10.0) -> None:
        """Stop the loops; end every local run with RUN_INTERRUPTED (waits up to ``timeout``)."""
        for task in self._background:
            task.cancel()
        for task in self._background:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._background.clear()
        pumps = list(self._pumps.values())
        for pump, _task in pumps:
            pump.cancel(reason="shutdown")
        if pumps:
            _done, pending = await asyncio.wait([t for _p, t in pumps], timeout=timeout)
            for late in pending:
                late.cancel()
            for late in pending:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await late
        await self.rechecker.aclose()
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lease
            try:  # a clean exit: runs left active (none, unless a pump hung) use their own
                await self.store.drop_replica(self.owner)
            except RunStoreError as exc:
                _log.warning("could not drop the replica lease (%s)", exc.message)

    @property
    def local_runs(self) -> list[str]:
        """Ids of the runs pumped by this process right now."""
        return list(self._pumps)

    def __repr__(self) -> str:
        return f"RunManager(owner={self.owner!r}, local_runs={len(self._pumps)})"
