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
reasoning, activity    not sent (Chat Completions takes no reasoning input)
tools[]                ``{"type": "function", "function": {"name", "description",
                       "parameters"}}`` (``parameters`` defaults to an empty object schema)
=====================  =============================================================================

Always ``stream: true`` and ``stream_options: {"include_usage": true}`` (so the decoder sees the
usage-only final chunk). The model is the route's; model parameters come from the route's
``params`` and from the allowed ``forwardedProps`` keys (:data:`ALLOWED_PARAMS`).

Tool results are sent directly after the assistant message that made their call, text in
between moved after them (:func:`~agui_codecs.protocols._request.results_after_calls`).
"""

from __future__ import annotations

from collections.abc import Mapping
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
    ReasoningMessage,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
)

from ...errors import RequestTranslationError
from .._request import (
    ClientRequest,
    check_conversation,
    context_text,
    data_url,
    merge_params,
    part_metadata,
    results_after_calls,
    text_of,
)

__all__ = ["ALLOWED_PARAMS", "MEDIA_ONLY_RESULT", "build_request", "to_openai_chat"]

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
    for index, message in results_after_calls(run_input.messages):
        if isinstance(message, ToolMessage):
            tool, media = _tool(message, index)
            messages.append(tool)
            attachments += [media] if media is not None else []
            continue
        if isinstance(message, ReasoningMessage | ActivityMessage):
            continue
        messages += attachments  # after the turn's last tool message: tool messages stay together
        attachments = []
        if isinstance(message, SystemMessage | DeveloperMessage):
            item: dict[str, Any] = {"role": message.role, "content": message.content}
            if message.name:
                item["name"] = message.name
            if len(messages) == leading_system:
                leading_system += 1
            messages.append(item)
        elif isinstance(message, UserMessage):
            messages.append(_user(message, index))
        elif isinstance(message, AssistantMessage):
            assistant = _assistant(message)
            if assistant is not None:
                messages.append(assistant)
    messages += attachments
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
    """The spec's request builder: :func:`~agui_codecs.protocols.check_conversation`, then
    :func:`to_openai_chat` of the request's ``RunAgentInput``.

    Raises:
        InvalidInputError: no conversation to send (``INVALID_REQUEST``).
        RequestTranslationError: see :func:`to_openai_chat`; also a tool result without its call
            (``INVALID_TOOL_RESULT``).
    """
    check_conversation(request.run_input)
    return to_openai_chat(request.run_input, model=model, params=params)
