"""RunPump: a run's single producer: upstream AG-UI events -> store -> broker.

``docs/runs.md`` §4 (one producer per run), §6 (every run ends) and issue 3 §1, §4, §7:

* consumes an async iterator of AG-UI events (``ag_ui.core`` models or wire dicts, e.g. from a
  decoder of :mod:`agui_codecs` built with the run's public ids, which it stamps on RUN_STARTED
  and RUN_FINISHED: the ids are fixed once, before the decoder, and not rewritten here), or of
  lists of them (:data:`Chunk`: the events one upstream chunk decoded to, the pipeline's
  batches, :func:`gateway.pipeline.staged`), numbers them, writes and publishes them through a
  :class:`~gateway.runs.writer.RunWriter` (deltas batched by time and count, control events
  written before they are published);
* stores nothing illegal (issue 12 item 3): every event passes the run's
  :class:`~agui_codecs.core.StoreGuard` (the AG-UI transition tables of the semantics core)
  before it is staged, which holds the lifecycle rules: RUN_STARTED first (synthesised with
  ``protocolVersion`` and the run's public ids, never the store keys of
  :mod:`gateway.tenancy`, when the upstream starts with something else, or, with
  ``announce``, before the upstream is read), a repeat RUN_STARTED absorbed, the other repairs
  the tables allow, else what is open closed and RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR``; the
  guard's repairs are counted in ``agui_gateway_repairs_total``;
* nothing after the terminal event, and a terminal event always (``UPSTREAM_TRUNCATED`` when
  the iterator ends without one, the exception's ``code`` or ``UPSTREAM_ERROR`` when it raises);
* reads its upstream in a feeder task, a bounded number of events ahead (``2 *
  batch_max_events``, plus at most one chunk), and hands the writer every event already
  available as one chunk (:meth:`~gateway.runs.writer.RunWriter.commit`): events that arrive
  together (one network chunk decodes to several events) cost one transaction and one broker
  round trip instead of one each, and none waits for an event that has not arrived; while the
  pump waits for an empty inbox the feeder stages what arrived itself (an event, or a chunk's
  events) and, when that is only deltas the broker publishes without I/O (the in-process
  broker), publishes them too, in one call, sparing the pump a wake-up (issue 13: one call per
  chunk, not per event);
* writes its pending deltas at the process-wide flush ticks (:func:`next_flush_tick`, every
  ``batch_interval`` on the loop clock), so concurrent runs' flushes commit as one group;
* heartbeats its lease; stops silently when fenced (another replica took the run over);
* :meth:`RunPump.cancel` (or a cancel requested on another replica, seen at the next
  heartbeat) cancels the pending upstream read, closes every open message, reasoning, tool call
  and step, and appends RUN_ERROR ``{code: "RUN_CANCELED", message: "run canceled by user"}``;
  ``cancel(reason="shutdown")`` ends it with ``RUN_INTERRUPTED`` instead;
* logs with its own context (:mod:`gateway.logs`: ``run_id``, ``route``, ``upstream_host``) and
  times each event from its arrival out of the pipeline to its publication
  (``agui_gateway_event_latency_seconds{stage="publish"}``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from contextvars import Context, copy_context
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ag_ui.core import Event

from agui_codecs.core import StoreGuard
from agui_codecs.events import event_to_wire

from .. import metrics
from ..broker.protocol import Broker
from ..lean_event import LeanEvent
from ..logs import bind, reset_context, use_context
from ..store.cursor import Cursor
from ..store.errors import RunStoreError, WriteRejectedError
from ..store.models import JsonObject, RunRecord
from ..store.protocol import RunStore
from .flush_ticks import FlushTicks, next_flush_tick
from .settings import RunSettings
from .writer import RunWriter, terminal_status

__all__ = [
    "CANCELED_MESSAGE",
    "INTERRUPTED_MESSAGE",
    "STORE_LOST_MESSAGE",
    "Chunk",
    "PumpSource",
    "RunOutcome",
    "RunPump",
    "bind_run",
    "next_flush_tick",
    "run_log_context",
]

_log = logging.getLogger(__name__)

CANCELED_MESSAGE = "run canceled by user"
"""RUN_ERROR message of a cancelled run (issue 3 §1)."""

STORE_LOST_MESSAGE = "the run store is unavailable; the run could not be recorded to its end"
"""RUN_ERROR message (code ``STORE_UNAVAILABLE``) live readers get when the store is lost."""

INTERRUPTED_MESSAGE = "run interrupted: the gateway replica running it stopped"
"""RUN_ERROR message of a run closed by a shutdown or by the reaper."""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a pump ended.

    Attributes:
        run_id: the run.
        status: the terminal status written, or ``"fenced"`` (another replica owns the run;
            nothing more was written) or ``"store_error"`` (the store kept failing; the reaper
            will close the run).
        cursor: the last cursor this pump published (None if none).
        error: ``{"code", "message"}`` of the RUN_ERROR written, if any.
    """

    run_id: str
    status: str
    cursor: Cursor | None
    error: JsonObject | None = None


