"""The open tool-approval interrupts of a thread, for the request builders (issue 11 kind 7).

A ``resume[]`` entry names only its ``interruptId``; the tool call an approval is about is the
interrupt's ``toolCallId``, on the RUN_FINISHED ``outcome: {type: "interrupt", interrupts}``
of the run that raised it (AG-UI 1.0 ``RunFinishedInterruptOutcome``). :func:`interrupt_calls`
reads it from the store, so an AI SDK upstream gets the approval on the right tool part
(``agui_codecs.protocols._resume``). Which interrupts may be answered, and only once, is the
store's claim (:meth:`gateway.store.RunStore.create_run`), not this look-up.
"""

from __future__ import annotations

from typing import Final

from ..store import Cursor, RunStore

__all__ = ["interrupt_calls"]

_RUNS_LOOKED_AT: Final = 5
"""The thread's newest runs searched for the one that ended on an interrupt."""


async def interrupt_calls(store: RunStore, thread_id: str) -> dict[str, str]:
    """``{interruptId: toolCallId}`` of the interrupts the thread's newest run ending with
    RUN_FINISHED ``outcome: interrupt`` raised (only those carrying a ``toolCallId``); ``{}``
    when none of its :data:`_RUNS_LOOKED_AT` newest runs did.

    Args:
        store: the run store.
        thread_id: the thread's store key (:mod:`gateway.tenancy`).
    """
    for run in await store.list_runs(thread_id, limit=_RUNS_LOOKED_AT):
        if run.last_seq == 0:
            continue
        after = Cursor(run.last_epoch, run.last_seq - 1) if run.last_seq > 1 else None
        last = await store.read_wire(run.id, after=after, limit=1)
        if not last or last[0].event.get("type") != "RUN_FINISHED":
            continue
        outcome = last[0].event.get("outcome")
        if not isinstance(outcome, dict) or outcome.get("type") != "interrupt":
            continue
        calls: dict[str, str] = {}
        for interrupt in outcome.get("interrupts") or []:
            if not isinstance(interrupt, dict):
                continue
            interrupt_id, call_id = interrupt.get("id"), interrupt.get("toolCallId")
            if isinstance(interrupt_id, str) and isinstance(call_id, str) and call_id:
                calls[interrupt_id] = call_id
        return calls
    return {}
