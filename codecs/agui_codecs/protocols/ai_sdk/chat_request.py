"""AI SDK chat request (``useChat`` / ``DefaultChatTransport``) -> AG-UI ``RunAgentInput``.

The AI SDK client posts ``{id, messages: UIMessage[], trigger, messageId?, ...body}`` (``ai``
7.0.173 ``src/ui/http-chat-transport.ts``; the same shape in v5 and v6). Turning it into a
``RunAgentInput`` lets both endpoints share one path (translate -> upstream -> decoder ->
encoder). The message mapping follows ``convertToModelMessages`` of ``ai`` 7.0.173
(``src/ui/convert-to-model-messages.ts``):

* ``system`` -> SystemMessage (text parts joined); ``user`` -> UserMessage (a single text part
  becomes a string; otherwise text parts and ``file`` parts as image/audio/video/document parts
  by ``mediaType``, data URLs inline, other URLs by reference, ``providerReference`` as a file
  handle; the filename in the part's ``metadata``);
* ``assistant`` is split into steps at ``step-start`` parts; each step becomes its reasoning
  parts (ReasoningMessage, with ``encryptedValue`` read back from ``providerMetadata``, e.g.
  ``anthropic.signature`` / ``anthropic.redactedData`` / ``openai.encryptedContent`` /
  ``openrouter.reasoningDetails``), one
  AssistantMessage (text parts concatenated, ``encryptedValue`` from a text part's
  ``providerMetadata``, e.g. ``google.thoughtSignature``; tool parts as ``toolCalls`` with
  ``arguments`` = JSON of ``input`` and ``encryptedValue`` from ``callProviderMetadata``), then one
  ToolMessage per answered tool part: ``output-available`` (a string output as is, other JSON
  as compact JSON text), ``output-error`` (``errorText``, ``error`` set), ``output-denied`` or a
  denied approval (the denial reason, ``error`` set);
* a tool part in state ``approval-responded`` (``approval: {id, approved, reason?}``, left by
  ``addToolApprovalResponse``, ``ai`` 7.0.173 ``src/ui/ui-messages.ts``) is also an AG-UI 1.0
  ``resume[]`` entry ``{interruptId: approval.id, status: "resolved", payload: {approved,
  reason?, toolCallId}}``: the answer to the interrupt the approval request became, which the
  gateway claims once (a second answer is refused, ``docs/runs.md`` §7);
* a provider-executed tool part (``providerExecuted: true``: an OpenAI hosted tool or remote
  MCP call, an Anthropic server tool, Gemini code execution; ``tool-input-available`` /
  ``tool-output-available`` with ``providerExecuted`` from the AI SDK encoder) becomes the shape
  ``@ag-ui/client`` 1.0.0 keeps for it (``docs/protocols.md`` §4.2): a tool call with
  ``metadata: {"providerExecuted": true}`` (``encryptedValue`` from ``callProviderMetadata``)
  that ends the AssistantMessage holding the step's parts so far, then its ToolMessage (the
  ``output`` as above; none in an approval state: its answer is the ``resume`` entry below,
  e.g. an OpenAI ``mcp_approval_request``), then a new AssistantMessage ``<step id>-<n>`` for
  the parts after it;
  the ``ai`` converter likewise keeps the call and its result in the assistant content, in
  order. The request builders then send it back as the provider's own item or leave it out,
  never as a client function call. A step without such a part is one AssistantMessage as
  above;
* tool parts still ``input-streaming`` are not sent (the AI SDK does the same); ``data-*``,
  ``source-*``, assistant ``file`` parts and unknown parts are dropped.

Body keys other than ``id``, ``messages``, ``trigger``, ``messageId``, ``tools`` and ``context``
go to ``forwardedProps`` (so ``useChat({ body: { temperature: 0.2 } })`` reaches the model
parameters). ``tools`` and ``context``, when present, use the AG-UI shapes (``Tool[]``,
``Context[]``): the AI SDK request carries no tool definitions of its own.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal
from urllib.parse import unquote_to_bytes

from ag_ui.core import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    Context,
    DataSource,
    DocumentPart,
    FileSource,
    FunctionCall,
    ImagePart,
    Message,
    ReasoningMessage,
    ResumeEntry,
    RunAgentInput,
    SystemMessage,
    TextPart,
    Tool,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
    VideoPart,
)
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag
from pydantic.alias_generators import to_camel

__all__ = [
    "AiSdkChatRequest",
    "UIMessage",
    "continued_tool_call_ids",
    "response_message_id",
    "to_run_agent_input",
]

_ENCRYPTED_FIELDS = (
    "signature",
    "redactedData",
    "encryptedValue",
    "reasoningEncryptedContent",
    "encryptedContent",
    "thoughtSignature",
    "reasoningDetails",
    "reasoningContent",
)
_DENIED = "Tool call execution denied."
_APPROVAL_STATES = ("approval-requested", "approval-responded")


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class TextUIPart(_Wire):
    """``{type: "text", text, providerMetadata?}``."""

    type: Literal["text"]
    text: str
    provider_metadata: dict[str, Any] | None = None


class ReasoningUIPart(_Wire):
    """``{type: "reasoning", text, providerMetadata?}``."""

    type: Literal["reasoning"]
    text: str
    provider_metadata: dict[str, Any] | None = None


class FileUIPart(_Wire):
    """``{type: "file", mediaType, url, filename?, providerReference?}``."""

    type: Literal["file"]
    media_type: str
    url: str
    filename: str | None = None
    provider_reference: dict[str, str] | None = None


class StepStartUIPart(_Wire):
    """``{type: "step-start"}``: a step boundary inside an assistant message."""

    type: Literal["step-start"]


ToolState = Literal[
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
]


class ToolUIPart(_Wire):
    """``{type: "tool-<name>" | "dynamic-tool", toolName?, toolCallId, state, input?, ...}``."""

    type: str = Field(pattern=r"^(tool-.+|dynamic-tool)$")
    tool_name: str | None = None
    tool_call_id: str
    state: ToolState
    input: Any = None
    output: Any = None
    error_text: str | None = None
    provider_executed: bool | None = None
    approval: dict[str, Any] | None = None
    call_provider_metadata: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """The tool's name (from ``type`` for static tools, ``toolName`` for dynamic ones)."""
        if self.type == "dynamic-tool":
            return self.tool_name or ""
        return self.type.removeprefix("tool-")


