"""RunFold: the one reducer of a run's AG-UI wire events, shared by the gateway's pump, reaper,
snapshot prelude and history builder (``gateway/runs``); pure, no I/O.

It tracks what ``@ag-ui/client`` 1.0 ``verifyEvents`` tracks (open text messages, tool calls,
reasoning spans and messages, steps; ``src/verify/verify.ts``) with what each accumulated, and
the run's assistant output as ordered history *parts*:

* ``{"type": "text", "messageId", "text", "state": "streaming"|"done"}`` (a new part when a
  tool call or reasoning came between two pieces of one message: text split around calls);
* ``{"type": "reasoning", "messageId", "text", "state", "encryptedValue"?}``;
* ``{"type": "tool", "toolCallId", "toolName", "ownerMessageId", "parentMessageId"?,
  "state": "input-streaming"|"input-available"|"output-available", "input"? (parsed JSON, or
  the text when it is not JSON), "inputText"? (the arguments exactly as streamed), "output"?,
  "outputText"? (the result content exactly as sent), "resultMessageId"?,
  "providerExecuted"?}`` (AI SDK ``ToolUIPart`` state names);
* ``{"type": "tool-result", "toolCallId", "output", "outputText"?, "resultMessageId"}`` for a
  result of a call made in an earlier run; ``{"type": "source", ...}`` for CUSTOM ``source`` events.

``ownerMessageId`` is the AG-UI assistant message the client files the call under
(``src/apply/default.ts`` TOOL_CALL_START: the parent message when it is an assistant message,
else a new message with the parent id, or with the tool call id when there is no parent).

``TEXT_MESSAGE_CHUNK`` / ``TOOL_CALL_CHUNK`` / ``REASONING_MESSAGE_CHUNK`` are expanded by
:class:`~agui_codecs.core.chunks.ChunkExpander`, the client's ``transformChunks`` (one pending
stream per subagent lane); a chunk the client would reject is ignored. Items opened by chunks
are never closed with explicit END events by :meth:`RunFold.closing_events` (the client closes
them itself on the next event, and a second END would break verify).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..transitions import AGUI_TERMINAL
from .chunks import CHUNK_TYPES, ChunkError, ChunkExpander
from .state import ClientState

__all__ = ["JsonObject", "OpenReasoning", "OpenText", "OpenTool", "RunFold", "parse_json_text"]

JsonObject = dict[str, Any]
"""A JSON object (an AG-UI wire event, a history part)."""


def parse_json_text(text: str) -> Any:
    """``text`` parsed as JSON when it is a JSON document, else the text itself."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


@dataclass
class OpenText:
    """A text message that was started and not ended."""

    message_id: str
    order: int
    role: str = "assistant"
    name: str | None = None
    chunk: bool = False
    content: list[str] = field(default_factory=list)


@dataclass
class OpenTool:
    """A tool call that was started and not ended."""

    tool_call_id: str
    order: int
    name: str
    parent_message_id: str | None = None
    metadata: JsonObject | None = None
    chunk: bool = False
    args: list[str] = field(default_factory=list)
    encrypted_value: str | None = None
    """The last REASONING_ENCRYPTED_VALUE (``subtype`` "tool-call") for it while open."""


@dataclass
class OpenReasoning:
    """A reasoning message (REASONING_MESSAGE_START without END)."""

    message_id: str
    order: int
    chunk: bool = False
    content: list[str] = field(default_factory=list)
    encrypted_value: str | None = None
    """The last REASONING_ENCRYPTED_VALUE (``subtype`` "message") for it while open (the
    decoders hold one until REASONING_MESSAGE_END, ``RunBuilder.hold_reasoning_encrypted``)."""


