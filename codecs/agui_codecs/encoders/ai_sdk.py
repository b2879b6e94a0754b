"""AI SDK UI message stream encoder: AG-UI events → UIMessageChunk SSE (``ai`` v5, v6, v7).

Follows ``ai`` 7.0.173 ``src/ui-message-stream/ui-message-chunks.ts`` and
``src/ui/process-ui-message-stream.ts``, checked against ai 6.0.326 and 5.0.277 (see
``docs/protocols.md`` §3). By default only chunk types and finish reasons accepted by
ai v5, v6 *and* v7 are produced:

==========================  ===================================================================
AG-UI event                 chunks
==========================  ===================================================================
RUN_STARTED                 ``start`` {messageId}, then ``start-step`` before the first part (or
                            STEP_STARTED, or the run's end): a result of a continued message's
                            call comes before it, as ``streamText`` sends it; messageId: the
                            ``message_id``
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
TOOL_CALL_RESULT            ``tool-output-available`` {output} (only for a call this stream began;
                            ``metadata.isError``: ``tool-output-error`` {errorText: content};
                            ``metadata.denied`` and ``ai_sdk_major >= 6``: ``tool-output-denied``);
                            when it carries a ui_schema (delivery ``metadata`` / ``seed``), then
                            ``data-ui-schema`` {id: toolCallId, data: ui_schema}. A result of a
                            call whose arguments still stream (before its TOOL_CALL_END) is
                            held and sent right after that call's ``tool-input-available``
                            (or ``tool-input-error``): the client has no input to attach it to
                            before, and the arguments after it are not lost
ACTIVITY_SNAPSHOT of a      ``data-ui-schema`` {id: toolCallId, data: ui_schema} (delivery
 compiled surface           ``activity``: it follows its TOOL_CALL_RESULT); other activities are
                            not sent (``agui_codecs.ui.delivery.ui_schema_of``)
CUSTOM ``source``           ``source-url`` / ``source-document``
CUSTOM ``data-<name>``      ``data-<name>`` {id?, data, transient?}
CUSTOM ``file``             ``file`` {url, mediaType, providerMetadata?}
CUSTOM ``message-metadata`` ``message-metadata`` {messageMetadata}
CUSTOM                      ``tool-output-available`` {toolCallId, output, preliminary: true}
 ``tool-output-preliminary`` (only for a call this stream began; held like a result while the
                            call's input still streams)
RUN_FINISHED                open parts closed, ``finish-step``, ``finish`` {finishReason,
                            messageMetadata: {usage, cost, currency, costSource, ...} and the
                            upstream's own ``metadata.messageMetadata`` (its keys win)}
RUN_FINISHED outcome        open parts closed, one chunk per interrupt (below), ``finish-step``,
 ``interrupt``              ``finish`` {finishReason: ``tool-calls`` when calls await approval,
                            else ``other``}
RUN_FINISHED outcome        open parts closed (tool inputs as incomplete), ``abort`` (``reason``:
 ``cancelled``, RUN_ERROR   ``metadata.abortReason`` / the error message, ai 7 only), ``finish``
 ``RUN_CANCELED``           {finishReason: "other", messageMetadata?}
RUN_STARTED after           ``start-step`` (deferred as above): a further run of the same stream
 RUN_FINISHED               (AG-UI 1.0 runs in sequence, e.g. an agent loop) continues the
                            message as a new step
STEP_STARTED                ``finish-step`` (open text / reasoning parts ended first) +
                            ``start-step``; nothing while the open step has no part yet (the
                            one ``start`` opened), so an AI SDK upstream's steps (STEP_STARTED
                            / STEP_FINISHED ``step-N``, the ``ai-sdk`` decoder) stay its steps
STEP_FINISHED               ``finish-step`` (text / reasoning parts ended first; content of
                            such a message later is a new part of the same id; tool inputs stay
                            open); the next content opens a step with ``start-step``
TOOL_CALL_RESULT of a call  ``tool-output-available`` when the call is one of ``continues`` (the
 of the continued message   message this stream continues); otherwise it has no tool part
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
* ``continues``: the tool call ids of the message a continuation continues (their results are
  sent; ``agui_codecs.protocols.ai_sdk.chat_request.continued_tool_call_ids``).
* ``ai_sdk_major``: ``None`` (default) for output every major accepts; ``5``, ``6`` or ``7``
  (or later) for the client's own major: ``>= 6`` sends ``tool-approval-request``; ``>= 7``
  adds its ``reason`` / ``isAutomatic`` and relays CUSTOM ``reasoning-file`` and ``custom``
  (ai v7 chunk types).

Lifecycle (``agui_codecs.core.illegal``): in strict mode (``AGUI_CODECS_STRICT=1``) every input
event is first checked against the AG-UI transition tables (a ``TransitionGuard``: the
``@ag-ui/client`` 1.0.0 ``verifyEvents`` rules), and an event they forbid raises
``IllegalEventError`` naming the rule. Outside strict mode such an event is repaired without
losing content and counted in :attr:`AiSdkEncoder.repairs` under the fault the tables name
(``lifecycle_fault``), with one ``agui_codecs`` log line:

* a START of an open text / reasoning message or tool call: nothing sent (it is open);
* an END of one that is not open: nothing to close, nothing sent;
* CONTENT of a text / reasoning message that is not open: its ``*-start`` first;
* TOOL_CALL_ARGS of a call that is not open: the call is (re)opened first, ``tool-input-start``
  with its known name (``unknown`` for a call never started) and, for a call closed before,
  its earlier arguments as one ``tool-input-delta``, so ``tool-input-available`` has them all;
* any event after RUN_ERROR (the client stops reading at ``error``, ``docs/protocols.md`` §3.3
  rule 5), or after RUN_FINISHED but a RUN_STARTED: not sent (the client holds a finished
  message); counted under the run-level fault, or ``after-finish`` for the
  events AG-UI allows there (RUN_ERROR after RUN_FINISHED, a new run after RUN_ERROR).

Other events (state, snapshots, raw, upstream activities) have no UIMessageChunk
equivalent in all three versions and are not sent. ``data-*`` chunks are accepted by ai v5, v6
and v7 and kept as a data part of the message (same type and id: replaced; ``transient``: not
kept). Every chunk is sanitized for ``secureJsonParse`` (``__proto__`` keys renamed
``_proto_``, ``prototype`` in a ``constructor`` object renamed ``_prototype_``; see
:func:`sanitize_proto`).

The tool parts (and the holding of results) are in :mod:`agui_codecs.encoders._ai_sdk_tools`,
the steps in :mod:`agui_codecs.encoders._ai_sdk_steps`, the endings (RUN_FINISHED, RUN_ERROR,
an abort, ``finish.messageMetadata``) in :mod:`agui_codecs.encoders._ai_sdk_endings`,
the other non-event parts and the sanitizer in :mod:`agui_codecs.encoders._ai_sdk_parts`.

The encoder reads AG-UI wire dicts (:mod:`agui_codecs.encoders.base`): ``encode(event)`` is
``encode_wire(event_to_wire(event))``, and a durable run's stored events are encoded as they
were read, with no model built. ``id=`` is accepted and not written: the AI SDK resumes by
replaying the run from its first chunk (``docs/protocols.md`` §3.3 rule 7), never from a
cursor, and one AG-UI event may give zero or several chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Final

from ag_ui.core import (
    Event,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from ..core.illegal import Repairs, guard, lifecycle_fault
from ..errors import LocalProtocolError
from ..events import wire_view
from ..transitions import Fault
from ._ai_sdk_endings import ABORT_CODES, EndingParts
from ._ai_sdk_parts import DONE_FRAME, chunk_bytes, part_chunk, sanitize_proto
from ._ai_sdk_serialized import encode_serialized as _encode_serialized
from ._ai_sdk_steps import pushes_part
from ._ai_sdk_tools import INCOMPLETE_TOOL_INPUT, PRELIMINARY
from ._ai_sdk_tools import metadata as _metadata
from .base import Encoder, WireEvent

__all__ = ["ABORT_CODES", "INCOMPLETE_TOOL_INPUT", "AiSdkEncoder", "sanitize_proto"]


_Chunks = list[dict[str, Any]]

_AFTER_FINISH: Final = "after-finish"
""":attr:`AiSdkEncoder.repairs` key of a legal AG-UI event the finished message cannot carry."""


class AiSdkEncoder(EndingParts, Encoder):
    """Stateful AG-UI → UIMessageChunk SSE encoder; one instance per response stream.

    Args:
        message_id: ``start.messageId``; defaults to RUN_STARTED ``metadata.messageId``, else
            its runId. A continuation of an assistant message must pass that message's id.
        ai_sdk_major: the client's ``ai`` major (5, 6, 7 or later), or ``None`` (default) for
            output that ai v5, v6 and v7 all accept; see the module docstring.
        message_metadata: an object sent as ``start.messageMetadata`` (``ai`` keeps it as
            the assistant ``UIMessage.metadata``, ``src/ui/process-ui-message-stream.ts``),
            e.g. the gateway's ``{threadId, runId}``; later metadata merges into it.

    Attributes:
        repairs: :class:`~agui_codecs.core.Repairs`, the illegal input events repaired
            outside strict mode, by fault (see the module docstring).

    Raises:
        ValueError: ``ai_sdk_major`` is not ``None`` or an int >= 5.
    """

    name: ClassVar[str] = "ai-sdk"
    headers: ClassVar[dict[str, str]] = {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "connection": "keep-alive",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-accel-buffering": "no",
    }
    writes_ids: ClassVar[bool] = False
    encode_serialized = _encode_serialized  # a stored text delta spliced from its JSON

    def __init__(
        self,
        *,
        message_id: str | None = None,
        ai_sdk_major: int | None = None,
        message_metadata: Mapping[str, Any] | None = None,
        continues: Iterable[str] = (),
    ) -> None:
        if ai_sdk_major is not None and (
            not isinstance(ai_sdk_major, int) or isinstance(ai_sdk_major, bool) or ai_sdk_major < 5
        ):
            raise ValueError(f"ai_sdk_major must be None or an int >= 5, not {ai_sdk_major!r}")
        self.message_id = message_id
        self.ai_sdk_major = ai_sdk_major
        self.message_metadata = dict(message_metadata) if message_metadata else None
        self._started = False
        self._ended = False
        self._finished = False  # ended by RUN_FINISHED: a further run may follow
        self._closed = False
        self._text: set[str] = set()
        self._reasoning: set[str] = set()
        self._tools = {}
        self._known_tools = {}
        self._metadata_sent = False  # a message-metadata chunk went out
        self._metadata_object = True  # ...and the client holds an object (ours can merge in)
        self._held: dict[str, list[WireEvent]] = {}  # open call -> its results, held
        self._earlier = frozenset(continues)
        self._step_open = False  # a start-step was sent and no finish-step after it
        self._step_empty = True  # ...and no part was added inside it yet
        self._step_deferred = False  # the run's first start-step is still to be sent
        self._step_ending = False  # a STEP_FINISHED's finish-step is still to be sent
        self._step_closed: set[str] = set()  # text/reasoning parts a finish-step closed
        self._guard = guard()
        self.repairs = Repairs("ai-sdk encoder")

    @property
    def ended(self) -> bool:
        """True once ``finish`` was written."""
        return self._ended

    def encode_wire(
        self, wire: WireEvent, *, id: str | None = None, json: bytes | None = None
    ) -> bytes:
        """The SSE bytes of one AG-UI wire event (possibly empty); ``id`` and ``json`` are
        accepted and not used (see the module docstring).

        Inside a run, the events most of a stream is made of (the :data:`_WIRE_FAST` types:
        deltas, text and reasoning start and end, tool call start, arguments and end) go to
        their handler directly, as :meth:`encode` does for their models: the same chunks as
        :meth:`wire_chunks`, without its per-event checks of the run's phase (a stored
        replay is mostly such events)."""
        if self._step_open and not self._ended and not self._closed:
            fast = _WIRE_FAST.get(wire["type"])
            if fast is not None:
                if self._guard is not None:
                    self._guard.check(wire)
                chunks = fast(self, wire)
                if self._step_empty and chunks and pushes_part(chunks):
                    self._step_empty = False
                if len(chunks) == 1:
                    return chunk_bytes(chunks[0])
                return b"".join([chunk_bytes(c) for c in chunks])
        return b"".join([chunk_bytes(c) for c in self.wire_chunks(wire)])

    def encode(self, event: Event, *, id: str | None = None) -> bytes:
        """The SSE bytes of one ``ag_ui.core`` event: :meth:`encode_wire` of its wire form.

        Inside a run, the events most of a stream is made of (text and reasoning deltas, tool
        arguments, text start and end) are read from the model's attributes; the others are
        read as a wire dict (:func:`~agui_codecs.events.wire_view`), so the model is never
        serialized as a whole. The encoder contract suite checks both against ``encode_wire``.
        """
        if self._guard is not None and not self._closed:
            self._guard.check(wire_view(event))
        fast = _MODEL_HANDLERS.get(type(event))
        if fast is not None and self._step_open and not self._ended and not self._closed:
            chunks = fast(self, event)
            if self._step_empty and chunks and pushes_part(chunks):
                self._step_empty = False
        else:
            chunks = self._wire_chunks(wire_view(event))
        if len(chunks) == 1:
            return chunk_bytes(chunks[0])
        return b"".join([chunk_bytes(c) for c in chunks])

    def chunks(self, event: Event) -> _Chunks:
        """The UIMessageChunk objects of one ``ag_ui.core`` event."""
        return self.wire_chunks(wire_view(event))

    def wire_chunks(self, wire: WireEvent) -> _Chunks:
        """The UIMessageChunk objects of one AG-UI wire event.

        Raises:
            LocalProtocolError: the encoder was closed.
            IllegalEventError: strict mode only: the transition tables forbid ``wire`` here.
        """
        if self._guard is not None and not self._closed:
            self._guard.check(wire)
        return self._wire_chunks(wire)

    def _wire_chunks(self, wire: WireEvent) -> _Chunks:
        if self._closed:
            raise LocalProtocolError("AiSdkEncoder.encode() called after close()")
        kind = wire["type"]
        if self._ended:
            if not (self._finished and kind == "RUN_STARTED"):
                self._after_end(kind)
                return []
            # One more run after RUN_FINISHED: the same UI message goes on as a new step (a
            # second ``start`` would rename the message).
            self._ended = self._finished = False
            self._step_deferred = True
            return []
        out: _Chunks = []
        if not self._started:
            out += self._start(wire if kind == "RUN_STARTED" else None)
            if kind == "RUN_STARTED":
                return out
        if self._step_ending and kind != "RUN_FINISHED":
            out += self._step_end()
        if self._step_deferred and kind in _OPEN_DEFERRED_STEP:
            out += self._step_start()
        handler = _HANDLERS.get(kind)
        if handler is not None:
            chunks = handler(self, wire)
            out += chunks if kind in _STEP_NEUTRAL else self._in_step(chunks)
        return out

    def close(self) -> bytes:
        """End of stream: ``[DONE]``, after an ``error`` + ``finish`` if the run never ended;
        ``b""`` when already closed."""
        if self._closed:
            return b""
        self._closed = True
        out = b""
        if not self._ended:
            chunks = self._start(None) if not self._started else []
            chunks += self._step_end()
            if self._step_deferred:
                chunks += self._step_start()
            chunks += [
                *self._close_parts(incomplete=True),
                {"type": "error", "errorText": "UPSTREAM_TRUNCATED: stream ended early"},
                {"type": "finish", "finishReason": "error"},
            ]
            out = b"".join([chunk_bytes(c) for c in chunks])
            self._ended = True
        return out + DONE_FRAME

    def _after_end(self, kind: str) -> None:
        """An event after the message's ``finish``: not sent, counted (module docstring)."""
        try:
            fault: Fault | str = lifecycle_fault(
                kind, ended=self._finished, errored=not self._finished
            )
        except KeyError:  # legal AG-UI (RUN_ERROR after RUN_FINISHED, a run after RUN_ERROR)
            fault = _AFTER_FINISH
        self.repairs.note(fault, kind, (), "not sent: the message is finished")

    # -- parts ----------------------------------------------------------------------------
    def _text_start(self, mid: str) -> _Chunks:
        if mid in self._text:
            self.repairs.note(Fault.TEXT_START_OPEN, "TEXT_MESSAGE_START", (mid,), "already open")
            return []
        self._text.add(mid)
        return [{"type": "text-start", "id": mid}]

    def _reasoning_start(self, mid: str, *, repair: bool = True) -> _Chunks:
        if mid in self._reasoning:
            if repair:
                self.repairs.note(
                    Fault.REASONING_MESSAGE_START_OPEN,
                    "REASONING_MESSAGE_START",
                    (mid,),
                    "already open",
                )
            return []
        self._reasoning.add(mid)
        return [{"type": "reasoning-start", "id": mid}]

    def _text_delta(self, mid: str, delta: str) -> _Chunks:
        chunk = {"type": "text-delta", "id": mid, "delta": delta}
        if mid in self._text:
            return [chunk]
        if mid in self._step_closed:  # closed by a finish-step: a new part of the same id
            self._step_closed.discard(mid)
            self._text.add(mid)
            return [{"type": "text-start", "id": mid}, chunk]
        self.repairs.note(
            Fault.TEXT_CONTENT_NOT_OPEN, "TEXT_MESSAGE_CONTENT", (mid,), "text-start sent first"
        )
        return [*self._text_start(mid), chunk]

    def _text_end(self, mid: str) -> _Chunks:
        if mid in self._step_closed:  # a finish-step closed it already
            self._step_closed.discard(mid)
            return []
        if mid not in self._text:
            self.repairs.note(Fault.TEXT_END_NOT_OPEN, "TEXT_MESSAGE_END", (mid,), "not open")
            return []
        self._text.discard(mid)
        return [{"type": "text-end", "id": mid}]

    def _reasoning_delta(self, mid: str, delta: str) -> _Chunks:
        chunk = {"type": "reasoning-delta", "id": mid, "delta": delta}
        if mid in self._reasoning:
            return [chunk]
        if mid in self._step_closed:  # closed by a finish-step: a new part of the same id
            self._step_closed.discard(mid)
            self._reasoning.add(mid)
            return [{"type": "reasoning-start", "id": mid}, chunk]
        self.repairs.note(
            Fault.REASONING_MESSAGE_CONTENT_NOT_OPEN,
            "REASONING_MESSAGE_CONTENT",
            (mid,),
            "reasoning-start sent first",
        )
        return [*self._reasoning_start(mid, repair=False), chunk]

    def _reasoning_end(self, mid: str) -> _Chunks:
        if mid in self._step_closed:  # a finish-step closed it already
            self._step_closed.discard(mid)
            return []
        if mid not in self._reasoning:
            self.repairs.note(
                Fault.REASONING_MESSAGE_END_NOT_OPEN, "REASONING_MESSAGE_END", (mid,), "not open"
            )
            return []
        self._reasoning.discard(mid)
        return [{"type": "reasoning-end", "id": mid}]

    def _on_text_start(self, w: WireEvent) -> _Chunks:
        return self._text_start(w["messageId"])

    def _on_text_content(self, w: WireEvent) -> _Chunks:
        return self._text_delta(w["messageId"], w["delta"])

    def _on_text_end(self, w: WireEvent) -> _Chunks:
        return self._text_end(w["messageId"])

    def _on_reasoning_start(self, w: WireEvent) -> _Chunks:
        return self._reasoning_start(w["messageId"])

    def _on_reasoning_content(self, w: WireEvent) -> _Chunks:
        return self._reasoning_delta(w["messageId"], w["delta"])

    def _on_reasoning_end(self, w: WireEvent) -> _Chunks:
        return self._reasoning_end(w["messageId"])

    def _on_tool_args(self, w: WireEvent) -> _Chunks:
        return self._tool_args(w["toolCallId"], w["delta"])

    def _on_tool_end(self, w: WireEvent) -> _Chunks:
        incomplete = bool(_metadata(w).get("incomplete"))
        return self._tool_end(w["toolCallId"], incomplete=incomplete)

    def _start(self, w: WireEvent | None) -> _Chunks:
        self._started = True
        start: dict[str, Any] = {"type": "start"}
        message_id = self.message_id
        if not message_id and w is not None:
            upstream = _metadata(w).get("messageId")
            message_id = upstream if isinstance(upstream, str) and upstream else w["runId"]
        if message_id:
            start["messageId"] = message_id
        if self.message_metadata:
            start["messageMetadata"] = dict(self.message_metadata)
            self._metadata_sent = True
        self._step_deferred = True
        return [start]

    def _encrypted(self, w: WireEvent) -> _Chunks:
        meta = _metadata(w)
        provider = str(meta.get("provider") or "agui")
        field = str(meta.get("field") or "encryptedValue")
        value = w["encryptedValue"]
        provider_metadata = {provider: {field: value}}
        mid = w["entityId"]
        if w["subtype"] == "tool-call":
            # Sent on tool-input-available (the part's callProviderMetadata, which e.g.
            # @ai-sdk/google returns as the functionCall's thoughtSignature). A value for a call
            # whose input was already sent cannot be attached without re-announcing the call.
            tool = self._tools.get(mid)
            if tool is not None:
                tool.provider_metadata.setdefault(provider, {})[field] = value
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

    # -- custom parts ---------------------------------------------------------------------
    def _custom(self, w: WireEvent) -> _Chunks:
        name, value = w["name"], w.get("value")
        if name == "message-metadata":
            return self._message_metadata_chunk(value)
        if name == PRELIMINARY:
            return self._preliminary(w)
        chunk = part_chunk(name, value, self.ai_sdk_major)
        return [] if chunk is None else [chunk]

    def _message_metadata_chunk(self, value: Any) -> _Chunks:
        """CUSTOM ``message-metadata`` {messageMetadata} → the chunk of the same shape."""
        metadata = value.get("messageMetadata") if isinstance(value, dict) else None
        if metadata is None:
            return []
        if not isinstance(metadata, dict):
            self._metadata_object = False
        self._metadata_sent = True
        return [{"type": "message-metadata", "messageMetadata": metadata}]


