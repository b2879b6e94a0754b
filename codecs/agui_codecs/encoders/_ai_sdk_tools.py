"""The tool parts of the AI SDK encoder (:mod:`agui_codecs.encoders.ai_sdk`): TOOL_CALL_* and
TOOL_CALL_RESULT → ``tool-input-*`` / ``tool-output-*`` chunks (a result with
``metadata.isError``: ``tool-output-error``; with ``metadata.denied`` and ``ai_sdk_major >= 6``:
``tool-output-denied``, the ``ai-sdk`` decoder's mappings back).

Follows ``ai`` 7.0.173 ``src/ui/process-ui-message-stream.ts`` (checked against 6.0.326 and
5.0.277): a ``tool-input-delta`` needs its call's partial input (after ``tool-input-start``,
before ``tool-input-available``); ``tool-output-available`` needs a tool part of the message.
Hence a result (or a preliminary output) of a call whose arguments still stream is held and
sent right after that call's ``tool-input-available`` / ``tool-input-error``, in the order
such events came (issue 11: it closed the input early and lost the arguments after it). The
repairs of illegal AG-UI (``agui_codecs.core.illegal``) are listed in the ``ai_sdk`` module
docstring; the faults are those of :data:`agui_codecs.transitions.LIFECYCLES`.
A result of a call this stream did not announce is sent only for a call of the message the
stream continues (the encoder's ``continues``; the client's ``getToolInvocation`` searches the
whole message it continues).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ..core.illegal import Repairs
from ..transitions import Fault
from ..ui.delivery import ai_sdk_ui_chunk, wire_ui_schema
from .base import WireEvent

__all__ = ["INCOMPLETE_TOOL_INPUT", "PRELIMINARY", "ToolParts", "metadata"]

INCOMPLETE_TOOL_INPUT: Final = "tool call interrupted before its arguments completed"
"""``errorText`` of the ``tool-input-error`` sent for a tool call cut off by a failed run."""

PRELIMINARY: Final = "tool-output-preliminary"
"""CUSTOM name of a preliminary tool output (``ai-sdk`` and ``openai-responses`` decoders)."""

_UNKNOWN_TOOL: Final = "unknown"
"""``toolName`` of a call whose arguments came without any TOOL_CALL_START (a repair)."""


_Chunks = list[dict[str, Any]]


class _Tool:
    __slots__ = ("args", "dynamic", "name", "provider_executed", "provider_metadata")

    def __init__(self, name: str, provider_executed: bool, dynamic: bool) -> None:
        self.name = name
        self.provider_executed = provider_executed
        self.dynamic = dynamic
        self.args: list[str] = []
        self.provider_metadata: dict[str, dict[str, str]] = {}

    def flags(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """Add ``providerExecuted`` / ``dynamic`` to a chunk of this call (v5 finds a dynamic
        tool part only through chunks flagged ``dynamic``)."""
        if self.provider_executed:
            chunk["providerExecuted"] = True
        if self.dynamic:
            chunk["dynamic"] = True
        return chunk


def metadata(wire: WireEvent) -> Mapping[str, Any]:
    """The event's ``metadata`` object, or ``{}``."""
    meta = wire.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


