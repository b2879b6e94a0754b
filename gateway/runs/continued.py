"""The tool calls an AI SDK continuation run continues, for its resumes (issue 11 kind 4).

The AI SDK encoder sends a TOOL_CALL_RESULT of a call its stream did not start only when the
call is one of ``continues``: the tool parts of the assistant message the continuation
continues (``continued_tool_call_ids`` of its chat request; ``ai`` 7.0.173
``process-ui-message-stream.ts`` ``getToolInvocation`` throws for a call the message lacks).
Migration 0005 records them (``runs.continues``); a run written before it (NULL, read as
``()``) would replay without those results.

:func:`continued_calls` finds them for such a run in the thread's earlier runs. The tool parts
of a ``UIMessage`` come from the ``tool-input-*`` chunks of the streams that carried its id as
``start.messageId``, and the encoder writes one for every TOOL_CALL_START. A continuation's
message id is the id of the message it continues (``response_message_id``), which the earlier
run that streamed that message carried as ``start.messageId``: its recorded ``message_id``,
else its RUN_STARTED ``metadata.messageId``, else its runId (the encoder's fallbacks). So the
calls continued are the TOOL_CALL_START ``toolCallId`` of the thread's earlier runs streamed
under the run's message id. That is sound where a result of the run's own events alone is not:
a result of a call no run of that message started (a stray result, or a call of another
message) stays out, as it did from the POST. A fresh message has a new id (``msg_<uuid>``, or
none: the upstream's) that no earlier run carried, so nothing is found.

What it cannot see: earlier runs past the :data:`RUNS_LOOKED_AT` newest of the thread, or
purged; on a route whose upstream is not an AI SDK backend, a message first streamed by
another route's AI SDK backend (its id is read only for ``upstream_ids``); parts a client
added or removed by hand. A result of such a call is then not sent, as before.
"""

from __future__ import annotations

from typing import Final

from ..store import RunRecord, RunStore

__all__ = ["RUNS_LOOKED_AT", "continued_calls"]

RUNS_LOOKED_AT: Final = 20
"""The thread's newest runs searched for the streams of the continued message."""

_PAGE: Final = 500


async def _streamed_message_id(store: RunStore, run: RunRecord, *, upstream_ids: bool) -> str:
    """The ``start.messageId`` the AI SDK encoder gave ``run``'s stream (without
    ``upstream_ids``, a run without a recorded one is taken for its runId, unread)."""
    if run.message_id is not None:
        return run.message_id
    if upstream_ids and run.last_seq > 0:
        first = await store.read_wire(run.id, limit=1)
        if first and first[0].event.get("type") == "RUN_STARTED":
            metadata = first[0].event.get("metadata")
            if isinstance(metadata, dict) and isinstance(metadata.get("messageId"), str):
                return str(metadata["messageId"])
    return run.public_run_id


async def _started_calls(store: RunStore, run: RunRecord, into: dict[str, None]) -> None:
    after = None
    while True:
        page = await store.read_wire(run.id, after=after, limit=_PAGE)
        for stored in page:
            event = stored.event
            if event.get("type") == "TOOL_CALL_START" and isinstance(event.get("toolCallId"), str):
                into.setdefault(event["toolCallId"], None)
        if len(page) < _PAGE:
            return
        after = page[-1].cursor


async def continued_calls(
    store: RunStore, run: RunRecord, *, upstream_ids: bool = True
) -> tuple[str, ...]:
    """The ``toolCallId`` of the calls the AI SDK continuation ``run`` continues: its recorded
    :attr:`~gateway.store.RunRecord.continues`, else (none recorded: a run written before
    migration 0005, or a fresh message) the calls the thread's earlier runs streamed under
    ``run``'s message id started (module docstring), in the order they started; ``()`` for a
    run without a recorded message id.

    Args:
        store: the run store.
        run: the run a resume or replay encodes.
        upstream_ids: read the RUN_STARTED ``metadata.messageId`` of the earlier runs without
            a recorded messageId (one read each): what the route's own fresh runs have when
            its upstream is an AI SDK backend (``protocol = "ai-sdk"``; the gateway records
            the id it picks for the other routes).
    """
    if run.continues:
        return run.continues
    if run.message_id is None:  # a continuation always records the message it continues
        return ()
    runs = await store.list_runs(run.thread_id, limit=RUNS_LOOKED_AT + 1)
    ids = [r.id for r in runs]
    if run.id in ids:
        earlier = runs[ids.index(run.id) + 1 :]
    else:
        earlier = [r for r in runs if (r.created_at, r.id) < (run.created_at, run.id)]
    calls: dict[str, None] = {}
    for other in reversed(earlier[:RUNS_LOOKED_AT]):  # oldest first: the parts' order
        streamed = await _streamed_message_id(store, other, upstream_ids=upstream_ids)
        if streamed == run.message_id:
            await _started_calls(store, other, calls)
    return tuple(calls)
