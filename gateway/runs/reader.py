"""Readers: one run's events from a cursor to its terminal event, with no gap and no duplicate.

``docs/runs.md`` §3 (readers):

1. subscribe to the broker first (its retained tail covers events published but not yet
   durable), 2. replay the store after the cursor, 3. drain the subscription, dropping every
   message at or before the last delivered cursor.

A broker message that does not directly follow the last delivered cursor (a slow reader lost
messages, or a new epoch began after a takeover) is preceded by what the store has in between.
A same-epoch gap the store cannot fill yet is waited for (the producer's batch lands within
``batch_interval``) until it fills or the run moves to a newer epoch (its producer died: the
unwritten events are gone and the reader continues with the next epoch, ``docs/runs.md`` §2).

The reader ends right after delivering the run's terminal event, from the broker or the store;
while idle it is re-checked against the store every ``reader_idle_recheck`` seconds (one
batched read for all idle readers, :mod:`gateway.runs.recheck`) and ends when the run is
terminal and nothing is left after its cursor. It filters by run id (one stream per run), so
other runs of the same thread are never seen.

The events come as they became available: a store page, a broker batch. :class:`RunReader`
yields them one by one, or those lists as they are (:meth:`RunReader.batches`), which the
encoder turns into one write each (issue 13 item 6: batched socket writes).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

from .. import metrics
from ..broker.protocol import Broker, Subscription
from ..store.cursor import Cursor
from ..store.models import RunEvent, RunRecord
from ..store.protocol import RunStore
from ..types import TERMINAL_EVENT_TYPES
from .recheck import IdleRechecker, IdleWatch
from .settings import RunSettings

__all__ = ["IDLE_RECEIVE", "PAGE_BYTES", "PAGE_GROWTH", "RunReader", "read_run"]

_GAP_POLL = 0.02  # seconds between store reads while waiting for a same-epoch gap to fill

PAGE_GROWTH = 8
"""A replay's store reads double from ``read_page_size`` up to this many times it."""

IDLE_RECEIVE = 3600.0
"""Seconds an idle reader's broker receive waits when the subscription says waiting costs
nothing (``waits_free``, the in-process broker's): the batched re-check watches it meanwhile,
so it need not wake every ``reader_idle_recheck`` to look (issue 13 item 5: 10,000 idle
streams made 2,000 wake-ups a second). Other brokers' receives keep ``reader_idle_recheck``
(a Redis ``XREAD BLOCK`` holds a connection for its whole timeout)."""

PAGE_BYTES = 1024 * 1024
"""A replay's page grows only while twice the last page's JSON stays within this many bytes,
and goes back to ``read_page_size`` past it: large events never make pages larger than the
setting's (a page and the one read ahead are held at once)."""


def _through_terminal(events: list[RunEvent]) -> list[RunEvent]:
    """``events`` up to and including the first terminal event (nothing follows it)."""
    for index, event in enumerate(events):
        if event.terminal:
            return events[: index + 1]
    return events


async def _replay(
    store: RunStore, run_id: str, after: Cursor | None, page: int, until: Cursor | None = None
) -> AsyncGenerator[list[RunEvent], None]:
    """The stored events after ``after`` (before ``until``), one non-empty list per store
    page, ending with the terminal event when it is among them.

    Pages grow: ``page`` events first (a resume's first bytes wait for one small read), then
    each read asks for twice the last, up to :data:`PAGE_GROWTH` times ``page`` and while the
    pages stay small in bytes (:data:`PAGE_BYTES`) (a replay of 10,000 events is 5 reads instead
    of 20 at 500: each read is a round trip to the database, a hop to SQLite's thread). The next
    page is read while this one is delivered (one read ahead: its query overlaps the encoding
    and sending of this page; issue 13). The page read ahead is the one the next step would read
    (after this page's last event), so what is delivered is the same; when the consumer stops,
    that read is cancelled."""
    limit = page
    read: asyncio.Future[list[RunEvent]] | None = asyncio.ensure_future(
        store.read_wire(run_id, after=after, limit=limit)
    )
    try:
        while read is not None:
            batch = await read
            read = None
            full = len(batch) >= limit
            held = sum(len(event.json) for event in batch if event.json is not None)
            if held * 2 <= PAGE_BYTES:
                limit = min(limit * 2, page * PAGE_GROWTH)
            elif held > PAGE_BYTES:
                limit = page
            if until is not None:
                kept = [event for event in batch if event.cursor < until]
                full = full and len(kept) == len(batch)
                batch = kept
            out = _through_terminal(batch)
            if full and len(out) == len(batch) and not out[-1].terminal:  # read on meanwhile
                read = asyncio.ensure_future(
                    store.read_wire(run_id, after=out[-1].cursor, limit=limit)
                )
            if out:
                yield out
    finally:
        if read is not None:
            await _cancel(read)


