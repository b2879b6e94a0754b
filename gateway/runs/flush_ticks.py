"""Flush ticks: when the pumps of a process write their pending deltas (``docs/runs.md`` §2).

Every pump writes its pending deltas at the next *flush tick* after the first of them was
staged: a multiple of ``batch_interval`` on the event loop's clock (:func:`next_flush_tick`),
the same moments for every run of the process, so the flushes of all live runs reach the
store's group committer in the same loop iteration and commit as one transaction
(:mod:`gateway.store.group_commit`), and a delta still waits at most one interval before its
write begins (issue 3 §4).

:class:`FlushTicks` books those moments: one loop timer per tick, whatever the number of runs
waiting for it, each run's callback called from it (issue 13: loop callbacks per durable run;
before, every run slept on a timer of its own at the same moment, and a pump's flush task woke
once more, on an event, before it slept). A :class:`~gateway.runs.RunManager` holds one for
all its pumps; a pump made without one books on a :class:`FlushTicks` of its own.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

__all__ = ["FlushTicks", "next_flush_tick"]


def next_flush_tick(now: float, interval: float) -> float:
    """The first multiple of ``interval`` (seconds of the event loop's clock) after ``now``.

    Every pump of a process flushes its pending deltas at these ticks, not ``interval`` after
    its own first delta: the flushes of all its live runs then reach the store's group
    committer in the same loop iteration and commit as one transaction (``docs/runs.md`` §2,
    :mod:`gateway.store.group_commit`) instead of one each, and a delta still waits at most
    ``interval`` before its write begins (issue 3 §4; issue 13: CPU per durable stream).
    """
    tick = (math.floor(now / interval) + 1) * interval
    return tick if tick > now else tick + interval  # a product rounded down to ``now``


class FlushTicks:
    """The flush ticks booked on each event loop: one timer per (loop, tick), however many
    callbacks wait for that tick.

    A callback is called once, from the loop's timer at its tick (a plain function: it only
    wakes whoever writes, it does no I/O). Nothing is cancelled: a callback of a run that
    ended meanwhile is called all the same and must do nothing then.
    """

    def __init__(self) -> None:
        self._due: dict[tuple[asyncio.AbstractEventLoop, float], list[Callable[[], None]]] = {}

    def book(
        self, loop: asyncio.AbstractEventLoop, interval: float, callback: Callable[[], None]
    ) -> float:
        """Call ``callback`` at the next flush tick of ``interval`` seconds after
        ``loop.time()`` (:func:`next_flush_tick`); returns that tick (loop time)."""
        tick = next_flush_tick(loop.time(), interval)
        key = (loop, tick)
        waiting = self._due.get(key)
        if waiting is None:
            waiting = self._due[key] = []
            loop.call_at(tick, self._fire, key)
        waiting.append(callback)
        return tick

    def _fire(self, key: tuple[asyncio.AbstractEventLoop, float]) -> None:
        for callback in self._due.pop(key, ()):
            callback()

    def __len__(self) -> int:
        """Ticks booked and not come yet (all loops)."""
        return len(self._due)
