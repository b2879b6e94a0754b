"""AG-UI 1.0 ``RunAgentInput.resume[]`` answers to tool approvals, as the request builders send
them upstream (issue 11 kind 7; ``docs/protocols.md`` §6).

An entry (``{interruptId, status: "resolved" | "cancelled", payload?}``, ``@ag-ui/core`` 1.0
``ResumeEntry``) answers a tool-approval interrupt (``reason: "tool_approval"``, raised for an AI
SDK ``tool-approval-request`` or a Responses ``mcp_approval_request``). Its ``payload`` reads:

=========================================  ======================================================
entry                                      answer
=========================================  ======================================================
``cancelled`` (any payload)                denied; ``payload.reason`` (a string) kept
``resolved``, payload absent / ``true``    approved
``resolved``, payload ``false``            denied
``resolved``, payload ``{approved?,        ``approved`` (default true; a boolean), ``reason``
reason?, result?, toolCallId?}``           (a string), ``result`` (the tool's result, any JSON),
                                           ``toolCallId`` (the call, when the gateway does not
                                           know it)
anything else                              refused: ``INVALID_REQUEST``
=========================================  ======================================================

The tool call an answer is about is, in order: ``payload.toolCallId``; the interrupt's
``toolCallId`` the gateway recorded (:attr:`ClientRequest.interrupt_calls`); the interrupt id
itself when it names a tool call of ``messages`` (a Responses approval's id is its call's id).

Providers with tool approvals get the answer itself (the AI SDK tool part ``approval``, the
Responses ``mcp_approval_response``). The others (OpenAI Chat Completions, Anthropic, Gemini,
Bedrock Converse) have none, and the gateway does not execute tools, so
:func:`with_tool_results` turns each answer into the tool result the provider does know: an
approval into the result the payload gives (``payload.result``; none is ``INVALID_TOOL_RESULT``),
a denial into an error result saying so (the reason, else :data:`DENIED`, the text the AI SDK
providers send for an ``execution-denied`` tool output: ``@ai-sdk/openai``
``convert-to-openai-chat-messages.ts``, ``output.reason ?? 'Tool call execution denied.'``). A
call that already has its result in ``messages`` keeps it (the answer adds nothing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ag_ui.core import AssistantMessage, Message, ResumeEntry, RunAgentInput, ToolMessage

from ..errors import InvalidInputError, RequestTranslationError
from ._request import ClientRequest

__all__ = ["DENIED", "NO_RESULT", "Answer", "answers", "with_tool_results"]

DENIED: Final = "Tool call execution denied."
"""The tool result text of a denial without a reason (the AI SDK providers' wording)."""

NO_RESULT: Final = object()
""":attr:`Answer.result` when the payload gave none."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One ``resume[]`` entry read as a tool approval answer.

    Attributes:
        interrupt_id: the entry's ``interruptId`` (the AI SDK ``approvalId``, the Responses
            ``approval_request_id``).
        approved: whether the call may run.
        reason: the answer's reason, if any.
        result: ``payload.result`` (any JSON), or :data:`NO_RESULT`.
        tool_call_id: the call answered, when known (module docstring).
    """

    interrupt_id: str
    approved: bool
    reason: str | None
    result: Any
    tool_call_id: str | None


def _call_ids(messages: Sequence[Message]) -> set[str]:
    return {
        call.id
        for message in messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or []
    }


def _answer(entry: ResumeEntry, index: int, known: dict[str, str], calls: set[str]) -> Answer:
    where = f"resume[{index}] (interrupt {entry.interrupt_id!r})"
    payload = entry.payload
    approved, reason, result, call_id = entry.status == "resolved", None, NO_RESULT, None
    if isinstance(payload, bool):
        approved = approved and payload
    elif isinstance(payload, dict):
        flag = payload.get("approved", True)
        if not isinstance(flag, bool):
            raise InvalidInputError(f"{where}: payload.approved must be a boolean")
        approved = approved and flag
        reason = payload.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidInputError(f"{where}: payload.reason must be a string")
        result = payload.get("result", NO_RESULT)
        call_id = payload.get("toolCallId")
        if call_id is not None and (not isinstance(call_id, str) or not call_id):
            raise InvalidInputError(f"{where}: payload.toolCallId must be a non-empty string")
    elif payload is not None and entry.status == "resolved":
        raise InvalidInputError(
            f"{where}: a tool approval's payload is a boolean or an object "
            "{approved?, reason?, result?, toolCallId?}"
        )
    if call_id is None:
        call_id = known.get(entry.interrupt_id)
    if call_id is None and entry.interrupt_id in calls:
        call_id = entry.interrupt_id
    return Answer(entry.interrupt_id, approved, reason or None, result, call_id)


def answers(request: ClientRequest) -> list[Answer]:
    """The request's ``resume[]`` entries as tool approval answers, in order.

    Raises:
        InvalidInputError: an entry's payload is not an answer (module docstring), or two
            entries answer one interrupt (``INVALID_REQUEST``).
    """
    run_input = request.run_input
    calls = _call_ids(run_input.messages)
    known = dict(request.interrupt_calls)
    out: list[Answer] = []
    seen: set[str] = set()
    for index, entry in enumerate(run_input.resume or []):
        if entry.interrupt_id in seen:
            raise InvalidInputError(
                f"resume[{index}]: interrupt {entry.interrupt_id!r} is answered twice"
            )
        seen.add(entry.interrupt_id)
        out.append(_answer(entry, index, known, calls))
    return out


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def with_tool_results(request: ClientRequest) -> RunAgentInput:
    """The request's ``RunAgentInput`` with each answer as its call's tool result (for the
    providers without tool approvals, module docstring); the input itself when it has no
    ``resume[]`` entry. The results are appended: the builders move every result directly
    after its call (:func:`~agui_codecs.protocols._request.results_after_calls`).

    Raises:
        InvalidInputError: see :func:`answers`; an answer whose tool call is not in
            ``messages`` (``INVALID_REQUEST``: the provider has no other way to hear it).
        RequestTranslationError: an approval without ``payload.result``
            (``INVALID_TOOL_RESULT``: the gateway does not execute tools).
    """
    run_input = request.run_input
    if not run_input.resume:
        return run_input
    calls = _call_ids(run_input.messages)
    answered = {m.tool_call_id for m in run_input.messages if isinstance(m, ToolMessage)}
    results: list[Message] = []
    for answer in answers(request):
        call_id = answer.tool_call_id
        if call_id is None or call_id not in calls:
            raise InvalidInputError(
                f"resume entry for interrupt {answer.interrupt_id!r}: its tool call is not "
                "in messages (give payload.toolCallId)"
            )
        if call_id in answered:
            continue
        answered.add(call_id)
        result_id = f"{call_id}-result"
        if not answer.approved:
            text = answer.reason or DENIED
            results.append(
                ToolMessage(id=result_id, tool_call_id=call_id, content=text, error=text)
            )
        elif answer.result is NO_RESULT:
            raise RequestTranslationError(
                f"resume entry for interrupt {answer.interrupt_id!r} approves tool call "
                f"{call_id!r} without payload.result: this provider has no tool approval and "
                "the gateway does not execute tools",
                code="INVALID_TOOL_RESULT",
            )
        else:
            results.append(
                ToolMessage(id=result_id, tool_call_id=call_id, content=_result_text(answer.result))
            )
    if not results:
        return run_input
    return run_input.model_copy(update={"messages": [*run_input.messages, *results]})
