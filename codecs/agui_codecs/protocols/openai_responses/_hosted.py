"""Provider-executed (hosted) tool calls of a history, for the OpenAI Responses request builder.

Part of :mod:`agui_codecs.protocols.openai_responses.request` (issue 11, kinds 5/6;
``docs/protocols.md`` §4.2). The decoder
opens each hosted item (``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
``image_generation_call``, ``mcp_list_tools``, ``mcp_call``; :data:`._tools.HOSTED_TOOLS`) as a
tool call with TOOL_CALL_START ``metadata.providerExecuted`` whose TOOL_CALL_RESULT content is
the done item as JSON, and an ``mcp_approval_request`` as a call ``mcp.<name>``
(``openai_responses.decoder``). Such a call is none of the client's: it must never go back as a
``function_call`` / ``function_call_output`` (a function the request never declared).

**How a history call is known to be hosted** (:func:`hosted_calls`), from the history alone, so
it needs no store read and holds for a history replayed on any replica; any one rule suffices:

* the call's ``metadata.providerExecuted`` is ``true``: AG-UI 1.0 ``ToolCall.metadata``, which
  ``@ag-ui/client`` 1.0.0 fills from TOOL_CALL_START (``defaultApplyEvents``, TOOL_CALL_START:
  the event's ``metadata`` merged into the new tool call), so the history the real client
  builds carries the decoder's flag back;
* its ``tool`` result is the hosted item itself (a client that kept no metadata): the content
  parses as a JSON object whose ``type`` is a hosted item type whose AG-UI name is the call's
  name (``mcp.<item name>`` for ``mcp_call``) and whose ``id`` (for ``mcp_call`` also its
  ``approval_request_id``, the id an approved call takes) is the call's provider id
  (:func:`agui_codecs.identity.provider_id`: a derived id of a reused item id counts as that
  id). A client function's result would have to be the provider's own item, type, name and
  id, to match; the declared ``tools[]`` are not asked, as a client may declare a function
  named ``web_search``;
* its name is ``mcp.<name>`` and the request declares no tool of that name: no OpenAI function
  can be so named (function names match ``^[a-zA-Z0-9_-]{1,64}$``, API reference, "Create a
  model response", ``tools`` -> function ``name``), so it is an MCP approval request (or call)
  whose item is not in the history (an approval left unanswered).

Every ``tool`` result of a hosted call (the latest earlier call with its id, as
:func:`~agui_codecs.protocols._request.results_after_calls` pairs them) goes with it.

**What is sent** (:meth:`HostedCalls.call_item`): with ``store: false`` (the gateway's
default, no ``previous_response_id``) nothing, the call and its result are left out, as
``@ai-sdk/openai`` 4.0.46 does (vercel/ai ``packages/openai/src/responses/
convert-to-openai-responses-input.ts`` at ed857f5: a ``providerExecuted`` tool call is skipped,
its result only warns "Results for OpenAI tool ... are not sent to the API when store is
false"): the Responses API resolves the ids of output items against its store and refuses
items it did not store ("Items are not persisted when ``store`` is set to false", reported for
any tool item sent back, jrkropp/open-webui-developer-toolkit#715). The provider's own text
answer after them stays in the history (an ``assistant`` message). With ``store: true`` (a
route's ``params``) the item goes as ``{"type": "item_reference", "id": <item id>}``, once per
item (``@ai-sdk/openai``'s ``store`` branch); the id is the result item's ``id`` (for an
approved ``mcp_call`` its own ``mcp_...`` id, not the approval's), else, for a call named as a
Responses hosted tool (:data:`._tools.HOSTED_TOOLS` names, ``mcp.<name>``), the call's
provider id; a provider-executed call of another name (another provider's server tool in a
history that changed routes) has no Responses item and is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson
from ag_ui.core import AssistantMessage, Message, ToolMessage

from ...identity import provider_id
from ._tools import HOSTED_TOOLS

__all__ = ["MCP_PREFIX", "HostedCalls", "hosted_calls", "hosted_item_id"]

MCP_PREFIX: Final = "mcp."
"""The AG-UI name prefix of ``mcp_call`` and ``mcp_approval_request`` calls (the decoder's)."""

_NAMES: Final[dict[str, str]] = {itype: name for itype, (name, _) in HOSTED_TOOLS.items()}
_HOSTED_NAMES: Final = frozenset(_NAMES.values())


def _item(content: Any) -> Mapping[str, Any] | None:
    if not isinstance(content, str) or not content.startswith("{"):
        return None
    try:
        value = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def hosted_item_id(name: str, call_id: str, content: Any) -> str | None:
    """The hosted item id when ``content`` (a ``tool`` message's) is the hosted item a call
    ``name`` / ``call_id`` stands for, else ``None`` (module docstring, first rule).

    Args:
        name: the call's ``function.name`` (``web_search``, ``mcp.<name>``...).
        call_id: the call's AG-UI id (derived ids are read as their provider id).
        content: the result's ``content`` (only a JSON object text can match).

    Returns:
        The item's ``id``.
    """
    item = _item(content)
    if item is None:
        return None
    itype, item_id = item.get("type"), item.get("id")
    if not isinstance(itype, str) or itype not in _NAMES or not isinstance(item_id, str):
        return None
    expected = _NAMES[itype]
    if itype == "mcp_call":
        expected = f"{MCP_PREFIX}{item.get('name') or 'call'}"
    if name != expected:
        return None
    own = provider_id(call_id)
    ids = {item_id, item.get("approval_request_id")} if itype == "mcp_call" else {item_id}
    return item_id if own in ids else None


class HostedCalls:
    """The hosted calls of one history and what each becomes (module docstring).

    Calls are keyed ``(message index, position in toolCalls)``; results by message index.
    """

    __slots__ = ("_calls", "_results", "_sent", "_store")

    def __init__(
        self, calls: dict[tuple[int, int], str | None], results: set[int], store: bool
    ) -> None:
        self._calls = calls  # hosted call -> the item id to reference
        self._results = results
        self._store = store
        self._sent: set[str] = set()

    def is_hosted(self, index: int, position: int) -> bool:
        """True when call ``position`` of message ``index`` is provider-executed."""
        return (index, position) in self._calls

    def is_hosted_result(self, index: int) -> bool:
        """True when the ``tool`` message at ``index`` is a hosted call's result (left out)."""
        return index in self._results

    def call_item(self, index: int, position: int) -> dict[str, Any] | None:
        """What a hosted call becomes: ``None`` with ``store: false``; the ``item_reference``
        of its item with ``store: true``, ``None`` when that item was referenced already or
        is no Responses item."""
        item_id = self._calls[(index, position)]
        if not self._store or item_id is None or item_id in self._sent:
            return None
        self._sent.add(item_id)
        return {"type": "item_reference", "id": item_id}


def hosted_calls(
    ordered: Iterable[tuple[int, Message]], declared: Iterable[str], *, store: bool
) -> HostedCalls:
    """Classify the calls of a history (module docstring).

    Args:
        ordered: the history as :func:`~agui_codecs.protocols._request.results_after_calls`
            gives it (``(index, message)``, each result after its call).
        declared: the names of the request's ``tools[]``.
        store: the body's ``store`` (decides :meth:`HostedCalls.call_item`).
    """
    names = set(declared)
    owner: dict[str, tuple[int, int]] = {}  # call id -> latest call making it
    made: dict[tuple[int, int], tuple[str, str]] = {}  # call -> (name, id)
    results: dict[int, tuple[int, int]] = {}  # tool message index -> its call
    calls: dict[tuple[int, int], str | None] = {}  # hosted call -> its item id, if known
    for index, message in ordered:
        if isinstance(message, AssistantMessage):
            for position, call in enumerate(message.tool_calls or ()):
                key = (index, position)
                owner[call.id] = key
                name = call.function.name
                made[key] = (name, call.id)
                mcp = name.startswith(MCP_PREFIX)
                flagged = isinstance(call.metadata, dict) and (
                    call.metadata.get("providerExecuted") is True
                )
                if (mcp and name not in names) or flagged:
                    own = mcp or name in _HOSTED_NAMES  # a Responses item: its id is the call's
                    calls[key] = provider_id(call.id) if own else None
        elif isinstance(message, ToolMessage) and message.tool_call_id in owner:
            key = owner[message.tool_call_id]
            results[index] = key
            name, call_id = made[key]
            item_id = hosted_item_id(name, call_id, message.content)
            if item_id is not None:
                calls[key] = item_id
    hosted_results = {index for index, key in results.items() if key in calls}
    return HostedCalls(calls, hosted_results, store)
