"""AI SDK UI message stream encoder: AG-UI events → UIMessageChunk SSE (``ai`` v5, v6, v7).

Follows ``ai`` 7.0.173 ``src/ui-message-stream/ui-message-chunks.ts`` and
``src/ui/process-ui-message-stream.ts`` (see ``shared/docs/PROTOCOLS.md`` §3). By default only
chunk types and finish reasons accepted by ai v5, v6 *and* v7 are produced:

==========================  ===================================================================
AG-UI event                 chunks
==========================  ===================================================================
RUN_STARTED                 ``start`` {messageId}, ``start-step``
TEXT_MESSAGE_START/CONTENT  ``text-start`` / ``text-delta`` {id, delta} / ``text-end``
 /END
REASONING_MESSAGE_*         ``reasoning-start`` / ``reasoning-delta`` / ``reasoning-end``
REASONING_ENCRYPTED_VALUE   ``reasoning-delta`` {delta: "", providerMetadata: {<provider>:
                            {<field>: value}}} on the open reasoning part
TOOL_CALL_START/ARGS/END    ``tool-input-start`` / ``tool-input-delta`` / ``tool-input-available``
                            {input: parsed JSON} (``tool-input-error`` if the JSON is invalid)
TOOL_CALL_RESULT            ``tool-output-available`` {output} (only for a call this stream began);
                            when it carries a ui_schema (delivery ``metadata`` / ``seed``), then
                            ``data-ui-schema`` {id: toolCallId, data: ui_schema}
ACTIVITY_SNAPSHOT of a      ``data-ui-schema`` {id: toolCallId, data: ui_schema} (delivery
 compiled surface           ``activity``: it follows its TOOL_CALL_RESULT); other activities are
                            not sent (``agui_codecs.ui.delivery.ui_schema_of``)
CUSTOM ``source``           ``source-url`` / ``source-document``
RUN_FINISHED                open parts closed, ``finish-step``, ``finish`` {finishReason,
                            messageMetadata: {usage, cost, currency, costSource, ...}}
RUN_STARTED after           ``start-step``: a further run of the same stream (AG-UI 1.0 runs in
 RUN_FINISHED               sequence, e.g. an agent loop) continues the message as a new step
RUN_ERROR                   open parts closed, ``error`` {errorText}, ``finish`` {finishReason:
                            "error"}
close()                     ``data: [DONE]`` (after an ``error`` + ``finish`` when no terminal
                            event was seen)
==========================  ===================================================================

Other events (state, snapshots, steps, raw, upstream activities) have no UIMessageChunk
equivalent in all three versions and are not sent. ``data-*`` chunks are accepted by ai v5, v6
and v7 and kept as a data part of the message (same type and id: replaced). Every JSON object
is checked for a ``__proto__`` key (the AI SDK client rejects the whole stream on one); such
keys are renamed ``_proto_``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

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

__all__ = ["AiSdkEncoder", "sanitize_proto"]

_PROTO = b'"__proto__"'


def sanitize_proto(value: Any) -> Any:
    """Return ``value`` with every ``__proto__`` object key renamed ``_proto_``."""
    if isinstance(value, dict):
        return {("_proto_" if k == "__proto__" else k): sanitize_proto(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitize_proto(v) for v in value]
    return value


def _chunk(obj: dict[str, Any]) -> bytes:
    data = orjson.dumps(obj)
    if _PROTO in data:
        data = orjson.dumps(sanitize_proto(obj))
    return b"data: " + data + b"\n\n"


class _Tool:
    __slots__ = ("args", "name", "provider_executed", "provider_metadata")

    def __init__(self, name: str, provider_executed: bool) -> None:
        self.name = name
        self.provider_executed = provider_executed
        self.args: list[str] = []
        self.provider_metadata: dict[str, dict[str, str]] = {}


class AiSdkEncoder:
    """Stateful AG-UI → UIMessageChunk SSE encoder; one instance per response stream.

    Args:
        message_id: ``start.messageId``; defaults to the runId of RUN_STARTED. A continuation
            of an assistant message must pass that message's id.
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

    def __init__(self, *, message_id: str | None = None) -> None:
        self.message_id = message_id
        self._started = False
        self._ended = False
        self._finished = False  # ended by RUN_FINISHED: a further run may follow
        self._text: set[str] = set()
        self._reasoning: set[str] = set()
        self._tools: dict[str, _Tool] = {}  # open tool inputs
        self._known_tools: dict[str, bool] = {}  # toolCallId -> providerExecuted, all seen

    @property
    def ended(self) -> bool:
        """True once ``finish`` was written."""
        return self._ended

    def encode(self, event: Event) -> bytes:
        """Return the SSE bytes for one AG-UI event (possibly empty)."""
        return b"".join(_chunk(c) for c in self.chunks(event))

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
            out += self._start(event.run_id if isinstance(event, RunStartedEvent) else None)
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
        return self._tool_end(e.tool_call_id)

    def _on_run_finished(self, e: RunFinishedEvent) -> list[dict[str, Any]]:
        out = self._close_parts()
        out.append({"type": "finish-step"})
        out.append(self._finish(e))
        self._ended = self._finished = True
        return out

    def _on_run_error(self, e: RunErrorEvent) -> list[dict[str, Any]]:
        out = self._close_parts()
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
                out += b"".join(_chunk(c) for c in self._start(None))
            chunks = [
                *self._close_parts(),
                {"type": "error", "errorText": "UPSTREAM_TRUNCATED: stream ended early"},
                {"type": "finish", "finishReason": "error"},
            ]
            out += b"".join(_chunk(c) for c in chunks)
            self._ended = True
        return out + b"data: [DONE]\n\n"

    # -- helpers ------------------------------------------------------------------------
    def _start(self, run_id: str | None) -> list[dict[str, Any]]:
        self._started = True
        start: dict[str, Any] = {"type": "start"}
        message_id = self.message_id or run_id
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
        provider_executed = bool((event.metadata or {}).get("providerExecuted"))
        self._tools[tid] = _Tool(event.tool_call_name, provider_executed)
        self._known_tools[tid] = provider_executed
        chunk: dict[str, Any] = {
            "type": "tool-input-start",
            "toolCallId": tid,
            "toolName": event.tool_call_name,
        }
        if provider_executed:
            chunk["providerExecuted"] = True
        return [chunk]

    def _tool_end(self, tid: str) -> list[dict[str, Any]]:
        tool = self._tools.pop(tid, None)
        if tool is None:
            return []
        raw = "".join(tool.args)
        chunk: dict[str, Any]
        try:
            value = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError as exc:
            chunk = {
                "type": "tool-input-error",
                "toolCallId": tid,
                "toolName": tool.name,
                "input": raw,
                "errorText": f"tool arguments are not valid JSON: {exc}",
            }
        else:
            chunk = {
                "type": "tool-input-available",
                "toolCallId": tid,
                "toolName": tool.name,
                "input": value,
            }
        if tool.provider_executed:
            chunk["providerExecuted"] = True
        if tool.provider_metadata:
            chunk["providerMetadata"] = tool.provider_metadata
        return [chunk]

    def _tool_result(self, event: ToolCallResultEvent) -> list[dict[str, Any]]:
        tid = event.tool_call_id
        if tid not in self._known_tools:
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
        chunk: dict[str, Any] = {
            "type": "tool-output-available",
            "toolCallId": tid,
            "output": output,
        }
        if self._known_tools[tid]:
            chunk["providerExecuted"] = True
        out.append(chunk)
        out += self._ui(event)
        return out

    def _ui(self, event: Event) -> list[dict[str, Any]]:
        """``data-ui-schema`` for an event carrying a compiled ui_schema (any delivery)."""
        ui_schema = ui_schema_of(event)
        return [] if ui_schema is None else [ai_sdk_ui_chunk(ui_schema)]

    def _custom(self, event: CustomEvent) -> list[dict[str, Any]]:
        if event.name != "source" or not isinstance(event.value, dict):
            return []
        v = event.value
        source_id = str(v.get("sourceId") or v.get("url") or "")
        if v.get("sourceType") == "url" and v.get("url"):
            chunk: dict[str, Any] = {"type": "source-url", "sourceId": source_id, "url": v["url"]}
        elif v.get("sourceType") == "document":
            chunk = {
                "type": "source-document",
                "sourceId": source_id or str(v.get("title") or "document"),
                "mediaType": str(v.get("mediaType") or "text/plain"),
                "title": str(v.get("title") or source_id or "document"),
            }
            if v.get("filename"):
                chunk["filename"] = str(v["filename"])
        else:
            return []
        if v.get("title") and chunk["type"] == "source-url":
            chunk["title"] = str(v["title"])
        return [chunk]

    def _close_parts(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for tid in list(self._tools):
            out += self._tool_end(tid)
        out += [{"type": "text-end", "id": mid} for mid in sorted(self._text)]
        out += [{"type": "reasoning-end", "id": mid} for mid in sorted(self._reasoning)]
        self._text.clear()
        self._reasoning.clear()
        return out

    def _finish(self, event: RunFinishedEvent) -> dict[str, Any]:
        meta = event.metadata or {}
        reason = meta.get("finishReason")
        chunk: dict[str, Any] = {
            "type": "finish",
            "finishReason": reason if reason in FINISH_REASONS else "other",
        }
        metadata = self._message_metadata(event.usage, meta)
        if metadata:
            chunk["messageMetadata"] = metadata
        return chunk

    @staticmethod
    def _message_metadata(
        usage: list[TokenUsage] | None, meta: dict[str, Any] | None
    ) -> dict[str, Any]:
        """``finish.messageMetadata``: the run's usage and its cost keys (``agui_codecs.cost``)."""
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
