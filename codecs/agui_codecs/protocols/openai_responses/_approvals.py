"""Answered MCP approvals as OpenAI Responses input items, for a stateless request.

Part of :mod:`agui_codecs.protocols.openai_responses.request` (issue 11 kind 7). The gateway
sends Responses requests statelessly (``store: false``, no ``previous_response_id``), so an
``mcp_approval_response`` can only be resolved against the ``mcp_approval_request`` item it
answers when that item is in the same ``input``. The input item is ``{"type":
"mcp_approval_request", "id", "server_label", "name", "arguments"}``, every field required
(API reference, "Create a model response", ``input`` -> "MCP approval request";
``openai`` 2.54.0 ``types/responses/response_input_item_param.py`` ``McpApprovalRequest``);
the answer is ``{"type": "mcp_approval_response", "approval_request_id", "approve",
"reason"?}`` ("MCP approval response").

The request item is rebuilt from the interrupt's ``metadata`` the decoder recorded
(``{type: "mcp_approval_request", itemId, name, serverLabel, arguments}``,
:meth:`~agui_codecs.protocols.openai_responses._tools.ToolCalls._approval`), which the
gateway reads from the run store (:attr:`~agui_codecs.protocols.ClientRequest.interrupt_metadata`).
Where the answered call (``mcp.<name>``: the answer's tool call, or the call named by the
interrupt id) is in the history, the item takes its place; else it goes just before its
response. Without that metadata (or with part of it, as an interrupt recorded before it was
kept) nothing is rebuilt: the call is left out (it is no ``function_call``) and only the
response is sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._resume import Answer

__all__ = ["APPROVAL_REQUEST", "Approvals", "approval_request", "approval_response"]

APPROVAL_REQUEST: Final = "mcp_approval_request"
"""The item type, also the interrupt's ``metadata.type`` (the decoder's)."""


def approval_request(
    interrupt_id: str, metadata: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The ``mcp_approval_request`` input item an interrupt's ``metadata`` rebuilds, or ``None``.

    Args:
        interrupt_id: the interrupt's id (the item id when ``metadata.itemId`` is absent).
        metadata: the interrupt's ``metadata``: ``type`` must be ``mcp_approval_request`` and
            ``serverLabel``, ``name``, ``arguments`` (the JSON text) strings; ``itemId`` a
            string when given.

    Returns:
        ``{"type", "id", "server_label", "name", "arguments"}``, or ``None`` when the metadata
        is absent or lacks a field (nothing to rebuild).
    """
    if not isinstance(metadata, Mapping) or metadata.get("type") != APPROVAL_REQUEST:
        return None
    label, name, arguments = (metadata.get(k) for k in ("serverLabel", "name", "arguments"))
    item_id = metadata.get("itemId", interrupt_id)
    fields = (label, name, arguments, item_id)
    if not all(isinstance(f, str) for f in fields) or not item_id:
        return None
    return {
        "type": APPROVAL_REQUEST,
        "id": item_id,
        "server_label": label,
        "name": name,
        "arguments": arguments,
    }


def approval_response(answer: Answer, request_id: str | None = None) -> dict[str, Any]:
    """The ``mcp_approval_response`` input item of ``answer``.

    Args:
        answer: the ``resume[]`` entry read as an approval answer.
        request_id: the rebuilt request item's ``id`` (the upstream's item id), else the
            interrupt id.
    """
    item: dict[str, Any] = {
        "type": "mcp_approval_response",
        "approval_request_id": request_id or answer.interrupt_id,
        "approve": answer.approved,
    }
    if answer.reason:
        item["reason"] = answer.reason
    return item


class Approvals:
    """The answers of one request and the request items they rebuild.

    :meth:`call_item` is asked for each ``function_call`` of the history, in order;
    :meth:`tail` then gives what follows the history: each answer's request item not placed
    yet, then its response.
    """

    __slots__ = ("_answers", "_by_call", "_placed", "_requests")

    def __init__(self, answers: Sequence[Answer], metadata: Mapping[str, Mapping[str, Any]]):
        self._answers = answers
        self._requests: dict[str, dict[str, Any]] = {}
        self._by_call: dict[str, str] = {}  # call id -> interrupt id (answered approvals)
        self._placed: set[str] = set()
        for answer in answers:
            self._by_call.setdefault(answer.interrupt_id, answer.interrupt_id)
            if answer.tool_call_id:  # the call's AG-UI id (derived when the thread reused it)
                self._by_call[answer.tool_call_id] = answer.interrupt_id
            item = approval_request(answer.interrupt_id, metadata.get(answer.interrupt_id))
            if item is not None:
                self._requests[answer.interrupt_id] = item

    def answers_call(self, call_id: str) -> bool:
        """True when the history call ``call_id`` is the call of an answered approval."""
        return call_id in self._by_call

    def call_item(self, call: dict[str, Any]) -> dict[str, Any] | None:
        """What a history ``function_call`` item becomes: itself when it answers nothing; the
        rebuilt request item in its place (once); ``None`` (left out) for the call of an
        answered approval with nothing rebuilt, it being no ``function_call``."""
        interrupt_id = self._by_call.get(call.get("call_id", ""))
        if interrupt_id is None:
            return call
        item = self._requests.get(interrupt_id)
        if item is None or interrupt_id in self._placed:
            return None
        self._placed.add(interrupt_id)
        return item

    def tail(self) -> list[dict[str, Any]]:
        """The items after the history: for each answer, its request item when rebuilt and
        not placed in the history, then its ``mcp_approval_response``."""
        items: list[dict[str, Any]] = []
        for answer in self._answers:
            request = self._requests.get(answer.interrupt_id)
            if request is not None and answer.interrupt_id not in self._placed:
                items.append(request)
            items.append(approval_response(answer, request["id"] if request else None))
        return items