class RunFold:
    """Fold of one run's wire events (see the module docstring); feed with :meth:`apply`.

    Attributes:
        run_started: the run's RUN_STARTED wire event (None before it).
        terminal: the RUN_FINISHED / RUN_ERROR wire event (None while the run is open).
        open_text, open_tools, reasoning_messages: open items by id, insertion-ordered.
        reasoning_spans: open REASONING_START ids -> opening order.
        open_steps: active step names -> opening order.
        parts: the assistant output as ordered history parts.
        aliases: AG-UI message ids this run created (text, reasoning, tool owners, results).
        state_events: the last STATE_SNAPSHOT and the STATE_DELTAs after it (:meth:`state`
            applies them).
        activity_events: ACTIVITY_* events, replayed verbatim by the snapshot prelude.
        count: number of events applied.
    """

    def __init__(self) -> None:
        self.run_started: JsonObject | None = None
        self.terminal: JsonObject | None = None
        self.open_text: dict[str, OpenText] = {}
        self.open_tools: dict[str, OpenTool] = {}
        self.reasoning_messages: dict[str, OpenReasoning] = {}
        self.reasoning_spans: dict[str, int] = {}
        self.open_steps: dict[str, int] = {}
        self.parts: list[JsonObject] = []
        self.aliases: list[str] = []
        self.state_events: list[JsonObject] = []
        self.activity_events: list[JsonObject] = []
        self.count = 0
        self._order = itertools.count()
        self._roles: dict[str, str] = {}  # AG-UI message id -> role, as the client files them
        self._tool_parts: dict[str, JsonObject] = {}
        self._text_parts: dict[str, list[JsonObject]] = {}
        self._reasoning_parts: dict[str, JsonObject] = {}
        self._chunks = ChunkExpander()

    # -- queries --------------------------------------------------------------------------
    @property
    def ended(self) -> bool:
        """True once the terminal event was applied."""
        return self.terminal is not None

    def closing_events(self) -> list[JsonObject]:
        """END events closing everything open (tools, text, reasoning, steps), in that order.

        Items opened by chunk events are skipped (see the module docstring). Applying the
        returned events leaves nothing open but the chunk stream, which the next event closes.
        """
        out: list[JsonObject] = []
        for tool in self.open_tools.values():
            if not tool.chunk:
                out.append({"type": "TOOL_CALL_END", "toolCallId": tool.tool_call_id})
        for text in self.open_text.values():
            if not text.chunk:
                out.append({"type": "TEXT_MESSAGE_END", "messageId": text.message_id})
        for reasoning in self.reasoning_messages.values():
            if not reasoning.chunk:
                out.append({"type": "REASONING_MESSAGE_END", "messageId": reasoning.message_id})
        for span in self.reasoning_spans:
            out.append({"type": "REASONING_END", "messageId": span})
        for step in reversed(list(self.open_steps)):
            out.append({"type": "STEP_FINISHED", "stepName": step})
        return out

    def state(self, patch: Callable[[Any, list[Any]], Any]) -> tuple[bool, Any]:
        """The state a client holds after the folded events: ``(has_state, state)``.

        AG-UI 1.0 (``@ag-ui/client`` 1.0.0 ``src/apply/default.ts``): STATE_SNAPSHOT replaces
        the state, STATE_DELTA applies its RFC 6902 ``delta``; a delta that does not apply
        leaves the state as it was. Deltas before the first snapshot are not applied (the
        state they patch is not in the run). ``has_state`` is False when no snapshot came.

        Args:
            patch: ``patch(state, delta) -> new state``, an RFC 6902 implementation (the codec
                library has none; e.g. ``jsonpatch.JsonPatch(delta).apply(state)``); it may
                change ``state`` in place and raises ``ValueError`` when the delta does not
                apply (:class:`~agui_codecs.core.state.ClientState`, the one state reducer).
        """
        held = ClientState(patch)
        for event in self.state_events:
            if event.get("type") == "STATE_SNAPSHOT":
                held.snapshot(event.get("snapshot"))
            else:
                held.delta(event.get("delta"))  # one that does not apply: the old state kept
        return held.known, held.value

    # -- folding --------------------------------------------------------------------------
    def apply(self, event: JsonObject) -> None:
        """Fold one AG-UI wire event (unknown types are counted and otherwise ignored)."""
        self.count += 1
        kind = event.get("type")
        if not isinstance(kind, str):
            return
        chunk = kind in CHUNK_TYPES
        if not chunk and not self._chunks.lanes:
            expanded = [event]
        else:
            try:
                expanded = self._chunks.expand(event)
            except ChunkError:
                return  # the client rejects it: nothing reaches its reducer
        for ev in expanded:
            handler = _HANDLERS.get(ev["type"])
            if handler is None:
                continue
            if chunk and ev["type"] in _OPENERS:
                handler(self, ev, chunk=True)
            else:
                handler(self, ev)

    def apply_all(self, events: list[JsonObject]) -> RunFold:
        """Fold several events; returns ``self``."""
        for event in events:
            self.apply(event)
        return self

    def _next(self) -> int:
        return next(self._order)

    def _alias(self, message_id: str, role: str) -> None:
        if message_id not in self._roles:
            self._roles[message_id] = role
            self.aliases.append(message_id)

    # run / steps
    def _run_started(self, event: JsonObject) -> None:
        if self.run_started is None:
            self.run_started = event

    def _terminal(self, event: JsonObject) -> None:
        if self.terminal is None:
            self.terminal = event

    def _step_started(self, event: JsonObject) -> None:
        self.open_steps[str(event.get("stepName", ""))] = self._next()

    def _step_finished(self, event: JsonObject) -> None:
        self.open_steps.pop(str(event.get("stepName", "")), None)

    # text
    def _text_start(self, event: JsonObject, *, chunk: bool = False) -> None:
        message_id = str(event.get("messageId", ""))
        if message_id in self.open_text:
            return
        role = str(event.get("role") or "assistant")
        self.open_text[message_id] = OpenText(
            message_id, self._next(), role, event.get("name"), chunk
        )
        self._alias(message_id, role)

    def _text_content(self, event: JsonObject) -> None:
        message_id = str(event.get("messageId", ""))
        text = self.open_text.get(message_id)
        delta = event.get("delta")
        if text is None or not isinstance(delta, str):
            return
        text.content.append(delta)
        parts = self._text_parts.setdefault(message_id, [])
        if parts and self.parts and self.parts[-1] is parts[-1]:
            parts[-1]["text"] += delta
            return
        part: JsonObject = {"type": "text", "messageId": message_id, "text": delta}
        if text.role != "assistant":
            part["role"] = text.role
        part["state"] = "streaming"
        parts.append(part)
        self.parts.append(part)

    def _text_end(self, event: JsonObject) -> None:
        message_id = str(event.get("messageId", ""))
        if self.open_text.pop(message_id, None) is not None:
            for part in self._text_parts.get(message_id, ()):
                part["state"] = "done"

    # tools
    def _owner(self, parent: str | None, tool_call_id: str) -> str:
        if parent:
            role = self._roles.get(parent)
            if role is None or role == "assistant":
                self._alias(parent, "assistant")
                return parent
        self._alias(tool_call_id, "assistant")
        return tool_call_id

    def _tool_start(self, event: JsonObject, *, chunk: bool = False) -> None:
        tool_call_id = str(event.get("toolCallId", ""))
        if tool_call_id in self.open_tools:
            return
        parent = event.get("parentMessageId")
        metadata = event.get("metadata") if isinstance(event.get("metadata"), dict) else None
        name = str(event.get("toolCallName") or "")
        self.open_tools[tool_call_id] = OpenTool(
            tool_call_id, self._next(), name, parent, metadata, chunk
        )
        if tool_call_id in self._tool_parts:
            return
        part: JsonObject = {
            "type": "tool",
            "toolCallId": tool_call_id,
            "toolName": name,
            "ownerMessageId": self._owner(parent, tool_call_id),
            "state": "input-streaming",
        }
        if parent:
            part["parentMessageId"] = parent
        if metadata and metadata.get("providerExecuted"):
            part["providerExecuted"] = True
        self._tool_parts[tool_call_id] = part
        self.parts.append(part)

    def _tool_args(self, event: JsonObject) -> None:
        tool = self.open_tools.get(str(event.get("toolCallId", "")))
        delta = event.get("delta")
        if tool is not None and isinstance(delta, str):
            tool.args.append(delta)

    def _tool_end(self, event: JsonObject) -> None:
        tool = self.open_tools.pop(str(event.get("toolCallId", "")), None)
        if tool is None:
            return
        part = self._tool_parts.get(tool.tool_call_id)
        if part is not None and "inputText" not in part:
            raw = "".join(tool.args)
            part["input"] = parse_json_text(raw) if raw.strip() else {}
            part["inputText"] = raw
            if part["state"] == "input-streaming":  # else its result came first
                part["state"] = "input-available"

    def _tool_result(self, event: JsonObject) -> None:
        tool_call_id = str(event.get("toolCallId", ""))
        result_id = str(event.get("messageId", ""))
        content = event.get("content")
        output = parse_json_text(content) if isinstance(content, str) else content
        self._alias(result_id, str(event.get("role") or "tool"))
        part = self._tool_parts.get(tool_call_id)
        if part is None:
            part = {"type": "tool-result", "toolCallId": tool_call_id}
            self.parts.append(part)
        else:
            # A result while the arguments still stream leaves the call open: its END (or
            # closing_events) completes the input (the AI SDK encoder holds such a result).
            part["state"] = "output-available"
        part["output"] = output
        if isinstance(content, str):
            part["outputText"] = content
        part["resultMessageId"] = result_id

    # reasoning
    def _reasoning_start(self, event: JsonObject) -> None:
        self.reasoning_spans.setdefault(str(event.get("messageId", "")), self._next())

    def _reasoning_end(self, event: JsonObject) -> None:
        self.reasoning_spans.pop(str(event.get("messageId", "")), None)

    def _reasoning_message_start(self, event: JsonObject, *, chunk: bool = False) -> None:
        message_id = str(event.get("messageId", ""))
        if message_id in self.reasoning_messages:
            return
        self.reasoning_messages[message_id] = OpenReasoning(message_id, self._next(), chunk)
        self._alias(message_id, "reasoning")
        if message_id not in self._reasoning_parts:
            part: JsonObject = {
                "type": "reasoning",
                "messageId": message_id,
                "text": "",
                "state": "streaming",
            }
            self._reasoning_parts[message_id] = part
            self.parts.append(part)

    def _reasoning_content(self, event: JsonObject) -> None:
        message_id = str(event.get("messageId", ""))
        reasoning = self.reasoning_messages.get(message_id)
        delta = event.get("delta")
        if reasoning is None or not isinstance(delta, str):
            return
        reasoning.content.append(delta)
        self._reasoning_parts[message_id]["text"] += delta

    def _reasoning_message_end(self, event: JsonObject) -> None:
        message_id = str(event.get("messageId", ""))
        if self.reasoning_messages.pop(message_id, None) is not None:
            self._reasoning_parts[message_id]["state"] = "done"

    def _reasoning_encrypted(self, event: JsonObject) -> None:
        entity = str(event.get("entityId", ""))
        value = event.get("encryptedValue")
        if event.get("subtype") == "tool-call":
            part = self._tool_parts.get(entity)
            tool = self.open_tools.get(entity)
            if tool is not None and isinstance(value, str):
                tool.encrypted_value = value
        else:
            reasoning = self.reasoning_messages.get(entity)
            if reasoning is not None and isinstance(value, str):
                reasoning.encrypted_value = value
            part = self._reasoning_parts.get(entity)
            if part is None:  # a value with no reasoning text (redacted thinking)
                part = {"type": "reasoning", "messageId": entity, "text": "", "state": "done"}
                self._alias(entity, "reasoning")
                self._reasoning_parts[entity] = part
                self.parts.append(part)
        if part is not None:
            part["encryptedValue"] = value

    # misc
    def _custom(self, event: JsonObject) -> None:
        value = event.get("value")
        if event.get("name") == "source" and isinstance(value, dict):
            self.parts.append({**value, "type": "source"})

    def _state(self, event: JsonObject) -> None:
        if event.get("type") == "STATE_SNAPSHOT":
            self.state_events = [event]
        else:
            self.state_events.append(event)

    def _activity(self, event: JsonObject) -> None:
        self.activity_events.append(event)


