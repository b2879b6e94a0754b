"""The AI SDK turn that raises tool approvals, for tests that answer them.

An answer (an ai v6/v7 tool part ``approval-responded``, a ``resume[]`` entry) is accepted only
for an interrupt the thread raised (``docs/runs.md`` §7), so a test posting one first plays the
turn that asked: an AI SDK backend's ``streamText`` chunks for tool calls needing approval
(``ai`` 7.0.173 ``ui-message-chunks.ts``: ``tool-input-start``, ``tool-input-available``,
``tool-approval-request`` {approvalId, toolCallId}, ``finish`` ``tool-calls``), which the
gateway stores as RUN_FINISHED ``outcome: interrupt``; or stores such a run itself
(:func:`store_interrupt_run`: RUN_STARTED, RUN_FINISHED with the interrupts, as the pump
stores a run whose upstream asked).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gateway.store import NewEvent, RunFinal, RunStore
from gateway.tenancy import run_key, thread_key

__all__ = ["approval_sse", "approval_turn", "store_interrupt_run"]


def approval_turn(
    message_id: str, calls: Sequence[tuple[str, str, Any]], *, approval_prefix: str = "ap-"
) -> list[dict[str, Any]]:
    """The chunks of a turn asking to approve each ``(toolCallId, toolName, input)`` of
    ``calls``; approval ids are ``approval_prefix + toolCallId``."""
    chunks: list[dict[str, Any]] = [
        {"type": "start", "messageId": message_id},
        {"type": "start-step"},
    ]
    for call_id, name, value in calls:
        chunks += [
            {"type": "tool-input-start", "toolCallId": call_id, "toolName": name},
            {
                "type": "tool-input-available",
                "toolCallId": call_id,
                "toolName": name,
                "input": value,
            },
        ]
    for call_id, _name, _value in calls:
        approval = f"{approval_prefix}{call_id}"
        chunks.append(
            {"type": "tool-approval-request", "approvalId": approval, "toolCallId": call_id}
        )
    chunks += [{"type": "finish-step"}, {"type": "finish", "finishReason": "tool-calls"}]
    return chunks


def approval_sse(chunks: Sequence[dict[str, Any]]) -> list[bytes]:
    """``chunks`` as SSE frames, with the closing ``[DONE]``."""
    return [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [b"data: [DONE]\n\n"]


async def store_interrupt_run(
    store: RunStore,
    *,
    thread_id: str,
    run_id: str,
    interrupts: Sequence[tuple[str, str | None]],
    answers: Sequence[str] = (),
) -> None:
    """Store run ``run_id`` of thread ``thread_id`` (AG-UI ids, no tenancy) ending with RUN_FINISHED
    ``outcome: {type: "interrupt", interrupts}``, one ``{id, reason: "tool_call",
    toolCallId?}`` per ``(interruptId, toolCallId)`` (``success`` when there is none), having
    claimed ``answers`` (interrupt ids it answered)."""
    key = run_key(None, thread_id, run_id)
    started = {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}
    outcome: dict[str, Any] = {"type": "success"}
    if interrupts:
        raised = [
            {"id": i, "reason": "tool_call", **({"toolCallId": c} if c else {})}
            for i, c in interrupts
        ]
        outcome = {"type": "interrupt", "interrupts": raised}
    run = await store.create_run(
        run_id=key,
        thread_id=thread_key(None, thread_id),
        owner="test-seed",
        answers=[(i, "resolved") for i in answers],
        events=[NewEvent(1, started)],
    )
    finished = {**started, "type": "RUN_FINISHED", "outcome": outcome}
    await store.append_events(key, run.epoch, [NewEvent(2, finished)], final=RunFinal("completed"))
