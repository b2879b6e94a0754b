"""The idle readers' store re-check, batched: one read for all of a process's idle readers.

``docs/runs.md`` §3: completion never depends on one pub/sub message, so a reader that the
broker left idle re-checks the store every ``reader_idle_recheck`` seconds and ends when its
run is terminal with nothing after its cursor. Done by each reader, that is one
:meth:`~gateway.store.protocol.RunStore.get_run` per idle stream per interval (issue 13 item 5:
1,000 idle SQLite streams cost 17.9 % of a core, 200 reads a second). An
:class:`IdleRechecker` does it for all of them: an idle reader registers its run id and
cursor (:meth:`IdleRechecker.watch`); every ``tick`` the re-checker reads the rows of the
watched runs that are due in one :meth:`~gateway.store.protocol.RunStore.get_run_marks`
(chunks of ``GET_RUNS_CHUNK`` ids; only each run's status and durable end, not its whole row:
building 10,000 full records per interval was over half of an idle gateway's CPU) and wakes
only the readers whose run's durable end moved past their cursor or whose run is terminal (or
missing, or whose read failed: those read the store themselves, as before). A reader the
broker woke meanwhile has left (:meth:`unwatch`) and is not touched.

Timing: a watch is due when registered (checked at the next tick) and then every
``interval`` seconds; a tick also takes the watches due before the next tick (within
``min(tick, interval / 2)``), so watches registered at different times fall into a few groups
(about one read per tick, whatever the number of readers) while none waits more than
``interval`` between checks, nor much less: each watch costs about one row read per
``interval`` (taking those due within half an interval, as before, re-read every watch
every ``interval / 2 + tick``: 1.4 rows per interval). A reader registers after one
``interval`` without broker messages, so a lost terminal event ends it within about
``interval + tick`` (``tick`` is a fifth of the interval), as the per-reader re-check did
within ``interval``.

Runs pumped here (``pumped``, the :class:`~gateway.runs.RunManager`'s local pumps when its
broker is the in-process one): their readers are not read while the pump lives. Such a run's
terminal event reaches its readers through the broker, which loses nothing but to a reader
that fell behind its bound, and that reader's receive then returns ``[]`` at once, so it reads
the store itself (:mod:`gateway.broker.memory`); the producer that ends it otherwise (fenced:
another replica closed the run; gone) is no longer pumped, and :meth:`IdleRechecker.
producer_gone` makes its watches due at the next tick. So N idle streams of runs pumped here
cost no store read at all (issue 13: at N = 2,000 the re-check was 43 % of an idle gateway's
CPU), and a terminal event another replica wrote is seen within the manager's heartbeat (which
fences the pump) plus a tick.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Container
from dataclasses import dataclass, field

from ..lean_event import LeanEvent
from ..store.cursor import Cursor
from ..store.models import RunMark
from ..store.protocol import RunStore

__all__ = ["IdleRechecker", "IdleWatch"]

_log = logging.getLogger(__name__)


@dataclass(eq=False, slots=True)
class IdleWatch:
    """One idle reader's registration (:meth:`IdleRechecker.watch`).

    Attributes:
        run_id: the run's store key.
        after: the reader's last delivered cursor (None: nothing delivered yet).
        due: set by the re-checker when the reader must look at the store; ``woken`` is set
            with it.
        run: the run's status and durable end as the re-check read them, when ``due`` (None:
            the run is missing from the answer or the read failed; the reader reads it
            itself).
        woken: set when ``due`` (the reader may set it too: its broker receive ended).
        next_check: loop time of the watch's next re-check.
    """

    run_id: str
    after: Cursor | None
    next_check: float
    woken: LeanEvent = field(default_factory=LeanEvent)
    due: bool = False
    run: RunMark | None = None


def _moved(run: RunMark, after: Cursor | None) -> bool:
    """The reader at ``after`` has something to do: its run is terminal, or the run's durable
    end is past ``after``."""
    if run.is_terminal:
        return True
    end = run.last_cursor
    return end is not None and (after is None or end > after)


class IdleRechecker:
    """The batched idle re-check of one store (one per :class:`~gateway.runs.RunManager`).

    Args:
        store: the run store whose rows are read (:meth:`RunStore.get_run_marks`).
        interval: seconds between two re-checks of a watch (``reader_idle_recheck``).
        tick: seconds between the re-checker's looks at its watches (default a fifth of
            ``interval``).
        pumped: the run ids whose producer runs in this process and publishes to an
            in-process broker (module docstring): their watches are not read while in it.
            None: every watch is read.

    The loop runs while something is watched (started by the first :meth:`watch`, ended when
    the last watch leaves, or by :meth:`aclose`). ``reads`` counts the batched store reads (a
    figure for tests and benches).
    """

    def __init__(
        self,
        store: RunStore,
        *,
        interval: float,
        tick: float | None = None,
        pumped: Container[str] | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        self.store = store
        self.interval = interval
        self.tick = tick if tick is not None else interval / 5
        self.reads = 0
        self._pumped = pumped
        self._gone: set[str] = set()  # runs whose producer here ended since the last tick
        self._watches: dict[IdleWatch, None] = {}
        self._task: asyncio.Task[None] | None = None
        self._sleeping = False

    @property
    def watching(self) -> int:
        """Idle readers registered now."""
        return len(self._watches)

    def watch(self, run_id: str, after: Cursor | None) -> IdleWatch:
        """Register an idle reader of ``run_id`` at ``after``; it is re-checked at the next
        tick, then every ``interval``. Pair with :meth:`unwatch` (in a ``finally``)."""
        loop = asyncio.get_running_loop()
        watch = IdleWatch(run_id, after, loop.time())
        self._watches[watch] = None
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="idle-recheck")
        return watch

    def unwatch(self, watch: IdleWatch) -> None:
        """Leave (idempotent): the reader was woken, or goes away. The last one out stops
        the loop when it is between two ticks (a read in flight finishes first)."""
        self._watches.pop(watch, None)
        if not self._watches and self._sleeping and self._task is not None:
            self._task.cancel()
            self._task = None

    def producer_gone(self, run_id: str) -> None:
        """The run's producer here ended (however: its terminal event published, fenced,
        failed): its watches are read at the next tick, due or not. Cheap when nothing
        watches it (the usual end: the readers left on the terminal event)."""
        if self._pumped is not None and self._watches:
            self._gone.add(run_id)

    async def aclose(self) -> None:
        """Stop the loop (the watches stay registered, and are never woken)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task})

    async def _run(self) -> None:
        while self._watches:
            self._sleeping = True
            try:
                await asyncio.sleep(self.tick)
            finally:
                self._sleeping = False
            await self.check_due()

    async def check_due(self) -> int:
        """Re-check the watches due now or before the next tick (at most half an interval
        ahead), in one batched read; wake those with something to do. Returns how many were
        woken."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        horizon = now + min(self.tick, self.interval / 2)
        pumped, gone = self._pumped, self._gone
        if pumped is None:
            due = [watch for watch in self._watches if watch.next_check <= horizon]
        else:
            self._gone = set()
            due = []
            for watch in self._watches:
                if watch.run_id in gone:
                    due.append(watch)
                elif watch.next_check <= horizon:
                    if watch.run_id in pumped:  # its end comes through the broker
                        watch.next_check = now + self.interval
                    else:
                        due.append(watch)
        if not due:
            return 0
        rows: dict[str, RunMark] | None
        try:
            self.reads += 1
            rows = await self.store.get_run_marks({watch.run_id for watch in due})
        except Exception as exc:  # each reader reads the store itself (and meets the error)
            _log.warning("idle re-check failed (%r): %d readers read the store", exc, len(due))
            rows = None
        woken = 0
        for watch in due:
            if watch not in self._watches:
                continue  # the broker woke it meanwhile (or it went away): not touched
            run = rows.get(watch.run_id) if rows is not None else None
            if rows is not None and run is not None and not _moved(run, watch.after):
                watch.next_check = now + self.interval
                continue
            del self._watches[watch]
            watch.run = run
            watch.due = True
            watch.woken.set()
            woken += 1
        return woken
