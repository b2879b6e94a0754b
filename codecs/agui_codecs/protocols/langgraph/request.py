"""AG-UI ``RunAgentInput`` -> LangGraph Platform ``POST /threads/{thread_id}/runs/stream`` body.

Follows the LangGraph Platform API reference (``RunCreateStateful``: ``assistant_id``,
``input``, ``command``, ``stream_mode``, ``stream_subgraphs``, ``if_not_exists``; the
langgraph-sdk 0.4 ``runs.stream`` payload). The thread keeps the conversation (its
checkpointer), so only the new turn is sent:

=====================  =============================================================================
AG-UI                  LangGraph
=====================  =============================================================================
route ``model``        ``assistant_id`` (an assistant id or a graph id)
threadId               the path's ``{thread_id}`` (a UUID as it is; any other id becomes its
                       UUIDv5, :func:`thread_uuid`); ``if_not_exists: "create"``
the messages after     ``input: {"messages": [...]}``, LangChain message dicts: user ->
the last assistant     ``{"role": "user", "content", "id"}`` (text, or content blocks ``text`` /
turn                   ``image_url``), tool -> ``{"role": "tool", "content", "tool_call_id",
                       "id"}`` (the answers to client tool calls)
``resume`` entries     ``command: {"resume": <payload>}`` (several: ``{"resume": {<interrupt
(``resolved``)         id>: <payload>}}``), no ``input``: the platform's ``Command`` answering
                       the graph's ``interrupt()``; ``cancelled`` entries answer nothing
system, context,       not sent: the graph holds its own prompt and tools
tools, state
=====================  =============================================================================

``stream_mode`` is ``["messages-tuple", "updates", "custom"]`` with ``stream_subgraphs: true``
unless the route's ``params`` say otherwise; other route ``params`` (``config``, ``context``,
``metadata``, ``multitask_strategy``, ``durability``, ...) are body keys as they are.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Final

from ag_ui.core import (
    DataSource,
    ImagePart,
    Message,
    RunAgentInput,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
)

from ...errors import InvalidInputError, RequestTranslationError
from .._request import ClientRequest, data_url, tool_result_text

__all__ = ["STREAM_MODE", "THREAD_NAMESPACE", "build_request", "thread_uuid", "to_langgraph"]

STREAM_MODE: Final = ("messages-tuple", "updates", "custom")
"""The stream modes asked for by default."""

THREAD_NAMESPACE: Final = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")
"""UUIDv5 namespace of AG-UI thread ids that are not UUIDs (RFC 4122's URL namespace)."""

_OURS: Final = frozenset({"assistant_id", "input", "command"})


def thread_uuid(thread_id: str) -> str:
    """The platform thread id of an AG-UI ``threadId``: itself when it is a UUID, else
    ``uuid5(THREAD_NAMESPACE, "agui:thread:" + thread_id)`` (the platform accepts UUIDs only;
    the same AG-UI thread always lands on the same platform thread)."""
    try:
        return str(uuid.UUID(thread_id))
    except ValueError:
        return str(uuid.uuid5(THREAD_NAMESPACE, f"agui:thread:{thread_id}"))


def _content(message: UserMessage, index: int) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(message.content):
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart) and isinstance(part.source, DataSource | UrlSource):
            url = (
                data_url(part.source) if isinstance(part.source, DataSource) else part.source.value
            )
            blocks.append({"type": "image_url", "image_url": {"url": url}})
        else:
            raise RequestTranslationError(
                f"messages[{index}].content[{n}]: a {part.type} part has no LangChain message "
                "block the gateway sends"
            )
    return blocks


def _new_turn(messages: list[Message]) -> list[tuple[int, Message]]:
    turn: list[tuple[int, Message]] = []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage | ToolMessage):
            turn.insert(0, (index, message))
        elif message.role in ("system", "developer", "activity", "reasoning"):
            continue
        else:
            break
    return turn


def to_langgraph(
    run_input: RunAgentInput, *, assistant_id: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Build the ``runs/stream`` body for ``run_input`` (see the module docstring).

    Raises:
        InvalidInputError: nothing to send: no new user or tool message and no resolved
            ``resume`` entry (``INVALID_REQUEST``).
        RequestTranslationError: a part with no LangChain block the gateway sends (audio,
            video, documents: ``UNSUPPORTED_CONTENT``).
    """
    body: dict[str, Any] = {"assistant_id": assistant_id}
    resolved = [e for e in run_input.resume or [] if e.status == "resolved"]
    if resolved:
        if len(resolved) == 1:
            body["command"] = {"resume": resolved[0].payload}
        else:
            body["command"] = {"resume": {e.interrupt_id: e.payload for e in resolved}}
    else:
        messages: list[dict[str, Any]] = []
        for index, message in _new_turn(list(run_input.messages)):
            if isinstance(message, UserMessage):
                item = {"role": "user", "content": _content(message, index), "id": message.id}
            else:
                assert isinstance(message, ToolMessage)
                item = {"role": "tool", "content": tool_result_text(message),
                        "tool_call_id": message.tool_call_id, "id": message.id}  # fmt: skip
                if message.error:
                    item["status"] = "error"
            messages.append(item)
        if not messages:
            raise InvalidInputError(
                "nothing to send to the graph: no user or tool message after its last turn, "
                "and no resolved resume entry"
            )
        body["input"] = {"messages": messages}
    body["stream_mode"] = list(STREAM_MODE)
    body["stream_subgraphs"] = True
    body["stream_resumable"] = False  # as langgraph-sdk sends it
    body["if_not_exists"] = "create"
    body.update({k: v for k, v in (params or {}).items() if k not in _OURS})
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: :func:`to_langgraph` with the route's ``model`` as the
    ``assistant_id``.

    Raises:
        InvalidInputError, RequestTranslationError: see :func:`to_langgraph`.
    """
    return to_langgraph(request.run_input, assistant_id=model, params=params)
