"""DeepSeek thinking-mode ``reasoning_content``: marked on the stream, sent back next request.

Source: DeepSeek API docs, "Thinking Mode" guide (https://api-docs.deepseek.com/guides/
thinking_mode, read 2026-12): in thinking mode the chain of thought streams as
``delta.reasoning_content``, beside ``content``. Between two ``user`` messages, when the model
made tool calls, the assistant message's ``reasoning_content`` "must participate in the context
concatenation and must be passed back to the API in all subsequent user interaction turns";
without it the API answers HTTP 400 "The reasoning_content in the thinking mode must be passed
back to the API". Reasoning of a turn without tool calls is ignored when sent back.

How it travels through AG-UI (docs/protocols.md §4.1): the reasoning text is the reasoning
message's content (REASONING_MESSAGE_CONTENT); the message also carries a *mark*, a small
self-describing JSON envelope ``{"type":"reasoning_content"}``, as one
REASONING_ENCRYPTED_VALUE ``metadata: {provider: "deepseek", field: "reasoningContent"}``
emitted just before the message ends
(:meth:`~agui_codecs.builder.RunBuilder.hold_reasoning_encrypted`). ``@ag-ui/client`` 1.0 keeps
only ``encryptedValue`` and ``ai`` keeps ``providerMetadata.deepseek.reasoningContent``, and the
mark alone says where the text came from, so the Chat Completions request builder sends the
marked text back and no other route mistakes the mark for its own signature
(:func:`agui_codecs.protocols._request.own_encrypted_value`).

Only ``delta.reasoning_content`` is marked: ``delta.reasoning`` (OpenRouter, Groq) and Mistral
``thinking`` content parts are other providers' fields, sent back (or not) their own way.
"""

from __future__ import annotations

from typing import Any, Final

from .. import jsontext

__all__ = ["FIELD", "MARK", "PROVIDER", "is_mark"]

PROVIDER: Final = "deepseek"
"""``metadata.provider`` of the mark (the AI SDK ``providerMetadata`` namespace)."""

FIELD: Final = "reasoningContent"
"""``metadata.field`` of the mark (the key under ``providerMetadata.deepseek``)."""

MARK: Final = '{"type":"reasoning_content"}'
"""The mark's ``encryptedValue``: compact JSON, ``type`` naming the request field it feeds."""


def is_mark(value: Any) -> bool:
    """True when ``value`` (an ``encryptedValue``) is the ``reasoning_content`` mark: a JSON
    object whose ``type`` is ``reasoning_content`` (spacing and extra keys allowed)."""
    if not isinstance(value, str) or not value.startswith("{"):
        return False
    try:
        parsed, _ = jsontext.parse(value)
    except (jsontext.JSONDecodeError, UnicodeError):
        return False
    return isinstance(parsed, dict) and parsed.get("type") == "reasoning_content"
