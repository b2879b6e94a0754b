"""AG-UI ``RunAgentInput`` -> OpenAI Responses request body (``POST /responses``).

Follows the Responses API reference ("Create a model response", 2025-2026: ``input`` items,
``instructions``, function ``tools``, ``include``, ``store``) and the reasoning guide
("Encrypted reasoning items": with ``store: false`` the previous turn's reasoning is sent back
as ``reasoning`` items carrying ``encrypted_content``, obtained with ``include:
["reasoning.encrypted_content"]``). Where the reference is silent, ``@ai-sdk/openai``
(vercel/ai ``packages/openai/src/responses/convert-to-openai-responses-input.ts``) is followed.
Mapping:

=====================  =============================================================================
AG-UI                  Responses API
=====================  =============================================================================
system / developer     joined (blank line between) into ``instructions``, with the rendered
 + context[]           context last; omitted when empty
user                   ``{"role": "user", "content": str}``, or a list of ``input_text`` /
                       ``input_image`` ``{image_url | file_id, detail: "auto"}`` / ``input_file``
                       ``{file_data + filename | file_url | file_id}`` parts
assistant              ``{"role": "assistant", "content": str}`` when there is text, then one
                       ``{"type": "function_call", "call_id", "name", "arguments"}`` per client
                       tool call; a provider-executed call (hosted tool, MCP) is never one:
                       left out with ``store: false``, an ``item_reference`` with ``store:
                       true`` (:mod:`~agui_codecs.protocols.openai_responses._hosted`)
reasoning              ``{"type": "reasoning", "summary": [{"type": "summary_text", "text"}],
                       "encrypted_content"}`` when it has an ``encryptedValue`` that belongs to
                       OpenAI (``_request.own_encrypted_value``); no ``id``:
                       the item id is not known here and a wrong one is rejected ("encrypted
                       content item_id did not match"), while an item without id is accepted;
                       reasoning without an encrypted value is dropped (``store: false`` cannot
                       reference it)
tool                   ``{"type": "function_call_output", "call_id", "output"}``: the text
                       (the ``error`` text when empty), or a list of input parts for multimodal
                       content; the result of a provider-executed call goes with its call
activity               not sent
tools[]                ``{"type": "function", "name", "description", "parameters", "strict":
                       false}`` (a client's schema need not satisfy strict mode; the API
                       defaults ``strict`` to true)
=====================  =============================================================================

Always ``stream: true``. ``store: false`` unless the route's ``params`` set ``store`` (the
gateway sends the whole history every turn, so nothing needs to be stored upstream).
``include`` gains ``"reasoning.encrypted_content"`` when the history holds encrypted reasoning
or the request sets ``reasoning`` (models without reasoning reject the include: "Encrypted
content is not supported with this model"); a route's own ``include`` entries are kept. Model
parameters come from the route's ``params`` and the allowed ``forwardedProps`` keys
(:data:`ALLOWED_PARAMS`); ``reasoningEffort`` / ``reasoningSummary`` / ``verbosity`` are nested
into ``reasoning.effort`` / ``reasoning.summary`` / ``text.verbosity``.

Tool results are sent directly after the assistant message that made their call, text in
between moved after them (:func:`~agui_codecs.protocols._request.results_after_calls`).

``resume[]`` entries (AG-UI 1.0) answer ``mcp_approval_request`` items, whose interrupt id is
the request item's ``id`` (``openai_responses.decoder``): each becomes the input item
``{"type": "mcp_approval_response", "approval_request_id": <item id>, "approve": <bool>,
"reason"?}`` (API reference, "Create a model response", ``input`` -> "MCP approval response"),
appended after the history, the payload read by :mod:`agui_codecs.protocols._resume`
(``cancelled`` or ``approved: false`` -> ``approve: false``). The request is stateless, so the
``mcp_approval_request`` item it answers is sent too, rebuilt from the interrupt's recorded
``metadata`` (:attr:`ClientRequest.interrupt_metadata`): in place of the approval's tool call
(``mcp.<name>``) in the history, else just before its response
(:mod:`~agui_codecs.protocols.openai_responses._approvals`). That tool call is never sent as a
``function_call`` (it is none); without the metadata it is left out and only the response sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    data_url,
    merge_params,
    nest_params,
    own_encrypted_value,
    part_metadata,
    results_after_calls,
    system_text,
    tool_result_text,
)
from .._resume import Answer, answers
from ._approvals import Approvals
from ._hosted import HostedCalls, hosted_calls

__all__ = [
    "ALLOWED_PARAMS",
    "ENCRYPTED_REASONING_INCLUDE",
    "PROVIDER",
    "build_request",
    "to_openai_responses",
]

PROVIDER: Final = "openai"
"""Provider label of the Responses decoder (owner of the encrypted reasoning values sent back)."""

ENCRYPTED_REASONING_INCLUDE: Final = "reasoning.encrypted_content"
"""The ``include`` value that makes reasoning items carry ``encrypted_content``."""

ALLOWED_PARAMS: dict[str, str] = {
    "temperature": "temperature",
    "top_p": "top_p",
    "topP": "top_p",
    "max_output_tokens": "max_output_tokens",
    "maxOutputTokens": "max_output_tokens",
    "max_tokens": "max_output_tokens",
    "maxTokens": "max_output_tokens",
    "tool_choice": "tool_choice",
    "toolChoice": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "parallelToolCalls": "parallel_tool_calls",
    "max_tool_calls": "max_tool_calls",
    "maxToolCalls": "max_tool_calls",
    "reasoning": "reasoning",
    "reasoning_effort": "reasoning_effort",
    "reasoningEffort": "reasoning_effort",
    "reasoning_summary": "reasoning_summary",
    "reasoningSummary": "reasoning_summary",
    "text": "text",
    "verbosity": "verbosity",
    "truncation": "truncation",
    "top_logprobs": "top_logprobs",
    "topLogprobs": "top_logprobs",
    "user": "user",
    "safety_identifier": "safety_identifier",
    "safetyIdentifier": "safety_identifier",
    "prompt_cache_key": "prompt_cache_key",
    "promptCacheKey": "prompt_cache_key",
    "service_tier": "service_tier",
    "serviceTier": "service_tier",
    "metadata": "metadata",
}
"""``forwardedProps`` key -> Responses body key accepted from clients (``store`` and ``include``
are the operator's: route ``params`` only)."""

_NESTED: Final[dict[str, tuple[str, ...]]] = {
    "reasoning_effort": ("reasoning", "effort"),
    "reasoning_summary": ("reasoning", "summary"),
    "verbosity": ("text", "verbosity"),
}
_EMPTY_SCHEMA: Final[dict[str, Any]] = {"type": "object", "properties": {}}


def _part(part: ContentPart, where: str) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    source = part.source
    if isinstance(part, ImagePart):
        if isinstance(source, UrlSource):
            return {"type": "input_image", "image_url": source.value, "detail": "auto"}
        if isinstance(source, DataSource):
            return {"type": "input_image", "image_url": data_url(source), "detail": "auto"}
        return {"type": "input_image", "file_id": source.value, "detail": "auto"}
    if isinstance(part, DocumentPart):
        if isinstance(source, DataSource):
            filename = part_metadata(part, "filename") or "document"
            return {"type": "input_file", "filename": filename, "file_data": data_url(source)}
        if isinstance(source, UrlSource):
            return {"type": "input_file", "file_url": source.value}
        if isinstance(source, FileSource):
            return {"type": "input_file", "file_id": source.value}
    raise RequestTranslationError(f"{where}: a {part.type} part has no OpenAI Responses equivalent")


def _parts(content: list[ContentPart], where: str) -> list[dict[str, Any]]:
    return [_part(p, f"{where}.content[{i}]") for i, p in enumerate(content)]


def _user(message: UserMessage, index: int) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": "user", "content": message.content}
    return {"role": "user", "content": _parts(message.content, f"messages[{index}]")}


def _assistant(
    message: AssistantMessage, index: int, approvals: Approvals, hosted: HostedCalls
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if message.content:
        items.append({"role": "assistant", "content": message.content})
    for position, call in enumerate(message.tool_calls or []):
        function_call = {
            "type": "function_call",
            "call_id": call.id,
            "name": call.function.name,
            "arguments": call.function.arguments or "{}",
        }
        item: dict[str, Any] | None = function_call
        if approvals.answers_call(call.id):  # an answered approval: its rebuilt item, once
            item = approvals.call_item(function_call)
        elif hosted.is_hosted(index, position):  # provider-executed: never a function_call
            item = hosted.call_item(index, position)
        if item is not None:
            items.append(item)
    return items


def _reasoning(message: ReasoningMessage) -> list[dict[str, Any]]:
    encrypted = own_encrypted_value(message, PROVIDER)
    if encrypted is None:
        return []
    summary = [{"type": "summary_text", "text": message.content}] if message.content else []
    return [{"type": "reasoning", "summary": summary, "encrypted_content": encrypted}]


def _tool(message: ToolMessage, index: int) -> dict[str, Any]:
    output: str | list[dict[str, Any]]
    if isinstance(message.content, list) and message.content:
        output = _parts(message.content, f"messages[{index}]")
    else:
        output = tool_result_text(message)
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


def _tools(run_input: RunAgentInput) -> list[dict[str, Any]]:
    tools = []
    for tool in run_input.tools or []:
        item: dict[str, Any] = {"type": "function", "name": tool.name}
        if tool.description:
            item["description"] = tool.description
        item["parameters"] = tool.parameters if tool.parameters is not None else _EMPTY_SCHEMA
        item["strict"] = False
        tools.append(item)
    return tools


def _include(params: Mapping[str, Any], needed: bool) -> list[Any] | None:
    current = params.get("include")
    entries = list(current) if isinstance(current, list | tuple) else []
    if needed and ENCRYPTED_REASONING_INCLUDE not in entries:
        entries.append(ENCRYPTED_REASONING_INCLUDE)
    return entries or None


def to_openai_responses(
    run_input: RunAgentInput,
    *,
    model: str,
    params: Mapping[str, Any] | None = None,
    answers: Sequence[Answer] = (),
    interrupt_metadata: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Build the Responses API request body for ``run_input`` (see module docstring).

    Args:
        run_input: the AG-UI run input.
        model: the route's model.
        params: the route's default body parameters (``store``, ``include``, ``reasoning``...).
        answers: its ``resume[]`` entries read as approvals
            (:func:`agui_codecs.protocols._resume.answers`), sent as ``mcp_approval_response``.
        interrupt_metadata: ``{interruptId: Interrupt.metadata}`` of the answered interrupts
            (:attr:`ClientRequest.interrupt_metadata`), from which each answered
            ``mcp_approval_request`` item is rebuilt; none: only the responses are sent.

    Returns:
        The JSON body, ``stream: true``.

    Raises:
        RequestTranslationError: a content part has no Responses equivalent (audio, video; code
            ``UNSUPPORTED_CONTENT``).
    """
    merged = nest_params(
        merge_params(params or {}, run_input.forwarded_props, ALLOWED_PARAMS), _NESTED
    )
    store = merged.get("store", False) is True
    items: list[dict[str, Any]] = []
    approvals = Approvals(answers, interrupt_metadata or {})
    ordered = results_after_calls(run_input.messages)
    hosted = hosted_calls(ordered, (t.name for t in run_input.tools or ()), store=store)
    for index, message in ordered:
        if isinstance(message, UserMessage):
            items.append(_user(message, index))
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant(message, index, approvals, hosted))
        elif isinstance(message, ReasoningMessage):
            items.extend(_reasoning(message))
        elif isinstance(message, ToolMessage):
            if not hosted.is_hosted_result(index):  # a hosted result goes with its call
                items.append(_tool(message, index))
        elif isinstance(message, SystemMessage | DeveloperMessage | ActivityMessage):
            continue  # system text goes to ``instructions``; activities are UI only
    items.extend(approvals.tail())
    body: dict[str, Any] = {"model": model}
    instructions = system_text(run_input)
    if instructions is not None:
        body["instructions"] = instructions
    body["input"] = items
    tools = _tools(run_input)
    if tools:
        body["tools"] = tools
    body["store"] = False
    body.update(merged)
    has_encrypted = any(item.get("type") == "reasoning" for item in items)
    include = _include(merged, has_encrypted or "reasoning" in merged)
    if include is not None:
        body["include"] = include
    body["stream"] = True
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: :func:`~agui_codecs.protocols.check_conversation`, then
    :func:`to_openai_responses` of the request's ``RunAgentInput``.

    Raises:
        InvalidInputError: no conversation to send, or a ``resume[]`` entry that is no answer
            (``INVALID_REQUEST``).
        RequestTranslationError: see :func:`to_openai_responses`; also a tool result without
            its call (``INVALID_TOOL_RESULT``).
    """
    answered = answers(request)
    check_conversation(request.run_input)
    return to_openai_responses(
        request.run_input,
        model=model,
        params=params,
        answers=answered,
        interrupt_metadata=request.interrupt_metadata,
    )
