"""Check an AG-UI stream the way ``@ag-ui/client`` 1.0.0 reads it, plus hygiene warnings.

The client's pipeline (``src/agent/agent.ts`` ``runAgent``), stage by stage:

1. transport: :class:`~conformance.framing.AguiSplitter`, ``JSON.parse``, object with a type
   (``src/transform/sse.ts``, ``http.ts``);
2. compatibility boundary (``src/middleware/compatibility-boundary.ts``): THINKING_* become
   REASONING_*, the legacy nulls (``rawEvent``, ``result``, ``parentMessageId`` of
   TOOL_CALL_START/CHUNK, ``outcome``, a few inside ``RUN_STARTED.input`` and media parts)
   are dropped with a warning;
3. enforcement (``src/enforce/``): unknown type dropped, unknown fields stripped, then the
   zod schema of the type (``data/agui-1.0.0.schema.json``);
4. chunk expansion (``src/chunks/transform.ts``; :mod:`agui_codecs.core.chunks`): ``*_CHUNK``
   events become START/CONTENT/END, one pending stream per subagent lane;
5. ``verifyEvents`` (:class:`agui_codecs.transitions.AguiVerifier`).

Any error in 1-5 ends the client's run (``runAgent`` rejects); the checker reports it and goes
on, so one stream shows all its faults. Hygiene (``agui/hygiene/*``) follows
``docs/protocols.md`` §2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from agui_codecs.core import ChunkError, ChunkExpander
from agui_codecs.transitions import AGUI_TERMINAL, AguiVerifier, Phase

from .agui_extra import AguiExtraChecks, Finding
from .framing import AguiSplitter, JsonError, Payload, parse_json
from .profiles import agui_profile
from .report import Report, Violation
from .rules import RULES, Severity
from .schema import strip_and_validate

__all__ = ["AguiChecker", "agui_event_schema"]

_THINKING = {
    "THINKING_START": "REASONING_START",
    "THINKING_END": "REASONING_END",
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}
_MEDIA_PARTS = ("image", "audio", "video", "document")
_DEFINES = {  # event type -> (id field, kind) for the id-uniqueness hygiene rule
    "TEXT_MESSAGE_START": ("messageId", "text message"),
    "TOOL_CALL_START": ("toolCallId", "tool call"),
    "REASONING_MESSAGE_START": ("messageId", "reasoning"),
    "REASONING_START": ("messageId", "reasoning"),
    "TOOL_CALL_RESULT": ("messageId", "tool result message"),
}


@cache
def agui_event_schema() -> dict[str, Any]:
    """``{event type: JSON schema}`` of ``@ag-ui/core`` 1.0.0 (``data/agui-1.0.0.schema.json``)."""
    text = (Path(__file__).parent / "data" / "agui-1.0.0.schema.json").read_text("utf-8")
    events: dict[str, Any] = json.loads(text)["events"]
    return events


class AguiChecker:
    """One AG-UI stream, checked incrementally.

    Feed SSE bytes with :meth:`feed` / :meth:`close`, or already-parsed payloads (JSON lines,
    a JSON array) with :meth:`feed_payload` / :meth:`finish`. Each call returns the
    violations it found; :attr:`report` accumulates them.

    Args:
        source: name shown in the report (file name or URL).
        profile: ``1.0`` (the stock client, default) or ``1.1`` (the AG-UI 1.1 spec), see
            :mod:`conformance.profiles`.
        on_event: called with every event as the client's reducer would get it (after chunk
            expansion and verification), for callers that rebuild the conversation.

    Raises:
        ValueError: unknown profile.
    """

    def __init__(
        self,
        source: str = "<stream>",
        *,
        profile: str = "1.0",
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.profile = agui_profile(profile)
        self.report = Report(source, self.profile.name)
        self._extra = AguiExtraChecks(self.profile)
        self._on_event = on_event
        self._line: int | None = None
        self._splitter = AguiSplitter()
        self._verifier = AguiVerifier()
        self._chunks = ChunkExpander()
        self._thinking: dict[str, str | None] = {"span": None, "message": None}
        self._minted = 0
        self._crlf_seen = False
        self._finished = False
        # hygiene state
        self._messages: set[str] = set()
        self._calls: set[str] = set()
        self._kinds: dict[str, str] = {}
        self._closed: set[tuple[str, str]] = set()
        self._args: dict[str, list[str]] = {}

    # -- input ----------------------------------------------------------------------------
    def feed(self, data: bytes) -> list[Violation]:
        """Consume response-body bytes (SSE as the AG-UI client splits it)."""
        out = [v for p in self._splitter.feed(data) for v in self._payload(p)]
        if self._splitter.overflow:
            out += self._add(
                "agui/sse/buffer-overflow", None, "more than 10 MiB without an event boundary"
            )
        return out

    def close(self) -> list[Violation]:
        """End of the response body: parse the tail, then run the end-of-stream checks."""
        out = [v for p in self._splitter.close() for v in self._payload(p)]
        return out + self.finish()

    def feed_payload(self, value: Any, *, line: int | None = None) -> list[Violation]:
        """Check one already-decoded event (a JSON line or array element; ``line``: where it
        is in the input, 1-based, when known)."""
        index = self.report.events
        self.report.events += 1
        self._line = line
        return self._event(value, index)

    def finish(self) -> list[Violation]:
        """End-of-stream checks (terminal event); idempotent."""
        if self._finished:
            return []
        self._finished = True
        if self._verifier.phase in (Phase.IDLE, Phase.ACTIVE):
            return self._add(
                "agui/hygiene/no-terminal-event",
                None,
                "the stream ends without RUN_FINISHED or RUN_ERROR",
            )
        return []

    # -- stages -----------------------------------------------------------------------------
    def _add(
        self,
        rule_id: str,
        index: int | None,
        message: str,
        *ids: str,
        level: Severity | None = None,
    ) -> list[Violation]:
        severity = level or RULES[rule_id].severity_in(self.profile.name)
        if severity is None:
            return []
        line = self._line if index is not None else None
        violation = Violation(rule_id, index, message, tuple(ids), severity, line)
        self.report.violations.append(violation)
        return [violation]

    def _found(self, findings: list[Finding], index: int) -> list[Violation]:
        out: list[Violation] = []
        for rule_id, message, ids, level in findings:
            out += self._add(rule_id, index, message, *ids, level=level)
        return out

    def _payload(self, payload: Payload) -> list[Violation]:
        index = self.report.events
        self.report.events += 1
        self._line = payload.line
        out: list[Violation] = []
        for line in payload.dropped_lines:
            out += self._add(
                "agui/sse/line-without-data", index, f"line dropped by the client: {line[:60]!r}"
            )
        if payload.invalid_utf8:
            out += self._add(
                "agui/sse/invalid-utf8", index, "bytes that are not UTF-8 read as U+FFFD"
            )
        if payload.crlf and not self._crlf_seen:
            self._crlf_seen = True
            out += self._add(
                "agui/sse/crlf-line-endings",
                index,
                "CR in the SSE framing: the client splits events only on \\n\\n",
            )
        if payload.unterminated:
            out += self._add(
                "agui/sse/unterminated-last-event",
                index,
                "the last event is not followed by a blank line",
            )
        try:
            value = parse_json(payload.text)
        except JsonError as exc:
            return out + self._add("agui/sse/invalid-json", index, f"data is not JSON: {exc}")
        return out + self._event(value, index)

    def _event(self, value: Any, index: int) -> list[Violation]:
        if not isinstance(value, dict):
            return self._add("agui/sse/not-an-object", index, "the event is not a JSON object")
        if not isinstance(value.get("type"), str) or not value["type"]:
            return self._add("agui/sse/missing-type", index, "the event has no string type")
        out: list[Violation] = []
        event = self._compat(value, index, out)
        schema = agui_event_schema().get(event["type"])
        if schema is None:
            return out + self._add(
                "agui/schema/unknown-event-type",
                index,
                f"unknown event type {event['type']!r}: dropped",
            )
        event, removed, issues = strip_and_validate(event, schema)
        for path, what in removed:
            rid = (
                "agui/schema/unknown-field"
                if what == "field"
                else "agui/schema/unknown-union-member"
            )
            out += self._add(rid, index, f"{event['type']}: removed unrecognised {what} at {path}")
        for issue in issues:
            rid = f"agui/schema/{issue.kind}-field"
            out += self._add(rid, index, f"{event['type']}: {issue.message}")
        if issues:
            return out
        try:
            expanded = self._expand(event, index, out)
        except ChunkError as exc:
            return out + self._add(f"agui/chunks/{exc.rule}", index, exc.message, *exc.ids)
        for ev in expanded:
            out += self._verify(ev, index)
        return out

    def _compat(self, value: dict[str, Any], index: int, out: list[Violation]) -> dict[str, Any]:
        event = dict(value)
        etype = event["type"]

        def drop_null(obj: dict[str, Any], key: str, where: str) -> dict[str, Any]:
            if key in obj and obj[key] is None:
                out.extend(
                    self._add(
                        "agui/hygiene/null-optional-field", index, f"{where}.{key} is null: omit it"
                    )
                )
                obj = {k: v for k, v in obj.items() if k != key}
            return obj

        event = drop_null(event, "rawEvent", etype)
        if etype in ("RUN_FINISHED", "SUBAGENT_FINISHED"):
            event = drop_null(event, "result", etype)
        if etype in _THINKING:
            out.extend(
                self._add(
                    "agui/compat/thinking-event",
                    index,
                    f"{etype} is not AG-UI 1.0: use {_THINKING[etype]}",
                )
            )
            return self._thinking_event(event)
        if etype in ("TOOL_CALL_START", "TOOL_CALL_CHUNK"):
            event = drop_null(event, "parentMessageId", etype)
        elif etype == "RUN_FINISHED":
            event = drop_null(event, "outcome", etype)
        elif etype == "MESSAGES_SNAPSHOT" and isinstance(event.get("messages"), list):
            event["messages"] = [self._media_nulls(m, index, out) for m in event["messages"]]
        elif etype == "RUN_STARTED" and isinstance(event.get("input"), dict):
            inp = drop_null(dict(event["input"]), "forwardedProps", "RUN_STARTED.input")
            for key, field in (("tools", "parameters"), ("resume", "payload")):
                if isinstance(inp.get(key), list):
                    inp[key] = [
                        drop_null(e, field, f"RUN_STARTED.input.{key}[]")
                        if isinstance(e, dict)
                        else e
                        for e in inp[key]
                    ]
            if isinstance(inp.get("messages"), list):
                inp["messages"] = [self._media_nulls(m, index, out) for m in inp["messages"]]
            event["input"] = inp
        return event

    def _media_nulls(self, message: Any, index: int, out: list[Violation]) -> Any:
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            return message
        parts = []
        for part in message["content"]:
            if isinstance(part, dict) and part.get("type") in _MEDIA_PARTS:
                if "metadata" in part and part["metadata"] is None:
                    out.extend(
                        self._add(
                            "agui/hygiene/null-optional-field",
                            index,
                            f"{part['type']} part metadata is null: omit it",
                        )
                    )
                    part = {k: v for k, v in part.items() if k != "metadata"}
            parts.append(part)
        return {**message, "content": parts}

    def _mint(self) -> str:
        self._minted += 1
        return f"client-minted-{self._minted}"

    def _thinking_event(self, event: dict[str, Any]) -> dict[str, Any]:
        etype, state = event["type"], self._thinking
        event = {**event, "type": _THINKING[etype]}
        if etype == "THINKING_START":
            event.pop("title", None)
            state["span"] = event["messageId"] = self._mint()
        elif etype == "THINKING_TEXT_MESSAGE_START":
            state["message"] = event["messageId"] = self._mint()
            event["role"] = "reasoning"
        elif etype == "THINKING_TEXT_MESSAGE_CONTENT":
            event["messageId"] = state["message"] or self._mint()
        elif etype == "THINKING_TEXT_MESSAGE_END":
            event["messageId"], state["message"] = state["message"] or self._mint(), None
        else:
            event["messageId"], state["span"] = state["span"] or self._mint(), None
        return event

    # -- chunk expansion (agui_codecs.core.chunks: src/chunks/transform.ts) -------------------
    def _expand(self, ev: dict[str, Any], index: int, out: list[Violation]) -> list[dict[str, Any]]:
        expanded = self._chunks.expand(ev)
        if self._chunks.resumed is not None:
            out.extend(
                self._add(
                    "agui/chunks/interleaved",
                    index,
                    f"{ev['type']} {self._chunks.resumed!r} resumes after another chunk stream "
                    "closed it: the client opens a second one",
                    self._chunks.resumed,
                )
            )
        return expanded

    # -- verify and hygiene -------------------------------------------------------------------
    def _verify(self, ev: dict[str, Any], index: int) -> list[Violation]:
        out: list[Violation] = []
        before_open = {k: self._verifier.open_ids(k) for k in ("text-message", "tool-call")}
        found = self._verifier.step(ev)
        if found is not None:
            out += self._add(f"agui/verify/{found.fault.value}", index, found.message, *found.ids)
        out += self._hygiene(ev, index, before_open)
        out += self._found(self._extra.event(ev), index)
        if self._on_event is not None:
            self._on_event(ev)
        return out

    def _hygiene(
        self, ev: dict[str, Any], index: int, before: dict[str, list[str]]
    ) -> list[Violation]:
        out: list[Violation] = []
        etype = ev["type"]
        if etype in _DEFINES:
            field, kind = _DEFINES[etype]
            eid = ev.get(field)
            if isinstance(eid, str):
                seen = self._kinds.setdefault(eid, kind)
                if seen != kind:
                    out += self._add(
                        "agui/hygiene/id-shared-across-kinds",
                        index,
                        f"id {eid!r} names a {seen} and a {kind}",
                        eid,
                    )
        if etype == "RUN_STARTED":
            inp = ev.get("input")
            self._note_messages(inp.get("messages") if isinstance(inp, dict) else None)
        elif etype == "MESSAGES_SNAPSHOT":
            self._note_messages(ev.get("messages"))
        elif etype == "TEXT_MESSAGE_START":
            mid = ev["messageId"]
            if ("text", mid) in self._closed and mid not in before["text-message"]:
                out += self._add(
                    "agui/hygiene/id-reopened",
                    index,
                    f"text message {mid!r} is opened again after its END",
                    mid,
                )
            self._messages.add(mid)
        elif etype == "TEXT_MESSAGE_END":
            self._closed.add(("text", ev["messageId"]))
        elif etype == "TOOL_CALL_START":
            cid = ev["toolCallId"]
            if ("tool", cid) in self._closed and cid not in before["tool-call"]:
                out += self._add(
                    "agui/hygiene/id-reopened",
                    index,
                    f"tool call {cid!r} is opened again after its END",
                    cid,
                )
            parent = ev.get("parentMessageId")
            if isinstance(parent, str) and parent not in self._messages:
                out += self._add(
                    "agui/hygiene/parent-message-unknown",
                    index,
                    f"tool call {cid!r} names parent message {parent!r}, "
                    "which the stream never announced",
                    cid,
                    parent,
                )
            self._calls.add(cid)
            self._args[cid] = []
        elif etype == "TOOL_CALL_ARGS" and ev["toolCallId"] in self._args:
            self._args[ev["toolCallId"]].append(ev["delta"])
        elif etype == "TOOL_CALL_END" and ev["toolCallId"] in before["tool-call"]:
            cid = ev["toolCallId"]
            self._closed.add(("tool", cid))
            args = "".join(self._args.pop(cid, []))
            if not args:
                out += self._add(
                    "agui/hygiene/tool-call-without-args",
                    index,
                    f"tool call {cid!r} ended without TOOL_CALL_ARGS",
                    cid,
                )
            else:
                try:
                    parse_json(args)
                except JsonError:
                    out += self._add(
                        "agui/hygiene/tool-args-not-json",
                        index,
                        f"arguments of tool call {cid!r} are not JSON: {args[:60]!r}",
                        cid,
                    )
        elif etype == "TOOL_CALL_RESULT":
            cid = ev["toolCallId"]
            if cid not in self._calls:
                out += self._add(
                    "agui/hygiene/tool-result-unknown-call",
                    index,
                    f"result for tool call {cid!r}, never announced",
                    cid,
                )
        elif etype == "RUN_ERROR":
            still = [i for k in ("text-message", "tool-call") for i in before[k]]
            if still:
                out += self._add(
                    "agui/hygiene/open-at-run-error",
                    index,
                    f"RUN_ERROR while {', '.join(still)} still open",
                    *still,
                )
        if etype in AGUI_TERMINAL:
            self._args.clear()
        return out

    def _note_messages(self, messages: Any) -> None:
        for msg in messages if isinstance(messages, list) else []:
            if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                self._messages.add(msg["id"])
                for call in msg.get("toolCalls") or []:
                    if isinstance(call, dict) and isinstance(call.get("id"), str):
                        self._calls.add(call["id"])
