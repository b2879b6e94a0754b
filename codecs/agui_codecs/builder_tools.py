"""The tool-call part of :class:`~agui_codecs.builder.RunBuilder`: TOOL_CALL_START / ARGS /
END opened lazily under a decoder-chosen key, and TOOL_CALL_RESULT.

Ids follow :mod:`agui_codecs.identity`: a call keeps the provider's id unless that id is
already used in the thread (an AI SDK backend reusing ``toolCallId`` in a later step, a host
reusing ``call_0`` every turn), then it gets a derived id; a result or a signature naming a
provider id belongs to the latest call with that id (``exact=True``: the caller passes the
AG-UI id :meth:`ToolCallParts.tool_start` returned). Every result message id is unique too.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ag_ui.core import (
    Event,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from .core.illegal import TransitionGuard
from .events import delta_factory
from .identity import Identities
from .surrogates import SurrogateJoiner

__all__ = ["ToolCallParts"]

_TOOL_CALL_ARGS = delta_factory(ToolCallArgsEvent)


class _ToolCall:
    __slots__ = ("args", "id", "name")

    def __init__(self, tool_call_id: str, name: str) -> None:
        self.id = tool_call_id
        self.name = name
        self.args: list[str] = []


class ToolCallParts:
    """Mixin of :class:`~agui_codecs.builder.RunBuilder` (which provides the state and the
    methods declared here)."""

    _ids: Identities
    _tools: dict[Hashable, _ToolCall]
    _pending_tools: list[str]
    _halves: SurrogateJoiner
    _last_text_id: str | None
    _out: list[Event]
    _guard: TransitionGuard | None
    lone_surrogates: bool

    def start(self, *, upstream_id: str | None = None, model: str | None = None) -> None:
        raise NotImplementedError  # RunBuilder.start

    def _emit(self, event: Event) -> None:
        raise NotImplementedError  # RunBuilder._emit

    def _peek_id(self, kind: str) -> str:
        raise NotImplementedError  # RunBuilder._peek_id

    def _next_id(self, kind: str) -> str:
        raise NotImplementedError  # RunBuilder._next_id

    def close_text(self) -> None:
        raise NotImplementedError  # RunBuilder.close_text

    def close_reasoning(self) -> None:
        raise NotImplementedError  # RunBuilder.close_reasoning

    # -- tool calls ---------------------------------------------------------------------
    def tool_start(
        self,
        key: Hashable,
        name: str,
        tool_call_id: str | None = None,
        *,
        provider_executed: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Open a tool call under ``key``; an id is synthesized when the provider gave none, and
        derived when ``tool_call_id`` is already used in the thread (module docstring).

        A call already open under ``key`` is closed first. Open text is closed (the call
        follows it) and becomes the call's ``parentMessageId``. Returns the tool call id.
        """
        self.start()
        meta = dict(metadata or {})
        if provider_executed:
            meta["providerExecuted"] = True
        event = ToolCallStartEvent(
            tool_call_id=self._ids.peek(tool_call_id) if tool_call_id else self._peek_id("call"),
            tool_call_name=name,
            parent_message_id=self._last_text_id,
            metadata=meta or None,
        )
        self.end_tool(key)
        self.close_text()
        self.close_reasoning()
        tool_call_id = self._ids.mint(tool_call_id) if tool_call_id else self._next_id("call")
        self._tools[key] = _ToolCall(tool_call_id, name)
        self._emit(event)
        if not provider_executed:
            self._pending_tools.append(tool_call_id)
        return tool_call_id

    def tool_args(self, key: Hashable, delta: str) -> None:
        """Append an arguments fragment to the call open under ``key`` (ignored if none)."""
        call = self._tools.get(key)
        if call is not None and delta and self.lone_surrogates:
            delta = self._halves.push(("call", key), delta)
        if call is not None and delta:
            event = _TOOL_CALL_ARGS({"tool_call_id": call.id, "delta": delta})
            call.args.append(delta)
            if self.lone_surrogates or self._guard is not None:
                self._emit(event)
            else:  # what _emit does then, a frame shorter
                self._out.append(event)

    def tool_is_open(self, key: Hashable) -> bool:
        """True when a tool call is open under ``key``."""
        return key in self._tools

    def tool_id(self, key: Hashable) -> str | None:
        """The id of the tool call open under ``key``, if any."""
        call = self._tools.get(key)
        return call.id if call else None

    def resolve_call(self, tool_call_id: str) -> str:
        """The AG-UI id of the latest call whose provider id is ``tool_call_id`` (of this
        stream or of the reserved history); an unknown id as it is."""
        return self._ids.resolve(tool_call_id)

    def tool_has_args(self, key: Hashable) -> bool:
        """True when the call open under ``key`` has received argument text."""
        call = self._tools.get(key)
        return bool(call and call.args)

    def end_tool(self, key: Hashable, *, incomplete: bool = False) -> None:
        """Close the tool call open under ``key`` (no-op when none is open).

        ``incomplete``: the call was cut off before its arguments completed; TOOL_CALL_END
        carries ``metadata: {"incomplete": true}``.
        """
        call = self._tools.pop(key, None)
        if call is not None:
            rest = self._halves.flush(("call", key))
            if rest:
                call.args.append(rest)
                self._emit(ToolCallArgsEvent(tool_call_id=call.id, delta=rest))
            meta = {"incomplete": True} if incomplete else None
            self._emit(ToolCallEndEvent(tool_call_id=call.id, metadata=meta))

    def close_tools(self, *, incomplete: bool = False) -> None:
        """Close every open tool call (``incomplete``: see :meth:`end_tool`)."""
        for key in list(self._tools):
            self.end_tool(key, incomplete=incomplete)

    def tool_result(
        self,
        tool_call_id: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        exact: bool = False,
    ) -> None:
        """Emit TOOL_CALL_RESULT (used for provider-executed tools); ``metadata`` e.g. isError.

        ``tool_call_id`` is the provider's id (the latest call with it), or with ``exact`` the
        AG-UI id :meth:`tool_start` returned. The result's ``messageId`` is
        ``<toolCallId>-result``, derived when taken (a second result of one call).
        """
        self.start()
        if not exact:
            tool_call_id = self._ids.resolve(tool_call_id)
        event = ToolCallResultEvent(
            message_id=self._ids.peek(f"{tool_call_id}-result"),
            tool_call_id=tool_call_id,
            content=content,
            role="tool",
            metadata=metadata,
        )
        self._ids.mint(f"{tool_call_id}-result")
        if tool_call_id in self._pending_tools:
            self._pending_tools.remove(tool_call_id)
        self._emit(event)

    @property
    def pending_tool_call_ids(self) -> tuple[str, ...]:
        """Client tool calls announced in this run and not yet answered by a result."""
        return tuple(self._pending_tools)