class _Stop(Exception):
    def __init__(self, kind: Literal["cancel", "shutdown", "fenced"]) -> None:
        super().__init__(kind)
        self.kind = kind


class _UpstreamFailure(Exception):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


_END = object()
"""Feeder marker: the upstream iterator is exhausted."""

_CANCELLED = object()
"""Feeder marker: the upstream raised CancelledError on its own (not a cancel of ours)."""

_STAGED = object()
"""Feeder marker: the feeder staged this event itself (:meth:`RunPump._stage_now`); the pump
commits it."""


class _Raised:
    """Feeder marker: staging an event in the feeder raised ``exc`` (re-raised by the pump, as
    when the pump stages it)."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


_PUBLISH_LATENCY = metrics.EVENT_LATENCY.labels("publish")

Chunk = list[Event] | list[JsonObject] | list[Event | JsonObject]
"""Events that arrived together (what one upstream chunk decoded to), in order; the pump
stages them as one delivery (a ``list``: any other item is one event)."""

PumpSource = AsyncIterable[Event | JsonObject | Chunk]
"""What :meth:`RunPump.run` pumps: events, or :data:`Chunk` lists of them, in order."""


def upstream_host(upstream: str | None) -> str | None:
    """The host (``host[:port]``) of a run's upstream URL; ``self`` for the in-process one."""
    if not upstream:
        return None
    parts = urlsplit(upstream)
    return parts.netloc or parts.scheme or None


def bind_run(run_id: str, route: str | None, upstream: str | None) -> None:
    """Name the run in the current log context: ``run_id`` (the AG-UI runId), ``route`` and
    ``upstream_host`` (:func:`upstream_host` of its URL), the fields every record of a run's
    work carries (``gateway/logs.py``)."""
    bind(run_id=run_id, route=route, upstream_host=upstream_host(upstream))


def run_log_context(run_id: str, route: str | None, upstream: str | None) -> Context:
    """A copy of the current context whose log context is the run's own (:func:`bind_run`),
    as the pump's task has it: for work on the run's behalf before its pump starts (the
    upstream's first step, :func:`gateway.early_stream.start_early`)."""
    context = copy_context()
    context.run(use_context, {})
    context.run(bind_run, run_id, route, upstream)
    return context


def _wire(event: Event | JsonObject) -> JsonObject:
    return event if isinstance(event, dict) else event_to_wire(event)


