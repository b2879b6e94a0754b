"""What each rule means for the people who have to fix it: why it matters, how to fix it, and
the specification section it follows.

:func:`explain` gives one rule's text (``agui-conformance explain RULE``); :func:`rules_markdown`
renders every rule as the page ``docs/conformance-rules.md`` (a test keeps that file current).
Sources: the AG-UI documentation (``docs.ag-ui.com``, the 1.1 specification pages named by the
``specPage`` of ag-ui-protocol/ag-ui ``spec/1.1/conformance/streams``), the AI SDK stream
protocol page (``ai-sdk.dev``), and this repository's ``docs/protocols.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from agui_codecs.transitions import Fault, UiFault

from .rules import RULES, Rule

__all__ = ["RuleDoc", "doc", "explain", "rules_markdown"]

_AGUI_EVENTS = "https://docs.ag-ui.com/concepts/events"
_AGUI_SPEC = "https://docs.ag-ui.com/spec/1.1"
_AI_PROTOCOL = "https://ai-sdk.dev/docs/ai-sdk-ui/stream-protocol"
_SSE = "https://html.spec.whatwg.org/multipage/server-sent-events.html"
_PROTOCOLS = "docs/protocols.md"


@dataclass(frozen=True, slots=True)
class RuleDoc:
    """``why`` it matters to the user, how to ``fix`` it, and the ``spec`` section (URL or a
    path of this repository)."""

    why: str
    fix: str
    spec: str


_REJECT_AGUI = (
    "@ag-ui/client stops the run at this event: runAgent() rejects, subscribers get "
    "onRunFailed, and nothing after it reaches the UI."
)
_REJECT_AI = (
    "useChat stops reading at this chunk: the chat's status becomes 'error' and the rest of "
    "the answer never shows."
)

_DOCS: Final[dict[str, RuleDoc]] = {
    # -- AG-UI transport
    "agui/sse/invalid-json": RuleDoc(
        _REJECT_AGUI + " The client splits events on a blank line (\\n\\n) only, so CRLF "
        "framing or a missing blank line merges two events into one unparsable payload.",
        "Write one `data: <json>` line per event followed by a blank line, with LF line "
        "endings; never split one JSON document over events.",
        f"{_PROTOCOLS} §1.2",
    ),
    "agui/sse/not-an-object": RuleDoc(
        _REJECT_AGUI, "Every event's data must be a JSON object with a `type`.", f"{_AGUI_EVENTS}"
    ),
    "agui/sse/missing-type": RuleDoc(
        _REJECT_AGUI, "Give every event a non-empty string `type`.", f"{_AGUI_EVENTS}"
    ),
    "agui/sse/buffer-overflow": RuleDoc(
        _REJECT_AGUI + " The client refuses to buffer more than 10 MiB without an event boundary.",
        "End every event with a blank line; send a large payload in several delta events.",
        f"{_PROTOCOLS} §1.2",
    ),
    "agui/sse/line-without-data": RuleDoc(
        "The client keeps only `data:` lines: anything else inside an event (a bare JSON line, "
        "`data` without its colon) is dropped without a word, and so is what it carried.",
        "Prefix every payload line with `data: `; use `:` for comments.",
        _SSE,
    ),
    "agui/sse/invalid-utf8": RuleDoc(
        "The client decodes the body as UTF-8 with replacement: the user sees U+FFFD where the "
        "text had bytes, and the original text is gone.",
        "Encode the body as UTF-8; do not cut a multi-byte character between writes of "
        "different encodings.",
        _SSE,
    ),
    "agui/sse/crlf-line-endings": RuleDoc(
        "The AG-UI client splits events on \\n\\n only: CRLF framing works only while each "
        "event also ends with LF LF. sse-starlette uses CRLF by default.",
        'Frame with LF (`sep="\\n"` in sse-starlette\'s EventSourceResponse).',
        f"{_PROTOCOLS} §1.2",
    ),
    "agui/sse/unterminated-last-event": RuleDoc(
        "The AG-UI client still reads an event the body ends in, but EventSource-style readers "
        "(and proxies) drop it; the last event is usually the terminal one.",
        "End the last event with a blank line.",
        f"{_PROTOCOLS} §1.2",
    ),
    "agui/compat/thinking-event": RuleDoc(
        "THINKING_* events were removed in AG-UI 1.0. The client converts them for now, with a "
        "warning, and mints ids for them.",
        "Send REASONING_START / REASONING_MESSAGE_* / REASONING_END with your own ids.",
        f"{_AGUI_EVENTS}#reasoning-events",
    ),
    "agui/schema/unknown-event-type": RuleDoc(
        "The client drops event types its schema does not know, with a console warning: what "
        "the event carried never reaches the UI.",
        "Use the 1.0 event types; put custom data in CUSTOM events.",
        f"{_AGUI_SPEC}/basic/processing",
    ),
    "agui/schema/unknown-field": RuleDoc(
        "The client strips fields its schema does not describe (a typo, a snake_case name): "
        "their values are lost.",
        "Use the schema's field names (camelCase); put extra data in `metadata` or CUSTOM.",
        f"{_AGUI_SPEC}/basic/processing",
    ),
    "agui/schema/unknown-union-member": RuleDoc(
        "A union member with an unknown tag (a message role, a content part, an outcome type) "
        "is removed from its list or slot: it is lost.",
        "Use the tags the 1.0 schema defines.",
        f"{_AGUI_SPEC}/basic/processing",
    ),
    "agui/schema/null-field": RuleDoc(
        _REJECT_AGUI + " zod does not accept null for a field that must be omitted when absent.",
        "Omit absent fields instead of sending null (pydantic: exclude_none=True).",
        f"{_PROTOCOLS} §2.1",
    ),
    "agui/schema/missing-field": RuleDoc(
        _REJECT_AGUI, "Send every required field of the event type.", f"{_AGUI_EVENTS}"
    ),
    "agui/schema/invalid-field": RuleDoc(
        _REJECT_AGUI,
        "Send each field with the type the schema gives (strings for ids and deltas, integer "
        "milliseconds for timestamps).",
        f"{_AGUI_SPEC}/basic/processing",
    ),
    "agui/chunks/first-chunk-without-id": RuleDoc(
        _REJECT_AGUI,
        "The first *_CHUNK of a stream names its messageId / toolCallId; continuations may "
        "omit it.",
        f"{_AGUI_SPEC}/basic/patterns/streaming",
    ),
    "agui/chunks/first-tool-chunk-without-name": RuleDoc(
        _REJECT_AGUI,
        "The first TOOL_CALL_CHUNK of a call carries toolCallName.",
        f"{_AGUI_SPEC}/basic/patterns/streaming",
    ),
    "agui/chunks/field-disagrees-with-opener": RuleDoc(
        _REJECT_AGUI,
        "Repeat role / name / toolCallName / parentMessageId on a continuation chunk only with "
        "the opener's value (or leave it out).",
        f"{_AGUI_SPEC}/basic/patterns/streaming",
    ),
    "agui/chunks/ambiguous-continuation": RuleDoc(
        _REJECT_AGUI,
        "When several chunk streams are open, name the id on every chunk.",
        f"{_AGUI_SPEC}/basic/patterns/streaming",
    ),
    "agui/chunks/subagent-mismatch": RuleDoc(
        _REJECT_AGUI,
        "Keep a chunk's subagentRunId equal to the one its stream was opened with.",
        f"{_AGUI_SPEC}/events/subagents",
    ),
    "agui/chunks/interleaved": RuleDoc(
        "Any other event closes an open chunk stream. A chunk of the same id after that opens "
        "a second message or call: the user sees one answer split in two, or a call whose "
        "arguments are cut.",
        "Send one chunk stream to its end before the next, or use START/CONTENT/END events, "
        "which may interleave.",
        f"{_PROTOCOLS} §2.4",
    ),
    "agui/hygiene/no-terminal-event": RuleDoc(
        "Without RUN_FINISHED or RUN_ERROR the client cannot tell a finished run from a broken "
        "connection; the 1.0 client reports it as completed, AG-UI 1.1 as failed.",
        "End every run with RUN_FINISHED, or RUN_ERROR on failure (also when the server "
        "aborts: catch, close what is open, send RUN_ERROR).",
        f"{_AGUI_SPEC}/basic/transports",
    ),
    "agui/hygiene/tool-args-not-json": RuleDoc(
        "The concatenated TOOL_CALL_ARGS are the call's arguments: if they are not JSON, the "
        "frontend tool handler and the next model turn get a broken call.",
        "Stream the argument JSON exactly as the model produced it, each byte once, in order.",
        f"{_PROTOCOLS} §2.4",
    ),
    "agui/hygiene/tool-call-without-args": RuleDoc(
        "A call with no TOOL_CALL_ARGS has empty arguments on the client, even when the model "
        "produced some (a runtime that received them whole and dropped them).",
        "Send the arguments in at least one TOOL_CALL_ARGS (`{}` for a call without any).",
        f"{_AGUI_EVENTS}#tool-call-events",
    ),
    "agui/hygiene/tool-result-unknown-call": RuleDoc(
        "A result for a call the client never saw cannot be shown next to its call, and the "
        "next request carries a tool message providers reject.",
        "Send TOOL_CALL_START..END before its TOOL_CALL_RESULT, with the same toolCallId.",
        f"{_PROTOCOLS} §2.5",
    ),
    "agui/hygiene/parent-message-unknown": RuleDoc(
        "The client creates an empty assistant message under that id for the call. Legal; it "
        "only matters when the id was meant to name a message sent later.",
        "Name the text message the call belongs to, or leave parentMessageId out.",
        f"{_AGUI_EVENTS}#tool-call-events",
    ),
    "agui/hygiene/id-shared-across-kinds": RuleDoc(
        "The client keys messages by id: a tool result or reasoning message reusing a text "
        "message's id overwrites or merges into it.",
        "Give every message, call and reasoning span its own id.",
        f"{_PROTOCOLS} §2.5",
    ),
    "agui/hygiene/id-reopened": RuleDoc(
        "The client continues the closed message (text appends, a call keeps its arguments); "
        "AG-UI 1.1 makes this legal. A notice, in case the id was reused by mistake.",
        "Use a fresh id for a new message.",
        f"{_AGUI_SPEC}/events/text-messages",
    ),
    "agui/hygiene/null-optional-field": RuleDoc(
        "The client's compatibility boundary converts the null and warns; a later client may "
        "reject it like any other null.",
        "Omit the field.",
        f"{_PROTOCOLS} §2.1",
    ),
    "agui/hygiene/open-at-run-error": RuleDoc(
        "The client accepts RUN_ERROR over open messages, but the open text or call is left "
        "half-built in the UI.",
        "Close what is open (TEXT_MESSAGE_END, TOOL_CALL_END) before RUN_ERROR.",
        f"{_PROTOCOLS} §2.3",
    ),
    "agui/hygiene/missing-protocol-version": RuleDoc(
        "protocolVersion is optional and the client says nothing without it; declaring it lets "
        "a newer client know which rules you follow.",
        'Send `"protocolVersion": "1.0"` (or the version you implement) on RUN_STARTED.',
        f"{_AGUI_SPEC}/basic/versioning",
    ),
    "agui/hygiene/protocol-version-newer": RuleDoc(
        "The client speaks an older protocol: it warns and strips every field and event it "
        "does not know, so 1.1 material is lost on a 1.0 client.",
        "Declare the version you need, and check with --profile 1.1; keep 1.0 clients in "
        "mind (or send only 1.0 material to them).",
        f"{_AGUI_SPEC}/basic/versioning",
    ),
    "agui/hygiene/protocol-version-uninterpretable": RuleDoc(
        "A version that is not MAJOR.MINOR cannot be compared: clients warn and treat it as "
        "newer than theirs.",
        'Declare "1.0" or "1.1".',
        f"{_AGUI_SPEC}/basic/versioning",
    ),
    "agui/hygiene/state-patch-failed": RuleDoc(
        "The client applies STATE_DELTA atomically: a patch whose path does not resolve (or a "
        "failing `test`) is dropped with a console warning, and the UI keeps the old state "
        "while the agent believes it changed.",
        "Patch the state the client holds: send a STATE_SNAPSHOT first, and make every path "
        "exist (use `add` for new keys).",
        f"{_AGUI_SPEC}/basic/patterns/snapshots",
    ),
    "agui/hygiene/run-error-after-finished": RuleDoc(
        "The client already reported success; the late RUN_ERROR flips the run to failed "
        "after the UI showed it done. AG-UI 1.1 admits it (a notice there).",
        "Decide the outcome before sending RUN_FINISHED; flush, then finish.",
        f"{_AGUI_SPEC}/events/lifecycle",
    ),
    "agui/hygiene/timestamp-in-seconds": RuleDoc(
        "AG-UI timestamps are milliseconds since the epoch: a value in seconds shows as a date "
        "in January 1970 and sorts before everything else.",
        "Send int(time.time() * 1000).",
        f"{_AGUI_EVENTS}#baseevent-properties",
    ),
    "agui/hygiene/snapshot-renames-message": RuleDoc(
        "MESSAGES_SNAPSHOT reconciles by id: the streamed message is deleted and the same "
        "content appended under another id, so the UI flickers, reorders, and loses what was "
        "attached to the old id (tool results, feedback).",
        "Use the ids you streamed in the snapshot.",
        f"{_AGUI_SPEC}/events/state#messages_snapshot",
    ),
    "agui/lifecycle/run-id-mismatch": RuleDoc(
        "A run's two boundary events carry one identity; an outcome about another run is not "
        "this run's outcome (fatal in AG-UI 1.1).",
        "Send the RUN_STARTED's runId on RUN_FINISHED.",
        "https://docs.ag-ui.com/spec/draft/basic/run-input",
    ),
    "agui/lifecycle/thread-id-mismatch": RuleDoc(
        "A RUN_FINISHED about another thread cannot close this run (fatal in AG-UI 1.1).",
        "Send the input's threadId on RUN_STARTED and RUN_FINISHED.",
        "https://docs.ag-ui.com/spec/draft/basic/run-input",
    ),
    "agui/lifecycle/second-thread": RuleDoc(
        "One stream carries runs of one conversation; a run on another thread re-homes the "
        "stream (fatal in AG-UI 1.1).",
        "Keep the input's threadId on every RUN_STARTED of the stream.",
        "https://docs.ag-ui.com/spec/draft/basic/run-input",
    ),
    "agui/lifecycle/duplicate-interrupt-id": RuleDoc(
        "A resume answers an interrupt by id: two interrupts with one id are answered by one "
        "entry and the second question is dropped (fatal in AG-UI 1.1).",
        "Give every interrupt of an outcome its own id.",
        "https://docs.ag-ui.com/spec/draft/basic/patterns/interrupt-resume",
    ),
    # -- AI SDK
    "ai-sdk/sse/invalid-json": RuleDoc(
        _REJECT_AI,
        "One `data: <json>` line per chunk, a blank line after it.",
        _AI_PROTOCOL,
    ),
    "ai-sdk/sse/proto-key": RuleDoc(
        _REJECT_AI + " secureJsonParse refuses __proto__ keys (prototype pollution).",
        "Rename the key.",
        _AI_PROTOCOL,
    ),
    "ai-sdk/sse/invalid-utf8": RuleDoc(
        "The body is decoded with replacement: the user sees U+FFFD where the text had bytes.",
        "Encode the body as UTF-8.",
        _SSE,
    ),
    "ai-sdk/sse/unterminated-last-event": RuleDoc(
        "eventsource-parser drops an event the body ends in: the last chunk (often `finish`) "
        "is lost.",
        "End every event with a blank line.",
        _SSE,
    ),
    "ai-sdk/sse/ignored-line": RuleDoc(
        "eventsource-parser skips lines that are not SSE fields: what they carried is lost.",
        "Prefix payload lines with `data: `.",
        _SSE,
    ),
    "ai-sdk/sse/missing-done": RuleDoc(
        "AI SDK streams end with `data: [DONE]`; readers that wait for it hang or report a cut "
        "stream.",
        "Send `data: [DONE]` last (toUIMessageStreamResponse does).",
        _AI_PROTOCOL,
    ),
    "ai-sdk/schema/unknown-type": RuleDoc(
        _REJECT_AI + " Each ai major accepts a fixed set of chunk types.",
        "Send only the chunk types of the majors your users run (check with --ai-sdk-major "
        "all), or data-* parts for your own data.",
        _AI_PROTOCOL,
    ),
    "ai-sdk/schema/invalid-chunk": RuleDoc(
        _REJECT_AI, "Send every required field with its type.", _AI_PROTOCOL
    ),
    "ai-sdk/schema/unsupported-finish-reason": RuleDoc(
        _REJECT_AI,
        "Use stop, length, content-filter, tool-calls, error or other.",
        _AI_PROTOCOL,
    ),
    "ai-sdk/stream/chunks-after-error": RuleDoc(
        "The chat stops at an `error` chunk: later chunks are never shown.",
        "Send `error` last (a `finish` may follow for the server's bookkeeping only).",
        f"{_PROTOCOLS} §3.3",
    ),
    "ai-sdk/hygiene/part-open-at-finish-step": RuleDoc(
        "ai 5 and 6 forget open text and reasoning parts at finish-step: later deltas for "
        "them fail the chat there.",
        "End text and reasoning parts before finish-step.",
        f"{_PROTOCOLS} §3.3",
    ),
    "ai-sdk/hygiene/part-never-ended": RuleDoc(
        "A part that never ends stays 'streaming' in the UI (a spinner that never stops).",
        "Send text-end / reasoning-end / tool-input-available for every part started.",
        f"{_PROTOCOLS} §3.3",
    ),
    "ai-sdk/hygiene/finish-reason-not-portable": RuleDoc(
        "Another ai major rejects this finishReason.",
        "Use a finish reason every major accepts.",
        f"{_PROTOCOLS} §3.3",
    ),
    "ai-sdk/hygiene/duplicate-part-id": RuleDoc(
        "Starting a part that is open replaces its text: what was streamed so far is lost.",
        "Give every part its own id.",
        _AI_PROTOCOL,
    ),
    "ai-sdk/hygiene/no-start": RuleDoc(
        "Without `start` the message id is minted by the client; resume and persistence "
        "cannot match it.",
        "Send `start` (with messageId) first.",
        _AI_PROTOCOL,
    ),
    "ai-sdk/hygiene/no-finish": RuleDoc(
        "Without `finish` onFinish never runs and the chat's finish reason is unknown.",
        "Send `finish` before [DONE].",
        _AI_PROTOCOL,
    ),
}

_TRANSPORT: Final[dict[str, tuple[str, str]]] = {
    "http-status": (
        "Both clients fail a run whose response status is not 2xx, before reading a byte.",
        "Answer 200 and report failures in the stream (RUN_ERROR / an `error` chunk).",
    ),
    "aborted": (
        "The live client fails with `terminated` (fetch's body error): a RUN_ERROR sent just "
        "before the abort is lost, though a replay of the saved file looks fine.",
        "Finish the response body normally after the terminal event; do not close the "
        "connection from a failing handler.",
    ),
    "timeout": (
        "No byte arrived in time: a browser behind a proxy gives up much sooner.",
        "Send the first event at once and keep-alive comments while the model thinks.",
    ),
    "content-type": (
        "Proxies and CDNs buffer responses that are not text/event-stream; EventSource "
        "refuses them.",
        "Answer with `content-type: text/event-stream` (and `cache-control: no-cache`).",
    ),
    "buffered": (
        "Every event arrived at the end in one burst: the user watched a blank screen, then "
        "the whole answer (a buffering proxy, or a server that collects before sending).",
        "Flush each event; set `X-Accel-Buffering: no` behind nginx; stream, do not collect.",
    ),
    "idle-gap": (
        "Proxies and load balancers close connections idle for 30-60 s: long tool calls or "
        "thinking cut the stream.",
        "Send `: keep-alive` comments every 15 s.",
    ),
}


def doc(rule_id: str) -> RuleDoc:
    """The prose of one rule (generated for the verify / stream / transport families).

    Raises:
        KeyError: no such rule.
    """
    rule = RULES[rule_id]
    if rule_id in _DOCS:
        return _DOCS[rule_id]
    proto, stage, name = rule_id.split("/", 2)
    if stage == "transport":
        why, fix = _TRANSPORT[name]
        return RuleDoc(why, fix, _AI_PROTOCOL if proto == "ai-sdk" else f"{_AGUI_SPEC}")
    if stage == "verify":
        return RuleDoc(
            _REJECT_AGUI + " verifyEvents enforces that every message, call, reasoning span, "
            "step and subagent is opened once, continued while open and closed once, inside one "
            "run.",
            _verify_fix(Fault(name)),
            f"{_AGUI_SPEC}/events/lifecycle",
        )
    if stage == "stream":
        return RuleDoc(
            _REJECT_AI + " processUIMessageStream needs every delta and end to name a started "
            "part, and every tool chunk a known call.",
            _stream_fix(UiFault(name)),
            _AI_PROTOCOL,
        )
    return RuleDoc(rule.summary, "", _AI_PROTOCOL if proto == "ai-sdk" else _AGUI_SPEC)


def _verify_fix(fault: Fault) -> str:
    text = fault.value
    if text.startswith("first-event"):
        return "Send RUN_STARTED first (or RUN_ERROR when the run fails before it starts)."
    if "after-run" in text:
        return "Send nothing after RUN_FINISHED / RUN_ERROR but a new RUN_STARTED."
    if text == "run-started-while-active":
        return "Finish the current run before starting another."
    if text == "run-finished-while-open":
        return "Close every message, tool call, reasoning span, step and subagent first."
    if text.endswith("already-open") or text == "step-already-active":
        return "Close the entity before opening it again, or use a new id."
    if "without-start" in text or "not-started" in text or "not-active" in text:
        return (
            "Open the entity (the *_START event) before its content or end, and never send "
            "content after its end (parallel tool calls: each call's ARGS before its END)."
        )
    return (
        "Keep subagent fields and ownership consistent: the same subagentRunId from open to close."
    )


def _stream_fix(fault: UiFault) -> str:
    if fault is UiFault.METADATA_NOT_MERGEABLE:
        return "Send messageMetadata as an object every time."
    if fault in (UiFault.TOOL_UNKNOWN_CALL, UiFault.APPROVAL_UNKNOWN):
        return "Send tool-input-start (or tool-input-available) before any chunk of that call."
    return "Send the *-start chunk before its deltas and end, with the same id."


def explain(rule_id: str) -> str:
    """The text ``agui-conformance explain RULE`` prints: what, severity per profile, why,
    the source followed, the spec section and how to fix.

    Raises:
        KeyError: no such rule.
    """
    rule = RULES[rule_id]
    d = doc(rule_id)
    lines = [f"{rule.id} ({_severities(rule)})", "", f"What: {rule.summary}.", f"Why: {d.why}"]
    if d.fix:
        lines.append(f"Fix: {d.fix}")
    lines += [f"Source: {rule.source}", f"Spec: {d.spec}"]
    return "\n".join(lines) + "\n"


def _severities(rule: Rule) -> str:
    text: str = rule.severity
    for profile, severity in sorted(rule.profiles.items()):
        text += f"; {profile}: {severity or 'not reported'}"
    return text


def rules_markdown() -> str:
    """``docs/conformance-rules.md``: every rule with its severities, what, why, fix, source
    and spec section, grouped by protocol and stage."""
    out = [
        "# Conformance rules",
        "",
        "Generated from the rule registry (`conformance/conformance/rules.py`, "
        "`conformance/conformance/rule_docs.py`) "
        "by `agui-conformance rules --markdown`; `tests/conformance/test_rule_docs.py` fails "
        "when this page is stale. `agui-conformance explain RULE` prints one entry.",
        "",
        "Severities: **error**, the real client rejects the stream (for the default profiles "
        "proven against `@ag-ui/client` 1.0.0 and `ai` 5/6/7 by the differential tests); "
        "**warning**, accepted but something is lost or fragile; **info**, a notice. A "
        "profile may change a severity: `agui` is the stock 1.0 client, `agui@1.1` the AG-UI "
        "1.1 specification.",
        "",
    ]
    current = ""
    for rule in sorted(RULES.values(), key=lambda r: r.id):
        group = rule.id.rsplit("/", 1)[0]
        if group != current:
            current = group
            out += [f"## `{group}/*`", ""]
        d = doc(rule.id)
        out += [
            f"### `{rule.id}`",
            "",
            f"*{_severities(rule)}* — {rule.summary}.",
            "",
            f"- Why: {d.why}",
            *([f"- Fix: {d.fix}"] if d.fix else []),
            f"- Source: {rule.source}",
            f"- Spec: {d.spec}",
            "",
        ]
    return "\n".join(out)
