"""AG-UI ``RunAgentInput`` -> A2A ``message/stream`` JSON-RPC request (A2A specification v0.3).

An A2A agent keeps the conversation itself, per ``contextId``: the request carries only the new
turn, as one ``Message`` (section 6.4) in ``params.message`` of a JSON-RPC 2.0 request
(section 7.2)::

    {"jsonrpc": "2.0", "id": <runId>, "method": "message/stream",
     "params": {"message": {"kind": "message", "messageId", "role": "user",
                            "contextId": <threadId>, "taskId"?, "parts": [...]},
                "configuration"?, "metadata"?}}

=====================  =============================================================================
AG-UI                  A2A
=====================  =============================================================================
threadId               ``contextId`` (the agent's conversation)
runId                  the JSON-RPC ``id``
the user messages      their parts, in order: text -> ``{"kind": "text", "text"}``; image /
after the last         audio / video / document -> ``{"kind": "file", "file": {"bytes" | "uri",
agent turn             "mimeType", "name"?}}``; ``messageId`` is the last one's id
``resume`` entry       the continuation of an interrupted task (RUN_FINISHED ``interrupt`` from
(``resolved``)         ``input-required`` / ``auth-required``, whose id is the ``taskId``):
                       ``taskId`` = ``interruptId``, the ``payload`` first (a string as a text
                       part, anything else as ``{"kind": "data", "data"}``); ``cancelled``
                       entries start a new task instead
system, context,       not sent: an A2A agent has its own instructions and tools
tools, state
=====================  =============================================================================

Route ``params`` may set ``configuration`` (``acceptedOutputModes``, ``historyLength``, ...)
and ``metadata``; clients may add ``metadata`` keys through ``forwardedProps.metadata``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ag_ui.core import (
    ContentPart,
    DataSource,
    FileSource,
    Message,
    RunAgentInput,
    TextPart,
    UrlSource,
    UserMessage,
)

from ...errors import InvalidInputError
from .._request import ClientRequest, part_metadata

__all__ = ["METHOD", "build_request", "to_a2a"]

METHOD: Final = "message/stream"
"""The JSON-RPC method (A2A v0.3 section 7.2)."""


def _file(part: ContentPart) -> dict[str, Any]:
    source = getattr(part, "source", None)
    file: dict[str, Any] = {}
    if isinstance(source, DataSource):
        file["bytes"] = source.value
    elif isinstance(source, UrlSource | FileSource):
        file["uri"] = source.value
    mime = getattr(source, "mime_type", None)
    if mime:
        file["mimeType"] = mime
    name = part_metadata(part, "filename") or part_metadata(part, "title")
    if name:
        file["name"] = name
    return {"kind": "file", "file": file}


def _parts(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"kind": "text", "text": message.content}] if message.content else []
    out = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                out.append({"kind": "text", "text": part.text})
        else:
            out.append(_file(part))
    return out


def _new_turn(messages: list[Message]) -> list[UserMessage]:
    """The user messages after the last message of any other role (the turn to send)."""
    turn: list[UserMessage] = []
    for message in reversed(messages):
        if not isinstance(message, UserMessage):
            if message.role in ("system", "developer", "activity"):
                continue
            break
        turn.insert(0, message)
    return turn


def _payload_part(payload: Any) -> dict[str, Any] | None:
    if payload is None:
        return None
    if isinstance(payload, str):
        return {"kind": "text", "text": payload} if payload else None
    return {"kind": "data", "data": payload if isinstance(payload, dict) else {"value": payload}}


def to_a2a(run_input: RunAgentInput, *, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Build the ``message/stream`` request for ``run_input`` (see the module docstring).

    Raises:
        InvalidInputError: nothing to send: no user message after the last agent turn and no
            resolved ``resume`` entry (code ``INVALID_REQUEST``).
    """
    parts: list[dict[str, Any]] = []
    task_id: str | None = None
    for entry in run_input.resume or []:
        if entry.status == "resolved":
            task_id = task_id or entry.interrupt_id
            part = _payload_part(entry.payload)
            if part is not None:
                parts.append(part)
    turn = _new_turn(list(run_input.messages))
    for user in turn:
        parts.extend(_parts(user))
    if not parts:
        raise InvalidInputError(
            "nothing to send to the A2A agent: no user message after its last turn, and no "
            "resolved resume entry"
        )
    message_id = turn[-1].id if turn else f"{run_input.run_id}-resume"
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": message_id,
        "role": "user",
        "contextId": run_input.thread_id,
        "parts": parts,
    }
    if task_id:
        message["taskId"] = task_id
    call: dict[str, Any] = {"message": message}
    route = dict(params or {})
    if isinstance(route.get("configuration"), Mapping):
        call["configuration"] = dict(route["configuration"])
    metadata = dict(route["metadata"]) if isinstance(route.get("metadata"), Mapping) else {}
    forwarded = run_input.forwarded_props
    if isinstance(forwarded, Mapping) and isinstance(forwarded.get("metadata"), Mapping):
        metadata.update(forwarded["metadata"])
    if metadata:
        call["metadata"] = metadata
    return {"jsonrpc": "2.0", "id": run_input.run_id, "method": METHOD, "params": call}


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: :func:`to_a2a` of the request's ``RunAgentInput`` (an A2A
    route has no model).

    Raises:
        InvalidInputError: see :func:`to_a2a`.
    """
    return to_a2a(request.run_input, params=params)
