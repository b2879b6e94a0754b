"""Helpers shared by the request builders (AG-UI ``RunAgentInput`` -> provider request).

Pure functions, no I/O. The builders are the ``request`` modules of the protocol folders
(:mod:`agui_codecs.protocols.openai_chat.request`, ``anthropic``, ``openai_responses``,
``gemini``, and the passthrough ``ai_sdk`` and ``agui``); they share what a client posted
(:class:`ClientRequest`, public through :mod:`agui_codecs.protocols`), how model parameters
are picked and nested, how system messages and context become one system text, how media
parts are read, how tool arguments and results are parsed, and which opaque reasoning values
may be sent back to which provider, and in which order tool results must follow their calls
(:func:`results_after_calls`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    ContentPart,
    Context,
    DataSource,
    DeveloperMessage,
    FileSource,
    Message,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UrlSource,
)

from ..errors import InvalidInputError, RequestTranslationError
from ._reasoning_content import PROVIDER as REASONING_CONTENT_PROVIDER
from ._reasoning_content import is_mark as is_reasoning_content_mark
from ._reasoning_details import PROVIDER as REASONING_DETAILS_PROVIDER
from ._reasoning_details import parse_envelope

__all__ = [
    "RESERVED_KEYS",
    "ClientRequest",
    "ClientWire",
    "check_conversation",
    "context_text",
    "data_url",
    "decode_base64_text",
    "json_or_text",
    "media_type",
    "merge_params",
    "nest_params",
    "own_encrypted_value",
    "part_metadata",
    "provider_of",
    "results_after_calls",
    "system_text",
    "text_of",
    "tool_arguments_object",
    "tool_call_names",
    "tool_result_text",
]

RESERVED_KEYS = frozenset(
    {
        "model",
        "messages",
        "stream",
        "stream_options",
        "system",
        "tools",
        "input",
        "instructions",
        "contents",
        "systemInstruction",
    }
)
"""Body keys only the translator sets: neither route ``params`` nor ``forwardedProps`` win."""

ClientWire = Literal["agui", "ai-sdk"]
"""The endpoint a request came in on: ``/v1/agui/{route}`` or ``/v1/ai-sdk/{route}``."""


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """What a client posted, as the request translators see it.

    Attributes:
        run_input: the request as an AG-UI ``RunAgentInput`` (an AI SDK chat request is
            converted by :func:`agui_codecs.protocols.ai_sdk.chat_request.to_run_agent_input`).
        wire: the endpoint the request came in on.
        raw: the request body bytes exactly as received (JSON). Passthrough upstreams of the
            same protocol forward them untouched (the ``ai_sdk`` and ``agui`` builders); ``None``
            when the request did not come from HTTP.
        interrupt_calls: ``{interruptId: toolCallId}`` of the thread's open tool-approval
            interrupts (AG-UI ``Interrupt.toolCallId``), which the gateway reads from the run
            that raised them, so a ``resume[]`` entry finds its tool call
            (:mod:`agui_codecs.protocols._resume`).
        interrupt_metadata: ``{interruptId: metadata}`` of the same interrupts (AG-UI
            ``Interrupt.metadata``, a JSON object, as the decoder that raised them set it), read
            from the same stored run; the OpenAI Responses builder rebuilds an answered
            ``mcp_approval_request`` item from it
            (:mod:`agui_codecs.protocols.openai_responses._approvals`). Empty: nothing to
            rebuild, each builder's behaviour without it.
        upstream_ids: ``{gateway id: provider id}`` of the ids of the thread the gateway
            remapped because its store refuses them (an ``up-<32 hex>`` the client saw, for an
            overlong or NUL-holding provider id; ``gateway/upstream_ids.py``): the built body
            gets the provider's own id back (:func:`agui_codecs.identity.provider_body`).
    """

    run_input: RunAgentInput
    wire: ClientWire = "agui"
    raw: bytes | None = None
    interrupt_calls: Mapping[str, str] = field(default_factory=dict)
    interrupt_metadata: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    upstream_ids: Mapping[str, str] = field(default_factory=dict)


def merge_params(
    route_params: Mapping[str, Any],
    forwarded_props: Any,
    allowed: Mapping[str, str],
) -> dict[str, Any]:
    """Model parameters for the upstream body.

    Route ``params`` (operator-controlled) are taken as they are; ``forwardedProps`` keys
    (client-controlled) only when ``allowed`` names them, renamed to the upstream's key (so a
    client may send ``maxTokens`` or ``max_tokens``). Keys in :data:`RESERVED_KEYS` are dropped
    from both, and ``None`` values from the client are ignored.

    Args:
        route_params: the route's ``params`` table.
        forwarded_props: ``RunAgentInput.forwardedProps`` (any JSON; only an object is read).
        allowed: accepted client key -> upstream key.

    Returns:
        The parameters, client values overriding route defaults.
    """
    out = {k: v for k, v in route_params.items() if k not in RESERVED_KEYS}
    if isinstance(forwarded_props, Mapping):
        for key, value in forwarded_props.items():
            target = allowed.get(key)
            if target is not None and value is not None and target not in RESERVED_KEYS:
                out[target] = value
    return out


def nest_params(params: Mapping[str, Any], moves: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Move flat parameter keys to nested body paths, merging into objects already there.

    Example: ``nest_params({"reasoning_effort": "low", "reasoning": {"summary": "auto"}},
    {"reasoning_effort": ("reasoning", "effort")})`` is ``{"reasoning": {"summary": "auto",
    "effort": "low"}}``. A flat key wins over the same nested key already present. The input is
    not modified (nested objects on the path are copied).

    Args:
        params: parameters as :func:`merge_params` returns them.
        moves: flat key -> path of keys (at least one) where its value goes.
    """
    out = dict(params)
    for key, path in moves.items():
        if key not in out:
            continue
        value = out.pop(key)
        node = out
        for part in path[:-1]:
            child = node.get(part)
            node[part] = dict(child) if isinstance(child, Mapping) else {}
            node = node[part]
        node[path[-1]] = value
    return out


