"""Decoder for AG-UI runtimes (``upstream protocol = "agui"``): passthrough plus normalization.

An AG-UI runtime already speaks the canonical events; this decoder passes them through and
repairs what ``@ag-ui/client`` 1.0.0 would reject or what breaks the AI SDK translation
(``docs/protocols.md`` §2, legal transitions from :mod:`agui_codecs.transitions`).
Input is SSE, JSON lines or a JSON array of AG-UI wire events (:mod:`agui_codecs.framing`).

Each repair is counted in :attr:`AguiDecoder.repairs` (key -> count) and reported in the
``metadata.repairs`` of the terminal event. Keys:

==============================  ==================================================================
``unknown-event-dropped``       an event type AG-UI 1.0 does not define
``unknown-field-dropped``       a top-level field the event's schema does not define
``snake-case-field``            ``thread_id`` / ``run_id`` / ... renamed to camelCase
``null-field-dropped``          ``null`` for an optional field (the TS client rejects it)
``thinking-converted``          THINKING_* (removed in 1.0) converted to REASONING_*
``chunk-expanded``              TEXT_MESSAGE_CHUNK / TOOL_CALL_CHUNK / REASONING_MESSAGE_CHUNK
                                expanded (interleaved parallel chunks kept apart by id)
``chunk-dropped``               a chunk that can open nothing (no id, or a call without a name)
``tool-result-reshaped``        TOOL_CALL_RESULT with ``result`` / no ``messageId`` / non-string
``run-error-reshaped``          RUN_ERROR without ``message`` (``error`` used instead)
``run-error-code-added``        RUN_ERROR without ``code``: ``UPSTREAM_ERROR`` (every gateway
                                RUN_ERROR carries a code)
``run-started-synthesized``     events before RUN_STARTED
``run-started-dropped``         RUN_STARTED inside a run
``run-id-mismatch``             RUN_STARTED/RUN_FINISHED ids differ from the gateway's
``duplicate-start-dropped``     an opener (text, tool call, reasoning, step) for an open id
``orphan-end-dropped``          an END / STEP_FINISHED / SUBAGENT end for nothing open
``text-start-synthesized``      CONTENT for a message never opened (a START is sent first)
``text-reopened``               CONTENT after END of the same id: a new message id is opened
``stray-tool-args-held``        TOOL_CALL_ARGS (or a TOOL_CALL_CHUNK delta with no name / id)
                                for a call not opened yet: held, sent after its TOOL_CALL_START
``late-tool-args-held``         TOOL_CALL_ARGS after the call's END: the END was held, the
                                ARGS go before it (pydantic-ai's interleaved parallel calls)
``late-content-held``           TEXT/REASONING_MESSAGE_CONTENT after its END, which was held
``tool-result-held``            TOOL_CALL_RESULT while the call's arguments stream: sent after
                                the call's END
``tool-args-synthesized``       START..END with no ARGS: one ARGS from the raw event or a result
``closed-before-terminal``      a message, call, reasoning block, step or subagent left open
``id-derived``                  a message, reasoning message or span, tool call, result message,
                                activity or snapshot message whose upstream id an entity of the
                                thread has: a derived id
``run-error-synthesized``       the upstream ended without RUN_FINISHED or RUN_ERROR
==============================  ==================================================================

Order repairs hold and reorder, never drop: the hold, its bounds and what happens past them
are in :class:`AguiNormalizer` (tool arguments past the hold end
the run with ``UPSTREAM_MALFORMED``). Bad input that no repair places ends the run with a typed
RUN_ERROR, what is open closed first and nothing emitted before it lost:

=====================================  ===========================================================
input                                  RUN_ERROR
=====================================  ===========================================================
RUN_FINISHED while stray arguments     ``UPSTREAM_MALFORMED``
are held (their START never came)
stray arguments past                   ``UPSTREAM_MALFORMED``
``HOLD_STRAY_BYTES``
anything else the verifier rejects     ``UPSTREAM_PROTOCOL_ERROR`` ``"agui/verify/<fault>: ..."``,
(a SUBAGENT_STARTED reusing an id or   ``metadata`` ``{rule, eventType, ids}`` (the store guard's
naming an unknown parent, ...)         shape, :mod:`agui_codecs.core.guard`)
=====================================  ===========================================================

A RUN_ERROR (the upstream's, or the decoder's: the cases above, a cut or malformed stream)
lists in ``metadata.unsent`` the wire events the run ends without sending, in arrival order
(a decoder's RUN_ERROR message also names the calls of held arguments and their byte counts):
held stray arguments, the refused event, the upstream's RUN_FINISHED that it replaced. Nothing
the decoder read disappears without a typed error carrying it.

A run cut short (EOF before RUN_FINISHED / RUN_ERROR, malformed input) closes the tool calls
still open with TOOL_CALL_END ``metadata.incomplete: true``, as every decoder does.

Identity (issue 11 kind 1, :mod:`agui_codecs.identity`): every text message, reasoning message,
tool call and TOOL_CALL_RESULT message gets an id unique in the thread. An opener (START, a
chunk opening, content reopening a closed message) whose upstream id the thread already has (the
run's input messages, :meth:`~agui_codecs.builder.RunBuilder.reserve`, or any entity of this
run, of any kind: a tool call id reused after its TOOL_CALL_END, one id shared by a reasoning and
a text message) gets the derived id ``<id>~<n>-<check>`` (``id-derived``); later events naming
that upstream id (content, ARGS, END, TOOL_CALL_RESULT ``toolCallId``, TOOL_CALL_START
``parentMessageId``, REASONING_ENCRYPTED_VALUE ``entityId``) go to the latest entity with it.
A REASONING_START span is an entity too (the reasoning message inside a span with the span's id
shares it); an ACTIVITY_SNAPSHOT naming an activity of this run or of the history updates it
(ACTIVITY_DELTA follows it), one naming another entity's id is a new activity, derived; a
MESSAGES_SNAPSHOT re-lists the thread's entities under the runtime's ids, so each listed id
names the thread's entities with it (the n-th listing the n-th of the latest, the history's
first), and only an id this run used for another kind gets a derived id
(:mod:`agui_codecs.protocols.agui._identity`).
The next request gives the runtime its own ids back (``provider_body`` in
``gateway/upstream.py`` rewrites derived ids in the forwarded ``RunAgentInput``). Ids the
decoder mints for id-less chunks derive from the run id, so the same bytes give the same events
in any split. RUN_FINISHED ``metadata`` gains ``finishReason``
(``tool-calls`` when a call got no result, ``other`` on an interrupt, else ``stop``) and
``provider: "agui"`` unless the runtime set them (ARCHITECTURE.md conventions).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ag_ui.core import RunErrorEvent

from ...builder import RunBuilder
from ...framing import DONE, Frame
from ...identity import provider_id
from ...transitions import AGUI_TERMINAL
from ..base import StreamDecoder
from ._normalizer import AguiNormalizer, Wire

__all__ = ["AguiDecoder", "AguiNormalizer"]


class _AguiRun(RunBuilder):
    """RunBuilder whose events come from an :class:`AguiNormalizer` (passthrough)."""

    def __init__(self, normalizer: AguiNormalizer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.norm = normalizer

    def emit(self, wires: list[Wire]) -> None:
        for wire in wires:
            self._out.append(self.norm.event_of(wire))
            if wire["type"] == "RUN_STARTED":
                self.started = True
                self.thread_id, self.run_id = wire["threadId"], wire["runId"]
            elif wire["type"] in AGUI_TERMINAL:
                self.ended = True

    def reserve(self, ids: Iterable[str]) -> None:
        """Mark the thread's ids taken for the builder and the normalizer alike (the
        normalizer derives ids for entities reusing them, module docstring)."""
        taken = list(ids)
        super().reserve(taken)
        self.norm.ids.reserve(taken)
        for agui_id in taken:
            same = self.norm.history_ids.setdefault(provider_id(agui_id), [])
            if agui_id not in same:
                same.append(agui_id)

    def reserve_activities(self, ids: Iterable[str]) -> None:
        self.norm.history_activities.update(ids)

    def start(self, *, upstream_id: str | None = None, model: str | None = None) -> None:
        if not self.started:
            self.norm.repairs["run-started-synthesized"] += 1
            self.emit(
                self.norm.push(
                    {
                        "type": "RUN_STARTED",
                        "threadId": self.thread_id or "thread_agui",
                        "runId": self.run_id or "run_agui",
                    }
                )
            )

    def close_all(self) -> None:
        self.emit(self.norm.close_open())

    def fail(self, code: str, message: str, **_: Any) -> None:
        if self.ended:
            return
        self.start()
        self.emit(self.norm.close_open(incomplete=True))
        self.ended = self.norm.ended = True
        self.error_code = code
        message += self.norm.unsent_note()
        self._out.append(
            RunErrorEvent(message=message, code=code, metadata=self.norm.terminal_metadata())
        )


class AguiDecoder(StreamDecoder):
    """AG-UI runtime stream -> normalized AG-UI run (see module docstring).

    Attributes:
        repairs: repair key -> count so far (also in the terminal event's metadata).
    """

    name: ClassVar[str] = "agui"
    provider: ClassVar[str] = "agui"
    joins_split_surrogates: ClassVar[bool] = False  # the normalizer validates payloads itself

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.normalizer = AguiNormalizer(
            thread_id=kwargs.get("thread_id"), run_id=kwargs.get("run_id")
        )
        self.run = _AguiRun(
            self.normalizer,
            thread_id=kwargs.get("thread_id"),
            run_id=kwargs.get("run_id"),
            provider=self.provider,
        )

    @property
    def repairs(self) -> dict[str, int]:
        """Repair key -> count (see the module docstring for the keys)."""
        return dict(self.normalizer.repairs)

    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            return
        assert isinstance(self.run, _AguiRun)
        if self.normalizer.fast_plain:
            event = self.normalizer.push_plain(frame.data)
            if event is not None:  # push()'s event, without its wire dict (same event)
                self.run._out.append(event)
                return
        try:
            wires = self.normalizer.push(frame.data)
        except Exception:
            self.run.emit(self.normalizer.stranded)  # verified as sent: they go before RUN_ERROR
            raise
        self.run.emit(wires)

    def finalize(self) -> None:
        self.normalizer.repairs["run-error-synthesized"] += 1
        self.run.fail(
            "UPSTREAM_TRUNCATED", "the AG-UI runtime ended without RUN_FINISHED or RUN_ERROR"
        )
