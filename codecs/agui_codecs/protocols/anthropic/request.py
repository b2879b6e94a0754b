"""AG-UI ``RunAgentInput`` -> Anthropic Messages request body (``POST /v1/messages``).

Follows the Messages API reference (API version ``2023-06-01``): top-level ``system``,
``messages`` of ``user``/``assistant`` turns made of content blocks, ``tools`` with
``input_schema``, required ``max_tokens``. Mapping:

=====================  =============================================================================
AG-UI                  Messages API
=====================  =============================================================================
system / developer     joined (blank line between) into top-level ``system``, with the
 + context[]           rendered context last; omitted when empty
user                   ``user`` turn: text -> ``{"type": "text"}`` (empty text dropped); image ->
                       ``{"type": "image", "source": base64 | url | file}``; document ->
                       ``{"type": "document", "source": base64 (PDF) | text (text/plain) | url |
                       file}``
assistant              ``assistant`` turn: ``text`` block, then ``tool_use`` blocks
                       ``{"id", "name", "input": <parsed arguments>}``; a server call (web
                       search, code execution...) is ``server_tool_use`` followed by its
                       ``*_tool_result`` block in the same turn, or left out, never a
                       ``tool_use`` (:mod:`~agui_codecs.protocols.anthropic._server_tools`)
reasoning              ``thinking`` block ``{"thinking", "signature": encryptedValue}``, or
                       ``redacted_thinking`` ``{"data": encryptedValue}`` when the metadata
                       ``field`` says ``redactedData`` (or there is no text); a reasoning message
                       without an ``encryptedValue`` that belongs to Anthropic
                       (``_request.own_encrypted_value``: another provider's signature is
                       rejected as invalid) is dropped (the API rejects unsigned thinking)
tool                   ``user`` turn: ``{"type": "tool_result", "tool_use_id", "content",
                       "is_error"?}``; a server call's result goes with its call
activity               not sent
tools[]                ``{"name", "description", "input_schema"}``
=====================  =============================================================================

Consecutive turns of the same role are merged into one (tool results then user text become
one ``user`` turn, reasoning then text then tool calls one ``assistant`` turn), and a turn with
no blocks is dropped. ``max_tokens`` defaults to :data:`DEFAULT_MAX_TOKENS`; ``stream: true``.

Tool results are sent directly after the assistant message that made their call, text in
between moved after them (:func:`~agui_codecs.protocols._request.results_after_calls`).
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
    decode_base64_text,
    merge_params,
    own_encrypted_value,
    part_metadata,
    results_after_calls,
    text_of,
    tool_arguments_object,
)
from .._resume import with_tool_results
from ._server_tools import ServerCalls, server_calls

__all__ = ["ALLOWED_PARAMS", "DEFAULT_MAX_TOKENS", "PROVIDER", "build_request", "to_anthropic"]

PROVIDER: Final = "anthropic"
"""Provider label of the Anthropic decoder (owner of the signatures and redacted thinking sent
back)."""

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` when neither the route ``params`` nor the client set one (the API requires it)."""

ALLOWED_PARAMS: dict[str, str] = {
    "max_tokens": "max_tokens",
    "maxTokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "topP": "top_p",
    "top_k": "top_k",
    "topK": "top_k",
    "stop_sequences": "stop_sequences",
    "stopSequences": "stop_sequences",
    "tool_choice": "tool_choice",
    "toolChoice": "tool_choice",
    "thinking": "thinking",
    "metadata": "metadata",
    "service_tier": "service_tier",
    "serviceTier": "service_tier",
}
"""``forwardedProps`` key -> Messages API body key accepted from clients."""

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_PDF = "application/pdf"


def _source(source: DataSource | UrlSource | FileSource) -> dict[str, Any]:
    if isinstance(source, DataSource):
        return {"type": "base64", "media_type": source.mime_type, "data": source.value}
    if isinstance(source, UrlSource):
        return {"type": "url", "url": source.value}
    return {"type": "file", "file_id": source.value}


def _part(part: ContentPart, where: str) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    source = part.source
    if isinstance(part, ImagePart):
        return {"type": "image", "source": _source(source)}
    if isinstance(part, DocumentPart):
        if isinstance(source, DataSource) and source.mime_type.startswith("text/"):
            text = decode_base64_text(source, where)
            block_source: dict[str, Any] = {
                "type": "text",
                "media_type": "text/plain",
                "data": text,
            }
        elif isinstance(source, DataSource) and source.mime_type != _PDF:
            raise RequestTranslationError(
                f"{where}: Anthropic accepts inline PDF or text documents, not {source.mime_type}"
            )
        else:
            block_source = _source(source)
        block: dict[str, Any] = {"type": "document", "source": block_source}
        title = part_metadata(part, "title") or part_metadata(part, "filename")
        if title:
            block["title"] = title
        return block
    raise RequestTranslationError(
        f"{where}: a {part.type} part has no Anthropic Messages equivalent"
    )


