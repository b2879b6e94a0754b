"""Legal transitions of an AI SDK UIMessageChunk stream, as data, and their tracker.

Source: ``ai`` 5.0.277 / 6.0.326 / 7.0.173 ``src/ui/process-ui-message-stream.ts``,
``src/ui-message-stream/ui-message-chunks.ts``; ``docs/protocols.md`` §3.3.
:data:`UI_MAJORS` holds the per-major differences, :data:`UI_PARTS` the part lifecycles, and
:class:`UiChunkTracker` applies them (schema validation is not done here; see
``conformance/ai_sdk_schema.py``).

The tracker never raises on bad input: ``step`` returns the fault and then applies the chunk
the way the client would have, had it not stopped, so one defect is reported once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from .agui import Role

__all__ = [
    "PORTABLE_FINISH_REASONS",
    "UI_MAJORS",
    "UI_PARTS",
    "UiChunkTracker",
    "UiFault",
    "UiMajor",
]


class UiFault(StrEnum):
    """What ``processUIMessageStream`` rejects; the value is the rule id suffix
    (``ai-sdk/stream/<value>``)."""

    TEXT_DELTA_NOT_OPEN = "text-delta-without-start"
    TEXT_END_NOT_OPEN = "text-end-without-start"
    REASONING_DELTA_NOT_OPEN = "reasoning-delta-without-start"
    REASONING_END_NOT_OPEN = "reasoning-end-without-start"
    TOOL_DELTA_NOT_OPEN = "tool-input-delta-without-start"
    TOOL_UNKNOWN_CALL = "tool-chunk-for-unknown-call"
    APPROVAL_UNKNOWN = "approval-response-for-unknown-approval"
    METADATA_NOT_MERGEABLE = "message-metadata-not-mergeable"


@dataclass(frozen=True, slots=True)
class UiMajor:
    """What differs between AI SDK majors (``ai`` 5.0.277, 6.0.326, 7.0.173).

    Attributes:
        chunk_types: the ``type`` literals its ``uiMessageChunkSchema`` accepts (``data-*``
            aside).
        finish_reasons: the ``finish.finishReason`` enum.
        finish_step_resets: ``finish-step`` forgets open text/reasoning parts (v5, v6).
        tool_lookup_by_dynamic: tool output chunks find only parts of their own ``dynamic``
            kind (v5 ``getToolInvocation`` / ``getDynamicToolInvocation``).
    """

    major: int
    chunk_types: frozenset[str]
    finish_reasons: frozenset[str]
    finish_step_resets: bool
    tool_lookup_by_dynamic: bool


_V5_TYPES = frozenset(
    {
        "text-start",
        "text-delta",
        "text-end",
        "error",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-output-available",
        "tool-output-error",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "source-url",
        "source-document",
        "file",
        "start-step",
        "finish-step",
        "start",
        "finish",
        "abort",
        "message-metadata",
    }
)
_V6_TYPES = _V5_TYPES | {"tool-approval-request", "tool-output-denied"}
_V7_TYPES = _V6_TYPES | {
    "tool-approval-response",
    "custom",
    "reasoning-file",
    "steering-message",
    "reset-step",
}
_REASONS = frozenset({"stop", "length", "content-filter", "tool-calls", "error", "other"})

UI_MAJORS: Final[dict[int, UiMajor]] = {
    5: UiMajor(5, _V5_TYPES, _REASONS | {"unknown"}, True, True),
    6: UiMajor(6, _V6_TYPES, _REASONS, True, False),
    7: UiMajor(7, _V7_TYPES, _REASONS | {"interrupted"}, False, False),
}
"""Per-major chunk vocabulary and behaviour."""

PORTABLE_FINISH_REASONS: Final = frozenset.intersection(
    *(m.finish_reasons for m in UI_MAJORS.values())
)
"""Finish reasons every major accepts (stop, length, content-filter, tool-calls, error, other)."""

UI_PARTS: Final[dict[str, tuple[str, Role]]] = {
    "text-start": ("text", "open"),
    "text-delta": ("text", "continue"),
    "text-end": ("text", "close"),
    "reasoning-start": ("reasoning", "open"),
    "reasoning-delta": ("reasoning", "continue"),
    "reasoning-end": ("reasoning", "close"),
    "tool-input-start": ("tool-input", "open"),
    "tool-input-delta": ("tool-input", "continue"),
}
"""Streamed parts keyed by ``id`` (text, reasoning) or ``toolCallId`` (tool input)."""

_UI_NOT_OPEN: Final[dict[str, UiFault]] = {
    "text-delta": UiFault.TEXT_DELTA_NOT_OPEN,
    "text-end": UiFault.TEXT_END_NOT_OPEN,
    "reasoning-delta": UiFault.REASONING_DELTA_NOT_OPEN,
    "reasoning-end": UiFault.REASONING_END_NOT_OPEN,
    "tool-input-delta": UiFault.TOOL_DELTA_NOT_OPEN,
}
_TOOL_PART_MAKERS: Final = frozenset(
    {"tool-input-start", "tool-input-available", "tool-input-error"}
)
_TOOL_PART_USERS: Final = frozenset(
    {"tool-output-available", "tool-output-error", "tool-approval-request", "tool-output-denied"}
)


@dataclass(slots=True)
class _ToolPart:
    call_id: str
    dynamic: bool
    step: int
    approval_id: str | None = None


@dataclass(slots=True)
class UiChunkTracker:
    """Applies :data:`UI_PARTS` and the tool-part rules of one major to schema-valid chunks.

    ``step(chunk)`` returns ``(fault, message)`` or ``None``. ``open_parts`` holds the text
    and reasoning part ids open now; ``tool_inputs`` the tool calls with streamed input.
    Every step is O(1) in the number of tool parts (they are indexed by call id), and
    metadata merges in place into the tracker's own copy, so a stream is checked in linear
    time.
    """

    major: UiMajor
    open_parts: dict[str, dict[str, None]] = field(
        default_factory=lambda: {"text": {}, "reasoning": {}}
    )
    tool_inputs: dict[str, None] = field(default_factory=dict)
    tool_parts: list[_ToolPart] = field(default_factory=list)
    step_index: int = 0
    metadata: Any = None
    _by_call: dict[str, list[_ToolPart]] = field(default_factory=dict, repr=False)
    _approvals: set[str] = field(default_factory=set, repr=False)

    def continue_message(self, tool_call_ids: Iterable[str]) -> None:
        """The stream continues an assistant message holding tool parts ``tool_call_ids``
        (the client's ``sendMessage()`` after a tool approval or client tool output): output
        chunks for them find those parts (``getToolInvocation`` searches the whole message,
        ai 6.0.326 / 7.0.173). Whether an earlier part was dynamic is not known here, so both
        kinds are assumed (ai v5's lookup by ``dynamic`` is not checked for them)."""
        for call_id in tool_call_ids:
            for dynamic in (False, True):
                self._make_tool({"toolCallId": call_id, "dynamic": dynamic})

    def step(self, chunk: Mapping[str, Any]) -> tuple[UiFault, str] | None:
        """Apply one chunk; return the fault process-ui-message-stream.ts raises, or None."""
        ctype = str(chunk.get("type"))
        part = UI_PARTS.get(ctype)
        if part is not None:
            kind, role = part
            key = str(chunk.get("toolCallId" if kind == "tool-input" else "id"))
            opened = self.tool_inputs if kind == "tool-input" else self.open_parts[kind]
            if role == "open":
                opened[key] = None
                if kind == "tool-input":
                    self._make_tool(chunk)
            elif key not in opened:
                return _UI_NOT_OPEN[
                    ctype
                ], f"{ctype} for {kind} part {key!r} that was never started"
            elif role == "close":
                del opened[key]
            return None
        if ctype in _TOOL_PART_MAKERS:
            self._make_tool(chunk)
        elif ctype in _TOOL_PART_USERS:
            call_id = str(chunk.get("toolCallId"))
            found = self._by_call.get(call_id, [])
            if self.major.tool_lookup_by_dynamic:
                found = [p for p in found if p.dynamic == bool(chunk.get("dynamic"))]
            if not found:
                return (
                    UiFault.TOOL_UNKNOWN_CALL,
                    f"{ctype} for tool call {call_id!r} with no tool part",
                )
            if ctype == "tool-approval-request":
                if found[-1].approval_id is not None:  # replaced: the old id no longer matches
                    self._approvals.discard(found[-1].approval_id)
                found[-1].approval_id = str(chunk.get("approvalId"))
                self._approvals.add(found[-1].approval_id)
        elif ctype == "tool-approval-response":
            approval = str(chunk.get("approvalId"))
            if approval not in self._approvals:
                return UiFault.APPROVAL_UNKNOWN, f"no tool call has approval {approval!r}"
        elif ctype in ("start", "finish", "message-metadata"):
            return self._metadata(chunk.get("messageMetadata"))
        elif ctype == "start-step":
            self.step_index += 1
        elif ctype == "finish-step" and self.major.finish_step_resets:
            for ids in self.open_parts.values():
                ids.clear()
        elif ctype == "reset-step":
            for ids in self.open_parts.values():
                ids.clear()
            self.tool_inputs.clear()
            self.tool_parts = [p for p in self.tool_parts if p.step != self.step_index]
            self._by_call = {}
            for kept in self.tool_parts:
                self._by_call.setdefault(kept.call_id, []).append(kept)
            self._approvals = {p.approval_id for p in self.tool_parts if p.approval_id}
        return None

    def _metadata(self, value: Any) -> tuple[UiFault, str] | None:
        """``updateMessageMetadata``: ``mergeObjects(current, value)`` (ai ``merge-objects.ts``)
        throws a TypeError when the current metadata is a primitive and ``value`` has keys."""
        if value is None:
            return None
        if self.metadata is None:
            self.metadata = copy.deepcopy(value)
            return None
        try:
            if isinstance(self.metadata, dict) and isinstance(value, dict):
                _merge_into(self.metadata, value)
            else:
                self.metadata = _merge_objects(self.metadata, value)
        except TypeError:
            return (
                UiFault.METADATA_NOT_MERGEABLE,
                f"messageMetadata {type(value).__name__} cannot merge into the current "
                f"{type(self.metadata).__name__} metadata (the client throws a TypeError)",
            )
        return None

    def _make_tool(self, chunk: Mapping[str, Any]) -> None:
        call_id = str(chunk.get("toolCallId"))
        dynamic = bool(chunk.get("dynamic"))
        parts = self._by_call.setdefault(call_id, [])
        if not any(p.dynamic == dynamic for p in parts):
            made = _ToolPart(call_id, dynamic, self.step_index)
            self.tool_parts.append(made)
            parts.append(made)


def _js_keys(value: Any) -> list[str]:
    """``for (key in value)`` over a JSON value: object keys, array/string indices."""
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, list | str):
        return [str(i) for i in range(len(value))]
    return []


def _js_get(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return value.get(key)
    if isinstance(value, list | str) and key.isdigit() and int(key) < len(value):
        return value[int(key)]
    return None


def _merge_into(base: dict[str, Any], overrides: dict[str, Any]) -> None:
    """:func:`_merge_objects` of two objects, written into ``base`` (which the caller owns:
    nested objects taken from ``overrides`` are copied first)."""
    for key, value in overrides.items():
        if key in ("__proto__", "constructor", "prototype"):
            continue
        current = base.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            _merge_into(current, value)
        else:
            base[key] = copy.deepcopy(value) if isinstance(value, dict) else value


def _merge_objects(base: Any, overrides: Any) -> Any:
    """``mergeObjects`` of ``ai`` (``src/util/merge-objects.ts``) on JSON values.

    Raises:
        TypeError: where JavaScript's ``key in base`` throws (``base`` is a primitive).
    """
    result = {k: _js_get(base, k) for k in _js_keys(base)}
    for key in _js_keys(overrides):
        if key in ("__proto__", "constructor", "prototype"):
            continue
        if isinstance(base, str | int | float | bool):
            raise TypeError(f"cannot use 'in' operator to search for {key!r} in {base!r}")
        value, current = _js_get(overrides, key), _js_get(base, key)
        if isinstance(value, dict) and isinstance(current, dict):
            result[key] = _merge_objects(current, value)
        else:
            result[key] = value
    return result