_Handler = Callable[[AiSdkEncoder, WireEvent], _Chunks]
_HANDLERS: dict[str, _Handler] = {
    "TEXT_MESSAGE_START": AiSdkEncoder._on_text_start,
    "TEXT_MESSAGE_CONTENT": AiSdkEncoder._on_text_content,
    "TEXT_MESSAGE_END": AiSdkEncoder._on_text_end,
    "REASONING_MESSAGE_START": AiSdkEncoder._on_reasoning_start,
    "REASONING_MESSAGE_CONTENT": AiSdkEncoder._on_reasoning_content,
    "REASONING_MESSAGE_END": AiSdkEncoder._on_reasoning_end,
    "REASONING_ENCRYPTED_VALUE": AiSdkEncoder._encrypted,
    "TOOL_CALL_START": AiSdkEncoder._tool_start,
    "TOOL_CALL_ARGS": AiSdkEncoder._on_tool_args,
    "TOOL_CALL_END": AiSdkEncoder._on_tool_end,
    "TOOL_CALL_RESULT": AiSdkEncoder._tool_result,
    "CUSTOM": AiSdkEncoder._custom,
    "ACTIVITY_SNAPSHOT": AiSdkEncoder._ui,
    "RUN_FINISHED": AiSdkEncoder._on_run_finished,
    "RUN_ERROR": AiSdkEncoder._on_run_error,
    "STEP_STARTED": AiSdkEncoder._on_step_started,
    "STEP_FINISHED": AiSdkEncoder._on_step_finished,
}
"""AG-UI event type -> chunk builder. Types absent here have no UIMessageChunk form."""