def _user_blocks(message: UserMessage, index: int) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    blocks = [_part(p, f"messages[{index}].content[{i}]") for i, p in enumerate(message.content)]
    return [b for b in blocks if b is not None]


def _assistant_blocks(
    message: AssistantMessage, index: int, server: ServerCalls
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for n, call in enumerate(message.tool_calls or []):
        if server.is_server(index, n):  # the API's own call: its blocks, never a tool_use
            blocks.extend(server.blocks(index, n))
            continue
        where = f"messages[{index}].toolCalls[{n}]"
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.function.name,
                "input": tool_arguments_object(call.function.arguments, where),
            }
        )
    return blocks


def _reasoning_blocks(message: ReasoningMessage) -> list[dict[str, Any]]:
    value = own_encrypted_value(message, PROVIDER)
    if not value:
        return []
    meta = message.metadata if isinstance(message.metadata, Mapping) else {}
    field = meta.get("field")
    if field == "redactedData" or (not message.content and field != "signature"):
        return [{"type": "redacted_thinking", "data": value}]
    return [{"type": "thinking", "thinking": message.content, "signature": value}]


def _tool_result(message: ToolMessage, index: int) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if isinstance(message.content, str) or not message.content:
        content: Any = text_of(message.content) or (message.error or "")
    else:
        parts = [_part(p, f"messages[{index}].content[{i}]") for i, p in enumerate(message.content)]
        content = [p for p in parts if p is not None] or (message.error or "")
    block["content"] = content
    if message.error:
        block["is_error"] = True
    return [block]


def _tools(run_input: RunAgentInput) -> list[dict[str, Any]]:
    tools = []
    for tool in run_input.tools or []:
        item: dict[str, Any] = {"name": tool.name}
        if tool.description:
            item["description"] = tool.description
        item["input_schema"] = tool.parameters if tool.parameters is not None else _EMPTY_SCHEMA
        tools.append(item)
    return tools


def to_anthropic(
    run_input: RunAgentInput, *, model: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Build the Messages API request body for ``run_input`` (see module docstring).

    Args:
        run_input: the AG-UI run input.
        model: the route's model.
        params: the route's default model parameters (e.g. ``max_tokens``).

    Returns:
        The JSON body, ``stream: true``.

    Raises:
        RequestTranslationError: a part has no Messages equivalent (audio, video, a document that is
            neither PDF nor text; code ``UNSUPPORTED_CONTENT``), tool call arguments that are
            not a JSON object (``INVALID_TOOL_ARGUMENTS``), an inline text document that is not
            base64 UTF-8 (``INVALID_CONTENT``).
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    ordered = results_after_calls(run_input.messages)
    server = server_calls(ordered)
    for index, message in ordered:
        if isinstance(message, SystemMessage | DeveloperMessage):
            if message.content:
                system.append(message.content)
        elif isinstance(message, UserMessage):
            add("user", _user_blocks(message, index))
        elif isinstance(message, AssistantMessage):
            add("assistant", _assistant_blocks(message, index, server))
        elif isinstance(message, ReasoningMessage):
            add("assistant", _reasoning_blocks(message))
        elif isinstance(message, ToolMessage):
            if not server.is_server_result(index):  # a server result goes with its call
                add("user", _tool_result(message, index))
        elif isinstance(message, ActivityMessage):
            continue
    context = context_text(run_input.context)
    if context is not None:
        system.append(context)
    body: dict[str, Any] = {"model": model, "max_tokens": DEFAULT_MAX_TOKENS}
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = turns
    tools = _tools(run_input)
    if tools:
        body["tools"] = tools
    body.update(merge_params(params or {}, run_input.forwarded_props, ALLOWED_PARAMS))
    body["stream"] = True
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: the ``resume[]`` answers as tool results
    (:func:`~agui_codecs.protocols._resume.with_tool_results`: this API has no tool approval),
    :func:`~agui_codecs.protocols.check_conversation`, then
    :func:`to_anthropic` of the request's ``RunAgentInput``.

    Raises:
        InvalidInputError: no conversation to send, or a ``resume[]`` entry that is no answer
            or names no tool call of ``messages`` (``INVALID_REQUEST``).
        RequestTranslationError: see :func:`to_anthropic`; also a tool result without its call
            (``INVALID_TOOL_RESULT``), or an approval without ``payload.result``
            (``INVALID_TOOL_RESULT``: the gateway does not execute tools).
    """
    run_input = with_tool_results(request)
    check_conversation(run_input)
    return to_anthropic(run_input, model=model, params=params)