def system_text(run_input: RunAgentInput) -> str | None:
    """System and developer messages, then the rendered ``context``, joined by blank lines.

    For providers with one top-level system field (Anthropic ``system``, OpenAI Responses
    ``instructions``, Gemini ``systemInstruction``). Empty messages are skipped; ``None`` when
    nothing is left.
    """
    texts = [
        m.content
        for m in run_input.messages
        if isinstance(m, SystemMessage | DeveloperMessage) and m.content
    ]
    context = context_text(run_input.context)
    if context is not None:
        texts.append(context)
    return "\n\n".join(texts) if texts else None


def context_text(context: list[Context] | None) -> str | None:
    """Render AG-UI ``context`` entries as one system text, or ``None`` when there are none.

    Shape: ``"Context from the application:\\n\\n<description>:\\n<value>\\n\\n..."``.
    """
    if not context:
        return None
    items = "\n\n".join(f"{c.description}:\n{c.value}" for c in context)
    return f"Context from the application:\n\n{items}"


def text_of(content: str | list[ContentPart] | None) -> str:
    """The text of a message body: the string, or its text parts joined (media dropped)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.text for p in content if isinstance(p, TextPart))


def media_type(source: DataSource | UrlSource | FileSource, default: str) -> str:
    """The source's ``mimeType``, else ``default``."""
    return source.mime_type or default


def data_url(source: DataSource) -> str:
    """``data:<mime>;base64,<value>`` for an inline source (RFC 2397)."""
    return f"data:{source.mime_type};base64,{source.value}"