async def _cancel(read: asyncio.Future[list[RunEvent]]) -> None:
    """Cancel a read ahead nobody will take, and wait for it (its error, if any, is moot)."""
    read.cancel()
    await asyncio.wait({read})  # the caller's own cancellation still propagates
    if not read.cancelled():
        read.exception()  # retrieved: a failed read ahead of a stopped replay is not news


class RunReader:
    """A run's events from :func:`read_run`: an async iterator of :class:`RunEvent`, or of
    the lists they became available in (:meth:`batches`: a store page, a broker batch).

    Use one of the two ways (the events are delivered once), and close it (``aclose``, or
    ``contextlib.aclosing``) when the client goes away: that releases the subscription.
    """

    def __init__(self, pages: AsyncGenerator[list[RunEvent], None]) -> None:
        self._pages = pages
        # made by the first __anext__ only: the HTTP path takes batches() (a deque is 760 bytes
        # per open stream, issue 13 item 5)
        self._buffer: deque[RunEvent] | None = None

    def __aiter__(self) -> RunReader:
        return self

    async def __anext__(self) -> RunEvent:
        buffer = self._buffer
        if buffer is None:
            buffer = self._buffer = deque()
        while not buffer:
            buffer.extend(await anext(self._pages))
        return buffer.popleft()

    def batches(self) -> AsyncIterator[list[RunEvent]]:
        """The events not delivered yet, as non-empty lists in order (the store's pages of
        ``read_page_size``, the broker's batches), the last one ending with the terminal
        event. Raises what :func:`read_run` documents.

        Without events held back by :meth:`__anext__` this is the reader's own page generator
        (its pages are never empty), not a generator around it: each batch a live stream gets
        resumes one frame less (issue 13: per-event cost on the run core)."""
        if not self._buffer:
            self._buffer = None
            return self._pages
        held = list(self._buffer)
        self._buffer = None
        return self._held_then_pages(held)

    async def _held_then_pages(self, held: list[RunEvent]) -> AsyncIterator[list[RunEvent]]:
        yield held
        async for page in self._pages:
            yield page

    async def aclose(self) -> None:
        """Stop reading: releases the broker subscription (idempotent)."""
        self._buffer = None
        await self._pages.aclose()


def read_run(
    store: RunStore,
    broker: Broker,
    run_id: str,
    *,
    after: Cursor | None = None,
    settings: RunSettings | None = None,
    run: RunRecord | None = None,
    rechecker: IdleRechecker | None = None,
) -> RunReader:
    """The run's events strictly after ``after`` (from the first when None), in order, each
    once, ending after the terminal event.

    Use as ``async with contextlib.aclosing(read_run(...)) as events: async for ev in events``
    (or ``events.batches()``) so that the subscription is released when the client goes away.

    ``run``: the run's record when the caller just read it (as :meth:`RunManager.reader`
    does); saves one store read. Only the existence and cursor checks use it: the replay
    always reads the store after subscribing.

    ``rechecker``: the process's batched idle re-check (:class:`~gateway.runs.recheck.
    IdleRechecker`, the :class:`~gateway.runs.RunManager`'s): while no broker message comes,
    the reader is one of its watches instead of reading its run row itself every
    ``reader_idle_recheck``; None: a re-checker of its own (the same reads as one watch).

    Raises (from the iteration):
        RunNotFoundError: unknown run (before anything is yielded).
        CursorMismatchError: ``after`` cannot belong to this run (before anything is yielded).
        RunStoreError: the store failed while reading.
    """
    settings = settings or RunSettings()
    if rechecker is None:
        rechecker = IdleRechecker(store, interval=settings.reader_idle_recheck)
    return RunReader(_read(store, broker, run_id, after, settings, run, rechecker))


