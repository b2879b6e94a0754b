"""AG-UI ``RunAgentInput`` -> Gemini ``streamGenerateContent`` request body.

``POST {base}/models/{model}:streamGenerateContent?alt=sse`` with the key in ``x-goog-api-key``.
Follows the Gemini API reference (v1beta, 2025-2026: ``GenerateContentRequest``: ``contents`` of
``Content {role: "user" | "model", parts}``, ``Part`` with ``text`` / ``thought`` /
``thoughtSignature`` / ``inlineData`` / ``fileData`` / ``functionCall {id, name, args}`` /
``functionResponse {id, name, response}``, ``systemInstruction``, ``tools[].functionDeclarations``
with ``parametersJsonSchema``, ``generationConfig``) and the thought-signature guide
(ai.google.dev/gemini-api/docs/thought-signatures: a signature goes back on the part it came
with; Gemini 3 rejects a ``functionCall`` of the current turn without one, and documents the
``skip_thought_signature_validator`` value for calls whose signature was lost). Where the
reference is silent, ``@ai-sdk/google`` (vercel/ai ``packages/google/src/
convert-to-google-messages.ts``, ``google-prepare-tools.ts``) is followed. Mapping:

=====================  =============================================================================
AG-UI                  Gemini
=====================  =============================================================================
system / developer     ``systemInstruction: {parts: [{text}]}`` (joined by blank lines, context
 + context[]           last); omitted when empty
user                   ``user`` content: ``{text}``; media with inline data ->
                       ``{inlineData: {mimeType, data}}``; URL or provider file ->
                       ``{fileData: {fileUri, mimeType?}}``
reasoning              ``model`` part ``{text, thought: true, thoughtSignature?}`` when it has
                       text (a signature-only reasoning message is dropped: only function-call
                       signatures are required)
assistant              ``model`` parts: ``{text, thoughtSignature?}`` (the message's
                       ``encryptedValue``), then ``{functionCall: {id, name, args},
                       thoughtSignature?}`` per tool call (the call's ``encryptedValue``); a
                       code execution Gemini ran is ``{executableCode, thoughtSignature?}``
                       then ``{codeExecutionResult}``, never a ``functionCall``
                       (:mod:`~agui_codecs.protocols.gemini._code_execution`)
tool                   ``user`` content of ``{functionResponse: {id, name, response}}`` parts;
                       ``name`` is the name of the call with that id (required to match),
                       ``response`` is ``{"output": <the result, parsed as JSON when it is>}``
                       or ``{"error": <text>}`` (the keys the reference documents); media
                       parts of the result go, for Gemini 3 models, in
                       ``functionResponse.parts`` (``FunctionResponsePart`` ``inlineData`` /
                       ``fileData``, "Multimodal function responses"), for older models as
                       top-level ``inlineData`` / ``fileData`` parts after the responses of
                       the content (``@ai-sdk/google`` 3.0.141
                       ``convert-to-google-generative-ai-messages.ts``, legacy tool results)
activity               not sent
tools[]                ``[{functionDeclarations: [{name, description?, parametersJsonSchema?}]}]``
                       (JSON Schema as given; the OpenAPI-subset ``parameters`` rejects keys
                       such as ``additionalProperties``)
=====================  =============================================================================

Consecutive items of the same kind are merged into one content (a model turn's reasoning, text
and calls; parallel function responses, which Gemini wants together), and a content with no
parts is dropped. Signatures are sent only when they belong to Google
(:func:`~agui_codecs.protocols._request.own_encrypted_value`). For Gemini 3 models a
``functionCall`` with no signature that is the first call of its turn gets
``skip_thought_signature_validator``.

Parameters: route ``params`` are top-level body keys (``safetySettings``, ``toolConfig``,
``generationConfig``...); ``forwardedProps`` keys in :data:`ALLOWED_PARAMS` are accepted from
clients. Flat generation keys from either (``temperature``, ``maxOutputTokens``,
``thinkingBudget``...) are nested into ``generationConfig`` (``thinkingConfig`` for the thinking
keys), winning over the same key inside a route's ``generationConfig``.

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
    ReasoningMessage,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)

from ...errors import RequestTranslationError
from .._request import (
    ClientRequest,
    check_conversation,
    json_or_text,
    media_type,
    merge_params,
    nest_params,
    own_encrypted_value,
    provider_of,
    results_after_calls,
    system_text,
    tool_arguments_object,
    tool_call_names,
    tool_result_text,
)
from .._resume import with_tool_results
from ._code_execution import CodeCalls, code_calls

__all__ = [
    "ALLOWED_PARAMS",
    "PROVIDER",
    "SKIP_SIGNATURE",
    "build_request",
    "gemini_model_path",
    "to_gemini",
]

PROVIDER: Final = "google"
"""Provider label of the Gemini decoder (owner of the thought signatures sent back)."""

SKIP_SIGNATURE: Final = "skip_thought_signature_validator"
"""The documented ``thoughtSignature`` for a replayed Gemini 3 function call whose own signature
is not available."""

_GENERATION: Final[tuple[str, ...]] = (
    "temperature",
    "topP",
    "topK",
    "maxOutputTokens",
    "stopSequences",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "candidateCount",
    "responseMimeType",
    "responseJsonSchema",
    "responseModalities",
    "mediaResolution",
    "thinkingConfig",
)
_THINKING: Final[tuple[str, ...]] = ("thinkingBudget", "thinkingLevel", "includeThoughts")

ALLOWED_PARAMS: dict[str, str] = {
    **{key: key for key in _GENERATION + _THINKING},
    "top_p": "topP",
    "top_k": "topK",
    "max_tokens": "maxOutputTokens",
    "maxTokens": "maxOutputTokens",
    "max_output_tokens": "maxOutputTokens",
    "stop_sequences": "stopSequences",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
    "thinking_budget": "thinkingBudget",
    "thinking_level": "thinkingLevel",
    "include_thoughts": "includeThoughts",
    "toolConfig": "toolConfig",
    "tool_config": "toolConfig",
}
"""``forwardedProps`` key -> Gemini key accepted from clients (generation keys are then nested
into ``generationConfig``; ``toolConfig`` stays top-level)."""

_NESTED: Final[dict[str, tuple[str, ...]]] = {
    **{key: ("generationConfig", key) for key in _GENERATION},
    **{key: ("generationConfig", "thinkingConfig", key) for key in _THINKING},
}


def gemini_model_path(model: str) -> str:
    """The ``{model}`` segment of the endpoint: the route's model without a ``models/`` prefix."""
    return model.removeprefix("models/")


