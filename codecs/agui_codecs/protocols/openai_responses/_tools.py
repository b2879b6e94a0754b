"""Tool-call output items of the OpenAI Responses decoder.

Part of :mod:`agui_codecs.protocols.openai_responses.decoder` (see its docstring for the mapping):
:class:`ToolCalls` opens, streams and closes the AG-UI tool calls of client calls
(``function_call``, ``custom_tool_call``, other ``*_call`` items with a ``call_id``), hosted
(provider-executed) tools (:data:`HOSTED_TOOLS`, partial images as
:data:`PRELIMINARY_OUTPUT_EVENT`) and ``mcp_approval_request`` items (tool call + interrupt).
:class:`ItemState` is what the decoder knows about one output item while it streams, tool call
or not.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable
from typing import Any, Final

from ag_ui.core import Interrupt

from ... import jsontext
from ...errors import MalformedUpstreamError
from ..base import StreamDecoder

__all__ = ["HOSTED_TOOLS", "PRELIMINARY_OUTPUT_EVENT", "ItemState", "ToolCalls", "to_json"]

HOSTED_TOOLS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "web_search_call": ("web_search", ("action",)),
    "file_search_call": ("file_search", ("queries",)),
    "code_interpreter_call": ("code_interpreter", ("container_id", "code")),
    "image_generation_call": (
        "image_generation",
        ("revised_prompt", "size", "quality", "background", "output_format"),
    ),
    "mcp_list_tools": ("mcp_list_tools", ("server_label",)),
    "mcp_call": ("mcp", ("arguments",)),
}
"""Provider-executed item type → (AG-UI tool name, item fields forming the call's arguments).

``mcp_call`` is named ``mcp.<name>`` and its arguments are the item's own ``arguments`` JSON;
``code_interpreter_call`` arguments are ``{"container_id", "code"}`` with ``code`` streamed.
"""

PRELIMINARY_OUTPUT_EVENT: Final = "tool-output-preliminary"
"""CUSTOM event carrying a partial image: ``{toolCallId, output, preliminary: true}``."""

_CUSTOM_WRAP: Final = ('"', '"')  # custom tool input is sent as a JSON string
_APPROVAL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approve"],
}


def escape(text: str) -> str:
    """``text`` JSON-escaped, without the surrounding quotes (a fragment of a JSON string)."""
    return jsontext.dumps(text)[1:-1]  # a lone surrogate half stays an escape (jsontext)


def to_json(value: Any) -> str:
    return jsontext.dumps(value)


class ItemState:
    """What is known about one output item while it streams."""

    __slots__ = (
        "args_done",
        "encrypted",
        "last_part",
        "open",
        "parts",
        "phase",
        "streamed",
        "tool_id",
        "wrap",
    )

    def __init__(self) -> None:
        self.phase: str | None = None  # message phase
        self.parts: set[tuple[str, int]] = set()  # text / reasoning parts already sent
        self.last_part: tuple[str, int] | None = None  # last reasoning part sent
        self.encrypted: str | None = None  # reasoning encrypted_content from .added
        self.tool_id: str | None = None
        self.open = False  # a tool call is open for this item
        self.wrap: tuple[str, str] | None = None  # args streamed inside a JSON string
        self.streamed = False  # argument text was sent
        self.args_done = False


class ToolCalls(StreamDecoder):
    """The tool-call half of :class:`~.decoder.OpenAIResponsesDecoder`.

    Works on the decoder's per-response state: ``_items`` (output item key → state),
    ``_client_calls`` (a client tool was called) and ``_interrupts`` (pending approvals).
    """

    _items: dict[Hashable, ItemState]
    _client_calls: bool
    _interrupts: list[Interrupt]

    @abstractmethod
    def _key(self, payload: dict[str, Any]) -> Hashable:
        """The key of the output item an item event belongs to."""

    def _open_tool(
        self,
        key: Hashable,
        state: ItemState,
        name: str,
        tool_id: str,
        *,
        provider_executed: bool,
        wrap: tuple[str, str] | None = None,
    ) -> None:
        # state.tool_id: the AG-UI id (derived when the thread already holds tool_id)
        tool_id = self.run.tool_start(key, name, tool_id, provider_executed=provider_executed)
        state.tool_id, state.open, state.wrap = tool_id, True, wrap

    def _client_call(
        self,
        key: Hashable,
        state: ItemState,
        item: dict[str, Any],
        itype: str,
        *,
        name: str | None = None,
    ) -> None:
        """Open the client tool call of a ``function_call``-like item (once per item)."""
        self._client_calls = True
        if state.tool_id is not None:
            return
        call_id = item.get("call_id") or item.get("id")
        name = name or item.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            raise MalformedUpstreamError(f"{itype} item without call_id or name")
        wrap = _CUSTOM_WRAP if itype == "custom_tool_call" else None
        self._open_tool(key, state, name, call_id, provider_executed=False, wrap=wrap)
        initial = item.get("arguments" if itype == "function_call" else "input")
        if isinstance(initial, str) and initial:  # sent whole at .added: complete already
            self._args_done(key, initial)

    def _hosted_start(
        self, key: Hashable, state: ItemState, item: dict[str, Any], itype: str
    ) -> None:
        if state.tool_id is not None:
            return
        item_id = item.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise MalformedUpstreamError(f"{itype} item without an id")
        name = HOSTED_TOOLS[itype][0]
        wrap = None
        if itype == "mcp_call":
            name = f"mcp.{item.get('name') or 'call'}"
            approval = item.get("approval_request_id")
            item_id = approval if isinstance(approval, str) and approval else item_id
        elif itype == "code_interpreter_call":
            container = item.get("container_id")
            head = f'{{"container_id":{to_json(container)},' if isinstance(container, str) else "{"
            wrap = (head + '"code":"', '"}')
        self._open_tool(key, state, name, item_id, provider_executed=True, wrap=wrap)

    def _hosted_done(
        self, key: Hashable, state: ItemState, item: dict[str, Any], itype: str
    ) -> None:
        self._hosted_start(key, state, item, itype)
        if itype == "mcp_call":
            self._args_done(key, item.get("arguments"))
        elif itype == "code_interpreter_call":
            self._args_done(key, item.get("code"))
        else:
            fields = HOSTED_TOOLS[itype][1]
            self._args_done(key, to_json({f: item[f] for f in fields if item.get(f) is not None}))
        self._end_tool(key)
        assert state.tool_id is not None
        failed = bool(item.get("error")) or item.get("status") == "failed"
        meta = {"isError": True} if failed else None
        self.run.tool_result(state.tool_id, to_json(item), metadata=meta, exact=True)

    def _approval(self, key: Hashable, state: ItemState, item: dict[str, Any]) -> None:
        """An ``mcp_approval_request`` item: its ``mcp.<name>`` tool call, and the interrupt
        whose ``metadata`` keeps what rebuilds the item for a stateless continuation
        (``{provider, type: "mcp_approval_request", itemId, name, serverLabel?, arguments?}``,
        the item's own ``id``, ``name``, ``server_label`` and ``arguments`` JSON text;
        :func:`agui_codecs.protocols.openai_responses._approvals.approval_request`)."""
        request_id, name = item.get("id"), item.get("name")
        if not isinstance(request_id, str) or not request_id or not isinstance(name, str):
            raise MalformedUpstreamError("mcp_approval_request item without id or name")
        self._open_tool(key, state, f"mcp.{name}", request_id, provider_executed=True)
        self._args_done(key, item.get("arguments"))
        self._end_tool(key)
        meta: dict[str, Any] = {
            "provider": self.provider,
            "type": "mcp_approval_request",
            "itemId": request_id,
            "name": name,
        }
        for field, key in (("server_label", "serverLabel"), ("arguments", "arguments")):
            value = item.get(field)
            if isinstance(value, str):
                meta[key] = value
        self._interrupts.append(
            Interrupt(
                id=request_id,
                reason="tool_approval",
                message=f"Approval required for MCP tool call: {name}",
                tool_call_id=state.tool_id,
                response_schema=_APPROVAL_SCHEMA,
                metadata=meta,
            )
        )

    def _args(self, key: Hashable, delta: Any) -> None:
        state = self._items.get(key)
        if state is None or not state.open or state.args_done:
            return  # nothing open to attach it to (.done will carry the whole value)
        if not isinstance(delta, str) or not delta:
            return
        if state.wrap is not None:
            delta = ("" if state.streamed else state.wrap[0]) + escape(delta)
        state.streamed = True
        self.run.tool_args(key, delta)

    def _args_done(self, key: Hashable, full: Any) -> None:
        """Complete the arguments: the whole value if nothing streamed, then any closing."""
        state = self._items.get(key)
        if state is None or not state.open or state.args_done:
            return
        state.args_done = True
        if full is not None and not isinstance(full, str):
            full = to_json(full)
        if state.wrap is not None:
            head = "" if state.streamed else state.wrap[0] + escape(full or "")
            self.run.tool_args(key, head + state.wrap[1])
        elif not state.streamed:
            self.run.tool_args(key, full if full and full.strip() else "{}")

    def _end_tool(self, key: Hashable) -> None:
        state = self._items.get(key)
        if state is not None and state.open:
            state.open = False
            self.run.end_tool(key)

    def _on_args_delta(self, p: dict[str, Any]) -> None:
        self._args(self._key(p), p.get("delta"))

    def _on_args_done(self, p: dict[str, Any]) -> None:
        self._args_done(self._key(p), p.get("arguments", p.get("input")))

    def _on_code_done(self, p: dict[str, Any]) -> None:
        key = self._key(p)
        self._args_done(key, p.get("code"))
        self._end_tool(key)  # the code is known: the call's input is complete

    def _on_partial_image(self, p: dict[str, Any]) -> None:
        state = self._items.get(self._key(p))
        call_id = state.tool_id if state and state.tool_id else p.get("item_id")
        fields = ("partial_image_index", "size", "quality", "background", "output_format")
        output = {"result": p.get("partial_image_b64")} | {f: p.get(f) for f in fields}
        output = {k: v for k, v in output.items() if v is not None}
        self.run.custom(
            PRELIMINARY_OUTPUT_EVENT, {"toolCallId": call_id, "output": output, "preliminary": True}
        )
