"""The steps of the AI SDK encoder (:mod:`agui_codecs.encoders.ai_sdk`): AG-UI STEP_STARTED /
STEP_FINISHED → ``start-step`` / ``finish-step``.

AG-UI steps (``@ag-ui/core`` 1.0.0 ``StepStartedEvent`` / ``StepFinishedEvent``, named, may
nest) map onto the flat AI SDK steps (``ai`` 7.0.173 ``src/ui/process-ui-message-stream.ts``:
``start-step`` adds a ``step-start`` part; ``finish-step`` makes ai 5.0.277 / 6.0.326 forget
the open text and reasoning parts): every STEP_STARTED or STEP_FINISHED is a step boundary,
except a STEP_STARTED while the open step has no part yet (:func:`pushes_part`); a run's first
``start-step`` waits for its first part (a continuation's results of earlier calls, which add
no part, come before it, as ``streamText`` sends them), so the ``ai-sdk`` decoder's
``step-1``, ``step-2``... (one per upstream ``start-step``) give back the upstream's steps,
and nested steps give no empty steps. A boundary never loses content: text / reasoning parts
open at a ``finish-step`` are ended first and their later content starts a new part of the
same id; tool inputs stay open (no major forgets them at ``finish-step``).
"""

from __future__ import annotations

from typing import Any, Final

from .base import WireEvent

__all__ = ["PART_CHUNKS", "StepParts", "pushes_part"]

_Chunks = list[dict[str, Any]]

PART_CHUNKS: Final = frozenset(
    {
        "text-start",
        "reasoning-start",
        "tool-input-start",
        "source-url",
        "source-document",
        "file",
        "reasoning-file",
        "custom",
    }
)
"""Chunk types that add a part to the message (``data-*`` too): such content belongs to a
step. The others (deltas, ends, ``tool-output-*`` of a call's existing part,
``message-metadata``) change what is there and need none."""


def pushes_part(chunks: _Chunks) -> bool:
    """Whether one of ``chunks`` adds a part to the message (:data:`PART_CHUNKS`)."""
    return any(c["type"] in PART_CHUNKS or c["type"].startswith("data-") for c in chunks)


class StepParts:
    """The step bookkeeping of :class:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder` (a base class
    of it; the encoder sets these attributes in its ``__init__``)."""

    _text: set[str]  # open text parts
    _reasoning: set[str]  # open reasoning parts
    _step_open: bool  # a start-step was sent and no finish-step after it
    _step_empty: bool  # ...and no chunk was sent inside it yet
    _step_closed: set[str]  # text / reasoning parts a finish-step ended, still open in AG-UI
    _step_deferred: bool  # the run's first start-step is still to be sent
    _step_ending: bool  # a STEP_FINISHED's finish-step is still to be sent

    def _in_step(self, chunks: _Chunks) -> _Chunks:
        """``chunks`` of one event, after a ``start-step`` when one of them adds a part and no
        step is open (content after a STEP_FINISHED opens the next step)."""
        if (self._step_empty or not self._step_open) and chunks and pushes_part(chunks):
            if not self._step_open:
                chunks = [*self._step_start(), *chunks]
            self._step_empty = False
        return chunks

    def _step_start(self) -> _Chunks:
        self._step_open, self._step_empty, self._step_deferred = True, True, False
        return [{"type": "start-step"}]

    def _step_end(self) -> _Chunks:
        """The ``finish-step`` a STEP_FINISHED left to send, if any."""
        if not self._step_ending:
            return []
        self._step_ending = False
        return [{"type": "finish-step"}]

    def _step_finish(self) -> _Chunks:
        """``finish-step`` when a step is open, its text and reasoning parts closed first
        (ai v5 and v6 forget them at ``finish-step``); the parts are remembered, so their
        later content starts a new part of the same id (the encoder's ``_text_delta`` /
        ``_reasoning_delta``) instead of counting as a repair."""
        if not self._step_open:
            return self._step_end()
        self._step_closed |= self._text | self._reasoning
        out = [{"type": "text-end", "id": mid} for mid in sorted(self._text)]
        out += [{"type": "reasoning-end", "id": mid} for mid in sorted(self._reasoning)]
        self._text.clear()
        self._reasoning.clear()
        self._step_open = False
        out.append({"type": "finish-step"})
        return out

    def _on_step_started(self, w: WireEvent) -> _Chunks:
        """STEP_STARTED: a new AI SDK step, unless the open one has no part in it yet (the
        step ``start`` opened, or one a RUN_STARTED after RUN_FINISHED opened: an AI SDK
        upstream's results of a continued message come before its first ``start-step``)."""
        if self._step_open and self._step_empty:
            return []
        return [*self._step_finish(), *self._step_start()]  # (a deferred step: start-step)

    def _on_step_finished(self, w: WireEvent) -> _Chunks:
        """STEP_FINISHED: the step's text and reasoning parts ended (open tool inputs stay
        open: no major forgets them at ``finish-step``) and its ``finish-step`` sent before
        the next event's chunks, or, when that is RUN_FINISHED, after its interrupts: an AI
        SDK upstream's ``tool-approval-request`` comes inside the step (``streamText``), and
        the ``ai-sdk`` decoder carries it on RUN_FINISHED. Content after it opens a step."""
        chunks = self._step_finish()
        if chunks and chunks[-1]["type"] == "finish-step":
            chunks.pop()
            self._step_ending = True
        return chunks
