"""The endings of the AI SDK encoder (:mod:`agui_codecs.encoders.ai_sdk`): RUN_FINISHED
(``finish``, its interrupts), RUN_ERROR (``error`` + ``finish``), an aborted run (RUN_FINISHED
``outcome: cancelled``, RUN_ERROR ``RUN_CANCELED``: ``abort`` + ``finish``) and
``finish.messageMetadata``.

Follows ``ai`` 7.0.173 ``src/ui-message-stream/ui-message-chunks.ts`` (``finish``, ``abort``,
``error``) and ``src/ui/process-ui-message-stream.ts`` (``messageMetadata`` merged into the
assistant ``UIMessage.metadata``), checked against ai 6.0.326 and 5.0.277; the mapping table is
in the ``ai_sdk`` module docstring. Every ending closes the open parts first (tool inputs as
incomplete when the run failed or was aborted), so no content is left open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..builder import FINISH_REASONS
from ..cost import COST_KEYS
from ._ai_sdk_parts import interrupt_chunks, is_tool_approval
from ._ai_sdk_steps import StepParts
from ._ai_sdk_tools import ToolParts
from ._ai_sdk_tools import metadata as _metadata
from .base import WireEvent

__all__ = ["ABORT_CODES", "EndingParts"]

ABORT_CODES: Final = frozenset({"RUN_CANCELED"})
"""RUN_ERROR codes of a run that was aborted, not failed (the gateway's cancel,
``gateway.runs``): sent as ``abort``, like RUN_FINISHED ``outcome: cancelled``."""

_Chunks = list[dict[str, Any]]


class EndingParts(StepParts, ToolParts):
    """The run endings of :class:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder` (a base class of
    it; the encoder sets these attributes in its ``__init__``)."""

    _ended: bool  # ``finish`` was written
    _finished: bool  # ...by RUN_FINISHED: a further run may follow
    _metadata_sent: bool  # a message-metadata chunk went out
    _metadata_object: bool  # ...and the client holds an object (ours can merge in)

    def _on_run_finished(self, w: WireEvent) -> _Chunks:
        outcome = w.get("outcome")  # read once: a model's nested value is serialized per read
        if _cancelled(outcome):
            self._finished = True
            return [*self._step_end(), *self._abort(w, _metadata(w).get("abortReason"))]
        out = self._close_parts()
        interrupts = _interrupts(outcome)
        if interrupts is not None:
            names = {tid: tool.name for tid, tool in self._known_tools.items()}
            out += interrupt_chunks(interrupts, names, self.ai_sdk_major)
        out += self._step_finish()
        out.append(self._finish(w, interrupts))
        self._ended = self._finished = True
        return out

    def _on_run_error(self, w: WireEvent) -> _Chunks:
        if w.get("code") in ABORT_CODES:
            return self._abort(w, w.get("message"))
        out = self._close_parts(incomplete=True)
        code, message = w.get("code"), w["message"]
        out.append({"type": "error", "errorText": f"{code}: {message}" if code else message})
        out.append({"type": "finish", "finishReason": "error"})
        self._ended = True
        return out

    def _abort(self, w: WireEvent, reason: Any) -> _Chunks:
        """An aborted run: open parts closed (tool inputs as incomplete), ``abort`` (the chunk
        ``streamText`` sends for an aborted call, ai 7.0.173 ``stream-text.ts``), then
        ``finish`` {finishReason: ``other``, messageMetadata?}, so the stream ends with
        ``finish`` as every stream of ours does (the conformance kit's
        ``ai-sdk/hygiene/no-finish``) and the run's usage and cost still reach the message.
        ``abort.reason`` (a string) is an ai 7 field, sent only when ``ai_sdk_major >= 7``:
        ai 5 and 6 define ``abort`` without fields."""
        out = self._close_parts(incomplete=True)
        chunk: dict[str, Any] = {"type": "abort"}
        if (self.ai_sdk_major or 0) >= 7 and isinstance(reason, str) and reason:
            chunk["reason"] = reason
        out.append(chunk)
        finish: dict[str, Any] = {"type": "finish", "finishReason": "other"}
        metadata = self._finish_metadata(w.get("usage"), _metadata(w))
        if metadata is not None:
            finish["messageMetadata"] = metadata
        out.append(finish)
        self._ended = True
        return out

    # -- the end of a run -----------------------------------------------------------------
    def _close_parts(self, *, incomplete: bool = False) -> _Chunks:
        """Close the open parts; ``incomplete``: the run failed, tool inputs were cut off."""
        out: _Chunks = []
        for tid in list(self._tools):
            out += self._tool_end(tid, incomplete=incomplete)
        out += [{"type": "text-end", "id": mid} for mid in sorted(self._text)]
        out += [{"type": "reasoning-end", "id": mid} for mid in sorted(self._reasoning)]
        self._text.clear()
        self._reasoning.clear()
        return out

    def _finish(self, w: WireEvent, interrupts: list[Mapping[str, Any]] | None) -> dict[str, Any]:
        meta = _metadata(w)
        reason = meta.get("finishReason")
        if interrupts is not None:
            approvals = any(is_tool_approval(i) for i in interrupts)
            reason = "tool-calls" if approvals else "other"
        if not (isinstance(reason, str) and reason in FINISH_REASONS):
            reason = "other"
        chunk: dict[str, Any] = {"type": "finish", "finishReason": reason}
        metadata = self._finish_metadata(w.get("usage"), meta)
        if metadata is not None:
            chunk["messageMetadata"] = metadata
        return chunk

    def _finish_metadata(self, usage: Any, meta: Mapping[str, Any]) -> Any:
        """``finish.messageMetadata``: ours (usage, cost) under the upstream's own
        (RUN_FINISHED ``metadata.messageMetadata``, e.g. an AI SDK backend's), whose keys win.
        The client merges objects only: nothing is added to metadata that is not one."""
        theirs = meta.get("messageMetadata")
        if theirs is not None and not isinstance(theirs, dict):
            return None if self._metadata_sent else theirs
        merged = {**_our_message_metadata(usage, meta), **(theirs or {})}
        return merged if merged and self._metadata_object else None


def _cancelled(outcome: Any) -> bool:
    """Whether RUN_FINISHED's ``outcome`` (wire form) is ``{type: "cancelled"}`` (AG-UI 1.0)."""
    return isinstance(outcome, Mapping) and outcome.get("type") == "cancelled"


def _interrupts(outcome: Any) -> list[Mapping[str, Any]] | None:
    """RUN_FINISHED ``outcome.interrupts`` (wire dicts) when the outcome (wire form) is
    ``interrupt``."""
    if isinstance(outcome, Mapping) and outcome.get("type") == "interrupt":
        return list(outcome.get("interrupts") or ())
    return None


def _our_message_metadata(usage: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    """Our part of ``finish.messageMetadata``: the run's usage (its ``TokenUsage`` wire
    dicts) and its cost keys (``agui_codecs.cost``)."""
    out: dict[str, Any] = {}
    if usage:
        out["usage"] = usage
    out.update({k: meta[k] for k in COST_KEYS if k in meta})
    return out