_WIRE_FAST: Final[dict[str, _Handler]] = {
    kind: _HANDLERS[kind]
    for kind in (
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    )
}
"""The hot event types :meth:`AiSdkEncoder.encode_wire` hands to their handler directly while
a step is open (the wire twins of :data:`_MODEL_HANDLERS`): none of them is in
:data:`_STEP_NEUTRAL` or :data:`_OPEN_DEFERRED_STEP`, so inside an open step of a run that has
not ended :meth:`AiSdkEncoder._wire_chunks` gives exactly the handler's chunks."""

_STEP_NEUTRAL: Final = frozenset({"STEP_STARTED", "STEP_FINISHED", "RUN_FINISHED", "RUN_ERROR"})
"""Event types whose chunks open no step: the step events themselves and the run's end."""

_OPEN_DEFERRED_STEP: Final = frozenset({"STEP_FINISHED", "RUN_FINISHED", "RUN_ERROR"})
"""Event types before which a run's deferred first ``start-step`` is sent (every run of the
message has a step, as every ``streamText`` run does)."""

_ModelHandler = Callable[[AiSdkEncoder, Any], _Chunks]
_MODEL_HANDLERS: dict[type, _ModelHandler] = {
    TextMessageStartEvent: lambda enc, e: enc._text_start(e.message_id),
    ToolCallStartEvent: lambda enc, e: enc._tool_open(
        e.tool_call_id, e.tool_call_name, e.metadata if isinstance(e.metadata, dict) else {}
    ),
    ToolCallEndEvent: lambda enc, e: enc._tool_end(
        e.tool_call_id,
        incomplete=isinstance(e.metadata, dict) and bool(e.metadata.get("incomplete")),
    ),
    TextMessageContentEvent: lambda enc, e: enc._text_delta(e.message_id, e.delta),
    TextMessageEndEvent: lambda enc, e: enc._text_end(e.message_id),
    ReasoningMessageStartEvent: lambda enc, e: enc._reasoning_start(e.message_id),
    ReasoningMessageContentEvent: lambda enc, e: enc._reasoning_delta(e.message_id, e.delta),
    ReasoningMessageEndEvent: lambda enc, e: enc._reasoning_end(e.message_id),
    ToolCallArgsEvent: lambda enc, e: enc._tool_args(e.tool_call_id, e.delta),
}
"""The hot events read from the model inside a run (:meth:`AiSdkEncoder.encode`); each gives
what its :data:`_HANDLERS` entry gives for the event's wire form."""
