"""AG-UI ``RunAgentInput`` -> OpenAI Chat Completions request body (``POST /chat/completions``).

Follows the Chat Completions API reference ("Create chat completion", 2025): request
messages by role, user content parts, assistant ``tool_calls``, ``tool`` messages and function
tools. Mapping:

=====================  =============================================================================
AG-UI                  Chat Completions
=====================  =============================================================================
system / developer     ``{"role": "system"|"developer", "content": str}`` (``name`` kept)
context[]              one ``system`` message after the leading system/developer messages
user (string)          ``{"role": "user", "content": str}``
user (parts)           ``content: [...]``: text -> ``{"type": "text"}``; image ->
                       ``{"type": "image_url", "image_url": {"url"}}`` (URL or data URL);
                       audio (inline wav/mp3) -> ``input_audio``; document -> ``{"type": "file",
                       "file": {"file_data": <data URL>, "filename"} | {"file_id"}}``
assistant              ``content`` (omitted when empty and there are tool calls) and
                       ``tool_calls: [{"id", "type": "function", "function": {"name",
                       "arguments"}}]``; an assistant message with neither is skipped
tool                   ``{"role": "tool", "tool_call_id", "content": str}``: the text parts
                       (``error`` text when there are none)
tool (media parts)     Chat Completions tool messages take text only ("For tool messages, only
                       type ``text`` is supported", openapi.yaml
                       ``ChatCompletionRequestToolMessage``), so image / audio / document parts
                       go in a ``user`` message after the tool messages of that turn:
                       ``{"role": "user", "content": [{"type": "text", "text": "Attachments of
                       the result of tool call <id>:"}, <parts as for user content>]}``, one
                       per result, in order; a result with no text says so in its tool
                       message (:data:`MEDIA_ONLY_RESULT`). A part with no equivalent is
                       ``UNSUPPORTED_CONTENT``, as in user content: nothing is left out.
reasoning              OpenRouter ``reasoning_details`` entries (an ``encryptedValue`` that is a
                       ``reasoning_details`` envelope, :mod:`..._reasoning_details`): rebuilt as
                       envelope + text and put, in order, on the turn's assistant message
                       (``reasoning_details: [...]``; an assistant message ``{"content": ""}``
                       when the turn has none); DeepSeek ``reasoning_content`` (reasoning
                       messages with the mark of :mod:`..._reasoning_content`): the turn's
                       marked text, joined in order, as ``reasoning_content`` on the turn's
                       first assistant message with ``tool_calls`` (nothing for a turn without
                       calls); other reasoning is not sent
activity               not sent
tools[]                ``{"type": "function", "function": {"name", "description",
                       "parameters"}}`` (``parameters`` defaults to an empty object schema)
=====================  =============================================================================

Always ``stream: true`` and ``stream_options: {"include_usage": true}`` (so the decoder sees the
usage-only final chunk). The model is the route's; model parameters come from the route's
``params`` and from the allowed ``forwardedProps`` keys (:data:`ALLOWED_PARAMS`).

Reasoning details follow OpenRouter "Reasoning Tokens" (openrouter.ai/docs/guides/
best-practices/reasoning-tokens, "Preserving Reasoning Blocks": the assistant message goes back
with its ``reasoning_details`` unmodified and in order); the entries of a turn (the messages
between two user, system or tool messages: one Chat Completions reply, which AG-UI may hold as
several assistant messages) all go on its first assistant message.

DeepSeek ``reasoning_content`` follows the DeepSeek "Thinking Mode" guide
(api-docs.deepseek.com/guides/thinking_mode): a tool-calling turn's ``reasoning_content``
must be passed back in every later request (else HTTP 400 "The reasoning_content in the
thinking mode must be passed back to the API"); a turn without tool calls needs none.

Tool results are sent directly after the assistant message that made their call, text in
between moved after them (:func:`~agui_codecs.protocols._request.results_after_calls`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    AudioPart,
    ContentPart,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    FileSource,
    ImagePart,
    Message,
    ReasoningMessage,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
)

from ...errors import RequestTranslationError
from .._reasoning_content import PROVIDER as REASONING_CONTENT_PROVIDER
from .._reasoning_content import is_mark
from .._reasoning_details import FIELD, PROVIDER, TEXT_KEYS, merge_details, parse_envelope
from .._request import (
    ClientRequest,
    check_conversation,
    context_text,
    data_url,
    merge_params,
    part_metadata,
    provider_of,
    results_after_calls,
    text_of,
)
from .._resume import with_tool_results

__all__ = [
    "ALLOWED_PARAMS",
    "MEDIA_ONLY_RESULT",
    "build_request",
    "reasoning_detail",
    "to_openai_chat",
]

ALLOWED_PARAMS: dict[str, str] = {
    "temperature": "temperature",
    "top_p": "top_p",
    "topP": "top_p",
    "max_tokens": "max_tokens",
    "maxTokens": "max_tokens",
    "max_completion_tokens": "max_completion_tokens",
    "maxCompletionTokens": "max_completion_tokens",
    "stop": "stop",
    "stopSequences": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "presencePenalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "frequencyPenalty": "frequency_penalty",
    "logit_bias": "logit_bias",
    "logitBias": "logit_bias",
    "user": "user",
    "tool_choice": "tool_choice",
    "toolChoice": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "parallelToolCalls": "parallel_tool_calls",
    "response_format": "response_format",
    "responseFormat": "response_format",
    "reasoning_effort": "reasoning_effort",
    "reasoningEffort": "reasoning_effort",
    "verbosity": "verbosity",
    "service_tier": "service_tier",
    "serviceTier": "service_tier",
}
"""``forwardedProps`` key -> Chat Completions body key accepted from clients."""

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

MEDIA_ONLY_RESULT = "The result is in the attachments of the next user message."
"""``content`` of a tool message whose result has media parts but no text (and no ``error``)."""


def _part(part: ContentPart, where: str) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    source = part.source
    if isinstance(part, ImagePart):
        if isinstance(source, UrlSource):
            return {"type": "image_url", "image_url": {"url": source.value}}
        if isinstance(source, DataSource):
            return {"type": "image_url", "image_url": {"url": data_url(source)}}
    elif isinstance(part, AudioPart) and isinstance(source, DataSource):
        fmt = _AUDIO_FORMATS.get(source.mime_type)
        if fmt is not None:
            return {"type": "input_audio", "input_audio": {"data": source.value, "format": fmt}}
    elif isinstance(part, DocumentPart):
        if isinstance(source, DataSource):
            file: dict[str, Any] = {"file_data": data_url(source)}
            file["filename"] = part_metadata(part, "filename") or "document"
            return {"type": "file", "file": file}
        if isinstance(source, FileSource):
            return {"type": "file", "file": {"file_id": source.value}}
    raise RequestTranslationError(
        f"{where}: a {part.type} part with a {source.type} source has no OpenAI Chat "
        "Completions equivalent"
    )


def _user(message: UserMessage, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "user"}
    if isinstance(message.content, str):
        out["content"] = message.content
    else:
        where = f"messages[{index}]"
        out["content"] = [_part(p, f"{where}.content[{i}]") for i, p in enumerate(message.content)]
    if message.name:
        out["name"] = message.name
    return out


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    out: dict[str, Any] = {"role": "assistant"}
    if message.content:
        out["content"] = message.content
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in message.tool_calls
        ]
    if len(out) == 1:
        return None  # nothing to say (e.g. the text part of a reasoning-only turn)
    if message.name:
        out["name"] = message.name
    return out


def reasoning_detail(message: ReasoningMessage) -> dict[str, Any] | None:
    """The OpenRouter ``reasoning_details`` entry a reasoning message carries, else ``None``.

    The entry is the message's envelope (its ``encryptedValue``) with the message's content as
    its ``text`` / ``summary``; a value whose ``metadata.field`` is ``reasoningDetails`` but is
    no envelope (a bare ``data`` blob) is a ``reasoning.encrypted`` entry. A value whose
    ``metadata.provider`` names another provider is not ours to send.
    """
    value = message.encrypted_value
    if not value or provider_of(message) not in (None, PROVIDER):
        return None
    detail = parse_envelope(value)
    if detail is None:
        meta = message.metadata if isinstance(message.metadata, Mapping) else {}
        if meta.get("field") != FIELD:
            return None
        detail = {"type": "reasoning.encrypted", "data": value}
    text_key = TEXT_KEYS.get(str(detail.get("type")))
    if text_key is not None and message.content:
        detail[text_key] = message.content
    return detail


def _turn_details(
    messages: Sequence[Message],
) -> tuple[dict[int, list[dict[str, Any]]], dict[int, list[dict[str, Any]]]]:
    """The ``reasoning_details`` of each turn, in the messages' own order (before tool results
    are moved): ``({index of the turn's first sent assistant message: entries}, {index of the
    message ending a turn that has no assistant message (``len(messages)`` at the end):
    entries})``. A turn is what lies between two user, system, developer or tool messages."""
    owned: dict[int, list[dict[str, Any]]] = {}
    orphans: dict[int, list[dict[str, Any]]] = {}
    pending: list[dict[str, Any]] = []
    first: int | None = None

    def close(at: int) -> None:
        if pending:
            target = owned if first is not None else orphans
            target[first if first is not None else at] = merge_details(pending)
        pending.clear()

    for index, message in enumerate(messages):
        if isinstance(message, ReasoningMessage):
            detail = reasoning_detail(message)
            if detail is not None:
                pending.append(detail)
        elif isinstance(message, AssistantMessage):
            if first is None and _assistant(message) is not None:
                first = index
        elif not isinstance(message, ActivityMessage):
            close(index)
            first = None
    close(len(messages))
    return owned, orphans


def _marked_text(message: ReasoningMessage) -> str | None:
    """The text of a reasoning message with the DeepSeek mark (and no other provenance)."""
    if not is_mark(message.encrypted_value):
        return None
    if provider_of(message) not in (None, REASONING_CONTENT_PROVIDER):
        return None
    return message.content


def _turn_reasoning_content(messages: Sequence[Message]) -> dict[int, str]:
    """``{index of a turn's first assistant message with tool calls: the turn's marked
    reasoning text, joined in order}`` (turns as in :func:`_turn_details`); a turn without
    tool calls or without marked text has no entry."""
    out: dict[int, str] = {}
    texts: list[str] = []
    target: int | None = None

    def close() -> None:
        nonlocal target
        if target is not None and texts:
            out[target] = "".join(texts)
        texts.clear()
        target = None

    for index, message in enumerate(messages):
        if isinstance(message, ReasoningMessage):
            text = _marked_text(message)
            if text is not None:
                texts.append(text)
        elif isinstance(message, AssistantMessage):
            if target is None and message.tool_calls:
                target = index
        elif not isinstance(message, ActivityMessage):
            close()
    close()
    return out


def _reasoning_only(details: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message of a turn that had only reasoning."""
    return {"role": "assistant", "content": "", "reasoning_details": details}


