"""``asyncio.Event`` and ``asyncio.Queue`` with smaller per-object state, for the objects every
open stream holds (issue 13 item 5.4: 10,000 streams at <= 30 KiB each).

CPython 3.11-3.13's ``asyncio.Event.__init__`` gives every event a ``collections.deque`` of
waiters: about 760 bytes even when empty (the deque object and its first 64-slot block), against
56 for an empty ``list``. ``Event`` only appends a waiter, removes it and iterates over them
(``Lib/asyncio/locks.py``, ``Event.set`` / ``Event.wait``), which a ``list`` does the same, so
:class:`LeanEvent` is ``asyncio.Event`` with a list: same methods, same semantics. An event has
one or two waiters here (the pump's writer, a reader), where the list's O(n) ``remove`` costs
nothing. :class:`LeanQueue` is ``asyncio.Queue`` whose ``join()`` event (``_finished``, which
nothing here awaits) is a :class:`LeanEvent`.

Source: CPython ``Lib/asyncio/locks.py`` and ``Lib/asyncio/queues.py`` (3.11-3.13).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["LeanEvent", "LeanQueue"]


class LeanEvent(asyncio.Event):
    """``asyncio.Event`` whose waiters are a ``list`` (about 700 bytes less per event)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiters: Any = []


class LeanQueue(asyncio.Queue[Any]):
    """``asyncio.Queue`` whose ``join()`` event is a :class:`LeanEvent` (``maxsize`` as
    ``asyncio.Queue``'s: items at most, 0 for no bound)."""

    def __init__(self, maxsize: int = 0) -> None:
        super().__init__(maxsize)
        finished = LeanEvent()
        finished.set()
        self._finished = finished
