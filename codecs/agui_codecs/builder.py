"""RunBuilder: the shared bookkeeping every decoder uses to emit a well-formed AG-UI run.

Provider decoders only say *what* happened ("text delta for block 0", "tool call 1 got
arguments", "the upstream reported overloaded_error"); the builder owns *how* that becomes a
legal AG-UI 1.0 event sequence (``@ag-ui/client`` 1.0 ``verifyEvents``, see
``docs/protocols.md`` §2.3):

* RUN_STARTED (``protocolVersion: "1.0"``) exactly once, first;
* TEXT_MESSAGE_START/CONTENT/END, REASONING_START + REASONING_MESSAGE_START/CONTENT/END +
  REASONING_END, TOOL_CALL_START/ARGS/END opened lazily, keyed by a decoder-chosen ``key``
  (Anthropic block index, OpenAI tool-call ``index``) so parallel parts stay apart;
* everything still open is closed before the terminal event, RUN_FINISHED or RUN_ERROR, and
  nothing is emitted after it.

Message ids are deterministic (derived from the upstream message id, else from the run id), so
feeding the same bytes in any split gives identical events. Every id is unique in the thread
(:mod:`agui_codecs.identity`): an id already used, by this stream or by the run's input
messages (:meth:`RunBuilder.reserve`), is derived (``<id>~<n>-<check>``), never shared; the
tool-call methods live in :mod:`agui_codecs.builder_tools`.

Conventions the encoders rely on (documented in ARCHITECTURE.md):

* RUN_FINISHED ``metadata``: ``finishReason`` (AI SDK vocabulary: stop, length, tool-calls,
  content-filter, error, other), ``providerFinishReason`` (the upstream's own value),
  ``provider``, ``model``; ``refusal`` (text) when the model refused.
* Citations: CUSTOM ``{name: "source", value: {sourceType: "url"|"document", sourceId, url?,
  title?, ...}}``, the shape of the AI SDK ``source-url`` / ``source-document`` chunks.
* Provider-executed tools: TOOL_CALL_START ``metadata.providerExecuted = true``.
* REASONING_ENCRYPTED_VALUE ``metadata``: ``{provider, field}`` naming where the provider
  expects the value back (``signature`` or ``redactedData`` for Anthropic).
* Cost: RUN_FINISHED / RUN_ERROR ``metadata`` carry the keys of
  :func:`agui_codecs.cost.price_usage` (``cost`` in USD, ``currency``, ``costSource``, ...)
  whenever the run has usage or a provider-reported cost.
* Endings: :meth:`RunBuilder.finish` applies the one reconciliation of
  :mod:`agui_codecs.endings` (a turn that produced client tool calls and ended ``stop`` /
  ``other`` ends ``tool-calls`` with ``outcome.pendingToolCallIds``); every decoder maps its
  provider's value through that module's tables.
* Incomplete tool calls: a run that fails (:meth:`RunBuilder.fail`, e.g. truncation) or
  finishes with ``length`` while tool calls are open closes each with TOOL_CALL_END
  ``metadata: {"incomplete": true}``: AG-UI needs the END before the terminal event, but the
  arguments streamed so far may be cut short and must not be taken for a complete call (the AI
  SDK encoder sends ``tool-input-error`` for it).
* Split surrogate pairs: text, reasoning and tool-argument deltas pass through
  :class:`~agui_codecs.surrogates.SurrogateJoiner`, so a pair cut between two deltas is one
  character (a lone half becomes U+FFFD when its part ends).
* RUN_STARTED ``metadata`` (optional, :attr:`RunBuilder.start_metadata`): e.g. ``messageId``,
  the assistant message id the upstream chose (AI SDK ``start.messageId``).

One builder may carry several runs in sequence (AG-UI 1.0 allows RUN_STARTED again after
RUN_FINISHED / RUN_ERROR): :meth:`RunBuilder.next_run` resets it for the next one.

Every method is all-or-nothing: the event is built (and validated by its ``ag_ui.core`` model)
before any state changes, so a method that raises (a decoder passing a non-string id, say)
leaves nothing half open, and :meth:`RunBuilder.fail` can still close the run cleanly.
Arguments of the wrong type raise :class:`~agui_codecs.errors.LocalProtocolError` (ids given
to :meth:`RunBuilder.start`) or pydantic's ``ValidationError`` (event fields): both are the
calling decoder's bug, which the decoder base reports as ``INTERNAL_DECODER_ERROR``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from ag_ui.core import (
    CustomEvent,
    Event,
    ReasoningEncryptedValueEvent,
    ReasoningEncryptedValueSubtype,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
)

from .builder_tools import ToolCallParts
from .core.guard import PROTOCOL_VERSION
from .core.illegal import guard
from .cost import price_usage
from .endings import FINISH_REASONS, reconcile_finish
from .errors import LocalProtocolError
from .events import delta_factory, wire_view
from .identity import Identities
from .surrogates import SurrogateJoiner, scrub_event

__all__ = ["FINISH_REASONS", "RunBuilder"]

_TEXT_CONTENT = delta_factory(TextMessageContentEvent)
_REASONING_CONTENT = delta_factory(ReasoningMessageContentEvent)


class RunBuilder(ToolCallParts):
    """Accumulates the AG-UI events of one run; decoders call its methods, then :meth:`drain`.

    Args:
        thread_id: the AG-UI threadId; default ``"thread_" + <upstream id>``.
        run_id: the AG-UI runId; default ``"run_" + <upstream id>``.
        provider: provider label used in usage and metadata (``"openai"``, ``"anthropic"``).
    """

    def __init__(
        self, *, thread_id: str | None = None, run_id: str | None = None, provider: str
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.provider = provider
        self.model: str | None = None
        self.message_id: str | None = None  # base assistant message id
        self.error_code: str | None = None  # code of the last RUN_ERROR emitted
        self.started = False
        self.ended = False
        self._out: list[Event] = []
        self._guard = guard()
        self._text: dict[Hashable, str] = {}  # key -> open text message id
        self._reasoning: dict[Hashable, str] = {}  # key -> open reasoning message id
        # key -> (value, field, provider) held until that reasoning message ends
        self._held: dict[Hashable, tuple[str, str, str | None]] = {}
        self._tools = {}  # key -> open tool call (builder_tools)
        self._ids = Identities()  # every id used in the thread (agui_codecs.identity)
        self._seq: dict[str, int] = {}
        self._last_text_id: str | None = None
        self._pending_tools: list[str] = []  # client tool calls announced, not yet answered
        self._runs = 1  # runs begun on this builder (see next_run)
        self._first_run_id: str | None = None
        self._steps: list[str] = []  # active step names, oldest first
        self._halves = SurrogateJoiner()  # surrogate pairs split across deltas (per part)
        self.lone_surrogates = False
        """Set by the decoder once a payload escaped a lone surrogate: every event emitted
        from then on is scrubbed (:func:`~agui_codecs.surrogates.scrub_event`)."""
        self.start_metadata: dict[str, Any] | None = None
        """RUN_STARTED ``metadata`` (set before :meth:`start`), e.g. ``{"messageId": ...}``."""

    # -- ids and lifecycle ----------------------------------------------------------------
    def _emit(self, event: Event) -> None:
        """Queue ``event``; in strict mode (:mod:`agui_codecs.core.illegal`) first check it
        against the AG-UI transition tables, raising ``IllegalEventError`` when it breaks them."""
        if self.lone_surrogates:
            event = scrub_event(event)
        if self._guard is not None:
            self._guard.check(wire_view(event))
        self._out.append(event)

    def drain(self) -> list[Event]:
        """Return and forget the events emitted since the last call."""
        out, self._out = self._out, []
        return out

    def start(self, *, upstream_id: str | None = None, model: str | None = None) -> None:
        """Emit RUN_STARTED if not yet done; fix the ids from ``upstream_id`` when not given.

        RUN_STARTED carries :attr:`start_metadata` when it is set.

        Raises:
            LocalProtocolError: ``upstream_id`` or ``model`` is given and not a string (the
                decoder must check upstream values first).
        """
        for what, value in (("upstream_id", upstream_id), ("model", model)):
            if value is not None and not isinstance(value, str):
                raise LocalProtocolError(f"RunBuilder.start({what}=...) takes a string")
        if model and not self.model:
            self.model = model
        if self.started:
            return
        base = upstream_id or self.run_id or "upstream"
        message_id = self.message_id or upstream_id or f"msg_{base}"
        run_id = self.run_id or f"run_{base}"
        thread_id = self.thread_id or f"thread_{base}"
        event = RunStartedEvent(
            thread_id=thread_id,
            run_id=run_id,
            protocol_version=PROTOCOL_VERSION,
            metadata=self.start_metadata or None,
        )
        self.started = True
        self.message_id, self.run_id, self.thread_id = message_id, run_id, thread_id
        if self._first_run_id is None:
            self._first_run_id = self.run_id
        self._emit(event)

    def next_run(self) -> None:
        """Prepare the next run of the same stream, after the current one ended.

        The thread id is kept; the run id becomes ``<first run id>-<n>`` (``-2``, ``-3``...);
        the model, the message ids and :attr:`start_metadata` are derived afresh at the next
        :meth:`start`. Events not yet drained stay queued, so one :meth:`drain` returns the end
        of one run and the beginning of the next in order.

        Raises:
            LocalProtocolError: the current run has not ended (or never started).
        """
        if not self.ended:
            raise LocalProtocolError("RunBuilder.next_run() before the current run ended")
        self._runs += 1
        self.run_id = f"{self._first_run_id}-{self._runs}"
        self.model = None
        self.message_id = None
        self.start_metadata = None
        self.started = False
        self.ended = False
        self._seq.clear()
        self._last_text_id = None
        self._pending_tools.clear()

    def reserve(self, ids: Iterable[str]) -> None:
        """Mark ids the thread already holds (the run's input messages:
        :func:`agui_codecs.identity.message_ids`) as taken, before the stream is fed: no entity
        of this stream gets one of them, and a result naming one of them (an AI SDK
        continuation answering an earlier call) still finds it."""
        self._ids.reserve(ids)

    def reserve_activities(self, ids: Iterable[str]) -> None:
        """Which of the reserved ids name activity messages
        (:func:`agui_codecs.identity.activity_ids`): an upstream ACTIVITY_SNAPSHOT naming one
        updates it. Only a decoder that passes activities through (``agui``) reads them."""

    def _candidate_id(self, kind: str) -> str:
        n = self._seq.get(kind, 0)
        base = self.message_id or f"msg_{self.run_id}"
        prefix = base if kind == "text" else f"{base}-{kind}"
        return prefix if n == 0 else f"{prefix}-{n}"

    def _peek_id(self, kind: str) -> str:
        """The id :meth:`_next_id` will return next for ``kind`` (the run must have started)."""
        return self._ids.peek(self._candidate_id(kind))

    def _next_id(self, kind: str) -> str:
        self.start()
        message_id = self._ids.mint(self._candidate_id(kind))
        self._seq[kind] = self._seq.get(kind, 0) + 1
        return message_id

    # -- text ---------------------------------------------------------------------------
    def text(
        self, delta: str, *, key: Hashable = "text", metadata: dict[str, Any] | None = None
    ) -> str:
        """Append ``delta`` to the text message open under ``key``, opening one if needed.

        Opening closes any open reasoning (reasoning precedes the answer). Returns the id.
        """
        if self.lone_surrogates:  # only a flagged payload can hold a half
            delta = self._halves.push(("text", key), delta)
        message_id = self._text.get(key)
        if message_id is None:
            self.start()
            start = TextMessageStartEvent(
                message_id=self._peek_id("text"), role="assistant", metadata=metadata
            )
            content = (
                TextMessageContentEvent(message_id=start.message_id, delta=delta) if delta else None
            )
            self.close_reasoning()
            message_id = self._next_id("text")
            self._text[key] = message_id
            self._last_text_id = message_id
            self._emit(start)
            if content is not None:
                self._emit(content)
        elif delta:
            event = _TEXT_CONTENT({"message_id": message_id, "delta": delta})
            if self.lone_surrogates or self._guard is not None:
                self._emit(event)
            else:  # what _emit does then, a frame shorter (most events of a stream)
                self._out.append(event)
        return message_id

    def text_id(self, key: Hashable = "text") -> str | None:
        """The id of the text message open under ``key``, if any."""
        return self._text.get(key)

    @property
    def last_text_id(self) -> str | None:
        """The id of the most recently opened text message (open or closed), if any."""
        return self._last_text_id

    def end_text(self, key: Hashable = "text") -> None:
        """Close the text message open under ``key`` (no-op when none is open)."""
        message_id = self._text.pop(key, None)
        if message_id is not None:
            rest = self._halves.flush(("text", key))
            if rest:
                self._emit(TextMessageContentEvent(message_id=message_id, delta=rest))
            self._emit(TextMessageEndEvent(message_id=message_id))

    def close_text(self) -> None:
        """Close every open text message."""
        for key in list(self._text):
            self.end_text(key)

    # -- reasoning ----------------------------------------------------------------------
    def _open_reasoning(self, key: Hashable) -> str:
        message_id = self._reasoning.get(key)
        if message_id is None:
            message_id = self._next_id("reasoning")
            self._reasoning[key] = message_id
            self._emit(ReasoningStartEvent(message_id=message_id))
            self._emit(ReasoningMessageStartEvent(message_id=message_id))
        return message_id

    def reasoning(self, delta: str, *, key: Hashable = "reasoning") -> str:
        """Append ``delta`` to the reasoning message open under ``key``, opening one if needed."""
        if delta and not isinstance(delta, str):
            raise LocalProtocolError("RunBuilder.reasoning() takes a string delta")
        if self.lone_surrogates:  # only a flagged payload can hold a half
            delta = self._halves.push(("reasoning", key), delta)
        message_id = self._open_reasoning(key)
        if delta:
            event = _REASONING_CONTENT({"message_id": message_id, "delta": delta})
            if self.lone_surrogates or self._guard is not None:
                self._emit(event)
            else:
                self._out.append(event)
        return message_id

    def reasoning_encrypted(
        self, value: str, *, key: Hashable = "reasoning", field: str = "encryptedValue"
    ) -> None:
        """Emit REASONING_ENCRYPTED_VALUE for the reasoning message under ``key``.

        ``field`` names where the provider wants the value back (metadata ``field``).
        """
        if not isinstance(value, str):
            raise LocalProtocolError("RunBuilder.reasoning_encrypted() takes a string value")
        message_id = self._open_reasoning(key)
        self.encrypted(value, subtype="message", entity_id=message_id, field=field)

    def encrypted(
        self,
        value: str,
        *,
        subtype: ReasoningEncryptedValueSubtype,
        entity_id: str,
        field: str,
        provider: str | None = None,
        exact: bool = False,
    ) -> None:
        """Emit REASONING_ENCRYPTED_VALUE attached to an entity of this run.

        Args:
            value: the provider's opaque artefact, verbatim.
            subtype: ``"tool-call"`` (``entity_id`` is a tool call id) or ``"message"`` (a text
                or reasoning message id).
            entity_id: the id the value belongs to.
            field: where the provider expects the value back (metadata ``field``, e.g.
                ``signature``, ``thoughtSignature``).
            provider: provider namespace of the value (default: the builder's provider).
            exact: for ``"tool-call"``, ``entity_id`` is the AG-UI id :meth:`tool_start`
                returned; else it is the provider's id, the latest call with it.
        """
        self.start()
        if subtype == "tool-call" and not exact:
            entity_id = self._ids.resolve(entity_id)
        self._emit(
            ReasoningEncryptedValueEvent(
                subtype=subtype,
                entity_id=entity_id,
                encrypted_value=value,
                metadata={"provider": provider or self.provider, "field": field},
            )
        )

    def reasoning_is_open(self, key: Hashable = "reasoning") -> bool:
        """True when a reasoning message is open under ``key``."""
        return key in self._reasoning

    def hold_reasoning_encrypted(
        self,
        value: str,
        *,
        key: Hashable = "reasoning",
        field: str = "encryptedValue",
        provider: str | None = None,
    ) -> None:
        """Hold ``value`` for the reasoning message under ``key`` (opened if needed) and emit it
        as REASONING_ENCRYPTED_VALUE just before that message ends, whatever ends it (text, a
        tool call, the terminal event, a failure).

        For a value that grows while its message streams (an OpenRouter ``reasoning_details``
        entry whose ``signature`` or ``id`` arrives after its text): each call replaces the held
        value, so the message carries one value, the last, and it is never lost to the close.
        """
        if not isinstance(value, str):
            raise LocalProtocolError("RunBuilder.hold_reasoning_encrypted() takes a string value")
        self._open_reasoning(key)
        self._held[key] = (value, field, provider)

    def end_reasoning(self, key: Hashable = "reasoning") -> None:
        """Close the reasoning message and span open under ``key`` (a value held for it by
        :meth:`hold_reasoning_encrypted` is emitted first)."""
        message_id = self._reasoning.pop(key, None)
        if message_id is not None:
            rest = self._halves.flush(("reasoning", key))
            if rest:
                self._emit(ReasoningMessageContentEvent(message_id=message_id, delta=rest))
            held = self._held.pop(key, None)
            if held is not None:
                value, field, provider = held
                self.encrypted(
                    value, subtype="message", entity_id=message_id, field=field, provider=provider
                )
            self._emit(ReasoningMessageEndEvent(message_id=message_id))
            self._emit(ReasoningEndEvent(message_id=message_id))

    def close_reasoning(self) -> None:
        """Close every open reasoning message."""
        for key in list(self._reasoning):
            self.end_reasoning(key)

    # -- steps --------------------------------------------------------------------------
    def step_start(self, name: str) -> None:
        """Emit STEP_STARTED ``name``; a step of that name still active is finished first."""
        self.start()
        event = StepStartedEvent(step_name=name)
        if name in self._steps:
            self.step_end(name)
        self._steps.append(name)
        self._emit(event)

    def step_end(self, name: str | None = None) -> None:
        """Emit STEP_FINISHED for ``name`` (default: the latest active step); no-op if none."""
        if name is None:
            if not self._steps:
                return
            name = self._steps[-1]
        if name not in self._steps:
            return
        self._steps.remove(name)
        self._emit(StepFinishedEvent(step_name=name))

    @property
    def active_steps(self) -> tuple[str, ...]:
        """Names of the steps started and not yet finished, oldest first."""
        return tuple(self._steps)

    # -- misc ---------------------------------------------------------------------------
    def source(self, value: dict[str, Any]) -> None:
        """Emit a citation as CUSTOM ``source`` (shaped like AI SDK ``source-url`` chunks)."""
        self.start()
        self._emit(CustomEvent(name="source", value=value))

    def custom(self, name: str, value: Any) -> None:
        """Emit a CUSTOM event."""
        self.start()
        self._emit(CustomEvent(name=name, value=value))

    def close_all(self) -> None:
        """Close every open tool call, text and reasoning message, then every active step."""
        self.close_tools()
        self.close_text()
        self.close_reasoning()
        for name in reversed(self._steps):
            self._emit(StepFinishedEvent(step_name=name))
        self._steps.clear()

    # -- terminal events ----------------------------------------------------------------
    def finish(
        self,
        *,
        finish_reason: str,
        provider_finish_reason: str | None = None,
        usage: TokenUsage | None = None,
        metadata: dict[str, Any] | None = None,
        outcome: RunFinishedOutcome | None = None,
        provider_cost: float | None = None,
        provider_cost_complete: bool = False,
    ) -> None:
        """Close everything and emit RUN_FINISHED.

        Args:
            finish_reason: canonical reason, one of :data:`FINISH_REASONS`; with no
                ``outcome`` it is reconciled by :func:`~agui_codecs.endings.reconcile_finish`
                (``stop`` / ``other`` with pending client tool calls -> ``tool-calls``). With
                ``length``, tool calls still open end with ``metadata.incomplete``.
            provider_finish_reason: the upstream's own value, carried in ``metadata``.
            usage: token usage, emitted as ``usage: [usage]``.
            metadata: extra keys for ``metadata`` (e.g. ``refusal``).
            outcome: ``interrupt`` / ``cancelled`` outcome; default ``success`` (with
                ``pendingToolCallIds`` when ``finish_reason`` is ``tool-calls``).
            provider_cost: cost in USD the provider reported for the call, if any; with
                ``usage`` it is priced into ``metadata`` by :func:`~agui_codecs.cost.price_usage`.
            provider_cost_complete: True when ``provider_cost`` covers the whole call.
        """
        if self.ended:
            return
        self.start()
        if outcome is None:
            finish_reason = reconcile_finish(
                finish_reason, pending_tool_calls=bool(self._pending_tools)
            )
        meta: dict[str, Any] = {"finishReason": finish_reason, "provider": self.provider}
        if provider_finish_reason is not None:
            meta["providerFinishReason"] = provider_finish_reason
        if self.model:
            meta["model"] = self.model
        meta.update(
            price_usage(
                usage, provider_cost=provider_cost, provider_cost_complete=provider_cost_complete
            )
        )
        if metadata:
            meta.update(metadata)
        if outcome is None:
            pending = self._pending_tools if finish_reason == "tool-calls" else None
            outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None)
        assert self.thread_id is not None and self.run_id is not None
        event = RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            outcome=outcome,
            usage=[usage] if usage is not None else None,
            metadata=meta,
        )
        if finish_reason == "length":  # cut by the token limit: open calls may be cut short
            self.close_tools(incomplete=True)
        self.close_all()
        self.ended = True
        self._emit(event)

    def fail(
        self,
        code: str,
        message: str,
        *,
        usage: TokenUsage | None = None,
        provider_cost: float | None = None,
        provider_cost_complete: bool = False,
    ) -> None:
        """Close everything and emit RUN_ERROR with ``code`` (no-op once the run ended).

        Tool calls still open were cut off before their arguments completed: their
        TOOL_CALL_END carries ``metadata: {"incomplete": true}``. ``usage`` and the provider
        cost are priced into ``metadata`` as in :meth:`finish`.
        """
        if self.ended:
            return
        self.start()
        meta: dict[str, Any] = {"provider": self.provider}
        if self.model:
            meta["model"] = self.model
        meta.update(
            price_usage(
                usage, provider_cost=provider_cost, provider_cost_complete=provider_cost_complete
            )
        )
        event = RunErrorEvent(
            message=message,
            code=code,
            usage=[usage] if usage is not None else None,
            metadata=meta,
        )
        self.error_code = code
        self.close_tools(incomplete=True)
        self.close_all()
        self.ended = True
        self._emit(event)

    def abort(self, code: str, message: str) -> None:
        """Last resort: end the run with RUN_ERROR at once, closing nothing (no-op once ended).

        For the decoder base only, when :meth:`fail` itself raised (a bug): RUN_STARTED first
        if the run never started, then RUN_ERROR; open parts are forgotten, not closed.
        ``@ag-ui/client`` 1.0 accepts RUN_ERROR in any phase, so the stream stays legal.
        """
        if self.ended:
            return
        if not self.started:
            self.started = True
            self.thread_id = self.thread_id or "thread_upstream"
            self.run_id = self.run_id or "run_upstream"
            self._emit(
                RunStartedEvent(
                    thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION
                )
            )
        self._text.clear()
        self._reasoning.clear()
        self._held.clear()
        self._tools.clear()
        self._steps.clear()
        self._halves.clear()
        self.ended = True
        self.error_code = code
        self._emit(RunErrorEvent(message=message, code=code))

    def usage(self, **counts: int | None) -> TokenUsage | None:
        """Build a TokenUsage labelled with provider and model; ``None`` when no count is set.

        Counts that are not non-negative integers are dropped rather than failing the run.
        """
        clean = {
            k: v
            for k, v in counts.items()
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**53
        }
        if not clean:
            return None
        return TokenUsage(provider=self.provider, model=self.model, **clean)
