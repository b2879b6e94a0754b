"""Concurrent point reads of runs as one ``SELECT ... WHERE id IN (...)`` (issue 13).

Every ``POST /v1/agui/{route}`` asks the store whether its run exists before anything reaches
the upstream (a retry re-joins its run, ``gateway/runs/rejoin.py``). A burst of new runs (the
added-latency bench's C=64 clients start together) made as many point reads, at most
``max_readers`` at a time, each a round trip to a driver thread: the last of 64 waited for
eight rounds of them before its upstream request could go out, and every event of its run was
late by that much. :class:`RunLookups` reads the runs asked for while a reader slot was
awaited in one statement (:func:`~gateway.store.run_marks_sql.fetch_runs`), so a burst costs
a round trip or two.

A lookup is never answered by a read that began before it was asked: each batch takes the ids
waiting when its read starts, and an id asked during that read waits for the next batch. So a
caller that wrote and then reads (``RunWriter``'s check after a failed write) sees its write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection

from .models import RunRecord

__all__ = ["RunLookups"]

Fetch = Callable[[Callable[[], Collection[str]]], Awaitable[dict[str, RunRecord]]]
"""Reads the runs whose ids the callable returns, called once the read is about to start."""


class RunLookups:
    """Coalesces :meth:`get` calls into batched reads through ``fetch`` (module docstring).

    Args:
        fetch: ``fetch(take)`` calls ``take()`` once it holds a connection and reads the runs
            of the ids it returned (unknown ids left out), as ``{id: record}``; what it raises
            reaches every caller of that batch.
    """

    __slots__ = ("_batch", "_fetch", "_loop", "_task", "_waiting")

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self._waiting: dict[str, list[asyncio.Future[RunRecord | None]]] = {}
        self._batch: dict[str, list[asyncio.Future[RunRecord | None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def get(self, run_id: str) -> RunRecord | None:
        """The record of ``run_id``, or None when the store has no such run.

        Raises:
            what the batch's read raised (a store error).
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a store may outlive a test's loop: start over on this one
            self._loop, self._waiting, self._task = loop, {}, None
        future: asyncio.Future[RunRecord | None] = loop.create_future()
        self._waiting.setdefault(run_id, []).append(future)
        if self._task is None:
            self._task = loop.create_task(self._drain(), name="store-run-lookups")
        return await future

    def _take(self) -> Collection[str]:
        """The ids waiting now, handed to the read that starts now."""
        self._batch, self._waiting = self._waiting, {}
        return self._batch.keys()

    async def _drain(self) -> None:
        try:
            while self._waiting:
                self._batch = {}
                taken = False

                def take() -> Collection[str]:
                    nonlocal taken
                    taken = True
                    return self._take()

                try:
                    found = await self._fetch(take)
                except Exception as exc:  # this batch's callers get it; the next batch reads
                    if not taken:  # failed before its read began (no connection): those waiting
                        self._take()
                    for futures in self._batch.values():
                        for future in futures:
                            if not future.done():
                                future.set_exception(exc)
                    continue
                except BaseException:  # cancelled (the loop shuts down): so are its callers
                    for futures in (*self._batch.values(), *self._waiting.values()):
                        for future in futures:
                            future.cancel()
                    self._waiting = {}
                    raise
                for run_id, futures in self._batch.items():
                    record = found.get(run_id)
                    for future in futures:
                        if not future.done():
                            future.set_result(record)
        finally:
            self._batch = {}
            self._task = None
