"""Request bodies for an ``ai-sdk`` upstream: an existing AI SDK backend (e.g. a Next.js
``/api/chat`` route returning ``toUIMessageStreamResponse()``).

The body is the chat request ``{id, messages: UIMessage[], trigger, ...}`` (``ai`` 7.0.173
``src/ui/http-chat-transport.ts``). A request that came in on the AI SDK endpoint is forwarded
byte for byte; a ``RunAgentInput`` is converted by :func:`to_ui_messages` (the inverse of
:func:`agui_codecs.protocols.ai_sdk.chat_request.to_run_agent_input`), its ``forwardedProps``
object spread into the body and non-empty ``tools`` / ``context`` sent in their AG-UI shapes
under those keys (the same convention the gateway's own AI SDK endpoint reads).

``to_ui_messages`` follows the ``UIMessage`` shape of ``ai`` 7.0.173 (``src/ui/ui-messages.ts``;
the same in v5 and v6):

=====================  =============================================================================
AG-UI                  UIMessage
=====================  =============================================================================
system / developer     ``{role: "system", parts: [{type: "text", text}]}``
user                   ``{role: "user", parts}``: text -> ``{type: "text"}``; media ->
                       ``{type: "file", mediaType, url (data URL or URL), filename?}``
assistant, reasoning,  one ``{role: "assistant"}`` message per run of consecutive such messages
 tool                  (id of the first): ``step-start`` at the start of each step (the first,
                       and after tool results); reasoning -> ``{type: "reasoning", text,
                       providerMetadata?}``; text -> ``{type: "text"}``; each tool call ->
                       ``{type: "tool-<name>", toolCallId, state: "input-available", input}``,
                       turned into ``output-available`` {output} or ``output-error``
                       {errorText} by its tool result; a tool result whose call is not in
                       that turn is dropped (it has no UIMessage form)
activity               not sent
=====================  =============================================================================

``resume[]`` entries (AG-UI 1.0) answer tool approvals (the AI SDK ``tool-approval-request``
chunk, an interrupt ``{id: approvalId, reason: "tool_approval", toolCallId}``): the answered
call's tool part becomes ``{state: "approval-responded", approval: {id: <interruptId>,
approved, reason?}}``, what ``ai`` 7.0.173 ``addToolApprovalResponse`` leaves on the part before
the chat resubmits (``src/ui/ui-messages.ts``, ``ToolUIPart`` state ``approval-responded``; the
same in v6), so the backend's ``streamText`` runs or denies the call. The payload is read by
:mod:`agui_codecs.protocols._resume`; a part that already has its output keeps it.

``providerMetadata`` (``{<provider>: {<field>: value}}``) is set when the encrypted value's
``metadata`` names its provider and field (ARCHITECTURE.md); without that provenance the AI SDK
provider could not read it back, so it is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    ContentPart,
    DataSource,
    DeveloperMessage,
    FileSource,
    ReasoningMessage,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)

from ...errors import InvalidInputError, RequestTranslationError
from .._request import ClientRequest, data_url, json_or_text, part_metadata, tool_result_text
from .._resume import Answer, answers

__all__ = ["ai_sdk_body", "build_request", "respond_approvals", "to_ui_messages"]

_WILDCARD_TYPES: Final = {"image": "image/*", "audio": "audio/*", "video": "video/*"}
_CHAT_KEYS: Final = frozenset({"id", "messages", "trigger", "messageId", "tools", "context"})


def ai_sdk_body(request: ClientRequest) -> dict[str, Any] | bytes:
    """The body for an ``ai-sdk`` upstream: the client's bytes when it spoke the AI SDK chat
    protocol, else a chat request built from the ``RunAgentInput``.

    Raises:
        RequestTranslationError: a provider file handle in a user message (``UNSUPPORTED_CONTENT``:
            a ``UIMessage`` file part needs a URL).
        InvalidInputError: a ``resume[]`` entry that is no answer, or whose tool call has no
            tool part (``INVALID_REQUEST``).
    """
    if request.wire == "ai-sdk" and request.raw is not None:
        return request.raw
    run_input = request.run_input
    body: dict[str, Any] = {}
    if isinstance(run_input.forwarded_props, Mapping):
        body.update({k: v for k, v in run_input.forwarded_props.items() if k not in _CHAT_KEYS})
    body["id"] = run_input.thread_id
    body["messages"] = to_ui_messages(run_input)
    respond_approvals(body["messages"], answers(request))
    body["trigger"] = "submit-message"
    if run_input.tools:
        body["tools"] = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in run_input.tools
        ]
    if run_input.context:
        body["context"] = [c.model_dump(mode="json", by_alias=True) for c in run_input.context]
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any] | bytes:
    """The ``ai-sdk`` spec's request builder: :func:`ai_sdk_body` (a passthrough protocol: the
    backend picks its model, so ``model`` and ``params`` are not used).

    Raises:
        RequestTranslationError: see :func:`ai_sdk_body`.
    """
    return ai_sdk_body(request)


def respond_approvals(messages: list[dict[str, Any]], answered: list[Answer]) -> None:
    """Set each answered call's tool part of ``messages`` (UIMessages) to
    ``approval-responded`` with ``approval: {id, approved, reason?}`` (module docstring).

    Raises:
        InvalidInputError: an answer whose tool call has no tool part (``INVALID_REQUEST``).
    """
    parts = {
        part["toolCallId"]: part
        for message in messages
        for part in message["parts"]
        if "toolCallId" in part
    }
    for answer in answered:
        part = parts.get(answer.tool_call_id or "")
        if part is None:
            raise InvalidInputError(
                f"resume entry for interrupt {answer.interrupt_id!r}: its tool call is not in "
                "messages (give payload.toolCallId)"
            )
        if part["state"] != "input-available":
            continue  # the call has its output: the answer adds nothing
        approval: dict[str, Any] = {"id": answer.interrupt_id, "approved": answer.approved}
        if answer.reason:
            approval["reason"] = answer.reason
        part.update(state="approval-responded", approval=approval)


def _provider_metadata(holder: Any) -> dict[str, Any] | None:
    value = getattr(holder, "encrypted_value", None)
    meta = getattr(holder, "metadata", None)
    if not value or not isinstance(meta, Mapping):
        return None
    provider, field = meta.get("provider"), meta.get("field")
    if isinstance(provider, str) and provider and isinstance(field, str) and field:
        return {provider: {field: value}}
    return None


def _file_part(part: ContentPart, where: str) -> dict[str, Any]:
    source = part.source  # type: ignore[union-attr]
    if isinstance(source, FileSource):
        raise RequestTranslationError(
            f"{where}: a provider file handle has no AI SDK UIMessage form"
        )
    if isinstance(source, DataSource):
        url, mime = data_url(source), source.mime_type
    else:
        url = source.value
        mime = source.mime_type or _WILDCARD_TYPES.get(part.type, "application/octet-stream")
    out: dict[str, Any] = {"type": "file", "mediaType": mime, "url": url}
    filename = part_metadata(part, "filename")
    if filename:
        out["filename"] = filename
    return out


def _user(message: UserMessage, index: int) -> dict[str, Any]:
    if isinstance(message.content, str):
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    else:
        parts = [
            {"type": "text", "text": p.text}
            if isinstance(p, TextPart)
            else _file_part(p, f"messages[{index}].content[{i}]")
            for i, p in enumerate(message.content)
        ]
    return {"id": message.id, "role": "user", "parts": parts}


class _AssistantTurn:
    """Collects consecutive assistant / reasoning / tool messages into one UIMessage."""

    def __init__(self, message_id: str) -> None:
        self.message: dict[str, Any] = {
            "id": message_id,
            "role": "assistant",
            "parts": [{"type": "step-start"}],
        }
        self.tools: dict[str, dict[str, Any]] = {}
        self._after_results = False

    def _step(self) -> None:
        if self._after_results:
            self.message["parts"].append({"type": "step-start"})
            self._after_results = False

    def reasoning(self, message: ReasoningMessage) -> None:
        self._step()
        part: dict[str, Any] = {"type": "reasoning", "text": message.content}
        meta = _provider_metadata(message)
        if meta is not None:
            part["providerMetadata"] = meta
        self.message["parts"].append(part)

    def assistant(self, message: AssistantMessage) -> None:
        self._step()
        if message.content:
            self.message["parts"].append({"type": "text", "text": message.content})
        for call in message.tool_calls or []:
            part: dict[str, Any] = {
                "type": f"tool-{call.function.name}",
                "toolCallId": call.id,
                "state": "input-available",
                "input": json_or_text(call.function.arguments) if call.function.arguments else {},
            }
            meta = _provider_metadata(call)
            if meta is not None:
                part["callProviderMetadata"] = meta
            self.tools[call.id] = part
            self.message["parts"].append(part)

    def tool(self, message: ToolMessage) -> None:
        part = self.tools[message.tool_call_id]  # to_ui_messages drops results without calls
        text = tool_result_text(message)
        if message.error:
            part.update(state="output-error", errorText=text)
        else:
            part.update(state="output-available", output=json_or_text(text))
        self._after_results = True


def to_ui_messages(run_input: RunAgentInput) -> list[dict[str, Any]]:
    """The conversation of ``run_input`` as AI SDK ``UIMessage`` objects (module docstring).

    Raises:
        RequestTranslationError: a provider file handle in a user message (``UNSUPPORTED_CONTENT``).
    """
    out: list[dict[str, Any]] = []
    turn: _AssistantTurn | None = None
    for index, message in enumerate(run_input.messages):
        if isinstance(message, ToolMessage) and (
            turn is None or message.tool_call_id not in turn.tools
        ):
            continue  # a result without its call has no UIMessage form (no empty assistant)
        if isinstance(message, ReasoningMessage | AssistantMessage | ToolMessage):
            if turn is None:
                turn = _AssistantTurn(message.id)
                out.append(turn.message)
            if isinstance(message, ReasoningMessage):
                turn.reasoning(message)
            elif isinstance(message, AssistantMessage):
                turn.assistant(message)
            else:
                turn.tool(message)
            continue
        if isinstance(message, ActivityMessage):
            continue
        turn = None
        if isinstance(message, SystemMessage | DeveloperMessage):
            text = message.content or ""
            out.append(
                {"id": message.id, "role": "system", "parts": [{"type": "text", "text": text}]}
            )
        elif isinstance(message, UserMessage):
            out.append(_user(message, index))
    return out