class OtherUIPart(_Wire):
    """Any other part (``data-*``, ``source-url``, ``custom``...): accepted, not translated."""

    type: str


def _part_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if kind in ("text", "reasoning", "file", "step-start"):
        return str(kind)
    if isinstance(kind, str) and (kind.startswith("tool-") or kind == "dynamic-tool"):
        return "tool"
    return "other"


UIPart = Annotated[
    Annotated[TextUIPart, Tag("text")]
    | Annotated[ReasoningUIPart, Tag("reasoning")]
    | Annotated[FileUIPart, Tag("file")]
    | Annotated[StepStartUIPart, Tag("step-start")]
    | Annotated[ToolUIPart, Tag("tool")]
    | Annotated[OtherUIPart, Tag("other")],
    Discriminator(_part_kind),
]


class UIMessage(_Wire):
    """``{id, role: "system"|"user"|"assistant", metadata?, parts}``."""

    id: str
    role: Literal["system", "user", "assistant"]
    metadata: Any = None
    parts: list[UIPart]


class AiSdkChatRequest(_Wire):
    """The body ``DefaultChatTransport`` posts; unknown keys are kept (they become
    ``forwardedProps``).

    Attributes:
        id: the chat id (used as the AG-UI threadId).
        messages: the whole conversation.
        trigger: ``"submit-message"`` or ``"regenerate-message"`` (other values are treated
            like a submit).
        message_id: wire ``messageId``: the message the request is about (see
            :func:`response_message_id`).
        tools: optional AG-UI tool definitions.
        context: optional AG-UI context entries.
    """

    id: str | None = None
    messages: list[UIMessage]
    trigger: str | None = None
    message_id: str | None = None
    tools: list[Tool] | None = None
    context: list[Context] | None = None


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _source(part: FileUIPart) -> DataSource | UrlSource | FileSource:
    if part.provider_reference:
        provider, handle = next(iter(part.provider_reference.items()))
        return FileSource(value=handle, provider=provider, mime_type=part.media_type)
    url = part.url
    if url.startswith("data:") and "," in url:
        header, payload = url[5:].split(",", 1)
        params = header.split(";")
        mime = params[0] if "/" in params[0] else part.media_type
        if "/" not in mime:
            mime = part.media_type
        if "base64" in params[1:]:
            data = payload
        else:
            data = base64.b64encode(unquote_to_bytes(payload)).decode("ascii")
        return DataSource(value=data, mime_type=mime)
    return UrlSource(value=url, mime_type=part.media_type)


