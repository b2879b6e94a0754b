"""Decoder for an AI SDK UI message stream (UIMessageChunk) from an existing AI SDK backend.

Input: the chunks of ``ai`` 7.0.173 ``src/ui-message-stream/ui-message-chunks.ts`` (also v5/v6,
whose chunk set is a subset) as SSE ``data:`` events ending with ``data: [DONE]``, or as a JSON
array / JSON lines of chunk objects (recorded fixtures, ``tests/corpus/aisdk-ui``). Output: one
AG-UI 1.0 run. The chunk semantics follow ``src/ui/process-ui-message-stream.ts``:

=====================================  ==========================================================
chunk                                  AG-UI
=====================================  ==========================================================
``start`` {messageId}                  RUN_STARTED ``metadata.messageId``; ``messageId`` is
                                       also the base message id
``text-start|delta|end``               TEXT_MESSAGE_START / CONTENT / END (ids from the builder,
                                       one AG-UI message per text part)
``reasoning-start|delta|end``          REASONING_START + REASONING_MESSAGE_* + REASONING_END
``providerMetadata`` signatures        REASONING_ENCRYPTED_VALUE on the part's message or tool
                                       call, metadata ``{provider, field}`` (fields
                                       :data:`SIGNATURE_FIELDS`)
``tool-input-start|delta``             TOOL_CALL_START / TOOL_CALL_ARGS (``providerExecuted`` →
                                       ``metadata.providerExecuted``, ``dynamic`` →
                                       ``metadata.dynamic``)
``tool-input-available``               TOOL_CALL_END; one TOOL_CALL_ARGS with the JSON of
                                       ``input`` first when no delta streamed
``tool-input-error``                   TOOL_CALL_END, then an error TOOL_CALL_RESULT
``tool-output-available``              TOOL_CALL_RESULT (``output`` as is if a string, else its
                                       JSON); a call still open is closed first, so a call sent
                                       as start + deltas with no ``tool-input-available`` ends
``tool-output-error``                  TOOL_CALL_RESULT ``content: errorText``,
                                       ``metadata: {isError: true}``
``tool-output-denied``                 TOOL_CALL_RESULT ``{"type":"execution-denied"}``,
                                       ``metadata: {denied: true}``
``tool-output-*`` of a call this       TOOL_CALL_RESULT all the same: the stream continues an
stream did not start                   earlier message (the ai v6/v7 tool-approval flow sends
                                       the approved / denied calls' outcomes after ``start``)
``tool-approval-request``              an Interrupt ``{id: approvalId, reason: "tool_approval",
                                       toolCallId}``; the run ends with outcome ``interrupt``
``source-url`` / ``source-document``   CUSTOM ``source`` (builder convention)
``file``, ``reasoning-file``,          CUSTOM of the same name, value = the chunk without
``custom``, ``reset-step``,            ``type`` (``preliminary`` tool output: CUSTOM
``steering-message``,                  ``tool-output-preliminary``, no result yet)
``tool-approval-response``
``data-<name>``                        CUSTOM ``data-<name>`` {data, id?, transient?}
``start-step`` / ``finish-step``       STEP_STARTED / STEP_FINISHED ``step-1``, ``step-2``...,
                                       kept balanced; ``finish-step`` ends tool calls whose
                                       input is still open
``message-metadata`` (and the          CUSTOM ``message-metadata`` {messageMetadata} as it comes
``messageMetadata`` of start/finish)   (start, message-metadata); all of it merged like the
                                       client does in RUN_FINISHED ``metadata.messageMetadata``;
                                       a ``usage`` / ``totalUsage`` object in it (AI SDK
                                       ``LanguageModelUsage`` or AG-UI ``TokenUsage`` shape)
                                       becomes RUN_FINISHED ``usage``
``finish`` {finishReason}              RUN_FINISHED at ``[DONE]`` / EOF; finishReason kept when
                                       canonical, else ``other`` (raw value in
                                       ``providerFinishReason``); absent: ``tool-calls`` if calls
                                       await results or approval, else ``stop``
``abort``                              RUN_FINISHED outcome ``cancelled`` (the producer stopped
                                       the run; nothing failed)
``error`` {errorText}                  RUN_ERROR code ``UPSTREAM_ERROR``
=====================================  ==========================================================

A stream that ends without ``finish`` or ``[DONE]`` is RUN_ERROR ``UPSTREAM_TRUNCATED``. A chunk
without a string ``type``, or missing an id it needs, is a malformed upstream (RUN_ERROR
``UPSTREAM_MALFORMED``); a chunk type this version does not know is skipped (newer SDKs add
types). A ``toolCallId`` may name several calls (issue 11, identity: backends reuse it in a
later step): a ``tool-input-start`` / ``-available`` / ``-error`` begins another call when the
earlier call with that id has its input complete, was answered or began in an earlier step;
the builder gives it a derived AG-UI id (:mod:`agui_codecs.identity`), and the chunks that
follow (deltas, outputs, approval requests, signatures) belong to the latest call with the id.
Arguments streamed as deltas are passed through as they come: when a later
``tool-input-available`` carries a repaired ``input`` the deltas cannot be taken back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final

import orjson
from ag_ui.core import (
    Interrupt,
    ReasoningEncryptedValueSubtype,
    RunFinishedCancelledOutcome,
    RunFinishedInterruptOutcome,
    TokenUsage,
)

from ... import jsontext
from ...builder import FINISH_REASONS
from ...errors import MalformedUpstreamError
from ...framing import DONE, Frame
from ..base import StreamDecoder

__all__ = ["SIGNATURE_FIELDS", "AiSdkUpstreamDecoder"]

SIGNATURE_FIELDS: Final = (
    "signature",
    "redactedData",
    "thoughtSignature",
    "reasoningEncryptedContent",
    "encryptedContent",
)
"""``providerMetadata.<provider>.<field>`` names that hold opaque reasoning artefacts
(``@ai-sdk/anthropic``, ``@ai-sdk/amazon-bedrock``: ``signature``/``redactedData``;
``@ai-sdk/google``: ``thoughtSignature``; ``@ai-sdk/openai``: ``reasoningEncryptedContent``)."""

_PASSTHROUGH: Final = frozenset(
    {
        "file",
        "reasoning-file",
        "custom",
        "reset-step",
        "steering-message",
    }
)
"""Chunk types with no AG-UI equivalent, relayed as CUSTOM events of the same name."""


def _field(chunk: dict[str, Any], name: str) -> str:
    value = chunk.get(name)
    if not isinstance(value, str) or not value:
        raise MalformedUpstreamError(f"{chunk.get('type')} chunk has no string {name!r}")
    return value


def _merge(old: Any, new: Any) -> Any:
    """Deep-merge message metadata like ``ai`` ``mergeObjects`` (objects merge, else replace)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = dict(old)
        for key, value in new.items():
            out[key] = _merge(old.get(key), value)
        return out
    return new


