"""Anthropic server tool calls of a history, sent back as the API's own blocks.

Part of :mod:`agui_codecs.protocols.anthropic.request` (issue 11, kinds 5/6;
``docs/protocols.md`` §4.2). The decoder opens a ``server_tool_use`` block (``web_search``,
``web_fetch``, ``code_execution``...) as a tool call with TOOL_CALL_START
``metadata.providerExecuted`` and its ``*_tool_result`` block as TOOL_CALL_RESULT whose content
is the JSON text of the block's ``content`` (``anthropic.decoder``); ``@ag-ui/client`` 1.0.0
keeps that metadata on the tool call (``defaultApplyEvents``, TOOL_CALL_START). Such a call is
the API's, not the client's: sent back as ``tool_use`` + a user ``tool_result`` it names a tool
the request never declared and loses the result's ``encrypted_content``, which the API needs
back to cite the results in a later turn (Messages API reference, "Web search tool",
multi-turn citations; ``anthropic`` 2.15.0 ``types/web_search_result_block_param.py``:
``encrypted_content`` is required).

**Known as a server call** (:func:`server_calls`) when its ``metadata.providerExecuted`` is
``true``, or its id is an Anthropic server id (``srvtoolu_``, ``mcptoolu_``: a client
``tool_use`` id is ``toolu_``; a derived id keeps the prefix), from the history alone.

**What is sent**, as ``@ai-sdk/anthropic`` 4.0.41 does (vercel/ai ``packages/anthropic/src/
convert-to-anthropic-prompt.ts`` at ed857f5, ``providerExecuted`` tool-call and tool-result
parts): in the **assistant** turn, ``{"type": "server_tool_use", "id", "name", "input"}`` then,
directly after it, the result block of the tool (:data:`RESULT_BLOCKS`: ``{"type":
"web_search_tool_result", "tool_use_id", "content"}`` ...) whose ``content`` is the recorded
``content`` as the API sent it (``web_search_result`` entries with their ``encrypted_content``).
The input blocks are ``anthropic`` 2.15.0 ``ServerToolUseBlockParam`` (``name`` one of the
:data:`RESULT_BLOCKS` keys) and ``WebSearchToolResultBlockParam``,
``WebFetchToolResultBlockParam``, ``CodeExecutionToolResultBlockParam``... (``types/*_param.py``).
A server call that cannot be rebuilt is left out with its results, never sent as ``tool_use``:
a tool name without a result block here, an id that is no ``srvtoolu_`` id (another provider's
server tool in a history that changed routes), a result whose text is no JSON, a call whose
result is not in the history (a ``server_tool_use`` goes with its result), and
``mcp_tool_use`` (its block needs ``server_name``, which the decoder does not keep:
``@ai-sdk/anthropic`` also skips the call without it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson
from ag_ui.core import AssistantMessage, Message, ToolCall, ToolMessage

from ...identity import provider_id
from .._request import tool_arguments_object

__all__ = ["RESULT_BLOCKS", "SERVER_ID_PREFIXES", "ServerCalls", "server_calls"]

RESULT_BLOCKS: Final[Mapping[str, str]] = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "code_execution_tool_result",
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
    "tool_search_tool_regex": "tool_search_tool_result",
    "tool_search_tool_bm25": "tool_search_tool_result",
}
"""``server_tool_use`` ``name`` -> the type of its result block (Messages API reference, server
tools; the same pairs in ``@ai-sdk/anthropic``'s converter)."""

SERVER_ID_PREFIXES: Final = ("srvtoolu_", "mcptoolu_")
"""Id prefixes of the API's own tool-use blocks (``server_tool_use``, ``mcp_tool_use``)."""


def _is_server(call: ToolCall) -> bool:
    meta = call.metadata
    flagged = isinstance(meta, dict) and meta.get("providerExecuted") is True
    return flagged or call.id.startswith(SERVER_ID_PREFIXES)


def _content(message: ToolMessage) -> Any:
    if not isinstance(message.content, str):
        return None
    try:
        return orjson.loads(message.content)
    except orjson.JSONDecodeError:
        return None


class ServerCalls:
    """The server calls of one history: which calls and results are theirs, and the blocks
    each call becomes (module docstring). Calls are keyed ``(message index, position)``."""

    __slots__ = ("_blocks", "_calls", "_results")

    def __init__(
        self,
        calls: set[tuple[int, int]],
        results: set[int],
        blocks: dict[tuple[int, int], list[dict[str, Any]]],
    ) -> None:
        self._calls = calls
        self._results = results
        self._blocks = blocks

    def is_server(self, index: int, position: int) -> bool:
        """True when call ``position`` of message ``index`` is a server call."""
        return (index, position) in self._calls

    def is_server_result(self, index: int) -> bool:
        """True when the ``tool`` message at ``index`` is a server call's result (it goes with
        its call, or is left out with it)."""
        return index in self._results

    def blocks(self, index: int, position: int) -> list[dict[str, Any]]:
        """The assistant blocks of a server call: ``server_tool_use`` then its result block;
        empty when the call cannot be rebuilt (left out)."""
        return self._blocks.get((index, position), [])


def server_calls(ordered: Iterable[tuple[int, Message]]) -> ServerCalls:
    """Classify the calls of a history (module docstring).

    Args:
        ordered: the history as :func:`~agui_codecs.protocols._request.results_after_calls`
            gives it (``(index, message)``, each result after its call).

    Raises:
        RequestTranslationError: a server call whose arguments are no JSON object
            (``INVALID_TOOL_ARGUMENTS``), as for a client call.
    """
    owner: dict[str, tuple[int, int]] = {}  # call id -> latest call making it
    made: dict[tuple[int, int], ToolCall] = {}
    calls: set[tuple[int, int]] = set()
    results: set[int] = set()
    blocks: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for index, message in ordered:
        if isinstance(message, AssistantMessage):
            for position, call in enumerate(message.tool_calls or ()):
                key = (index, position)
                owner[call.id] = key
                made[key] = call
                if _is_server(call):
                    calls.add(key)
        elif isinstance(message, ToolMessage) and message.tool_call_id in owner:
            key = owner[message.tool_call_id]
            if key not in calls:
                continue
            results.add(index)
            call = made[key]
            result_type = RESULT_BLOCKS.get(call.function.name)
            content = _content(message)
            own = provider_id(call.id).startswith(SERVER_ID_PREFIXES[0])
            if result_type is None or content is None or not own or key in blocks:
                continue  # nothing to rebuild, or the call's one result is placed already
            where = f"messages[{key[0]}].toolCalls[{key[1]}]"
            blocks[key] = [
                {
                    "type": "server_tool_use",
                    "id": call.id,
                    "name": call.function.name,
                    "input": tool_arguments_object(call.function.arguments, where),
                },
                {"type": result_type, "tool_use_id": call.id, "content": content},
            ]
    return ServerCalls(calls, results, blocks)