_HANDLERS: dict[str, Any] = {
    "RUN_STARTED": RunFold._run_started,
    **{t: RunFold._terminal for t in AGUI_TERMINAL},
    "STEP_STARTED": RunFold._step_started,
    "STEP_FINISHED": RunFold._step_finished,
    "TEXT_MESSAGE_START": RunFold._text_start,
    "TEXT_MESSAGE_CONTENT": RunFold._text_content,
    "TEXT_MESSAGE_END": RunFold._text_end,
    "TOOL_CALL_START": RunFold._tool_start,
    "TOOL_CALL_ARGS": RunFold._tool_args,
    "TOOL_CALL_END": RunFold._tool_end,
    "TOOL_CALL_RESULT": RunFold._tool_result,
    "REASONING_START": RunFold._reasoning_start,
    "REASONING_END": RunFold._reasoning_end,
    "REASONING_MESSAGE_START": RunFold._reasoning_message_start,
    "REASONING_MESSAGE_CONTENT": RunFold._reasoning_content,
    "REASONING_MESSAGE_END": RunFold._reasoning_message_end,
    "REASONING_ENCRYPTED_VALUE": RunFold._reasoning_encrypted,
    "CUSTOM": RunFold._custom,
    "STATE_SNAPSHOT": RunFold._state,
    "STATE_DELTA": RunFold._state,
    "ACTIVITY_SNAPSHOT": RunFold._activity,
    "ACTIVITY_DELTA": RunFold._activity,
}
"""Transition table: event type -> fold method (STYLE.md: transitions as data)."""

_OPENERS = frozenset({"TEXT_MESSAGE_START", "TOOL_CALL_START", "REASONING_MESSAGE_START"})
"""Events a chunk expansion may open an item with (marked ``chunk``)."""