def _tool(message: ToolMessage, index: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``tool`` message of a result and the ``user`` message carrying its media parts
    (None when it has none)."""
    content = text_of(message.content) or (message.error or "")
    media: dict[str, Any] | None = None
    if not isinstance(message.content, str) and message.content:
        where = f"messages[{index}]"
        parts = [
            _part(p, f"{where}.content[{i}]")
            for i, p in enumerate(message.content)
            if not isinstance(p, TextPart)
        ]
        if parts:
            label = f"Attachments of the result of tool call {message.tool_call_id}:"
            media = {"role": "user", "content": [{"type": "text", "text": label}, *parts]}
            content = content or MEDIA_ONLY_RESULT
    tool = {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    return tool, media


def _tools(run_input: RunAgentInput) -> list[dict[str, Any]]:
    tools = []
    for tool in run_input.tools or []:
        function: dict[str, Any] = {"name": tool.name}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = tool.parameters if tool.parameters is not None else _EMPTY_SCHEMA
        tools.append({"type": "function", "function": function})
    return tools


def to_openai_chat(
    run_input: RunAgentInput, *, model: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Build the Chat Completions request body for ``run_input`` (see module docstring).

    Args:
        run_input: the AG-UI run input.
        model: the route's model.
        params: the route's default model parameters.

    Returns:
        The JSON body, ``stream: true``.

    Raises:
        RequestTranslationError: a content part of a user message or a tool result has no Chat
            Completions equivalent (a video part, an image given as a provider file handle, a
            document URL, audio other than inline wav/mp3), code ``UNSUPPORTED_CONTENT``.
    """
    messages: list[dict[str, Any]] = []
    attachments: list[dict[str, Any]] = []  # media of the results since the last non-tool message
    leading_system = 0
    details, orphans = _turn_details(run_input.messages)
    reasoning_content = _turn_reasoning_content(run_input.messages)
    for index, message in results_after_calls(run_input.messages):
        if index in orphans:  # a turn with reasoning and no assistant message ends here
            messages += attachments
            attachments = []
            messages.append(_reasoning_only(orphans[index]))
        if isinstance(message, ToolMessage):
            tool, media = _tool(message, index)
            messages.append(tool)
            attachments += [media] if media is not None else []
            continue
        if isinstance(message, ReasoningMessage | ActivityMessage):
            continue
        messages += attachments  # after the turn's last tool message: tool messages stay together
        attachments = []
        if isinstance(message, AssistantMessage):
            assistant = _assistant(message)
            if assistant is not None:
                if index in details:
                    assistant["reasoning_details"] = details[index]
                if index in reasoning_content:
                    assistant["reasoning_content"] = reasoning_content[index]
                messages.append(assistant)
            continue
        if isinstance(message, SystemMessage | DeveloperMessage):
            item: dict[str, Any] = {"role": message.role, "content": message.content}
            if message.name:
                item["name"] = message.name
            if len(messages) == leading_system:
                leading_system += 1
            messages.append(item)
        elif isinstance(message, UserMessage):
            messages.append(_user(message, index))
    messages += attachments
    if len(run_input.messages) in orphans:
        messages.append(_reasoning_only(orphans[len(run_input.messages)]))
    context = context_text(run_input.context)
    if context is not None:
        messages.insert(leading_system, {"role": "system", "content": context})
    body: dict[str, Any] = {"model": model, "messages": messages}
    tools = _tools(run_input)
    if tools:
        body["tools"] = tools
    body.update(merge_params(params or {}, run_input.forwarded_props, ALLOWED_PARAMS))
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: the ``resume[]`` answers as tool results
    (:func:`~agui_codecs.protocols._resume.with_tool_results`: this API has no tool approval),
    :func:`~agui_codecs.protocols.check_conversation`, then
    :func:`to_openai_chat` of the request's ``RunAgentInput``.

    Raises:
        InvalidInputError: no conversation to send, or a ``resume[]`` entry that is no answer
            or names no tool call of ``messages`` (``INVALID_REQUEST``).
        RequestTranslationError: see :func:`to_openai_chat`; also a tool result without its call
            (``INVALID_TOOL_RESULT``), or an approval without ``payload.result``
            (``INVALID_TOOL_RESULT``: the gateway does not execute tools).
    """
    run_input = with_tool_results(request)
    check_conversation(run_input)
    return to_openai_chat(run_input, model=model, params=params)