def _count(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53
    return value if ok else None


class _Tool:
    """One tool call entity: the provider's ``toolCallId`` may name several (a later step)."""

    __slots__ = ("answered", "id", "key", "step", "streamed")

    def __init__(self, key: tuple[str, str, int], step: int) -> None:
        self.key = key
        self.id = ""  # its AG-UI toolCallId (RunBuilder.tool_start)
        self.step = step  # the step it began in
        self.streamed = False  # a tool-input-delta was relayed
        self.answered = False  # a tool-output-* chunk came for it


class AiSdkUpstreamDecoder(StreamDecoder):
    """AI SDK UIMessageChunk stream → AG-UI run (see the module docstring)."""

    name: ClassVar[str] = "ai-sdk"
    provider: ClassVar[str] = "ai-sdk"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tools: dict[str, _Tool] = {}  # the latest tool call entity, by toolCallId
        self._generations = 0  # tool call entities begun
        self._part_ids: dict[tuple[str, str], str] = {}  # (kind, part id) -> latest message id
        self._signatures: set[tuple[str, str, str, str]] = set()
        self._steps = 0
        self._interrupts: list[Interrupt] = []
        self._metadata: Any = None
        self._finish: dict[str, Any] | None = None

    # -- dispatch -------------------------------------------------------------------------
    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            self._complete()
            return
        chunk = self.obj(frame.data, "UIMessageChunk")
        kind = chunk.get("type")
        if not isinstance(kind, str):
            raise MalformedUpstreamError("UIMessageChunk has no string 'type'")
        handler = self._HANDLERS.get(kind)
        if kind != "start":
            self.run.start()
        if handler is not None:
            handler(self, chunk)
        elif kind.startswith("data-"):
            value = {k: chunk[k] for k in ("id", "data", "transient") if k in chunk}
            self.run.custom(kind, value)
        elif kind in _PASSTHROUGH:
            self.run.custom(kind, {k: v for k, v in chunk.items() if k != "type"})

    # -- message parts --------------------------------------------------------------------
    def _start(self, chunk: dict[str, Any]) -> None:
        message_id = chunk.get("messageId")
        if isinstance(message_id, str) and message_id:
            if not self.run.started:
                self.run.start_metadata = {"messageId": message_id}
            self.run.start(upstream_id=message_id)
        else:
            self.run.start()
        self._message_metadata(chunk)

    def _message_part(self, chunk: dict[str, Any]) -> None:
        """``text-*`` and ``reasoning-*``: one AG-UI message per upstream part id."""
        kind, _, phase = chunk["type"].partition("-")  # text|reasoning, start|delta|end
        key = (kind, _field(chunk, "id"))
        if phase == "end":
            message_id = self._part_ids.get(key)
            if message_id is not None:  # may already be closed by a later part or tool call
                self._signatures_of(chunk, "message", message_id)
            (self.run.end_text if kind == "text" else self.run.end_reasoning)(key)
            return
        delta = chunk.get("delta", "") if phase == "delta" else ""
        if not isinstance(delta, str):
            raise MalformedUpstreamError(f"{chunk['type']} chunk has no string 'delta'")
        emit = self.run.text if kind == "text" else self.run.reasoning
        message_id = self._part_ids[key] = emit(delta, key=key)
        self._signatures_of(chunk, "message", message_id)

    def _signatures_of(
        self, chunk: dict[str, Any], subtype: ReasoningEncryptedValueSubtype, entity_id: str
    ) -> None:
        metadata = chunk.get("providerMetadata")
        if not isinstance(metadata, dict):
            return
        for provider, fields in metadata.items():
            if not isinstance(fields, dict):
                continue
            for name in SIGNATURE_FIELDS:
                value = fields.get(name)
                if not isinstance(value, str) or not value:
                    continue
                seen = (entity_id, str(provider), name, value)
                if seen not in self._signatures:
                    self._signatures.add(seen)
                    self.run.encrypted(
                        value,
                        subtype=subtype,
                        entity_id=entity_id,
                        field=name,
                        provider=seen[1],
                        exact=True,
                    )

    # -- tool calls -----------------------------------------------------------------------
    def _is_new_call(self, tool: _Tool | None) -> bool:
        """Whether a ``tool-input-start`` / ``-available`` / ``-error`` naming the ``toolCallId``
        of ``tool`` begins another call: the id is reused (issue 11) when the earlier call's
        input is already complete, or it was answered, or it began in an earlier step."""
        if tool is None:
            return True
        if self.run.tool_is_open(tool.key):
            return tool.answered or tool.step != self._steps
        return True

    def _open_tool(self, chunk: dict[str, Any]) -> _Tool:
        call_id = _field(chunk, "toolCallId")
        tool = self._tools.get(call_id)
        if self._is_new_call(tool):
            name = _field(chunk, "toolName")
            self._generations += 1
            tool = _Tool(("tool", call_id, self._generations), self._steps)
            tool.id = self.run.tool_start(
                tool.key,
                name,
                call_id,
                provider_executed=chunk.get("providerExecuted") is True,
                metadata={"dynamic": True} if chunk.get("dynamic") is True else None,
            )
            self._tools[call_id] = tool
        assert tool is not None
        self._signatures_of(chunk, "tool-call", tool.id)
        return tool

    def _close_tool(self, call_id: str) -> None:
        tool = self._tools.get(call_id)
        if tool is not None:
            self.run.end_tool(tool.key)

    def _call_id(self, call_id: str) -> tuple[str, bool]:
        """The AG-UI id of the latest call with provider id ``call_id`` and whether it is
        exact (False: a call of an earlier turn, resolved by the builder)."""
        tool = self._tools.get(call_id)
        return (tool.id, True) if tool is not None else (call_id, False)

    def _tool_input_start(self, chunk: dict[str, Any]) -> None:
        self._open_tool(chunk)

    def _tool_input_delta(self, chunk: dict[str, Any]) -> None:
        call_id = _field(chunk, "toolCallId")
        tool = self._tools.get(call_id)
        if tool is None:
            raise MalformedUpstreamError(f"tool-input-delta for unknown tool call {call_id!r}")
        delta = chunk.get("inputTextDelta")
        if not isinstance(delta, str):
            raise MalformedUpstreamError("tool-input-delta chunk has no string 'inputTextDelta'")
        if self.run.tool_is_open(tool.key) and delta:
            tool.streamed = True
            self.run.tool_args(tool.key, delta)

    def _tool_input_end(self, chunk: dict[str, Any], *, error: bool) -> None:
        tool = self._open_tool(chunk)  # a new call unless this ends the one streaming
        if self.run.tool_is_open(tool.key) and not tool.streamed:
            args = chunk.get("input")
            if error and isinstance(args, str):  # raw model text that did not parse
                try:
                    orjson.loads(args)
                except orjson.JSONDecodeError:
                    args = None
                else:
                    self.run.tool_args(tool.key, args)
                    args = None
            if args is not None:
                self.run.tool_args(tool.key, jsontext.dumps(args))
        self.run.end_tool(tool.key)
        if error:
            error_text = chunk.get("errorText")
            self.run.tool_result(
                tool.id,
                str(error_text or "invalid tool input"),
                metadata={"isError": True},
                exact=True,
            )

    def _tool_input_available(self, chunk: dict[str, Any]) -> None:
        self._tool_input_end(chunk, error=False)

    def _tool_input_error(self, chunk: dict[str, Any]) -> None:
        self._tool_input_end(chunk, error=True)

    def _tool_output(self, chunk: dict[str, Any]) -> None:
        call_id = _field(chunk, "toolCallId")
        kind = chunk["type"]
        if kind == "tool-output-available" and chunk.get("preliminary") is True:
            self.run.custom(
                "tool-output-preliminary", {k: v for k, v in chunk.items() if k != "type"}
            )
            return
        self._close_tool(call_id)
        tool = self._tools.get(call_id)
        if tool is not None:
            tool.answered = True
            self._signatures_of(chunk, "tool-call", tool.id)
        agui_id, exact = self._call_id(call_id)
        if kind == "tool-output-available":
            output = chunk.get("output")
            content = output if isinstance(output, str) else jsontext.dumps(output)
            self.run.tool_result(agui_id, content, exact=exact)
        elif kind == "tool-output-error":
            error_text = str(chunk.get("errorText") or "tool failed")
            self.run.tool_result(agui_id, error_text, metadata={"isError": True}, exact=exact)
        else:  # tool-output-denied
            denied = '{"type":"execution-denied"}'
            self.run.tool_result(agui_id, denied, metadata={"denied": True}, exact=exact)

    def _approval_request(self, chunk: dict[str, Any]) -> None:
        approval_id, call_id = _field(chunk, "approvalId"), _field(chunk, "toolCallId")
        self._close_tool(call_id)  # the input is final once approval is asked for
        agui_id, exact = self._call_id(call_id)
        extra = ("approvalDescriptor", "inputSchemaInput", "isAutomatic", "signature")
        metadata = {k: chunk[k] for k in extra if k in chunk}
        reason = chunk.get("reason")
        self._interrupts.append(
            Interrupt(
                id=approval_id,
                reason="tool_approval",
                tool_call_id=agui_id if exact else self.run.resolve_call(call_id),
                message=reason if isinstance(reason, str) and reason else None,
                metadata=metadata or None,
            )
        )

    def _approval_response(self, chunk: dict[str, Any]) -> None:
        approval_id = _field(chunk, "approvalId")
        self._interrupts = [i for i in self._interrupts if i.id != approval_id]
        self.run.custom("tool-approval-response", {k: v for k, v in chunk.items() if k != "type"})

    # -- sources, steps, metadata ---------------------------------------------------------
    def _source(self, chunk: dict[str, Any]) -> None:
        value: dict[str, Any] = {"sourceId": _field(chunk, "sourceId")}
        if chunk["type"] == "source-url":
            value = {"sourceType": "url", **value, "url": _field(chunk, "url")}
            keys: tuple[str, ...] = ("title", "providerMetadata")
        else:
            value = {"sourceType": "document", **value}
            keys = ("mediaType", "title", "filename", "providerMetadata")
        value.update({k: chunk[k] for k in keys if chunk.get(k) is not None})
        self.run.source(value)

    def _start_step(self, chunk: dict[str, Any]) -> None:
        self.run.step_end()  # an unfinished previous step ends where the next begins
        self._steps += 1
        self.run.step_start(f"step-{self._steps}")

    def _finish_step(self, chunk: dict[str, Any]) -> None:
        # A step is one model call: input still streaming when it ends is final (the
        # @ai-sdk/langchain adapter sends start + deltas and never tool-input-available).
        self.run.close_tools()
        self.run.step_end()

    def _message_metadata(self, chunk: dict[str, Any], *, relay: bool = True) -> None:
        """Merge ``messageMetadata``; relay it as CUSTOM ``message-metadata`` when ``relay``."""
        value = chunk.get("messageMetadata")
        if value is not None:
            self._metadata = _merge(self._metadata, value)
            if relay:
                self.run.custom("message-metadata", {"messageMetadata": value})

    # -- terminal chunks ------------------------------------------------------------------
    def _finish_chunk(self, chunk: dict[str, Any]) -> None:
        self._message_metadata(chunk, relay=False)  # carried by RUN_FINISHED
        self._finish = chunk

    def _abort(self, chunk: dict[str, Any]) -> None:
        metadata = self._finish_metadata()
        if isinstance(chunk.get("reason"), str):
            metadata["abortReason"] = chunk["reason"]
        self.run.finish(
            finish_reason="other",
            provider_finish_reason="abort",
            usage=self._token_usage(),
            metadata=metadata,
            outcome=RunFinishedCancelledOutcome(),
        )

    def _error(self, chunk: dict[str, Any]) -> None:
        text = chunk.get("errorText")
        message = text if isinstance(text, str) and text else "upstream reported an error"
        self.run.fail("UPSTREAM_ERROR", message, usage=self._token_usage())

    def _complete(self) -> None:
        """``[DONE]`` or EOF after ``finish``: emit RUN_FINISHED."""
        raw = (self._finish or {}).get("finishReason")
        if isinstance(raw, str) and raw in FINISH_REASONS:
            reason = str(raw)
        elif raw is not None:
            reason = "other"
        elif self._interrupts or self.run.pending_tool_call_ids:
            reason = "tool-calls"
        else:
            reason = "stop"
        outcome = (
            RunFinishedInterruptOutcome(interrupts=self._interrupts) if self._interrupts else None
        )
        self.run.finish(
            finish_reason=reason,
            provider_finish_reason=str(raw) if raw is not None else None,
            usage=self._token_usage(),
            metadata=self._finish_metadata() or None,
            outcome=outcome,
        )

    def finalize(self) -> None:
        if self._finish is None:
            self.run.fail(
                "UPSTREAM_TRUNCATED",
                "stream ended without a finish chunk",
                usage=self._token_usage(),
            )
        else:
            self._complete()

    def _finish_metadata(self) -> dict[str, Any]:
        return {"messageMetadata": self._metadata} if self._metadata is not None else {}

    def _token_usage(self) -> TokenUsage | None:
        """Usage found in the message metadata (``usage`` or ``totalUsage``), if any."""
        meta = self._metadata
        if not isinstance(meta, dict):
            return None
        usage = meta.get("totalUsage", meta.get("usage"))
        if isinstance(usage, list) and len(usage) == 1:  # AG-UI TokenUsage[] (our own encoder)
            usage = usage[0]
        if not isinstance(usage, dict):
            return None
        inputs = usage.get("inputTokenDetails")
        inputs = inputs if isinstance(inputs, dict) else {}
        outputs = usage.get("outputTokenDetails")
        outputs = outputs if isinstance(outputs, dict) else {}
        counts = {
            "input_tokens": _count(usage.get("inputTokens")),
            "output_tokens": _count(usage.get("outputTokens")),
            "total_tokens": _count(usage.get("totalTokens")),
            "reasoning_tokens": _count(
                usage.get("reasoningTokens", outputs.get("reasoningTokens"))
            ),
            "cached_input_tokens": _count(
                usage.get("cachedInputTokens", inputs.get("cacheReadTokens"))
            ),
            "cache_write_input_tokens": _count(
                usage.get("cacheWriteInputTokens", inputs.get("cacheWriteTokens"))
            ),
        }
        clean = {k: v for k, v in counts.items() if v is not None}
        if not clean:
            return None
        provider = usage.get("provider")
        model = usage.get("model")
        return TokenUsage(
            provider=provider if isinstance(provider, str) else self.provider,
            model=model if isinstance(model, str) else self.run.model,
            **clean,
        )

    _HANDLERS: ClassVar[dict[str, Callable[[AiSdkUpstreamDecoder, dict[str, Any]], None]]] = {
        "start": _start,
        "text-start": _message_part,
        "text-delta": _message_part,
        "text-end": _message_part,
        "reasoning-start": _message_part,
        "reasoning-delta": _message_part,
        "reasoning-end": _message_part,
        "tool-input-start": _tool_input_start,
        "tool-input-delta": _tool_input_delta,
        "tool-input-available": _tool_input_available,
        "tool-input-error": _tool_input_error,
        "tool-output-available": _tool_output,
        "tool-output-error": _tool_output,
        "tool-output-denied": _tool_output,
        "tool-approval-request": _approval_request,
        "tool-approval-response": _approval_response,
        "source-url": _source,
        "source-document": _source,
        "start-step": _start_step,
        "finish-step": _finish_step,
        "message-metadata": _message_metadata,
        "finish": _finish_chunk,
        "abort": _abort,
        "error": _error,
    }
    """Chunk type → handler: the translation table (unknown types are skipped)."""