def _file(part: FileUIPart) -> ContentPart:
    source = _source(part)
    metadata = {"filename": part.filename} if part.filename else None
    top = part.media_type.split("/", 1)[0]
    if top == "image":
        return ImagePart(source=source, metadata=metadata)
    if top == "audio":
        return AudioPart(source=source, metadata=metadata)
    if top == "video":
        return VideoPart(source=source, metadata=metadata)
    return DocumentPart(source=source, metadata=metadata)


def _user(message: UIMessage) -> UserMessage:
    parts: list[ContentPart] = []
    for part in message.parts:
        if isinstance(part, TextUIPart):
            parts.append(TextPart(text=part.text))
        elif isinstance(part, FileUIPart):
            parts.append(_file(part))
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return UserMessage(id=message.id, content=parts[0].text)
    return UserMessage(id=message.id, content=parts)


def _encrypted(provider_metadata: dict[str, Any] | None) -> dict[str, Any]:
    """``{encrypted_value, metadata: {provider, field}}`` for the first opaque value found in
    ``providerMetadata`` (``{provider: {field: value}}``), else ``{}``."""
    for provider, fields in (provider_metadata or {}).items():
        if not isinstance(fields, dict):
            continue
        for field in _ENCRYPTED_FIELDS:
            value = fields.get(field)
            if isinstance(value, str) and value:
                return {
                    "encrypted_value": value,
                    "metadata": {"provider": provider, "field": field},
                }
    return {}


def _reasoning(part: ReasoningUIPart, message_id: str) -> ReasoningMessage:
    return ReasoningMessage(id=message_id, content=part.text, **_encrypted(part.provider_metadata))


def _tool_result(part: ToolUIPart) -> ToolMessage | None:
    result_id = f"{part.tool_call_id}-result"
    denied = part.state == "output-denied" or (
        part.state == "approval-responded" and (part.approval or {}).get("approved") is False
    )
    if denied:
        reason = (part.approval or {}).get("reason")
        text = reason if isinstance(reason, str) and reason else _DENIED
        return ToolMessage(id=result_id, tool_call_id=part.tool_call_id, content=text, error=text)
    if part.state == "output-error":
        text = part.error_text or "tool execution failed"
        return ToolMessage(id=result_id, tool_call_id=part.tool_call_id, content=text, error=text)
    if part.state == "output-available":
        output = part.output if isinstance(part.output, str) else _json_text(part.output)
        return ToolMessage(id=result_id, tool_call_id=part.tool_call_id, content=output)
    return None


def _call(part: ToolUIPart) -> ToolCall:
    """The AG-UI tool call of a tool part; a provider-executed one is flagged
    ``metadata.providerExecuted`` (what ``@ag-ui/client`` keeps from TOOL_CALL_START)."""
    arguments = "{}" if part.input is None else _json_text(part.input)
    encrypted = _encrypted(part.call_provider_metadata)
    if part.provider_executed:
        encrypted["metadata"] = {**encrypted.get("metadata", {}), "providerExecuted": True}
    return ToolCall(
        id=part.tool_call_id,
        function=FunctionCall(name=part.name, arguments=arguments),
        **encrypted,
    )


