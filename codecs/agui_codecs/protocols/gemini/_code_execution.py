"""Gemini code execution of a history, sent back as the model's own parts.

Part of :mod:`agui_codecs.protocols.gemini.request` (issue 11, kinds 5/6; ``docs/protocols.md``
§4.2). The decoder opens an ``executableCode`` part as a tool call ``code_execution`` with
TOOL_CALL_START ``metadata.providerExecuted`` (arguments ``{language, code}``) and its
``codeExecutionResult`` as TOOL_CALL_RESULT ``{outcome, output}`` (``gemini.decoder``);
``@ag-ui/client`` 1.0.0 keeps that metadata on the tool call (``defaultApplyEvents``,
TOOL_CALL_START). Gemini ran that code itself: sent back as ``functionCall`` /
``functionResponse`` it names a function the request never declared. The model turn goes
back with the parts it had (Gemini API reference, ``Content.parts``: ``Part.executableCode
{language, code}``, ``Part.codeExecutionResult {outcome, output}``), the call's own
``thoughtSignature`` on the ``executableCode`` part (thought-signature guide: a signature goes
back on the part it came with).

**Known as code execution** (:func:`code_calls`) when the call is named ``code_execution`` and
is not a declared tool, and either its ``metadata.providerExecuted`` is ``true`` or its result
is a JSON object with an ``outcome`` (the decoder's result shape). Another provider-executed
call (a history from another provider) has no Gemini part and is left out with its results;
so is a code call without a result that parses, whose ``codeExecutionResult`` cannot be made.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import orjson
from ag_ui.core import AssistantMessage, Message, ToolCall, ToolMessage

__all__ = ["CODE_EXECUTION", "CodeCalls", "code_calls"]

CODE_EXECUTION: Final = "code_execution"
"""The AG-UI name of an ``executableCode`` call (the decoder's)."""


def _flagged(call: ToolCall) -> bool:
    meta = call.metadata
    return isinstance(meta, dict) and meta.get("providerExecuted") is True


def _object(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class CodeCalls:
    """The provider-executed calls of one history and the parts each becomes (module
    docstring). Calls are keyed ``(message index, position)``; results by message index."""

    __slots__ = ("_calls", "_parts", "_results")

    def __init__(
        self,
        calls: set[tuple[int, int]],
        results: set[int],
        parts: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any]]],
    ) -> None:
        self._calls = calls
        self._results = results
        self._parts = parts

    def is_provider(self, index: int, position: int) -> bool:
        """True when call ``position`` of message ``index`` was executed by the provider."""
        return (index, position) in self._calls

    def is_provider_result(self, index: int) -> bool:
        """True when the ``tool`` message at ``index`` is such a call's result."""
        return index in self._results

    def parts(self, index: int, position: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``({executableCode}, {codeExecutionResult})`` of a code call, ``None`` when the call
        is left out (the caller adds the call's ``thoughtSignature`` to the first)."""
        return self._parts.get((index, position))


def code_calls(ordered: Iterable[tuple[int, Message]], declared: Iterable[str]) -> CodeCalls:
    """Classify the calls of a history (module docstring).

    Args:
        ordered: the history as :func:`~agui_codecs.protocols._request.results_after_calls`
            gives it (``(index, message)``, each result after its call).
        declared: the names of the request's ``tools[]``.
    """
    names = set(declared)
    owner: dict[str, tuple[int, int]] = {}
    made: dict[tuple[int, int], ToolCall] = {}
    calls: set[tuple[int, int]] = set()
    code: set[tuple[int, int]] = set()  # named code_execution, not declared
    results: dict[int, tuple[int, int]] = {}
    outcomes: dict[tuple[int, int], dict[str, Any]] = {}
    for index, message in ordered:
        if isinstance(message, AssistantMessage):
            for position, call in enumerate(message.tool_calls or ()):
                key = (index, position)
                owner[call.id], made[key] = key, call
                if call.function.name == CODE_EXECUTION and CODE_EXECUTION not in names:
                    code.add(key)
                if _flagged(call):
                    calls.add(key)
        elif isinstance(message, ToolMessage) and message.tool_call_id in owner:
            key = owner[message.tool_call_id]
            results[index] = key
            result = _object(message.content)
            if key in code and result is not None and "outcome" in result:
                calls.add(key)
                outcomes.setdefault(key, result)
    parts: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any]]] = {}
    for key in calls & code:
        outcome = outcomes.get(key)
        source = _object(made[key].function.arguments) or {}
        if outcome is None or not isinstance(source.get("code"), str):
            continue
        executable: dict[str, Any] = {"language": source.get("language") or "PYTHON"}
        executable["code"] = source["code"]
        ran = {"outcome": outcome["outcome"], "output": outcome.get("output") or ""}
        parts[key] = ({"executableCode": executable}, {"codeExecutionResult": ran})
    return CodeCalls(calls, {i for i, key in results.items() if key in calls}, parts)