async def _read(
    store: RunStore,
    broker: Broker,
    run_id: str,
    after: Cursor | None,
    settings: RunSettings,
    run: RunRecord | None,
    rechecker: IdleRechecker,
) -> AsyncGenerator[list[RunEvent], None]:
    # counted from its first step to its close (agui_gateway_active_readers) here, not in a
    # generator around this one, whose every batch of a live stream would resume one frame
    # more (issue 13: per-event cost on the run core)
    metrics.ACTIVE_READERS.inc()
    try:
        loop = asyncio.get_running_loop()
        page = settings.read_page_size
        if run is None or run.id != run_id:
            run = await store.get_run(run_id)
        if after is not None:
            run.check_cursor(after, slack=settings.cursor_slack)
        last = after
        async with broker.subscribe(run_id, after=after) as subscription:
            if not _tail_follows(subscription, last, run.epoch):
                async with aclosing(_replay(store, run_id, last, page)) as pages:
                    async for events in pages:
                        yield events
                        last = events[-1].cursor
                        if events[-1].terminal:
                            return
            if last is not None:
                subscription.skip_to(last)
            interval = settings.reader_idle_recheck
            idle = IDLE_RECEIVE if getattr(subscription, "waits_free", False) else interval
            carried: _Receive | None = None  # a broker receive left running by a re-check wake-up
            try:
                while True:
                    woken: IdleWatch | None = None
                    if carried is None:
                        started = loop.time()
                        messages = await subscription.receive(interval)
                        if not messages and loop.time() - started < interval / 2:
                            woken = _read_now(run_id, last)  # the broker dropped its queue
                        elif not messages:  # idle: the batched re-check watches it from now on
                            messages, woken, carried = await _wait_idle(
                                subscription, rechecker, run_id, last, idle, None
                            )
                    else:
                        messages, woken, carried = await _wait_idle(
                            subscription, rechecker, run_id, last, idle, carried
                        )
                    out: list[RunEvent] = []  # this batch's events, delivered together
                    for message in messages:
                        if message.cursor.follows(last):  # the usual case: the next event
                            out.append(message)
                            last = message.cursor
                            if message.type in TERMINAL_EVENT_TYPES:
                                break
                            continue
                        if last is not None and message.cursor <= last:
                            continue
                        # a gap: what came before it goes out before it is waited for
                        if out:
                            yield out
                            out = []
                        async with aclosing(
                            _fill_gap(store, run_id, last, message.cursor, settings)
                        ) as pages:
                            async for events in pages:
                                yield events
                                last = events[-1].cursor
                                if events[-1].terminal:
                                    return
                        if last is not None and message.cursor <= last:
                            continue
                        if message.cursor.epoch == (
                            last.epoch if last else message.cursor.epoch
                        ) and (not message.cursor.follows(last)):
                            # a dead epoch's unwritten event: superseded by the next epoch
                            continue
                        out.append(message)
                        last = message.cursor
                        if message.terminal:
                            break
                    if out:
                        yield out
                        if out[-1].type in TERMINAL_EVENT_TYPES:
                            return
                    if woken is None:
                        continue
                    mark = woken.run if woken.run is not None else await store.get_run(run_id)
                    durable_end = mark.last_cursor
                    if durable_end is None or (last is not None and durable_end <= last):
                        if mark.is_terminal:
                            return
                        continue  # nothing stored after the cursor
                    async with aclosing(_replay(store, run_id, last, page)) as pages:
                        async for events in pages:
                            yield events
                            last = events[-1].cursor
                            if events[-1].terminal:
                                return
                    if mark.is_terminal:
                        return

            finally:
                if carried is not None:
                    _drop(carried)
    finally:
        metrics.ACTIVE_READERS.dec()


@dataclass(slots=True)
class _Receive:
    """A broker receive running in its own task (an idle reader's), from ``started`` (loop
    time)."""

    started: float
    future: asyncio.Future[list[RunEvent]]


