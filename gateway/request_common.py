"""Helpers shared by the request translators (AG-UI ``RunAgentInput`` -> provider request).

Pure functions, no I/O. The translators themselves are :mod:`gateway.request_openai` and
:mod:`gateway.request_anthropic`; they share how model parameters are picked, how context
becomes system text, how media parts are read and how tool arguments are parsed.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import orjson
from ag_ui.core import (
    ContentPart,
    Context,
    DataSource,
    FileSource,
    TextPart,
    UrlSource,
)

from .errors import TranslationError

__all__ = [
    "RESERVED_KEYS",
    "context_text",
    "data_url",
    "decode_base64_text",
    "media_type",
    "merge_params",
    "part_metadata",
    "text_of",
    "tool_arguments_object",
]

RESERVED_KEYS = frozenset({"model", "messages", "stream", "stream_options", "system", "tools"})
"""Body keys only the translator sets: neither route ``params`` nor ``forwardedProps`` win."""


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
        TranslationError: the value is not base64 or not UTF-8 (code ``INVALID_CONTENT``).
    """
    try:
        return base64.b64decode(source.value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise TranslationError(
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
        TranslationError: not JSON, or JSON that is not an object (code
            ``INVALID_TOOL_ARGUMENTS``); providers that take parsed input (Anthropic
            ``tool_use.input``) reject anything but an object.
    """
    if not arguments.strip():
        return {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        raise TranslationError(
            f"{where}: tool call arguments are not valid JSON", code="INVALID_TOOL_ARGUMENTS"
        ) from exc
    if not isinstance(value, dict):
        raise TranslationError(
            f"{where}: tool call arguments are not a JSON object", code="INVALID_TOOL_ARGUMENTS"
        )
    return value
