"""AG-UI ``RunAgentInput`` -> Bedrock ``ConverseStream`` request body.

Follows the Bedrock Runtime API reference (``ConverseStream`` / ``Converse``, API version
``2023-09-30``; the ``ConverseStreamRequest`` shape in botocore's
``data/bedrock-runtime/2023-09-30/service-2``), as JSON on the wire (blobs base64). The model
is not in the body: it is the ``{modelId}`` of the path. Mapping:

=====================  =============================================================================
AG-UI                  Converse API
=====================  =============================================================================
system / developer     ``system: [{"text"}]``, joined (blank line between) with the rendered context
 + context[]           last; omitted when empty
user                   ``user`` message: text -> ``{"text"}`` (empty dropped); image ->
                       ``{"image": {"format", "source": {"bytes"} | {"s3Location": {"uri"}}}}``;
                       document -> ``{"document": {"format", "name", "source": {"bytes"} |
                       {"text"} (text/plain) | {"s3Location"}}}``; video -> ``{"video": ...}``
assistant              ``assistant`` message: ``{"text"}``, then ``{"toolUse": {"toolUseId",
                       "name", "input": <parsed arguments>}}``
reasoning              ``{"reasoningContent": {"reasoningText": {"text", "signature"}}}``, or
                       ``{"reasoningContent": {"redactedContent"}}`` when the metadata ``field``
                       says ``redactedContent``; a reasoning message without a Bedrock
                       ``encryptedValue`` is dropped (Claude rejects unsigned reasoning)
tool                   ``user`` message: ``{"toolResult": {"toolUseId", "content": [{"json"} |
                       {"text"}], "status"}}`` (``json`` when the output is a JSON object);
                       a result with media parts keeps them as ``ToolResultContentBlock``
                       ``text`` / ``image`` / ``document`` / ``video`` blocks
activity               not sent
tools[]                ``toolConfig.tools: [{"toolSpec": {"name", "description", "inputSchema":
                       {"json": <schema>}}}]``
=====================  =============================================================================

Consecutive messages of the same role are merged into one (Bedrock wants roles to alternate),
and a message with no blocks is dropped. Parameters: route ``params`` are body keys
(``inferenceConfig``, ``additionalModelRequestFields``, ``guardrailConfig``,
``performanceConfig``, ...), flat ``maxTokens`` / ``temperature`` / ``topP`` /
``stopSequences`` are nested into ``inferenceConfig``, ``toolChoice`` into ``toolConfig`` (only
when there are tools); clients may send :data:`ALLOWED_PARAMS` in ``forwardedProps``.

Tool results are sent directly after the assistant message that made their call, text in
between moved after them (:func:`~agui_codecs.protocols._request.results_after_calls`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    ContentPart,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    ImagePart,
    ReasoningMessage,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
    VideoPart,
)

from ...errors import RequestTranslationError
from .._request import (
    ClientRequest,
    check_conversation,
    decode_base64_text,
    json_or_text,
    merge_params,
    nest_params,
    own_encrypted_value,
    part_metadata,
    results_after_calls,
    system_text,
    tool_arguments_object,
    tool_result_text,
)
from .._resume import with_tool_results

__all__ = ["ALLOWED_PARAMS", "PROVIDER", "build_request", "to_converse"]

PROVIDER: Final = "amazon-bedrock"
"""Provider label of the decoder: reasoning values of other providers are not sent back."""

ALLOWED_PARAMS: Final[dict[str, str]] = {
    "maxTokens": "maxTokens",
    "max_tokens": "maxTokens",
    "maxOutputTokens": "maxTokens",
    "temperature": "temperature",
    "topP": "topP",
    "top_p": "topP",
    "stopSequences": "stopSequences",
    "stop_sequences": "stopSequences",
    "toolChoice": "toolChoice",
    "tool_choice": "toolChoice",
    "additionalModelRequestFields": "additionalModelRequestFields",
}
"""``forwardedProps`` key -> Converse parameter accepted from clients."""

_NESTED: Final[dict[str, tuple[str, ...]]] = {
    "maxTokens": ("inferenceConfig", "maxTokens"),
    "temperature": ("inferenceConfig", "temperature"),
    "topP": ("inferenceConfig", "topP"),
    "stopSequences": ("inferenceConfig", "stopSequences"),
}
_OURS: Final = frozenset({"messages", "system", "toolConfig", "modelId"})

_IMAGE_FORMATS: Final = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg", "gif": "gif", "webp": "webp"}
_DOCUMENT_FORMATS: Final = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_VIDEO_FORMATS: Final = {
    "video/x-matroska": "mkv",
    "video/quicktime": "mov",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "video/x-flv": "flv",
    "video/mpeg": "mpeg",
    "video/x-ms-wmv": "wmv",
    "video/3gpp": "three_gp",
}
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9 \-()\[\]]+")


def _media_source(source: Any, where: str, kind: str) -> dict[str, Any]:
    if isinstance(source, DataSource):
        return {"bytes": source.value}
    if isinstance(source, UrlSource) and source.value.startswith("s3://"):
        return {"s3Location": {"uri": source.value}}
    raise RequestTranslationError(
        f"{where}: Bedrock takes an inline or s3:// {kind}, not {source.type} {source.value!r}"
    )


def _mime(source: Any) -> str:
    return (getattr(source, "mime_type", None) or "").lower()


def _image(part: ImagePart, where: str) -> dict[str, Any]:
    fmt = _IMAGE_FORMATS.get(_mime(part.source).removeprefix("image/"))
    if fmt is None:
        raise RequestTranslationError(
            f"{where}: image type {_mime(part.source)!r} is not png, jpeg, gif or webp"
        )
    return {"image": {"format": fmt, "source": _media_source(part.source, where, "image")}}


def _document(part: DocumentPart, where: str, n: int) -> dict[str, Any]:
    mime = _mime(part.source)
    fmt = _DOCUMENT_FORMATS.get(mime)
    if fmt is None:
        raise RequestTranslationError(f"{where}: Bedrock has no document format for {mime!r}")
    raw_name = part_metadata(part, "filename") or part_metadata(part, "title") or f"document-{n}"
    name = " ".join(_NAME_UNSAFE.sub("-", raw_name.rsplit(".", 1)[0]).split()) or f"document-{n}"
    if isinstance(part.source, DataSource) and fmt == "txt":
        source: dict[str, Any] = {"text": decode_base64_text(part.source, where)}
    else:
        source = _media_source(part.source, where, "document")
    return {"document": {"format": fmt, "name": name[:200], "source": source}}


def _video(part: VideoPart, where: str) -> dict[str, Any]:
    fmt = _VIDEO_FORMATS.get(_mime(part.source))
    if fmt is None:
        raise RequestTranslationError(
            f"{where}: Bedrock has no video format for {_mime(part.source)!r}"
        )
    return {"video": {"format": fmt, "source": _media_source(part.source, where, "video")}}


def _part(part: ContentPart, where: str, n: int) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"text": part.text} if part.text else None
    if isinstance(part, ImagePart):
        return _image(part, where)
    if isinstance(part, DocumentPart):
        return _document(part, where, n)
    if isinstance(part, VideoPart):
        return _video(part, where)
    raise RequestTranslationError(f"{where}: a {part.type} part has no Bedrock Converse equivalent")


def _user_blocks(message: UserMessage, index: int) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": message.content}] if message.content else []
    blocks = [_part(p, f"messages[{index}].content[{i}]", i) for i, p in enumerate(message.content)]
    return [b for b in blocks if b is not None]


def _assistant_blocks(message: AssistantMessage, index: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"text": message.content})
    for n, call in enumerate(message.tool_calls or []):
        where = f"messages[{index}].toolCalls[{n}]"
        use = {
            "toolUseId": call.id,
            "name": call.function.name,
            "input": tool_arguments_object(call.function.arguments, where),
        }
        blocks.append({"toolUse": use})
    return blocks


def _reasoning_blocks(message: ReasoningMessage) -> list[dict[str, Any]]:
    value = own_encrypted_value(message, PROVIDER)
    if not value:
        return []
    meta = message.metadata if isinstance(message.metadata, Mapping) else {}
    if meta.get("field") == "redactedContent" or (
        not message.content and meta.get("field") != "signature"
    ):
        return [{"reasoningContent": {"redactedContent": value}}]
    text = {"text": message.content, "signature": value}
    return [{"reasoningContent": {"reasoningText": text}}]


def _tool_result(message: ToolMessage, index: int) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if isinstance(message.content, list) and any(
        not isinstance(p, TextPart) for p in message.content
    ):
        # ToolResultContentBlock is text | image | document | video | json, like a user block
        where = f"messages[{index}]"
        blocks = [_part(p, f"{where}.content[{i}]", i) for i, p in enumerate(message.content)]
        content = [b for b in blocks if b is not None]
    else:
        output = json_or_text(tool_result_text(message))
        text = tool_result_text(message)
        content = [{"json": output} if isinstance(output, dict) else {"text": text}]
    result = {
        "toolUseId": message.tool_call_id,
        "content": content,
        "status": "error" if message.error else "success",
    }
    return [{"toolResult": result}]


def _tools(run_input: RunAgentInput) -> list[dict[str, Any]]:
    tools = []
    for tool in run_input.tools or []:
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description:
            spec["description"] = tool.description
        schema = tool.parameters if tool.parameters is not None else {"type": "object"}
        spec["inputSchema"] = {"json": schema}
        tools.append({"toolSpec": spec})
    return tools


def to_converse(
    run_input: RunAgentInput, *, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Build the ``ConverseStream`` request body for ``run_input`` (see module docstring).

    Args:
        run_input: the AG-UI run input.
        params: the route's parameters (body keys, or flat ``maxTokens``-style keys).

    Returns:
        The JSON body (``messages``, ``system``?, ``toolConfig``?, ``inferenceConfig``?, ...).

    Raises:
        RequestTranslationError: a part Bedrock cannot take (audio, an http image URL, an
            unknown image / document / video type: ``UNSUPPORTED_CONTENT``), tool call
            arguments that are not a JSON object (``INVALID_TOOL_ARGUMENTS``), an inline text
            document that is not base64 UTF-8 (``INVALID_CONTENT``).
    """
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for index, message in results_after_calls(run_input.messages):
        if isinstance(message, UserMessage):
            add("user", _user_blocks(message, index))
        elif isinstance(message, AssistantMessage):
            add("assistant", _assistant_blocks(message, index))
        elif isinstance(message, ReasoningMessage):
            add("assistant", _reasoning_blocks(message))
        elif isinstance(message, ToolMessage):
            add("user", _tool_result(message, index))
        elif isinstance(message, SystemMessage | DeveloperMessage | ActivityMessage):
            continue  # system text below; activity messages are the client's own
    body: dict[str, Any] = {"messages": turns}
    system = system_text(run_input)
    if system is not None:
        body["system"] = [{"text": system}]
    merged = merge_params(params or {}, run_input.forwarded_props, ALLOWED_PARAMS)
    merged = {k: v for k, v in merged.items() if k not in _OURS}
    choice = merged.pop("toolChoice", None)
    tools = _tools(run_input)
    if tools:
        config: dict[str, Any] = {"tools": tools}
        if choice is not None:
            config["toolChoice"] = choice
        body["toolConfig"] = config
    body.update(nest_params(merged, _NESTED))
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: the ``resume[]`` answers as tool results
    (:func:`~agui_codecs.protocols._resume.with_tool_results`: this API has no tool approval),
    :func:`~agui_codecs.protocols.check_conversation`, then
    :func:`to_converse` of the request's ``RunAgentInput`` (the model goes in the path).

    Raises:
        InvalidInputError: no conversation to send, or a ``resume[]`` entry that is no answer
            or names no tool call of ``messages`` (``INVALID_REQUEST``).
        RequestTranslationError: see :func:`to_converse`; also a tool result without its call
            (``INVALID_TOOL_RESULT``), or an approval without ``payload.result``
            (``INVALID_TOOL_RESULT``: the gateway does not execute tools).
    """
    run_input = with_tool_results(request)
    check_conversation(run_input)
    return to_converse(run_input, params=params)
