"""Endings: one table of how each upstream's terminal reason becomes the canonical one.

Every decoder maps its provider's own finish value through :func:`canonical_finish` (the
tables below, one per wire), and :meth:`agui_codecs.builder.RunBuilder.finish` applies the one
reconciliation rule, :func:`reconcile_finish`, so that a turn ends with exactly one terminal
reason whatever the upstream said, or said twice:

==========================  =================================================================
received                    RUN_FINISHED
==========================  =================================================================
a turn that produced        ``finishReason: "tool-calls"``, ``outcome.pendingToolCallIds``;
client tool calls, ending   the provider said ``stop`` (Ollama, some vLLM builds), a later
``stop`` / ``other`` /      ``stop`` after ``tool_calls``, or nothing at all (``[DONE]``
nothing                     without ``finish_reason``)
``length``,                 kept as received: the turn was cut or filtered, a pending call
``content-filter``,         is not presented as a complete request; tool calls still open
``error``                   when a ``length`` turn ends are closed with TOOL_CALL_END
                            ``metadata.incomplete``
a stream marker with no     ``finishReason: "other"`` (``tool-calls`` by the first rule):
reason (``[DONE]`` alone)   a normal end; only EOF before the protocol's final marker is
                            truncation (RUN_ERROR ``UPSTREAM_TRUNCATED``)
==========================  =================================================================

``providerFinishReason`` keeps the upstream's own value as received (when it sent several, the
decoder keeps the decisive one: for OpenAI Chat the first other than ``stop``); it is absent
when the upstream sent none. Interrupt and cancelled outcomes are not
reconciled (their reason is ``other``).

Sources: OpenAI Chat Completions reference (``finish_reason``: stop, length, tool_calls,
content_filter, function_call); Anthropic Messages ``stop_reason``; Gemini ``FinishReason``
(``generativelanguage`` v1beta); Bedrock ``ConverseStream`` ``StopReason``; OpenAI Responses
``incomplete_details.reason``; the AI SDK ``FinishReason`` union (``ai`` 5, 6, 7:
``docs/protocols.md`` §3.3 rule 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "ANTHROPIC_STOP_REASONS",
    "BEDROCK_STOP_REASONS",
    "FINISH_REASONS",
    "GEMINI_ERROR_FINISH_REASONS",
    "GEMINI_FINISH_REASONS",
    "OPENAI_CHAT_FINISH_REASONS",
    "OPENAI_INCOMPLETE_REASONS",
    "canonical_finish",
    "reconcile_finish",
]

FINISH_REASONS: Final = frozenset(
    {"stop", "length", "tool-calls", "content-filter", "error", "other"}
)
"""Canonical finish reasons (AI SDK ``FinishReason`` names accepted by ai v5, v6 and v7)."""

OPENAI_CHAT_FINISH_REASONS: Final[Mapping[str, str]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}
"""OpenAI Chat Completions ``choices[].finish_reason`` (and compatible hosts)."""

OPENAI_INCOMPLETE_REASONS: Final[Mapping[str, str]] = {
    "max_output_tokens": "length",
    "content_filter": "content-filter",
}
"""OpenAI Responses ``response.incomplete`` ``incomplete_details.reason``."""

ANTHROPIC_STOP_REASONS: Final[Mapping[str, str]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}
"""Anthropic Messages ``message_delta.delta.stop_reason``."""

BEDROCK_STOP_REASONS: Final[Mapping[str, str]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "guardrail_intervened": "content-filter",
    "content_filtered": "content-filter",
}
"""Bedrock ``ConverseStream`` ``messageStop.stopReason``."""

GEMINI_FINISH_REASONS: Final[Mapping[str, str]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content-filter",
    "RECITATION": "content-filter",
    "BLOCKLIST": "content-filter",
    "PROHIBITED_CONTENT": "content-filter",
    "SPII": "content-filter",
    "IMAGE_SAFETY": "content-filter",
    "IMAGE_PROHIBITED_CONTENT": "content-filter",
    "IMAGE_RECITATION": "content-filter",
}
"""Gemini ``candidates[].finishReason``."""

GEMINI_ERROR_FINISH_REASONS: Final = frozenset(
    {
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "MISSING_THOUGHT_SIGNATURE",
        "MALFORMED_RESPONSE",
    }
)
"""Gemini finish reasons that mean the turn failed: RUN_ERROR with the reason as ``code``."""

_RECONCILED: Final = frozenset({"stop", "other"})


def canonical_finish(table: Mapping[str, str], received: object) -> str:
    """The canonical reason for the provider value ``received`` under ``table``.

    Returns ``other`` for a value the table does not list and for ``None`` (no reason sent:
    :func:`reconcile_finish` still turns it into ``tool-calls`` for a tool turn).
    """
    if isinstance(received, str):
        return table.get(received, "other")
    return "other"


def reconcile_finish(finish_reason: str, *, pending_tool_calls: bool) -> str:
    """The one terminal reason of a turn that ended with success (see the module table).

    Args:
        finish_reason: the canonical reason the decoder derived, one of :data:`FINISH_REASONS`.
        pending_tool_calls: the turn produced client tool calls not answered by a result.

    Returns:
        ``tool-calls`` for a tool turn the upstream ended ``stop`` / ``other``; else
        ``finish_reason`` unchanged.
    """
    if pending_tool_calls and finish_reason in _RECONCILED:
        return "tool-calls"
    return finish_reason
