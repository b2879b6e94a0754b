"""The cyclic garbage collector tuned for a process holding many open streams (issue 13 item 5).

Every open stream keeps a few hundred live objects (tasks, futures, the HTTP protocol's and the
upstream connection's state, the run's pump and reader). CPython's collector runs a young
collection every 700 net allocations and a full one whenever the objects that survived since
the last one reach a quarter of the long-lived ones; each full collection traverses every
tracked object, the interpreter's own (the imported modules, the app) included. With thousands
of streams opening at once, those traversals became a large part of the opening burst's CPU
(``bench/open_streams.py -n 3000``: the streams opened in about half the time with the tuning).

:func:`tune_gc` (called by the app's lifespan, :mod:`gateway.app`):

* :func:`gc.freeze` once per process, after a :func:`gc.collect`: what exists at start-up
  (modules, settings, routes, the app) moves to the permanent generation, which no collection
  traverses. Reference counting still frees those objects; only a cycle among them would stay.
* the young generation's threshold raised to ``young_threshold`` (the older generations'
  thresholds kept): fewer young collections, each of a larger batch, so short-lived request
  objects are mostly freed by reference counting before any collection sees them.

Sans I/O; no effect when ``young_threshold`` is 0 (``GATEWAY_GC_YOUNG_THRESHOLD=0``: the
interpreter's own settings, for an application embedding the gateway that tunes its own).
"""

from __future__ import annotations

import gc

__all__ = ["tune_gc"]

_frozen = False


def tune_gc(young_threshold: int) -> bool:
    """Freeze the start-up objects (first call only) and set the young generation's
    threshold to ``young_threshold`` allocations (>= 0; 0: leave the collector alone).

    Returns True when the collector was tuned. Raises ValueError for a negative threshold.
    """
    global _frozen
    if young_threshold < 0:
        raise ValueError("young_threshold must be >= 0")
    if young_threshold == 0:
        return False
    if not _frozen:
        gc.collect()
        gc.freeze()
        _frozen = True
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
    return True
