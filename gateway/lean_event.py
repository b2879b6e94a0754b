"""``asyncio.Event`` and ``asyncio.Queue`` with smaller per-object state, for the objects every
open stream holds (issue 13 item 5.4: 10,000 streams at <= 30 KiB each).

CPython 3.11-3.13's ``asyncio.Event.__init__`` gives every event a ``collections.deque`` of
waiters: about 760 bytes even when empty (the deque object and its first 64-slot block), against
56 for an empty ``list``. ``Event`` only appends a waiter, removes it and iterates over them
(``Lib/asyncio/locks.py``, ``Event.set`` / ``Event.wait``), which a ``list`` does the same, so
:class:`LeanEvent` is ``asyncio.Event`` with a list: same methods, same semantics. An event has
one or two waiters here (the pump's writer, a reader), where the list's O(n) ``remove`` costs
nothing. :class:`LeanQueue` is ``asyncio.Queue`` whose ``join()`` event (``_finished``, which
nothing here awaits) is a :class:`LeanEvent` and whose three deques (items, getters, putters:
``append``, ``popleft``, ``remove``, truth, ``len``) are lists with a ``popleft``.

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


class _ListDeque(list[Any]):
    """A ``list`` with the one ``deque`` method ``asyncio.Queue`` calls besides the list's
    (``popleft``: O(n), for queues of a few items and one or two waiters)."""

    __slots__ = ()

    def popleft(self) -> Any:
        return self.pop(0)


class LeanQueue(asyncio.Queue[Any]):
    """``asyncio.Queue`` whose ``join()`` event is a :class:`LeanEvent` and whose items,
    getters and putters are lists (:class:`_ListDeque`) rather than deques: about 2 KiB less
    per queue. ``maxsize`` as ``asyncio.Queue``'s: items at most, 0 for no bound; meant for
    small bounds (``get`` is O(items))."""

    def __init__(self, maxsize: int = 0) -> None:
        super().__init__(maxsize)
        finished = LeanEvent()
        finished.set()
        self._finished = finished
        self._getters: Any = _ListDeque()
        self._putters: Any = _ListDeque()

    def _init(self, maxsize: int) -> None:
        self._queue: Any = _ListDeque()