def _part(part: ContentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    source = part.source
    if isinstance(source, DataSource):
        return {"inlineData": {"mimeType": source.mime_type, "data": source.value}}
    file_data: dict[str, Any] = {"fileUri": source.value}
    if source.mime_type:
        file_data["mimeType"] = media_type(source, "")
    return {"fileData": file_data}


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": message.content}] if message.content else []
    return [_part(p) for p in message.content if not (isinstance(p, TextPart) and not p.text)]


def _reasoning_parts(message: ReasoningMessage) -> list[dict[str, Any]]:
    origin = provider_of(message)
    if not message.content or (origin is not None and origin != PROVIDER):
        return []  # nothing to show, or another provider's reasoning (not a Gemini thought)
    part: dict[str, Any] = {"text": message.content, "thought": True}
    signature = own_encrypted_value(message, PROVIDER)
    if signature is not None:
        part["thoughtSignature"] = signature
    return [part]


def _assistant_parts(
    message: AssistantMessage, index: int, code: CodeCalls, *, gemini3: bool
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.content:
        text: dict[str, Any] = {"text": message.content}
        signature = own_encrypted_value(message, PROVIDER)
        if signature is not None:
            text["thoughtSignature"] = signature
        parts.append(text)
    signed_batch = False  # Gemini 3 signs only the first call of a parallel batch
    for n, call in enumerate(message.tool_calls or []):
        if code.is_provider(index, n):  # Gemini ran it: its own parts, never a functionCall
            native = code.parts(index, n)
            if native is not None:
                executable, result = dict(native[0]), native[1]
                signature = own_encrypted_value(call, PROVIDER)
                if signature is not None:
                    executable["thoughtSignature"] = signature
                parts += [executable, result]
            continue
        where = f"messages[{index}].toolCalls[{n}]"
        args = tool_arguments_object(call.function.arguments, where)
        part: dict[str, Any] = {
            "functionCall": {"id": call.id, "name": call.function.name, "args": args}
        }
        signature = own_encrypted_value(call, PROVIDER)
        if signature is None and gemini3 and not signed_batch:
            signature = SKIP_SIGNATURE
        if signature is not None:
            part["thoughtSignature"] = signature
            signed_batch = True
        parts.append(part)
    return parts


def _function_response(
    message: ToolMessage, names: Mapping[str, str], index: int, *, gemini3: bool
) -> list[dict[str, Any]]:
    name = names.get(message.tool_call_id)
    if name is None:
        raise RequestTranslationError(
            f"messages[{index}]: tool result for call {message.tool_call_id!r}, which no "
            "assistant message made (Gemini needs the function name with the result)",
            code="INVALID_TOOL_RESULT",
        )
    text = tool_result_text(message)
    response = {"error": text} if message.error else {"output": json_or_text(text)}
    result: dict[str, Any] = {"id": message.tool_call_id, "name": name, "response": response}
    content = message.content if isinstance(message.content, list) else []
    media = [_part(p) for p in content if not isinstance(p, TextPart)]
    if media and gemini3:
        result["parts"] = media  # FunctionResponse.parts: FunctionResponsePart inlineData/fileData
        return [{"functionResponse": result}]
    return [{"functionResponse": result}, *media]  # before Gemini 3: top-level media parts


def _tools(run_input: RunAgentInput) -> list[dict[str, Any]]:
    declarations = []
    for tool in run_input.tools or []:
        item: dict[str, Any] = {"name": tool.name}
        if tool.description:
            item["description"] = tool.description
        if tool.parameters is not None:
            item["parametersJsonSchema"] = tool.parameters
        declarations.append(item)
    return [{"functionDeclarations": declarations}] if declarations else []


def to_gemini(
    run_input: RunAgentInput, *, model: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Build the ``streamGenerateContent`` request body for ``run_input`` (see module docstring).

    Args:
        run_input: the AG-UI run input.
        model: the route's model (decides the Gemini 3 signature rule).
        params: the route's default body parameters.

    Returns:
        The JSON body (streaming is chosen by the endpoint, not the body).

    Raises:
        RequestTranslationError: tool call arguments that are not a JSON object
            (``INVALID_TOOL_ARGUMENTS``); a tool result whose call is not in the history
            (``INVALID_TOOL_RESULT``).
    """
    gemini3 = gemini_model_path(model).startswith("gemini-3")
    names = tool_call_names(run_input.messages)
    contents: list[dict[str, Any]] = []
    kinds: list[str] = []

    def add(kind: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if kinds and kinds[-1] == kind:
            current = contents[-1]["parts"]
            if kind == "function-response":  # responses first, media of older models after
                at = sum("functionResponse" in p for p in current)
                current[at:at] = [p for p in parts if "functionResponse" in p]
                current.extend(p for p in parts if "functionResponse" not in p)
            else:
                current.extend(parts)
            return
        kinds.append(kind)
        contents.append({"role": "user" if kind != "model" else "model", "parts": parts})

    ordered = results_after_calls(run_input.messages)
    code = code_calls(ordered, (t.name for t in run_input.tools or ()))
    for index, message in ordered:
        if isinstance(message, UserMessage):
            add("user", _user_parts(message))
        elif isinstance(message, ReasoningMessage):
            add("model", _reasoning_parts(message))
        elif isinstance(message, AssistantMessage):
            add("model", _assistant_parts(message, index, code, gemini3=gemini3))
        elif isinstance(message, ToolMessage) and not code.is_provider_result(index):
            add(
                "function-response",
                _function_response(message, names, index, gemini3=gemini3),
            )
        elif isinstance(message, SystemMessage | DeveloperMessage | ActivityMessage):
            continue  # system text goes to ``systemInstruction``; activities are UI only
    body: dict[str, Any] = {"contents": contents}
    system = system_text(run_input)
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    tools = _tools(run_input)
    if tools:
        body["tools"] = tools
    body.update(
        nest_params(merge_params(params or {}, run_input.forwarded_props, ALLOWED_PARAMS), _NESTED)
    )
    return body


def build_request(
    request: ClientRequest, *, model: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The spec's request builder: the ``resume[]`` answers as tool results
    (:func:`~agui_codecs.protocols._resume.with_tool_results`: this API has no tool approval),
    :func:`~agui_codecs.protocols.check_conversation`, then
    :func:`to_gemini` of the request's ``RunAgentInput``.

    Raises:
        InvalidInputError: no conversation to send, or a ``resume[]`` entry that is no answer
            or names no tool call of ``messages`` (``INVALID_REQUEST``).
        RequestTranslationError: see :func:`to_gemini`; also a tool result without its call
            (``INVALID_TOOL_RESULT``), or an approval without ``payload.result``
            (``INVALID_TOOL_RESULT``: the gateway does not execute tools).
    """
    run_input = with_tool_results(request)
    check_conversation(run_input)
    return to_gemini(run_input, model=model, params=params)
