"""AI SDK UI message stream encoder: AG-UI events → UIMessageChunk SSE (``ai`` v5, v6, v7).

Follows ``ai`` 7.0.173 ``src/ui-message-stream/ui-message-chunks.ts`` and
``src/ui/process-ui-message-stream.ts``, checked against ai 6.0.326 and 5.0.277 (see
``docs/protocols.md`` §3). By default only chunk types and finish reasons accepted by
ai v5, v6 *and* v7 are produced:

==========================  ===================================================================
AG-UI event                 chunks
==========================  ===================================================================
RUN_STARTED                 ``start`` {messageId}, ``start-step``; messageId: the ``message_id``
                            option, else RUN_STARTED ``metadata.messageId`` (the id the upstream
                            chose, e.g. an AI SDK backend's ``start.messageId``), else the runId
TEXT_MESSAGE_START/CONTENT  ``text-start`` / ``text-delta`` {id, delta} / ``text-end``
 /END
REASONING_MESSAGE_*         ``reasoning-start`` / ``reasoning-delta`` / ``reasoning-end``
REASONING_ENCRYPTED_VALUE   ``reasoning-delta`` {delta: "", providerMetadata: {<provider>:
                            {<field>: value}}} on the open reasoning part
TOOL_CALL_START/ARGS/END    ``tool-input-start`` / ``tool-input-delta`` / ``tool-input-available``
                            {input: parsed JSON} (``tool-input-error`` if the JSON is invalid);
                            ``metadata.providerExecuted`` / ``metadata.dynamic`` become
                            ``providerExecuted`` / ``dynamic: true`` on every chunk of the call
TOOL_CALL_END               ``tool-input-error`` {input: the raw partial text, errorText:
 {metadata.incomplete}      :data:`INCOMPLETE_TOOL_INPUT`} (a call cut off by a failed run)
TOOL_CALL_RESULT            ``tool-output-available`` {output} (only for a call this stream began);
                            when it carries a ui_schema (delivery ``metadata`` / ``seed``), then
                            ``data-ui-schema`` {id: toolCallId, data: ui_schema}
ACTIVITY_SNAPSHOT of a      ``data-ui-schema`` {id: toolCallId, data: ui_schema} (delivery
 compiled surface           ``activity``: it follows its TOOL_CALL_RESULT); other activities are
                            not sent (``agui_codecs.ui.delivery.ui_schema_of``)
CUSTOM ``source``           ``source-url`` / ``source-document``
CUSTOM ``data-<name>``      ``data-<name>`` {id?, data, transient?}
CUSTOM ``file``             ``file`` {url, mediaType, providerMetadata?}
CUSTOM ``message-metadata`` ``message-metadata`` {messageMetadata}
CUSTOM                      ``tool-output-available`` {toolCallId, output, preliminary: true}
 ``tool-output-preliminary`` (only for a call this stream began whose input is complete)
RUN_FINISHED                open parts closed, ``finish-step``, ``finish`` {finishReason,
                            messageMetadata: {usage, cost, currency, costSource, ...} and the
                            upstream's own ``metadata.messageMetadata`` (its keys win)}
RUN_FINISHED outcome        open parts closed, one chunk per interrupt (below), ``finish-step``,
 ``interrupt``              ``finish`` {finishReason: ``tool-calls`` when calls await approval,
                            else ``other``}
RUN_STARTED after           ``start-step``: a further run of the same stream (AG-UI 1.0 runs in
 RUN_FINISHED               sequence, e.g. an agent loop) continues the message as a new step
RUN_ERROR                   open parts closed (open tool inputs as incomplete, as above),
                            ``error`` {errorText}, ``finish`` {finishReason: "error"}
close()                     ``data: [DONE]`` (after an ``error`` + ``finish`` when no terminal
                            event was seen)
==========================  ===================================================================

Interrupts (``agui_codecs.encoders._ai_sdk_parts.interrupt_chunks``): a tool approval
(``reason: "tool_approval"`` and a ``toolCallId`` of a call this stream announced) becomes
``tool-approval-request`` {approvalId, toolCallId} when ``ai_sdk_major >= 6``, after the tool
input is closed; in portable output, ai v5 rejecting that type, it becomes the data part
``data-tool-approval-request`` {id: approvalId, data: {approvalId, toolCallId, toolName,
reason, message?}} (answer it by the app's own means, e.g. ``addToolResult`` or a new
request). Other interrupts become ``data-interrupt`` {id, data: {id, reason, message?,
toolCallId?, responseSchema?, expiresAt?, metadata?}}.

Options (:class:`AiSdkEncoder`):

* ``message_id``: ``start.messageId`` (a continuation must pass its message's id).
* ``ai_sdk_major``: ``None`` (default) for output every major accepts; ``5``, ``6`` or ``7``
  (or later) for the client's own major: ``>= 6`` sends ``tool-approval-request``; ``>= 7``
  adds its ``reason`` / ``isAutomatic`` and relays CUSTOM ``reasoning-file`` and ``custom``
  (ai v7 chunk types).

Other events (state, snapshots, steps, raw, upstream activities) have no UIMessageChunk
equivalent in all three versions and are not sent. ``data-*`` chunks are accepted by ai v5, v6
and v7 and kept as a data part of the message (same type and id: replaced; ``transient``: not
kept). Every chunk is sanitized for ``secureJsonParse`` (``__proto__`` keys renamed
``_proto_``, ``prototype`` in a ``constructor`` object renamed ``_prototype_``; see
:func:`sanitize_proto`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final

import orjson
from ag_ui.core import (
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
    ReasoningEncryptedValueEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ..builder import FINISH_REASONS
from ..cost import COST_KEYS
from ..ui.delivery import ai_sdk_ui_chunk, ui_schema_of
from ._ai_sdk_parts import (
    chunk_bytes,
    interrupt_chunks,
    is_tool_approval,
    part_chunk,
    sanitize_proto,
)

__all__ = ["INCOMPLETE_TOOL_INPUT", "AiSdkEncoder", "sanitize_proto"]

INCOMPLETE_TOOL_INPUT: Final = "tool call interrupted before its arguments completed"
"""``errorText`` of the ``tool-input-error`` sent for a tool call cut off by a failed run."""

_PRELIMINARY: Final = "tool-output-preliminary"
"""CUSTOM name of a preliminary tool output (``ai-sdk`` and ``openai-responses`` decoders)."""


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


class AiSdkEncoder:
    """Stateful AG-UI → UIMessageChunk SSE encoder; one instance per response stream.

    Args:
        message_id: ``start.messageId``; defaults to RUN_STARTED ``metadata.messageId``, else
            its runId. A continuation of an assistant message must pass that message's id.
        ai_sdk_major: the client's ``ai`` major (5, 6, 7 or later), or ``None`` (default) for
            output that ai v5, v6 and v7 all accept; see the module docstring.

    Raises:
        ValueError: ``ai_sdk_major`` is not ``None`` or an int >= 5.
    """

    name: ClassVar[str] = "ai-sdk"
    media_type: ClassVar[str] = "text/event-stream"
    headers: ClassVar[dict[str, str]] = {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "connection": "keep-alive",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-accel-buffering": "no",
    }

    def __init__(self, *, message_id: str | None = None, ai_sdk_major: int | None = None) -> None:
        if ai_sdk_major is not None and (
            not isinstance(ai_sdk_major, int) or isinstance(ai_sdk_major, bool) or ai_sdk_major < 5
        ):
            raise ValueError(f"ai_sdk_major must be None or an int >= 5, not {ai_sdk_major!r}")
        self.message_id = message_id
        self.ai_sdk_major = ai_sdk_major
        self._started = False
        self._ended = False
        self._finished = False  # ended by RUN_FINISHED: a further run may follow
        self._text: set[str] = set()
        self._reasoning: set[str] = set()
        self._tools: dict[str, _Tool] = {}  # open tool inputs
        self._known_tools: dict[str, _Tool] = {}  # every tool call this stream announced
        self._metadata_sent = False  # a message-metadata chunk went out
        self._metadata_object = True  # ...and the client holds an object (ours can merge in)

    @property
    def ended(self) -> bool:
        """True once ``finish`` was written."""
        return self._ended

    def encode(self, event: Event) -> bytes:
        """Return the SSE bytes for one AG-UI event (possibly empty)."""
        return b"".join(chunk_bytes(c) for c in self.chunks(event))

    def chunks(self, event: Event) -> list[dict[str, Any]]:
        """Return the UIMessageChunk objects for one AG-UI event."""
        if self._ended:
            if not (self._finished and isinstance(event, RunStartedEvent)):
                return []
            # One more run after RUN_FINISHED: the same UI message goes on as a new step (a
            # second ``start`` would rename the message).
            self._ended = self._finished = False
            return [{"type": "start-step"}]
        out: list[dict[str, Any]] = []
        if not self._started:
            out += self._start(event if isinstance(event, RunStartedEvent) else None)
            if isinstance(event, RunStartedEvent):
                return out
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            out += handler(self, event)
        return out

    def _text_start(self, mid: str) -> list[dict[str, Any]]:
        if mid in self._text:
            return []
        self._text.add(mid)
        return [{"type": "text-start", "id": mid}]

    def _reasoning_start(self, mid: str) -> list[dict[str, Any]]:
        if mid in self._reasoning:
            return []
        self._reasoning.add(mid)
        return [{"type": "reasoning-start", "id": mid}]

    def _on_text_start(self, e: TextMessageStartEvent) -> list[dict[str, Any]]:
        return self._text_start(e.message_id)

    def _on_text_content(self, e: TextMessageContentEvent) -> list[dict[str, Any]]:
        return [
            *self._text_start(e.message_id),
            {"type": "text-delta", "id": e.message_id, "delta": e.delta},
        ]

    def _on_text_end(self, e: TextMessageEndEvent) -> list[dict[str, Any]]:
        if e.message_id not in self._text:
            return []
        self._text.discard(e.message_id)
        return [{"type": "text-end", "id": e.message_id}]

    def _on_reasoning_start(self, e: ReasoningMessageStartEvent) -> list[dict[str, Any]]:
        return self._reasoning_start(e.message_id)

    def _on_reasoning_content(self, e: ReasoningMessageContentEvent) -> list[dict[str, Any]]:
        return [
            *self._reasoning_start(e.message_id),
            {"type": "reasoning-delta", "id": e.message_id, "delta": e.delta},
        ]

    def _on_reasoning_end(self, e: ReasoningMessageEndEvent) -> list[dict[str, Any]]:
        if e.message_id not in self._reasoning:
            return []
        self._reasoning.discard(e.message_id)
        return [{"type": "reasoning-end", "id": e.message_id}]

    def _on_tool_args(self, e: ToolCallArgsEvent) -> list[dict[str, Any]]:
        tool = self._tools.get(e.tool_call_id)
        if tool is None or not e.delta:
            return []
        tool.args.append(e.delta)
        return [
            {"type": "tool-input-delta", "toolCallId": e.tool_call_id, "inputTextDelta": e.delta}
        ]

    def _on_tool_end(self, e: ToolCallEndEvent) -> list[dict[str, Any]]:
        incomplete = bool((e.metadata or {}).get("incomplete"))
        return self._tool_end(e.tool_call_id, incomplete=incomplete)

    def _on_run_finished(self, e: RunFinishedEvent) -> list[dict[str, Any]]:
        out = self._close_parts()
        if isinstance(e.outcome, RunFinishedInterruptOutcome):
            names = {tid: tool.name for tid, tool in self._known_tools.items()}
            out += interrupt_chunks(e.outcome.interrupts, names, self.ai_sdk_major)
        out.append({"type": "finish-step"})
        out.append(self._finish(e))
        self._ended = self._finished = True
        return out

    def _on_run_error(self, e: RunErrorEvent) -> list[dict[str, Any]]:
        out = self._close_parts(incomplete=True)
        text = f"{e.code}: {e.message}" if e.code else e.message
        out.append({"type": "error", "errorText": text})
        out.append({"type": "finish", "finishReason": "error"})
        self._ended = True
        return out

    def close(self) -> bytes:
        """End of stream: ``[DONE]``, after an ``error`` + ``finish`` if the run never ended."""
        out = b""
        if not self._ended:
            if not self._started:
                out += b"".join(chunk_bytes(c) for c in self._start(None))
            chunks = [
                *self._close_parts(incomplete=True),
                {"type": "error", "errorText": "UPSTREAM_TRUNCATED: stream ended early"},
                {"type": "finish", "finishReason": "error"},
            ]
            out += b"".join(chunk_bytes(c) for c in chunks)
            self._ended = True
        return out + b"data: [DONE]\n\n"

    # -- helpers ------------------------------------------------------------------------
    def _start(self, event: RunStartedEvent | None) -> list[dict[str, Any]]:
        self._started = True
        start: dict[str, Any] = {"type": "start"}
        message_id = self.message_id
        if not message_id and event is not None:
            upstream = (event.metadata or {}).get("messageId")
            message_id = upstream if isinstance(upstream, str) and upstream else event.run_id
        if message_id:
            start["messageId"] = message_id
        return [start, {"type": "start-step"}]

    def _encrypted(self, event: ReasoningEncryptedValueEvent) -> list[dict[str, Any]]:
        meta = event.metadata or {}
        provider = str(meta.get("provider") or "agui")
        field = str(meta.get("field") or "encryptedValue")
        provider_metadata = {provider: {field: event.encrypted_value}}
        mid = event.entity_id
        if event.subtype == "tool-call":
            # Sent on tool-input-available (the part's callProviderMetadata, which e.g.
            # @ai-sdk/google returns as the functionCall's thoughtSignature). A value for a call
            # whose input was already sent cannot be attached without re-announcing the call.
            tool = self._tools.get(mid)
            if tool is not None:
                tool.provider_metadata.setdefault(provider, {})[field] = event.encrypted_value
            return []
        if mid in self._text:  # a text part's own signature stays on that text part
            return [
                {
                    "type": "text-delta",
                    "id": mid,
                    "delta": "",
                    "providerMetadata": provider_metadata,
                }
            ]
        if mid in self._reasoning:
            return [
                {
                    "type": "reasoning-delta",
                    "id": mid,
                    "delta": "",
                    "providerMetadata": provider_metadata,
                }
            ]
        return [
            {"type": "reasoning-start", "id": mid, "providerMetadata": provider_metadata},
            {"type": "reasoning-end", "id": mid, "providerMetadata": provider_metadata},
        ]

    def _tool_start(self, event: ToolCallStartEvent) -> list[dict[str, Any]]:
        tid = event.tool_call_id
        if tid in self._tools:
            return []
        meta = event.metadata or {}
        tool = _Tool(
            event.tool_call_name, meta.get("providerExecuted") is True, meta.get("dynamic") is True
        )
        self._tools[tid] = self._known_tools[tid] = tool
        return [tool.flags({"type": "tool-input-start", "toolCallId": tid, "toolName": tool.name})]

    def _tool_end(self, tid: str, *, incomplete: bool = False) -> list[dict[str, Any]]:
        """The chunk closing a tool input: ``tool-input-available`` with the parsed input, or
        ``tool-input-error`` with the raw text when it is not JSON or ``incomplete``."""
        tool = self._tools.pop(tid, None)
        if tool is None:
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
        return [chunk]

    def _tool_result(self, event: ToolCallResultEvent) -> list[dict[str, Any]]:
        tid = event.tool_call_id
        tool = self._known_tools.get(tid)
        if tool is None:
            # The client has no tool part for it (the output chunk would be rejected); a
            # surface is a data part of its own and still goes out.
            return self._ui(event)
        out = self._tool_end(tid) if tid in self._tools else []
        content = event.content
        output: Any = content
        if isinstance(content, str):
            try:
                output = orjson.loads(content)
            except orjson.JSONDecodeError:
                output = content
        else:
            output = [part.model_dump(mode="json", by_alias=True) for part in content]
        out.append(
            tool.flags({"type": "tool-output-available", "toolCallId": tid, "output": output})
        )
        out += self._ui(event)
        return out

    def _ui(self, event: Event) -> list[dict[str, Any]]:
        """``data-ui-schema`` for an event carrying a compiled ui_schema (any delivery)."""
        ui_schema = ui_schema_of(event)
        return [] if ui_schema is None else [ai_sdk_ui_chunk(ui_schema)]

    def _custom(self, event: CustomEvent) -> list[dict[str, Any]]:
        if event.name == "message-metadata":
            return self._metadata(event.value)
        if event.name == _PRELIMINARY:
            return self._preliminary(event.value)
        chunk = part_chunk(event.name, event.value, self.ai_sdk_major)
        return [] if chunk is None else [chunk]

    def _metadata(self, value: Any) -> list[dict[str, Any]]:
        """CUSTOM ``message-metadata`` {messageMetadata} → the chunk of the same shape."""
        metadata = value.get("messageMetadata") if isinstance(value, dict) else None
        if metadata is None:
            return []
        if not isinstance(metadata, dict):
            self._metadata_object = False
        self._metadata_sent = True
        return [{"type": "message-metadata", "messageMetadata": metadata}]

    def _preliminary(self, value: Any) -> list[dict[str, Any]]:
        """CUSTOM ``tool-output-preliminary`` {toolCallId, output} → a preliminary output."""
        if not isinstance(value, dict) or not isinstance(value.get("toolCallId"), str):
            return []
        tid: str = value["toolCallId"]
        tool = self._known_tools.get(tid)
        if tool is None or tid in self._tools:
            # No tool part, or its input still streams (an OpenAI Responses partial image
            # comes before the call's arguments): the client could not place an output.
            return []
        chunk = {"type": "tool-output-available", "toolCallId": tid, "output": value.get("output")}
        return [tool.flags({**chunk, "preliminary": True})]

    def _close_parts(self, *, incomplete: bool = False) -> list[dict[str, Any]]:
        """Close the open parts; ``incomplete``: the run failed, tool inputs were cut off."""
        out: list[dict[str, Any]] = []
        for tid in list(self._tools):
            out += self._tool_end(tid, incomplete=incomplete)
        out += [{"type": "text-end", "id": mid} for mid in sorted(self._text)]
        out += [{"type": "reasoning-end", "id": mid} for mid in sorted(self._reasoning)]
        self._text.clear()
        self._reasoning.clear()
        return out

    def _finish(self, event: RunFinishedEvent) -> dict[str, Any]:
        meta = event.metadata or {}
        reason = meta.get("finishReason")
        if isinstance(event.outcome, RunFinishedInterruptOutcome):
            approvals = any(is_tool_approval(i) for i in event.outcome.interrupts)
            reason = "tool-calls" if approvals else "other"
        chunk: dict[str, Any] = {
            "type": "finish",
            "finishReason": reason if reason in FINISH_REASONS else "other",
        }
        metadata = self._finish_metadata(event.usage, meta)
        if metadata is not None:
            chunk["messageMetadata"] = metadata
        return chunk

    def _finish_metadata(self, usage: list[TokenUsage] | None, meta: dict[str, Any]) -> Any:
        """``finish.messageMetadata``: ours (usage, cost) under the upstream's own
        (RUN_FINISHED ``metadata.messageMetadata``, e.g. an AI SDK backend's), whose keys win.
        The client merges objects only: nothing is added to metadata that is not one."""
        theirs = meta.get("messageMetadata")
        if theirs is not None and not isinstance(theirs, dict):
            return None if self._metadata_sent else theirs
        merged = {**self._message_metadata(usage, meta), **(theirs or {})}
        return merged if merged and self._metadata_object else None

    @staticmethod
    def _message_metadata(
        usage: list[TokenUsage] | None, meta: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Our part of ``finish.messageMetadata``: the run's usage and its cost keys
        (``agui_codecs.cost``)."""
        out: dict[str, Any] = {}
        if usage:
            out["usage"] = [u.model_dump(mode="json", by_alias=True) for u in usage]
        if meta:
            out.update({k: meta[k] for k in COST_KEYS if k in meta})
        return out


_Handler = Callable[[AiSdkEncoder, Any], list[dict[str, Any]]]
_HANDLERS: dict[type, _Handler] = {
    TextMessageStartEvent: AiSdkEncoder._on_text_start,
    TextMessageContentEvent: AiSdkEncoder._on_text_content,
    TextMessageEndEvent: AiSdkEncoder._on_text_end,
    ReasoningMessageStartEvent: AiSdkEncoder._on_reasoning_start,
    ReasoningMessageContentEvent: AiSdkEncoder._on_reasoning_content,
    ReasoningMessageEndEvent: AiSdkEncoder._on_reasoning_end,
    ReasoningEncryptedValueEvent: AiSdkEncoder._encrypted,
    ToolCallStartEvent: AiSdkEncoder._tool_start,
    ToolCallArgsEvent: AiSdkEncoder._on_tool_args,
    ToolCallEndEvent: AiSdkEncoder._on_tool_end,
    ToolCallResultEvent: AiSdkEncoder._tool_result,
    CustomEvent: AiSdkEncoder._custom,
    ActivitySnapshotEvent: AiSdkEncoder._ui,
    RunFinishedEvent: AiSdkEncoder._on_run_finished,
    RunErrorEvent: AiSdkEncoder._on_run_error,
}
"""AG-UI event class -> chunk builder. Events absent here have no UIMessageChunk form."""