class RunPump:
    """The producer of one run (see the module docstring). One :meth:`run` call per pump.

    Args:
        store, broker: where events go.
        run: the run record from ``create_run`` (or ``take_over``): epoch and last seq.
        settings: batching, heartbeat and retry settings.
        message_id: id of the run's assistant history item (default: the run's).
        announce: write and publish RUN_STARTED (``protocolVersion`` 1.0, the run's public
            ids) before the upstream is read, so a client's first event does not wait for the
            upstream's first byte (issue 16 item 7); the upstream's own RUN_STARTED is then
            absorbed by the guard (:meth:`~agui_codecs.core.StoreGuard.announce`). Only for
            upstreams whose RUN_STARTED carries nothing else (not the passthrough protocols,
            whose RUN_STARTED may carry metadata).
        announced: with ``announce``, that RUN_STARTED is already stored with the run (seq 1,
            :meth:`~gateway.store.protocol.RunStore.create_run` ``events``, issue 13 item 2):
            it is folded and published without a write of its own.
        replica_lease: the lease is the replica's (:class:`~gateway.runs.RunManager` beats once
            for all its runs and calls :meth:`fence` / :meth:`cancel`): no per-run heartbeat.
        ticks: where the flush ticks are booked (:class:`~gateway.runs.flush_ticks.
            FlushTicks`; a manager's pumps share one: one timer per tick); default: its own.
    """

    def __init__(
        self,
        store: RunStore,
        broker: Broker,
        run: RunRecord,
        *,
        settings: RunSettings | None = None,
        message_id: str | None = None,
        announce: bool = False,
        announced: bool = False,
        replica_lease: bool = False,
        ticks: FlushTicks | None = None,
    ) -> None:
        self.settings = settings or RunSettings()
        self.announce = announce
        self.announced = announced
        self.replica_lease = replica_lease
        self.store = store
        self.run_record = run
        self.writer = RunWriter(
            store,
            broker,
            run,
            message_id=message_id,
            write_retries=self.settings.write_retries,
            outage_grace=self.settings.store_outage_grace,
        )
        self._stop: _Stop | None = None
        self._feeder: asyncio.Task[None] | None = None
        # (arrival, item); a list, not a deque: an empty deque is about 760 bytes against 56,
        # and the pump takes its items in slices (one ``del`` per take, not per item)
        self._inbox: list[tuple[float, Any]] = []
        self._inbox_max = 2 * self.settings.batch_max_events
        self._inbox_waiter: asyncio.Future[None] | None = None  # set while the pump waits
        self._inbox_space = LeanEvent()
        self._ticks = ticks if ticks is not None else FlushTicks()
        self._flush_booked = False  # a flush tick is booked for the pending deltas
        self._flush_due = False  # that tick came; the flush loop writes them
        self._flush_wait: asyncio.Future[None] | None = None  # set while the flush loop waits
        # the flush loop's task, started by the first booked tick: a run that stages no delta
        # (an idle stream, one whose events are all control events) never holds one
        self._flusher: asyncio.Task[None] | None = None
        self._started = False
        self.guard = StoreGuard(thread_id=run.public_thread_id, run_id=run.public_run_id)

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.run_record.id

    @property
    def cursor(self) -> Cursor | None:
        """The last cursor published."""
        return self.writer.last_published

    def cancel(self, *, reason: Literal["user", "shutdown"] = "user") -> None:
        """Stop the upstream and end the run (idempotent; the first reason wins).

        ``user``: RUN_ERROR ``RUN_CANCELED``; ``shutdown``: RUN_ERROR ``RUN_INTERRUPTED``.
        """
        self._halt(_Stop("cancel" if reason == "user" else "shutdown"))

    def fence(self) -> None:
        """Stop silently: another replica took the run over (its replica lease saw the run
        leave this producer's epoch). No-op once the terminal event is written."""
        if not self.writer.fold.ended:
            self._halt(_Stop("fenced"))

    def _halt(self, stop: _Stop) -> None:
        if self._stop is None:
            self._stop = stop
        if self._feeder is not None and not self._feeder.done():
            self._feeder.cancel()
        self._wake_pump()

    def _wake_pump(self) -> None:
        """Wake the pump if it waits for its inbox (no-op otherwise: one future per wait)."""
        waiter = self._inbox_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def run(self, source: PumpSource) -> RunOutcome:
        """Pump ``source`` (events, or :data:`Chunk` lists of events: the same run either way)
        until its terminal event, a cancel or a takeover.

        Never raises for upstream or store failures (they end the run or are reported in the
        outcome); re-raises only the cancellation of the calling task.

        Raises:
            RuntimeError: called twice.
        """
        if self._started:
            raise RuntimeError("RunPump.run() can be called once")
        self._started = True
        token = use_context({})  # this task's own context: not the request's it started from
        record = self.run_record
        bind_run(record.public_run_id, record.route, record.upstream)
        try:
            return await self._run(source)
        finally:
            reset_context(token)

    async def _run(self, source: PumpSource) -> RunOutcome:
        iterator = aiter(source)
        self._feeder = asyncio.create_task(self._feed(iterator), name=f"upstream:{self.run_id}")
        tasks = []
        if not self.replica_lease:
            tasks.append(
                asyncio.create_task(self._heartbeat_loop(), name=f"heartbeat:{self.run_id}")
            )
        try:
            return await self._pump()
        finally:
            for task in (self._feeder, *tasks):
                task.cancel()
            for task in (self._feeder, *tasks):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            flusher = self._flusher  # (none starts now: the feeder and the pump are done)
            if flusher is not None:
                flusher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await flusher
            closer = getattr(iterator, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()

    async def _pump(self) -> RunOutcome:
        fold = self.writer.fold
        try:
            try:
                if self.announce and self.announced:  # durable with the run: publish it
                    await self.writer.adopt([self.guard.announce()])
                elif self.announce:
                    self.writer.stage(self.guard.announce())
                    await self._commit()
                while not fold.ended:
                    room = self.settings.batch_max_events - len(self.writer.pending)
                    items = await self._take(max(1, room))
                    marker: Any = None
                    arrivals: list[float] = []
                    for arrived, item in items:
                        if item is _STAGED:  # the feeder staged it (a chunk: one each, in order)
                            arrivals.append(arrived)
                            continue
                        if fold.ended:
                            break  # nothing after the terminal event
                        if item is _END or item is _CANCELLED or isinstance(item, _UpstreamFailure):
                            marker = item
                            break
                        arrivals.append(arrived)
                        if isinstance(item, _Raised):
                            raise item.exc
                        self._stage(_wire(item))
                    await self._commit()
                    now = time.perf_counter()
                    for arrived in arrivals:
                        _PUBLISH_LATENCY.observe(now - arrived)
                    if marker is _END:
                        break
                    if marker is _CANCELLED:
                        raise asyncio.CancelledError
                    if marker is not None:
                        raise marker
                if not fold.ended:
                    await self._close(
                        "UPSTREAM_TRUNCATED", "upstream stream ended without a terminal event"
                    )
            except _Stop as stop:
                if stop.kind == "fenced":
                    return self._outcome("fenced")
                if stop.kind == "cancel":
                    await self._close("RUN_CANCELED", CANCELED_MESSAGE)
                else:
                    await self._close("RUN_INTERRUPTED", INTERRUPTED_MESSAGE)
            except _UpstreamFailure as failure:
                await self._close(*self._failure(failure.cause))
        except WriteRejectedError as exc:
            _log.info("run %s: producer stopped (%s)", self.run_id, exc.message)
            return self._outcome("fenced")
        except RunStoreError as exc:
            _log.error("run %s: store failed, giving up (%s)", self.run_id, exc.message)
            await self._announce_store_lost()
            return self._outcome("store_error")
        self._count_repairs()
        terminal = fold.terminal or {}
        error = None
        if terminal.get("type") == "RUN_ERROR":
            error = {"code": terminal.get("code"), "message": terminal.get("message")}
        return self._outcome(terminal_status(terminal), error)

    async def _announce_store_lost(self) -> None:
        """The store stayed unreachable past ``store_outage_grace``: publish (not write) what
        is open closed and RUN_ERROR ``STORE_UNAVAILABLE``, so live readers end typed instead
        of being cut; the reaper closes the stored run in a new epoch once the store is back
        (``docs/runs.md`` §2, §6)."""
        fold = self.writer.fold
        if fold.ended:
            return
        error = {"type": "RUN_ERROR", "message": STORE_LOST_MESSAGE, "code": "STORE_UNAVAILABLE"}
        events = [out for e in (*fold.closing_events(), error) for out in self.guard.push(e)]
        try:
            await self.writer.announce(events)
        except Exception:  # the broker may be gone too: readers then see the store error
            _log.exception("run %s: could not announce the lost store", self.run_id)

    def _count_repairs(self) -> None:
        """Count the guard's repairs (``agui_gateway_repairs_total{route,repair}``) and log the
        violation that ended the run, if any."""
        route = self.run_record.route or ""
        for repair, count in self.guard.repairs.items():
            metrics.REPAIRS.labels(route, repair).inc(count)
        if self.guard.violation is not None:
            _log.warning("run %s: ended by the store guard: %s", self.run_id, self.guard.violation)

    def _failure(self, cause: BaseException) -> tuple[str, str]:
        """``(code, message)`` of the RUN_ERROR for an upstream iterator that raised.

        A typed error (one with a string ``code``: a codec or gateway error) says why itself,
        with its ``message`` (or "upstream failed"). Anything else is a bug of ours: logged
        with its traceback and shown to the client as ``INTERNAL_ERROR`` "internal gateway
        error", never by its class name (issue 12).
        """
        code = getattr(cause, "code", None)
        message = getattr(cause, "message", None)
        if isinstance(code, str) and code:
            _log.warning("upstream of run %s failed: %s: %r", self.run_id, code, cause)
            return code, message if isinstance(message, str) and message else "upstream failed"
        _log.error("upstream of run %s failed", self.run_id, exc_info=cause)
        return "INTERNAL_ERROR", "internal gateway error"

    def _outcome(self, status: str, error: JsonObject | None = None) -> RunOutcome:
        return RunOutcome(self.run_id, status, self.writer.last_published, error)

    async def _feed(self, iterator: AsyncIterator[Any]) -> None:
        """Feeder task: move upstream events into the inbox, at most ``_inbox_max`` ahead of
        the pump; then one marker (end, failure). A cancel of ours (:meth:`_halt`, or the end
        of :meth:`run`) cancels the pending upstream read and ends it without a marker."""
        inbox = self._inbox
        try:
            while True:
                while len(inbox) >= self._inbox_max:
                    self._inbox_space.clear()
                    await self._inbox_space.wait()
                item = await anext(iterator)
                arrived = time.perf_counter()
                if type(item) is list:  # a chunk: its events arrived together
                    if item and not self._stage_now(arrived, item):
                        inbox.extend([(arrived, event) for event in item])
                        self._wake_pump()
                elif not self._stage_now(arrived, (item,)):
                    inbox.append((arrived, item))
                    self._wake_pump()
        except StopAsyncIteration:
            inbox.append((time.perf_counter(), _END))
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            inbox.append((time.perf_counter(), _CANCELLED))
        except Exception as exc:
            inbox.append((time.perf_counter(), _UpstreamFailure(exc)))
        finally:
            self._wake_pump()

    def _stage_now(self, arrived: float, events: Sequence[Any]) -> bool:
        """In the feeder, while the pump waits for an empty inbox (no commit of its own under
        way): stage ``events`` (what arrived together: one event, or a chunk's) and, when that
        needs no I/O (deltas only, the in-process broker:
        :meth:`~gateway.runs.writer.RunWriter.commit_now`), publish them here in one call, so
        a lone delta (or a chunk of them) costs no wake-up of the pump task (issue 13: per-event
        cost); else leave them staged and hand the pump one :data:`_STAGED` marker per event to
        commit them, as if it had staged them itself. Nothing after the terminal event is
        staged. False (nothing done): the pump is busy or stopping, or the run ended."""
        waiter = self._inbox_waiter
        if waiter is None or waiter.done() or self._inbox or self._stop is not None:
            return False
        writer = self.writer
        fold = writer.fold
        if fold.ended or writer.pending_commit:
            return False
        staged = 0
        try:
            for item in events:
                if staged and fold.ended:
                    break  # nothing after the terminal event (the pump drops it likewise)
                # _stage(_wire(item)), inline: once per event
                wire = item if isinstance(item, dict) else event_to_wire(item)
                for stored in self.guard.push(wire):
                    writer.stage(stored)
                staged += 1
        except Exception as exc:  # the pump raises it, as from its own staging
            self._inbox.extend([(arrived, _STAGED)] * staged)
            self._inbox.append((arrived, _Raised(exc)))
        else:
            if writer.commit_now(flush_at=self.settings.batch_max_events):
                if writer.pending and not self._flush_booked:
                    self._book_flush()
                latency = time.perf_counter() - arrived
                for _ in range(staged):
                    _PUBLISH_LATENCY.observe(latency)
                return True
            self._inbox.extend([(arrived, _STAGED)] * staged)
        self._wake_pump()
        return True

    async def _take(self, limit: int) -> list[Any]:
        """Up to ``limit`` inbox items: all that are there, or wait for the first one.

        Raises:
            _Stop: a cancel, shutdown or takeover was requested (checked before anything is
                taken, as the pump did before reading its upstream).
        """
        inbox = self._inbox
        while True:
            if self._stop is not None:
                raise self._stop
            if inbox:
                items = inbox[:limit]
                del inbox[:limit]
                self._inbox_space.set()
                return items
            feeder = self._feeder
            if feeder is not None and feeder.done():  # died without a marker: re-raise
                if feeder.cancelled():
                    raise asyncio.CancelledError
                raise feeder.exception() or RuntimeError("upstream feeder ended early")
            waiter = self._inbox_waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._inbox_waiter = None

    def _stage(self, event: JsonObject) -> None:
        """Stage what the guard lets out for one upstream event (see the module docstring)."""
        for stored in self.guard.push(event):
            self.writer.stage(stored)

    async def _commit(self) -> None:
        await self.writer.commit(flush_at=self.settings.batch_max_events)
        if self.writer.pending and not self._flush_booked:
            self._book_flush()

    async def _close(self, code: str, message: str) -> None:
        """Close what is open and append RUN_ERROR (write-ahead, one transaction)."""
        closing = self.writer.fold.closing_events()
        error = {"type": "RUN_ERROR", "message": message, "code": code}
        await self.writer.control([out for e in (*closing, error) for out in self.guard.push(e)])

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_interval)
            try:
                state = await self.store.heartbeat(self.run_id, self.writer.epoch)
            except RunStoreError as exc:
                _log.warning("run %s: heartbeat failed (%s)", self.run_id, exc.message)
                continue
            if not state.alive:
                if not self.writer.fold.ended:
                    self._halt(_Stop("fenced"))
                return
            if state.cancel_requested:
                self.cancel()

    def _book_flush(self) -> None:
        """Book the next flush tick (:func:`next_flush_tick`) for the pending deltas: the
        flush loop writes them then (one booking until that tick came)."""
        self._flush_booked = True
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_loop(), name=f"flush:{self.run_id}")
        loop = asyncio.get_running_loop()
        self._ticks.book(loop, self.settings.batch_interval, self._flush_tick)

    def _flush_tick(self) -> None:
        """The booked tick came (the loop's timer, :class:`FlushTicks`): wake the flush loop,
        or have it write at once when it is still writing the previous batch."""
        self._flush_due = True
        waiter = self._flush_wait
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _flush_loop(self) -> None:
        """Write the pending deltas at the flush tick booked after the first of them was staged
        (:meth:`_book_flush`), and again at the next one while some stay pending (staged
        during the write, or kept by a failed one): one wake-up per flush, by the tick."""
        loop = asyncio.get_running_loop()
        while True:
            if not self._flush_due:
                waiter = self._flush_wait = loop.create_future()
                try:
                    await waiter
                finally:
                    self._flush_wait = None
            self._flush_due = False
            self._flush_booked = False  # deltas staged from now on book the next tick
            try:
                await self.writer.flush()
            except WriteRejectedError:
                self._halt(_Stop("fenced"))
                return
            except RunStoreError as exc:
                _log.warning(
                    "run %s: batch write failed, will retry (%s)", self.run_id, exc.message
                )
            if self.writer.pending and not self._flush_booked:
                self._book_flush()  # kept by a failed write (staged ones booked their own)
