"""A run's upstream stream started before its run is recorded (issue 13 item 2).

A durable run's first byte used to wait for two things in a row: the store's commit of the
run row with its RUN_STARTED (a group commit, :mod:`gateway.store.group_commit`: under a
burst of new runs, tens of milliseconds), and only then the upstream request. Every event of
the run was late by that commit, since a paced upstream starts its clock at the request
(``bench/added_latency.py``: at C=64 the setup was most of the added latency, the same for
every delta of a stream). :func:`start_early` takes the first step of the stream at once, in
a task of its own, so the upstream request, its response head and its first chunk overlap
the commit; the run's pump reads the stream from there once the run is recorded, as if it
had started it (``docs/runs.md`` §2: RUN_STARTED is still durable before it is published, and
nothing the upstream sends is published before it).

Only the first step runs in that task: the first ``__anext__`` of the stream (the request
sent, the response read up to its first batch of events, retries included). Every later
step runs in the reader's own task (the pump's feeder), so a chunk costs no extra task or
queue. The first step's timeouts (``asyncio.timeout_at``) are entered and left within it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextvars import Context
from typing import Generic, TypeVar

__all__ = ["EarlyStream", "start_early"]

_T = TypeVar("_T")


class EarlyStream(AsyncIterator[_T], Generic[_T]):
    """``source`` whose first step was taken by :func:`start_early`: iterate it as
    ``source`` (the first item is that step's outcome, a value or the exception it raised,
    ``StopAsyncIteration`` included; a reader cancelled while it waits for that step cancels
    the step, as it would the source's own); :meth:`aclose` cancels the first step if it is
    still under way, then closes ``source``.

    While the first step waits for the upstream (a slow first chunk), the stream holds its
    task (about a KiB) besides the reader's."""

    __slots__ = ("_first", "_source")

    def __init__(self, source: AsyncGenerator[_T, None], first: asyncio.Future[_T]) -> None:
        self._source = source
        self._first: asyncio.Future[_T] | None = first

    def __aiter__(self) -> EarlyStream[_T]:
        return self

    async def __anext__(self) -> _T:
        first = self._first
        if first is None or first.cancelled():  # (cancelled: the source ended with it)
            self._first = None
            return await self._source.__anext__()
        try:
            # a cancel of the reader cancels the step, as it would cancel the source's own
            # pending step (the pump's feeder: "cancels the pending upstream read")
            return await first
        finally:
            if first.done():
                self._first = None

    async def aclose(self) -> None:
        """Cancel the first step if it is under way (its wait for the upstream ends, and the
        source's cleanup runs in the step's task as the cancel unwinds it), else close the
        source (its ``finally`` clauses run: the upstream response is closed).

        Raises:
            asyncio.CancelledError: the caller was cancelled while the step unwound (the
                step still finishes its cleanup in its own task).
        """
        first, self._first = self._first, None
        if first is not None:
            if not first.done():
                first.cancel()
                await asyncio.wait([first])
            if first.cancelled() or first.exception() is not None:
                return  # the source ended with its step (the exception is retrieved)
        await self._source.aclose()


def start_early(
    source: AsyncGenerator[_T, None], *, context: Context | None = None
) -> EarlyStream[_T]:
    """Take ``source``'s first step now, in a task of its own (run in ``context``, default a
    copy of the current one: the run's log context, :func:`gateway.runs.pump.run_log_context`),
    and return the stream to read it from (see the module docstring). The caller owns the
    result: it reads it to its end or calls :meth:`EarlyStream.aclose` (a run whose record
    failed), else the source stays suspended after its first item until it is garbage
    collected.

    Must be called with an event loop running (``RuntimeError`` otherwise).
    """
    loop = asyncio.get_running_loop()
    first: asyncio.Future[_T] = loop.create_task(_step(source), context=context)
    return EarlyStream(source, first)


async def _step(source: AsyncGenerator[_T, None]) -> _T:
    return await source.__anext__()
