"""Check an AI SDK UI message stream the way ``ai`` 5, 6 or 7 reads it, plus hygiene warnings.

The client path (``ai`` ``src/ui/default-chat-transport.ts``, ``chat.ts``):

1. ``parseJsonEventStream``: :class:`~conformance.framing.EventSourceSplitter`, ``[DONE]``
   skipped, ``secureJsonParse`` (``JSON.parse`` + no ``__proto__``), ``uiMessageChunkSchema``
   of the major (:mod:`conformance.ai_sdk_schema`); a failure throws;
2. ``processUIMessageStream``: :class:`agui_codecs.transitions.UiChunkTracker`;
3. an ``error`` chunk ends processing (the chat stores it as its error): later chunks are
   ignored, so they are not checked.

Hygiene (``ai-sdk/hygiene/*``) follows ``docs/protocols.md`` §3.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agui_codecs.transitions import PORTABLE_FINISH_REASONS, UI_MAJORS, UiChunkTracker

from .ai_sdk_schema import chunk_schema, known_in
from .framing import EventSourceSplitter, JsonError, has_proto_key, parse_json
from .report import Report, Violation
from .rules import RULES
from .schema import validate_cached

__all__ = ["AiSdkChecker"]


class AiSdkChecker:
    """One AI SDK UIMessageChunk stream, checked incrementally for one major.

    Feed SSE bytes with :meth:`feed` / :meth:`close`, or parsed chunk objects (a JSON array or
    JSON lines) with :meth:`feed_payload` / :meth:`finish`.

    Args:
        major: AI SDK major, 5, 6 or 7.
        source: name shown in the report.
        continues: the stream continues an assistant message whose tool parts have these
            ``toolCallId``s (the ai v6/v7 tool-approval flow, a client tool's output): their
            ``tool-output-*`` chunks are legal (``UiChunkTracker.continue_message``).

    Raises:
        ValueError: unsupported ``major``.
    """

    def __init__(
        self, major: int = 7, source: str = "<stream>", *, continues: Iterable[str] = ()
    ) -> None:
        if major not in UI_MAJORS:
            raise ValueError(f"unsupported AI SDK major {major} (supported: 5, 6, 7)")
        self.major = major
        self.report = Report(source, f"ai-sdk@{major}")
        self._splitter = EventSourceSplitter()
        self._tracker = UiChunkTracker(UI_MAJORS[major])
        self._tracker.continue_message(continues)
        self._stopped = False
        self._done = False
        self._chunks = 0
        self._finish = False
        self._pending_inputs: dict[str, None] = {}
        self._finished = False
        self._sse = False
        self._after_error_warned = False
        self._line: int | None = None

    # -- input -----------------------------------------------------------------------------
    def feed(self, data: bytes) -> list[Violation]:
        """Consume response-body bytes (SSE as eventsource-parser splits it)."""
        self._sse = True
        out: list[Violation] = []
        for payload in self._splitter.feed(data):
            index = self.report.events
            self.report.events += 1
            self._line = payload.line
            if payload.invalid_utf8:
                out += self._add(
                    "ai-sdk/sse/invalid-utf8", index, "bytes that are not UTF-8 read as U+FFFD"
                )
            if payload.text == "[DONE]":
                self._done = True
                continue
            try:
                value = parse_json(payload.text)
            except JsonError as exc:
                out += (
                    self._after_error(index)
                    if self._stopped
                    else self._add("ai-sdk/sse/invalid-json", index, f"data is not JSON: {exc}")
                )
                continue
            if has_proto_key(value):
                out += (
                    self._after_error(index)
                    if self._stopped
                    else self._add("ai-sdk/sse/proto-key", index, "JSON contains a __proto__ key")
                )
                continue
            out += self._chunk(value, index)
        for line in self._splitter.ignored_lines:
            out += self._add("ai-sdk/sse/ignored-line", None, f"not an SSE field: {line[:60]!r}")
        self._splitter.ignored_lines.clear()
        return out

    def close(self) -> list[Violation]:
        """End of the response body."""
        self._splitter.close()
        out: list[Violation] = []
        if self._splitter.dropped:
            out += self._add(
                "ai-sdk/sse/unterminated-last-event",
                None,
                "the last event has no blank line after it: the client drops it",
            )
        return out + self.finish()

    def feed_payload(self, value: Any, *, line: int | None = None) -> list[Violation]:
        """Check one already-parsed chunk object (``line``: where it is in the input)."""
        index = self.report.events
        self.report.events += 1
        self._line = line
        return self._chunk(value, index)

    def finish(self) -> list[Violation]:
        """End-of-stream hygiene; idempotent."""
        if self._finished:
            return []
        self._finished = True
        out: list[Violation] = []
        if self._stopped:
            return out
        if self._sse and not self._done:
            out += self._add("ai-sdk/sse/missing-done", None, "no data: [DONE] at the end")
        if self._chunks and not self._finish:
            out += self._add("ai-sdk/hygiene/no-finish", None, "the stream has no finish chunk")
        out += self._never_ended()
        return out

    # -- checks ----------------------------------------------------------------------------------
    def _add(self, rule_id: str, index: int | None, message: str, *ids: str) -> list[Violation]:
        severity = RULES[rule_id].severity_in(self.report.profile)
        if severity is None:
            return []
        line = self._line if index is not None else None
        violation = Violation(rule_id, index, message, tuple(ids), severity, line)
        self.report.violations.append(violation)
        return [violation]

    def _never_ended(self) -> list[Violation]:
        out: list[Violation] = []
        for kind, ids in self._tracker.open_parts.items():
            for pid in ids:
                out += self._add(
                    "ai-sdk/hygiene/part-never-ended",
                    None,
                    f"{kind} part {pid!r} has no {kind}-end",
                    pid,
                )
        for cid in self._pending_inputs:
            out += self._add(
                "ai-sdk/hygiene/part-never-ended",
                None,
                f"tool input {cid!r} never became available",
                cid,
            )
        self._pending_inputs.clear()
        return out

    def _chunk(self, value: Any, index: int) -> list[Violation]:
        if self._stopped:
            return self._after_error(index)
        out: list[Violation] = []
        ctype = value.get("type") if isinstance(value, dict) else None
        if not isinstance(ctype, str):
            return self._add(
                "ai-sdk/schema/invalid-chunk", index, "chunk is not an object with a string type"
            )
        schema = chunk_schema(self.major, ctype)
        if schema is None:
            majors = known_in(ctype)
            hint = f" (only in ai v{', v'.join(map(str, majors))})" if majors else ""
            return self._add(
                "ai-sdk/schema/unknown-type",
                index,
                f"unknown chunk type {ctype!r} for ai v{self.major}{hint}",
            )
        issues = validate_cached(value, schema)
        for issue in issues:
            rid = (
                "ai-sdk/schema/unsupported-finish-reason"
                if issue.path == "/finishReason"
                else "ai-sdk/schema/invalid-chunk"
            )
            out += self._add(rid, index, f"{ctype}: {issue.message}")
        if issues:
            return out
        if self._chunks == 0 and ctype != "start":
            out += self._add("ai-sdk/hygiene/no-start", index, f"first chunk is {ctype!r}")
        self._chunks += 1
        key = value.get("id")
        if ctype in ("text-start", "reasoning-start"):
            kind = ctype.split("-")[0]
            if key in self._tracker.open_parts[kind]:
                out += self._add(
                    "ai-sdk/hygiene/duplicate-part-id",
                    index,
                    f"{ctype} for {key!r}, which is open",
                    str(key),
                )
        elif ctype == "finish-step":
            still = [pid for ids in self._tracker.open_parts.values() for pid in ids]
            if still:
                out += self._add(
                    "ai-sdk/hygiene/part-open-at-finish-step",
                    index,
                    f"parts {', '.join(still)} still open at finish-step",
                    *still,
                )
        elif ctype == "finish":
            self._finish = True
            reason = value.get("finishReason")
            if reason is not None and reason not in PORTABLE_FINISH_REASONS:
                out += self._add(
                    "ai-sdk/hygiene/finish-reason-not-portable",
                    index,
                    f"finishReason {reason!r} is rejected by other AI SDK majors",
                )
        elif ctype == "tool-input-start":
            self._pending_inputs[str(value["toolCallId"])] = None
        elif ctype in ("tool-input-available", "tool-input-error"):
            self._pending_inputs.pop(str(value["toolCallId"]), None)
        found = self._tracker.step(value)
        if found is not None:
            fault, message = found
            ids = [str(value[k]) for k in ("id", "toolCallId", "approvalId") if k in value]
            out += self._add(f"ai-sdk/stream/{fault.value}", index, message, *ids)
        if ctype == "error":
            self._stopped = True
        return out

    def _after_error(self, index: int) -> list[Violation]:
        if self._after_error_warned:
            return []
        self._after_error_warned = True
        return self._add(
            "ai-sdk/stream/chunks-after-error",
            index,
            "chunks after an error chunk are ignored by the client",
        )
