"""Decoder for Amazon Bedrock ``ConverseStream`` (``POST /model/{modelId}/converse-stream``).

Follows the Bedrock Runtime API reference (``ConverseStream``, API version ``2023-09-30``; the
shapes of ``ConverseStreamOutput`` in botocore's ``data/bedrock-runtime/2023-09-30/service-2``):
the body is AWS event-stream binary framing (:mod:`._eventstream`), one message per union
member: ``messageStart``, then per content block ``contentBlockStart`` (tool use and tool
result blocks only) / ``contentBlockDelta`` / ``contentBlockStop`` keyed by
``contentBlockIndex``, then ``messageStop`` (``stopReason``) and ``metadata`` (``usage``,
``metrics``); an exception member (``internalServerException``, ``modelStreamErrorException``,
``validationException``, ``throttlingException``, ``serviceUnavailableException``) may end the
stream early. Where the reference is silent the behaviour of ``@ai-sdk/amazon-bedrock``
(vercel/ai ``packages/amazon-bedrock/src/bedrock-chat-language-model.ts``,
``map-bedrock-finish-reason.ts``) is followed. A JSON dump of the same members (one
``{"contentBlockDelta": {...}}`` object per line) decodes the same way.

Content blocks → AG-UI (through :class:`~agui_codecs.builder.RunBuilder`):

* ``delta.text``: TEXT_MESSAGE_*. Consecutive text blocks (a cited answer is split into many
  blocks around its citations) continue one text message; a tool call or reasoning ends it.
  Empty text deltas open nothing.
* ``delta.reasoningContent``: REASONING_* keyed by block index; ``text`` is the reasoning
  text, ``signature`` becomes REASONING_ENCRYPTED_VALUE with metadata ``field: "signature"``
  and ``redactedContent`` (base64) one with ``field: "redactedContent"``: the request builder
  sends them back as ``reasoningContent.reasoningText.signature`` / ``redactedContent``.
* ``start.toolUse`` + ``delta.toolUse.input`` fragments: TOOL_CALL_START/ARGS/END with the
  ``toolUseId``; ``type: "server_tool_use"`` (a tool Bedrock runs, e.g. Nova's code
  interpreter) sets TOOL_CALL_START ``metadata.providerExecuted``. A call that got no
  argument text gets ARGS ``"{}"``.
* ``start.toolResult`` + ``delta.toolResult`` items: TOOL_CALL_RESULT of that ``toolUseId``
  at the block's stop, its content the JSON text of the items (``isError`` when ``status`` is
  ``error``).
* ``delta.citation``: CUSTOM ``source`` ``{sourceType: "document", sourceId, title,
  mediaType: "text/plain"}`` (deduplicated per run by title and location).
* image blocks and unknown members or delta kinds are ignored (forward compatible).

End of run: RUN_FINISHED once both ``messageStop`` and ``metadata`` came (in either order:
recorded dumps have both), with ``finishReason`` from :data:`STOP_REASONS` (``other`` for
unknown), ``providerFinishReason`` the raw ``stopReason`` and ``latencyMs`` from the metrics;
EOF after ``messageStop`` without ``metadata`` finishes without usage; EOF before
``messageStop`` is RUN_ERROR ``UPSTREAM_TRUNCATED``. An exception member ends the run with
RUN_ERROR whose code is the exception's shape name (``ThrottlingException``, what boto3 puts in
``Error.Code``) and whose message is its ``message``; an unmodelled ``error`` message uses its
``:error-code``.

Usage (``metadata.usage``): AG-UI ``inputTokens`` = ``inputTokens`` + ``cacheReadInputTokens``
+ ``cacheWriteInputTokens`` (Bedrock counts cache tokens apart, ``totalTokens`` includes them),
``cachedInputTokens`` = cache read, ``cacheWriteInputTokens`` = cache write,
``outputTokens``, ``totalTokens``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import orjson

from ... import jsontext
from ...endings import BEDROCK_STOP_REASONS, canonical_finish
from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame, Framing
from ..base import Framer, StreamDecoder
from ._eventstream import ERROR_KEY, EventStreamFrames

__all__ = ["EXCEPTIONS", "STOP_REASONS", "BedrockConverseDecoder"]

STOP_REASONS: Final = BEDROCK_STOP_REASONS
"""Bedrock ``StopReason`` -> AG-UI/AI SDK finish reason (:mod:`agui_codecs.endings`; anything
else is ``other``)."""

EXCEPTIONS: Final = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)
"""The exception members of ``ConverseStreamOutput`` (any other ``*Exception`` member is
treated the same way)."""

_TEXT: Final = "text"


class _Result:
    __slots__ = ("content", "error", "tool_use_id")

    def __init__(self, tool_use_id: str, error: bool) -> None:
        self.tool_use_id = tool_use_id
        self.error = error
        self.content: list[Any] = []


class BedrockConverseDecoder(StreamDecoder):
    """Bedrock ``ConverseStream`` (event-stream binary, or JSON lines of its members) ->
    AG-UI events (see the module docstring)."""

    name: ClassVar[str] = "bedrock-converse"
    provider: ClassVar[str] = "amazon-bedrock"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._stop: str | None = None
        self._usage_seen = False
        self._usage: Any = None
        self._latency: int | None = None
        self._results: dict[int, _Result] = {}
        self._sources: set[str] = set()

    def frame_decoder(self, framing: Framing, *, max_event_size: int) -> Framer:
        """:class:`~._eventstream.EventStreamFrames` (binary, else ``framing``'s text)."""
        return EventStreamFrames(framing, max_event_size=max_event_size)

    # -- payloads -------------------------------------------------------------------------
    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            return
        kind, value = self._member(frame)
        if kind == ERROR_KEY:
            error = self.obj(value, "event-stream error")
            code = error.get("code")
            message = error.get("message")
            self.run.fail(
                code if isinstance(code, str) and code else "UPSTREAM_ERROR",
                message if isinstance(message, str) and message else "upstream reported an error",
            )
            return
        if kind in EXCEPTIONS or kind.endswith("Exception"):
            self._exception(kind, value)
            return
        handler = self._HANDLERS.get(kind)
        if handler is not None:
            handler(self, self.obj(value, kind))

    def _member(self, frame: Frame) -> tuple[str, Any]:
        if frame.event and frame.event != "message":  # an SSE dump naming the member
            data = frame.data
            if isinstance(data, dict) and len(data) == 1 and frame.event in data:
                return frame.event, data[frame.event]
            return frame.event, data
        event = self.obj(frame.data, "ConverseStream event")
        if len(event) != 1:
            raise MalformedUpstreamError(f"a ConverseStream event has one member, not {len(event)}")
        ((kind, value),) = event.items()
        return kind, value

    @staticmethod
    def _index(value: dict[str, Any], kind: str) -> int:
        index = value.get("contentBlockIndex")
        if not isinstance(index, int) or isinstance(index, bool):
            raise MalformedUpstreamError(f"{kind}.contentBlockIndex is not an integer")
        return index

    def _message_start(self, value: dict[str, Any]) -> None:
        self.run.start()

    def _block_start(self, value: dict[str, Any]) -> None:
        index = self._index(value, "contentBlockStart")
        start = self.obj(value.get("start"), "contentBlockStart.start")
        if "toolUse" in start:
            tool = self.obj(start["toolUse"], "contentBlockStart.start.toolUse")
            name, call_id = tool.get("name"), tool.get("toolUseId")
            if not isinstance(name, str) or not isinstance(call_id, str) or not call_id:
                raise MalformedUpstreamError("toolUse start lacks its name or toolUseId")
            self.run.tool_start(
                ("tool", index),
                name,
                call_id,
                provider_executed=tool.get("type") == "server_tool_use",
            )
        elif "toolResult" in start:
            result = self.obj(start["toolResult"], "contentBlockStart.start.toolResult")
            call_id = result.get("toolUseId")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedUpstreamError("toolResult start lacks its toolUseId")
            self.run.start()
            self._results[index] = _Result(call_id, result.get("status") == "error")

    def _block_delta(self, value: dict[str, Any]) -> None:
        index = self._index(value, "contentBlockDelta")
        delta = self.obj(value.get("delta"), "contentBlockDelta.delta")
        if "text" in delta:
            text = delta["text"]
            if not isinstance(text, str):
                raise MalformedUpstreamError("contentBlockDelta.delta.text is not a string")
            if text:
                self.run.text(text, key=_TEXT)
        elif "reasoningContent" in delta:
            self._reasoning(index, self.obj(delta["reasoningContent"], "reasoningContent"))
        elif "toolUse" in delta:
            fragment = self.obj(delta["toolUse"], "delta.toolUse").get("input")
            if not isinstance(fragment, str):
                raise MalformedUpstreamError("delta.toolUse.input is not a string")
            if not self.run.tool_is_open(("tool", index)):
                raise MalformedUpstreamError(f"toolUse delta for block {index}, which is no call")
            self.run.tool_args(("tool", index), fragment)
        elif "toolResult" in delta:
            result = self._results.get(index)
            if result is None:
                raise MalformedUpstreamError(f"toolResult delta for block {index}, not a result")
            items = delta["toolResult"]
            result.content.extend(items if isinstance(items, list) else [items])
        elif "citation" in delta:
            self._citation(self.obj(delta["citation"], "delta.citation"))

    def _reasoning(self, index: int, reasoning: dict[str, Any]) -> None:
        key = ("reasoning", index)
        self.run.end_text(_TEXT)
        text = reasoning.get("text")
        if text is not None:
            if not isinstance(text, str):
                raise MalformedUpstreamError("reasoningContent.text is not a string")
            self.run.reasoning(text, key=key)
        for field in ("signature", "redactedContent"):
            opaque = reasoning.get(field)
            if opaque is None:
                continue
            if not isinstance(opaque, str):
                raise MalformedUpstreamError(f"reasoningContent.{field} is not a string")
            self.run.reasoning_encrypted(opaque, key=key, field=field)

    def _citation(self, citation: dict[str, Any]) -> None:
        title = citation.get("title")
        title = title if isinstance(title, str) and title else "document"
        where = orjson.dumps(citation.get("location"), option=orjson.OPT_SORT_KEYS).decode()
        source_id = f"{title}:{where}"
        if source_id in self._sources:
            return
        self._sources.add(source_id)
        self.run.source(
            {
                "sourceType": "document",
                "sourceId": source_id,
                "title": title,
                "mediaType": "text/plain",
            }
        )

    def _block_stop(self, value: dict[str, Any]) -> None:
        index = self._index(value, "contentBlockStop")
        key = ("tool", index)
        if self.run.tool_is_open(key):
            if not self.run.tool_has_args(key):
                self.run.tool_args(key, "{}")
            self.run.end_tool(key)
        self.run.end_reasoning(("reasoning", index))
        result = self._results.pop(index, None)
        if result is not None:
            content = jsontext.dumps(result.content)
            meta = {"isError": True} if result.error else None
            self.run.tool_result(result.tool_use_id, content, metadata=meta)

    def _message_stop(self, value: dict[str, Any]) -> None:
        reason = value.get("stopReason")
        self.run.start()
        self._stop = reason if isinstance(reason, str) else ""
        if self._usage_seen:
            self._finish()

    def _metadata(self, value: dict[str, Any]) -> None:
        self.run.start()
        usage = value.get("usage")
        if usage is not None:
            self._usage = self._token_usage(self.obj(usage, "metadata.usage"))
        metrics = value.get("metrics")
        if isinstance(metrics, dict) and isinstance(metrics.get("latencyMs"), int):
            self._latency = metrics["latencyMs"]
        self._usage_seen = True
        if self._stop is not None:
            self._finish()

    _HANDLERS: ClassVar[dict[str, Any]] = {
        "messageStart": _message_start,
        "contentBlockStart": _block_start,
        "contentBlockDelta": _block_delta,
        "contentBlockStop": _block_stop,
        "messageStop": _message_stop,
        "metadata": _metadata,
    }

    def _token_usage(self, usage: dict[str, Any]) -> Any:
        def count(name: str) -> int | None:
            value = usage.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        read, write = count("cacheReadInputTokens"), count("cacheWriteInputTokens")
        base = count("inputTokens")
        inputs = None if base is None else base + (read or 0) + (write or 0)
        return self.run.usage(
            input_tokens=inputs,
            output_tokens=count("outputTokens"),
            total_tokens=count("totalTokens"),
            cached_input_tokens=read,
            cache_write_input_tokens=write,
        )

    def _exception(self, kind: str, value: Any) -> None:
        code = kind[:1].upper() + kind[1:]
        message = value.get("message") if isinstance(value, dict) else None
        self.run.fail(
            code, message if isinstance(message, str) and message else f"upstream reported {code}"
        )

    # -- end of run -----------------------------------------------------------------------
    def _finish(self) -> None:
        reason = self._stop or ""
        meta = {"latencyMs": self._latency} if self._latency is not None else None
        self.run.finish(
            finish_reason=canonical_finish(STOP_REASONS, reason),
            provider_finish_reason=reason or None,
            usage=self._usage,
            metadata=meta,
        )

    def finalize(self) -> None:
        if self._stop is not None:
            self._finish()
        else:
            self.run.fail("UPSTREAM_TRUNCATED", "ConverseStream ended before messageStop")