def decode_base64_text(source: DataSource, where: str) -> str:
    """Decode an inline text document (UTF-8).

    Raises:
        RequestTranslationError: the value is not base64 or not UTF-8 (code ``INVALID_CONTENT``).
    """
    try:
        return base64.b64decode(source.value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise RequestTranslationError(
            f"{where}: data is not base64-encoded UTF-8 text", code="INVALID_CONTENT"
        ) from exc


def part_metadata(part: Any, key: str) -> str | None:
    """A string entry of a content part's ``metadata`` object (e.g. ``filename``), if any."""
    meta = getattr(part, "metadata", None)
    if isinstance(meta, Mapping):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tool_arguments_object(arguments: str, where: str) -> dict[str, Any]:
    """Parse a tool call's ``function.arguments`` (a JSON text) into an object.

    An empty string is ``{}`` (some providers stream no argument text for a call without
    parameters).

    Raises:
        RequestTranslationError: not JSON, or JSON that is not an object (code
            ``INVALID_TOOL_ARGUMENTS``); providers that take parsed input (Anthropic
            ``tool_use.input``) reject anything but an object.
    """
    if not arguments.strip():
        return {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        raise RequestTranslationError(
            f"{where}: tool call arguments are not valid JSON", code="INVALID_TOOL_ARGUMENTS"
        ) from exc
    if not isinstance(value, dict):
        raise RequestTranslationError(
            f"{where}: tool call arguments are not a JSON object", code="INVALID_TOOL_ARGUMENTS"
        )
    return value


def json_or_text(text: str) -> Any:
    """``text`` parsed as JSON, or the string itself when it is not JSON (tool outputs)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def tool_result_text(message: ToolMessage) -> str:
    """A tool message's text: its content (text parts joined), else its ``error`` text."""
    return text_of(message.content) or (message.error or "")


def tool_call_names(messages: Sequence[Message]) -> dict[str, str]:
    """``{toolCallId: tool name}`` of every assistant tool call in ``messages``.

    A tool result carries only the call id; providers that want the name back with the result
    (Gemini ``functionResponse.name``) look it up here.
    """
    names: dict[str, str] = {}
    for message in messages:
        for call in getattr(message, "tool_calls", None) or []:
            names[call.id] = call.function.name
    return names


def check_conversation(run_input: RunAgentInput) -> None:
    """Refuse what every provider API rejects, before any upstream request (a clear 422 is
    better than the provider's 400 wrapped in a stream).

    Raises:
        InvalidInputError: ``messages`` is empty, or holds only system / developer /
            activity messages (no turn to answer; code ``INVALID_REQUEST``).
        RequestTranslationError: a tool message whose ``toolCallId`` matches no tool call of an
            earlier assistant message (code ``INVALID_TOOL_RESULT``; OpenAI, Anthropic and
            Gemini all refuse an orphan result).
    """
    messages = run_input.messages
    if not messages:
        raise InvalidInputError("messages is empty: send at least one user message")
    if all(isinstance(m, SystemMessage | DeveloperMessage | ActivityMessage) for m in messages):
        raise InvalidInputError("messages holds no user, assistant or tool message")
    calls: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            calls.update(call.id for call in message.tool_calls or ())
        elif isinstance(message, ToolMessage) and message.tool_call_id not in calls:
            raise RequestTranslationError(
                f"messages[{index}]: tool result for call {message.tool_call_id!r}, which no "
                "earlier assistant message made",
                code="INVALID_TOOL_RESULT",
            )


def provider_of(holder: Any) -> str | None:
    """The provider a message or tool call says it came from (``metadata.provider``), if any."""
    meta = getattr(holder, "metadata", None)
    origin = meta.get("provider") if isinstance(meta, Mapping) else None
    return origin if isinstance(origin, str) and origin else None


def own_encrypted_value(holder: Any, provider: str) -> str | None:
    """The ``encryptedValue`` of a message or tool call, if it may be sent to ``provider``.

    Opaque reasoning artefacts (signatures, encrypted reasoning) are only valid for the provider
    that issued them. REASONING_ENCRYPTED_VALUE carries ``metadata.provider``
    (ARCHITECTURE.md); when the holder's ``metadata`` names a provider, the value is returned
    only for that provider. Without provenance (``@ag-ui/client`` 1.0 stores the value but not
    the event's metadata) the value is assumed to come from the route's own provider, except
    an OpenRouter ``reasoning_details`` envelope and the DeepSeek ``reasoning_content`` mark,
    which say where they are from (:mod:`agui_codecs.protocols._reasoning_details`,
    :mod:`agui_codecs.protocols._reasoning_content`).

    Args:
        holder: an AG-UI message or ``ToolCall`` (anything with ``encrypted_value`` and
            ``metadata`` attributes).
        provider: the decoder's provider label of the route (``"openai"``, ``"google"``...).
    """
    value = getattr(holder, "encrypted_value", None)
    if not isinstance(value, str) or not value:
        return None
    origin = provider_of(holder)
    if origin is None and parse_envelope(value) is not None:
        origin = REASONING_DETAILS_PROVIDER  # an OpenRouter reasoning_details entry
    elif origin is None and is_reasoning_content_mark(value):
        origin = REASONING_CONTENT_PROVIDER  # DeepSeek's reasoning_content mark
    return value if origin is None or origin == provider else None


def results_after_calls(messages: Sequence[Message]) -> list[tuple[int, Message]]:
    """``messages`` with every tool result moved directly after the assistant message that
    made its call, as ``(index in messages, message)`` pairs (indices for error locations).

    Strict providers refuse anything between a call and its result: OpenAI Chat Completions
    wants the ``tool`` messages of every call id right after the assistant message with
    ``tool_calls`` ("Create chat completion", ``messages`` -> tool message), Anthropic the
    ``tool_result`` blocks first in the next ``user`` message (Messages API, "Tool use",
    handling tool results), Gemini the
    ``functionResponse`` turn right after the ``functionCall`` turn ("Function calling",
    multi-turn), Bedrock Converse the ``toolResult`` in the next ``user`` message. AG-UI
    histories often hold text in between (a frontend tool, an approval turn: the assistant's
    "please confirm", the user's "yes", then the result); that text is moved after the results,
    never dropped. A result belongs to the latest earlier assistant message that made its call id
    (ids reused by a later turn stay with that turn). Results keep their relative order;
    everything else keeps its order; a result for a call no earlier assistant message made
    (refused by :func:`check_conversation`) and a call still waiting for its result are left
    where they are. Nothing is added or removed: the output is a permutation of the input.

    Args:
        messages: ``RunAgentInput.messages``.

    Returns:
        ``[(index, message), ...]``, each index of ``messages`` exactly once.
    """
    owner: dict[str, int] = {}  # call id -> index of the latest assistant message making it
    results: dict[int, list[int]] = {}  # assistant index -> indices of the results it owns
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                owner[call.id] = index
        elif isinstance(message, ToolMessage) and message.tool_call_id in owner:
            results.setdefault(owner[message.tool_call_id], []).append(index)
    moved = {i for owned in results.values() for i in owned}
    out: list[tuple[int, Message]] = []
    for index, message in enumerate(messages):
        if index in moved:
            continue
        out.append((index, message))
        out.extend((i, messages[i]) for i in results.get(index, ()))
    return out