class _Segment:
    """The text and calls of one AssistantMessage of a step, as they come."""

    __slots__ = ("calls", "signature", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.signature: dict[str, Any] = {}
        self.calls: list[ToolCall] = []

    def message(self, message_id: str) -> AssistantMessage | None:
        content = "".join(self.text)
        if not content and not self.calls:
            return None
        return AssistantMessage(
            id=message_id,
            content=content or None,
            tool_calls=self.calls or None,
            **(self.signature if content else {}),
        )


def _assistant_step(block: list[Any], step_id: str) -> list[Message]:
    out: list[Message] = []
    segment = _Segment()
    segments = 0
    results: list[ToolMessage] = []
    reasoning = 0

    def close() -> None:
        nonlocal segment, segments
        message = segment.message(step_id if segments == 0 else f"{step_id}-{segments}")
        if message is not None:
            out.append(message)
            segments += 1
        segment = _Segment()

    for part in block:
        if isinstance(part, ReasoningUIPart):
            out.append(_reasoning(part, f"{step_id}-reasoning-{reasoning}"))
            reasoning += 1
        elif isinstance(part, TextUIPart):
            segment.text.append(part.text)
            segment.signature = _encrypted(part.provider_metadata) or segment.signature
        elif isinstance(part, ToolUIPart):
            if part.state == "input-streaming":
                continue
            segment.calls.append(_call(part))
            result = _tool_result(part)
            if part.provider_executed:
                # the provider's call and its result where they were in the step (the ``ai``
                # converter keeps both in the assistant content, in order): the message so far
                # ends with the call, its result follows, later parts open a new message. An
                # approval's answer is the ``resume`` entry, not a result (as in AG-UI).
                close()
                if result is not None and part.state not in _APPROVAL_STATES:
                    out.append(result)
            elif result is not None:
                results.append(result)
    close()
    out.extend(results)
    return out


def _assistant(message: UIMessage) -> list[Message]:
    blocks: list[list[Any]] = [[]]
    for part in message.parts:
        if isinstance(part, StepStartUIPart):
            blocks.append([])
        else:
            blocks[-1].append(part)
    out: list[Message] = []
    step = 0
    for block in blocks:
        if not block:
            continue
        step_id = message.id if step == 0 else f"{message.id}-step-{step}"
        out.extend(_assistant_step(block, step_id))
        step += 1
    return out


def _resume(messages: list[UIMessage]) -> list[ResumeEntry]:
    """The approval answers of the tool parts in state ``approval-responded``."""
    out: list[ResumeEntry] = []
    for message in messages:
        for part in message.parts:
            if not isinstance(part, ToolUIPart) or part.state != "approval-responded":
                continue
            approval = part.approval or {}
            approval_id = approval.get("id")
            if not isinstance(approval_id, str) or not approval_id:
                continue
            payload: dict[str, Any] = {
                "approved": approval.get("approved") is True,
                "toolCallId": part.tool_call_id,
            }
            reason = approval.get("reason")
            if isinstance(reason, str) and reason:
                payload["reason"] = reason
            out.append(ResumeEntry(interrupt_id=approval_id, status="resolved", payload=payload))
    return out


def to_run_agent_input(request: AiSdkChatRequest, *, run_id: str) -> RunAgentInput:
    """Translate an AI SDK chat request into a ``RunAgentInput`` (see module docstring).

    Args:
        request: the validated request body.
        run_id: the AG-UI runId to use (the AI SDK has none).

    Returns:
        The run input; ``threadId`` is the chat ``id`` (``thread_<run_id>`` when absent);
        ``resume`` holds the approval answers of ``approval-responded`` tool parts, if any.
    """
    messages: list[Message] = []
    for message in request.messages:
        if message.role == "system":
            text = "".join(p.text for p in message.parts if isinstance(p, TextUIPart))
            messages.append(SystemMessage(id=message.id, content=text))
        elif message.role == "user":
            messages.append(_user(message))
        else:
            messages.extend(_assistant(message))
    known = {"id", "messages", "trigger", "messageId", "message_id", "tools", "context"}
    forwarded = {k: v for k, v in (request.model_extra or {}).items() if k not in known}
    resume = _resume(request.messages)
    return RunAgentInput(
        thread_id=request.id or f"thread_{run_id}",
        run_id=run_id,
        messages=messages,
        tools=request.tools or [],
        context=request.context or [],
        state=None,
        forwarded_props=forwarded,
        resume=resume or None,
    )


def continued_tool_call_ids(request: AiSdkChatRequest) -> tuple[str, ...]:
    """The ``toolCallId`` of every tool part of the assistant message the response continues
    (:func:`response_message_id`), in order; ``()`` for a fresh message. The response may
    answer them (``tool-output-available`` / ``tool-output-denied`` for a call of the earlier
    response: the ai v6/v7 tool-approval flow); the AI SDK encoder's ``continues``."""
    target_id = response_message_id(request)
    if target_id is None:
        return ()
    target = next(m for m in reversed(request.messages) if m.id == target_id)
    return tuple(p.tool_call_id for p in target.parts if isinstance(p, ToolUIPart))


def response_message_id(request: AiSdkChatRequest) -> str | None:
    """The ``start.messageId`` the response must carry, or ``None`` for a fresh message.

    The AI SDK continues an assistant message when the message the request is about (the one
    named by ``messageId`` on a submit, else the last one) is an assistant message
    (``ai`` 7.0.173 ``AbstractChat.makeRequestImpl`` + ``createStreamingUIMessageState``): the
    stream must then reuse that message's id, or the client duplicates the message
    (``docs/protocols.md`` §3.3 rule 6). Otherwise (a new user turn, a regenerate) a fresh id
    is needed.
    """
    target: UIMessage | None = None
    if request.message_id and request.trigger in (None, "submit-message"):
        target = next((m for m in request.messages if m.id == request.message_id), None)
    if target is None and request.messages:
        target = request.messages[-1]
    if target is not None and target.role == "assistant":
        return target.id
    return None