async def _wait_idle(
    subscription: Subscription,
    rechecker: IdleRechecker,
    run_id: str,
    last: Cursor | None,
    timeout: float,
    receive: _Receive | None,
) -> tuple[list[RunEvent], IdleWatch | None, _Receive | None]:
    """Wait, watched by ``rechecker``, for the broker's next messages or the re-check's
    wake-up. Returns ``(messages, None, None)`` when the broker delivered first,
    ``(messages, watch, None)`` when the broker's answer came with the wake-up, and
    ``([], watch, receive)`` when the re-check woke it while the broker receive still runs:
    that receive is not cancelled (a cancelled ``XREAD`` costs a connection, and may lose the
    cancellation to its own timeout), but carried into the next call (``receive``), so no
    message is lost and the reader replays the store meanwhile. ``timeout``: of each broker
    receive (:data:`IDLE_RECEIVE` when waiting costs nothing); an empty answer before half of
    it means the broker dropped the reader's queue."""
    loop = asyncio.get_running_loop()
    watch = rechecker.watch(run_id, last)
    try:
        while True:
            if receive is None:
                receive = _Receive(
                    loop.time(), asyncio.ensure_future(subscription.receive(timeout))
                )
            receive.future.add_done_callback(lambda _done: watch.woken.set())
            await watch.woken.wait()
            if not receive.future.done():  # the re-check woke it
                return [], watch, receive
            done, receive = receive, None
            messages = done.future.result()
            if messages or watch.due:
                return messages, watch if watch.due else None, None
            if loop.time() - done.started < timeout / 2:  # the broker dropped its queue
                return [], _read_now(run_id, last), None
            watch.woken.clear()
    except BaseException:
        if receive is not None:
            _drop(receive)
        raise
    finally:
        rechecker.unwatch(watch)


def _read_now(run_id: str, last: Cursor | None) -> IdleWatch:
    """A wake-up without a row: the reader reads its run itself, at once (an empty receive
    before the timeout: a subscriber that fell behind its bound, ``docs/runs.md`` §3)."""
    return IdleWatch(run_id, last, 0.0, due=True)


def _drop(receive: _Receive) -> None:
    """Stop a receive nobody will take (the reader goes away), without waiting for it."""
    receive.future.cancel()
    receive.future.add_done_callback(_retrieve)


def _retrieve(future: asyncio.Future[list[RunEvent]]) -> None:
    if not future.cancelled():
        future.exception()  # a failed receive of a closed reader is not news


def _tail_follows(subscription: object, last: Cursor | None, epoch: int) -> bool:
    """True when the broker's retained tail, queued for this reader on subscribing, starts at
    the event right after ``last`` in the run's current ``epoch`` (``queued_head``, an
    in-process broker subscription): the store holds nothing before it that the reader lacks,
    so its replay is skipped (one store read less per live stream, issue 13), and what follows
    is what a reader subscribed all along gets. Any other subscription, a tail that starts
    later, in an older epoch (a dead producer's unwritten deltas: the store's version is
    delivered instead) or is empty: False (the store is replayed, step 2 of ``docs/runs.md``
    §3)."""
    head = getattr(subscription, "queued_head", None)
    if head is None:
        return False
    first = head()
    return first is not None and first.epoch == epoch and first.follows(last)


async def _fill_gap(
    store: RunStore, run_id: str, last: Cursor | None, target: Cursor, settings: RunSettings
) -> AsyncGenerator[list[RunEvent], None]:
    """Yield the stored events between ``last`` and ``target`` (store pages); wait while a
    same-epoch gap is not durable yet, until it fills or the run's epoch moves past
    ``target``'s."""
    page = settings.read_page_size
    while True:
        async with aclosing(_replay(store, run_id, last, page, until=target)) as pages:
            async for events in pages:
                yield events
                last = events[-1].cursor
                if events[-1].terminal:
                    return
        if target.follows(last) or (last is not None and target.epoch > last.epoch):
            return
        run = await store.get_run(run_id)
        if run.epoch > target.epoch or run.is_terminal:
            # The producer of target's epoch died before writing the gap: its later events
            # are superseded; deliver what the store has from the next epoch instead.
            async with aclosing(_replay(store, run_id, last, page)) as pages:
                async for events in pages:
                    yield events
                    last = events[-1].cursor
                    if events[-1].terminal:
                        return
            return
        await asyncio.sleep(_GAP_POLL)
