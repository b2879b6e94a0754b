"""A decoded run as the gateway's pump stores it (``gateway/runs/pump.py``), without the store.

The pump passes every event through :class:`agui_codecs.core.StoreGuard` and stops at the
first terminal event it lets out; an upstream that ends without one is closed with
``RunFold.closing_events`` and RUN_ERROR ``UPSTREAM_TRUNCATED`` (through the guard as well).
The fuzz hunt (``tests/fuzz/run.py``) and its short profile check this stream with the kit,
beside the decoder's raw output.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agui_codecs.core import RunFold, StoreGuard

__all__ = ["TRUNCATED_MESSAGE", "stored_run"]

TRUNCATED_MESSAGE = "upstream stream ended without a terminal event"
"""The pump's RUN_ERROR message for an upstream without a terminal event."""


def stored_run(
    events: Iterable[dict[str, Any]], *, thread_id: str = "thread-1", run_id: str = "run-1"
) -> list[dict[str, Any]]:
    """The wire events the pump would store for the decoded wire ``events``."""
    guard = StoreGuard(thread_id=thread_id, run_id=run_id)
    fold = RunFold()
    stored: list[dict[str, Any]] = []
    for event in events:
        out = guard.push(event)
        fold.apply_all(out)
        stored += out
        if guard.ended:
            return stored
    error = {"type": "RUN_ERROR", "message": TRUNCATED_MESSAGE, "code": "UPSTREAM_TRUNCATED"}
    for event in (*fold.closing_events(), error):
        stored += guard.push(event)
    return stored
