"""The open tool-approval interrupts of a thread, for the request builders (issue 11 kind 7).

A ``resume[]`` entry names only its ``interruptId``; the tool call an approval is about is the
interrupt's ``toolCallId``, on the RUN_FINISHED ``outcome: {type: "interrupt", interrupts}``
of the run that raised it (AG-UI 1.0 ``RunFinishedInterruptOutcome``). :func:`open_interrupts`
reads it from the store, so an AI SDK upstream gets the approval on the right tool part
(``agui_codecs.protocols._resume``), and, in the same read, each interrupt's ``metadata``, from
which the OpenAI Responses builder rebuilds the ``mcp_approval_request`` item a stateless
request must hold (``agui_codecs.protocols.openai_responses._approvals``). Which interrupts may
be answered, and only once, is the store's claim (:meth:`gateway.store.RunStore.create_run`),
not this look-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ..store import Cursor, RunStore

__all__ = ["OpenInterrupts", "open_interrupts"]

_RUNS_LOOKED_AT: Final = 5
"""The thread's newest runs searched for the one that ended on an interrupt."""


@dataclass(frozen=True, slots=True)
class OpenInterrupts:
    """What the run that raised a thread's open interrupts recorded of them.

    Attributes:
        calls: ``{interruptId: toolCallId}`` (only interrupts carrying a ``toolCallId``):
            :attr:`agui_codecs.protocols.ClientRequest.interrupt_calls`.
        metadata: ``{interruptId: metadata}`` (only interrupts carrying a ``metadata`` object):
            :attr:`agui_codecs.protocols.ClientRequest.interrupt_metadata`.
    """

    calls: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)


async def open_interrupts(store: RunStore, thread_id: str) -> OpenInterrupts:
    """The interrupts the thread's newest run ending with RUN_FINISHED ``outcome: interrupt``
    raised (AG-UI 1.0 ``RunFinishedInterruptOutcome.interrupts``: ``id``, ``toolCallId?``,
    ``metadata?``), read once; empty when none of its :data:`_RUNS_LOOKED_AT` newest runs did.

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
        found = OpenInterrupts()
        for interrupt in outcome.get("interrupts") or []:
            if not isinstance(interrupt, dict):
                continue
            interrupt_id = interrupt.get("id")
            if not isinstance(interrupt_id, str):
                continue
            call_id, metadata = interrupt.get("toolCallId"), interrupt.get("metadata")
            if isinstance(call_id, str) and call_id:
                found.calls[interrupt_id] = call_id
            if isinstance(metadata, dict):
                found.metadata[interrupt_id] = metadata
        return found
    return OpenInterrupts()