class ToolParts:
    """The tool bookkeeping of :class:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder` (a base class
    of it; the encoder sets these attributes in its ``__init__``).

    Attributes:
        repairs: the encoder's repair counter.
    """

    _tools: dict[str, _Tool]  # open tool inputs
    _known_tools: dict[str, _Tool]  # every tool call this stream announced
    _held: dict[str, list[WireEvent]]  # open call -> its results / preliminary outputs, held
    _earlier: frozenset[str]  # tool calls of the message this stream continues
    ai_sdk_major: int | None
    repairs: Repairs

    def _tool_start(self, w: WireEvent) -> _Chunks:
        return self._tool_open(w["toolCallId"], w["toolCallName"], metadata(w))

    def _tool_open(self, tid: str, name: str, meta: Mapping[str, Any]) -> _Chunks:
        if tid in self._tools:
            self.repairs.note(Fault.TOOL_START_OPEN, "TOOL_CALL_START", (tid,), "already open")
            return []
        tool = _Tool(name, meta.get("providerExecuted") is True, meta.get("dynamic") is True)
        self._tools[tid] = self._known_tools[tid] = tool
        return [tool.flags({"type": "tool-input-start", "toolCallId": tid, "toolName": tool.name})]

    def _tool_args(self, tid: str, delta: str) -> _Chunks:
        tool = self._tools.get(tid)
        if tool is None:
            return self._tool_reopen(tid, delta)
        if not delta:
            return []
        tool.args.append(delta)
        return [{"type": "tool-input-delta", "toolCallId": tid, "inputTextDelta": delta}]

    def _tool_reopen(self, tid: str, delta: str) -> _Chunks:
        """TOOL_CALL_ARGS of a call that is not open (a repair, see the module docstring)."""
        known = self._known_tools.get(tid)
        name = known.name if known is not None else _UNKNOWN_TOOL
        self.repairs.note(
            Fault.TOOL_ARGS_NOT_OPEN, "TOOL_CALL_ARGS", (tid,), f"call reopened as {name!r}"
        )
        tool = _Tool(name, False, False)
        if known is not None:
            tool.provider_executed, tool.dynamic = known.provider_executed, known.dynamic
            tool.args = list(known.args)
        self._tools[tid] = self._known_tools[tid] = tool
        out = [tool.flags({"type": "tool-input-start", "toolCallId": tid, "toolName": name})]
        earlier = "".join(tool.args)
        if earlier:
            out.append({"type": "tool-input-delta", "toolCallId": tid, "inputTextDelta": earlier})
        if delta:
            tool.args.append(delta)
            out.append({"type": "tool-input-delta", "toolCallId": tid, "inputTextDelta": delta})
        return out

    def _tool_end(self, tid: str, *, incomplete: bool = False) -> _Chunks:
        """The chunk closing a tool input: ``tool-input-available`` with the parsed input, or
        ``tool-input-error`` with the raw text when it is not JSON or ``incomplete``; then the
        call's held results, in the order they came."""
        tool = self._tools.pop(tid, None)
        if tool is None:
            self.repairs.note(Fault.TOOL_END_NOT_OPEN, "TOOL_CALL_END", (tid,), "not open")
            return []
        raw = "".join(tool.args)
        chunk: dict[str, Any] = {
            "type": "tool-input-error",
            "toolCallId": tid,
            "toolName": tool.name,
        }
        if incomplete:
            chunk.update(input=raw, errorText=INCOMPLETE_TOOL_INPUT)
        else:
            try:
                value = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError as exc:
                chunk.update(input=raw, errorText=f"tool arguments are not valid JSON: {exc}")
            else:
                chunk.update(type="tool-input-available", input=value)
        tool.flags(chunk)
        if tool.provider_metadata:
            chunk["providerMetadata"] = tool.provider_metadata
        held = self._held.pop(tid, None)
        if held is None:
            return [chunk]
        out = [chunk]
        for w in held:
            out += self._tool_result(w) if w["type"] == "TOOL_CALL_RESULT" else self._preliminary(w)
        return out

    def _tool_result(self, w: WireEvent) -> _Chunks:
        tid = w["toolCallId"]
        tool = self._known_tools.get(tid)
        if tool is None:
            if tid in self._earlier:  # a call of the message this stream continues
                tool = _Tool(_UNKNOWN_TOOL, False, False)
            else:
                # The client has no tool part for it (the output chunk would be rejected);
                # a surface is a data part of its own and still goes out.
                return self._ui(w)
        if tid in self._tools:  # its arguments still stream: held until its TOOL_CALL_END
            self._held.setdefault(tid, []).append(w)
            return []
        out: _Chunks = []
        content = w["content"]
        meta = metadata(w)
        if meta.get("denied") is True and (self.ai_sdk_major or 0) >= 6:
            # ai v6+ ``tool-output-denied`` (the ``ai-sdk`` decoder's denied result); ai v5
            # has no such chunk and gets the ``execution-denied`` output below
            out.append(tool.flags({"type": "tool-output-denied", "toolCallId": tid}))
            return out + self._ui(w)
        if meta.get("isError") is True and isinstance(content, str):
            # ``tool-output-error`` {errorText} (ai v5, v6, v7): the part ends ``output-error``
            chunk = {"type": "tool-output-error", "toolCallId": tid, "errorText": content}
            out.append(tool.flags(chunk))
            return out + self._ui(w)
        output: Any = content  # content parts: their wire dicts
        if isinstance(content, str):
            try:
                output = orjson.loads(content)
            except orjson.JSONDecodeError:
                output = content
        out.append(
            tool.flags({"type": "tool-output-available", "toolCallId": tid, "output": output})
        )
        out += self._ui(w)
        return out

    def _preliminary(self, w: WireEvent) -> _Chunks:
        """CUSTOM ``tool-output-preliminary`` {toolCallId, output} → a preliminary output."""
        value = w.get("value")
        if not isinstance(value, dict) or not isinstance(value.get("toolCallId"), str):
            return []
        tid: str = value["toolCallId"]
        tool = self._known_tools.get(tid)
        if tool is None and tid in self._earlier:
            tool = _Tool(_UNKNOWN_TOOL, False, False)
        if tool is None:
            return []  # no tool part: the client could not place an output
        if tid in self._tools:
            # Its input still streams (an OpenAI Responses partial image comes before the
            # call's arguments): held until the input is available, like a result.
            self._held.setdefault(tid, []).append(w)
            return []
        chunk = {"type": "tool-output-available", "toolCallId": tid, "output": value.get("output")}
        return [tool.flags({**chunk, "preliminary": True})]

    def _ui(self, w: WireEvent) -> _Chunks:
        """``data-ui-schema`` for an event carrying a compiled ui_schema (any delivery)."""
        ui_schema = wire_ui_schema(w)
        return [] if ui_schema is None else [ai_sdk_ui_chunk(ui_schema)]
