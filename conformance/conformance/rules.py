"""The rule catalogue: every violation the kit reports has one of these stable ids.

Severity ``error`` means a real client rejects the stream (``@ag-ui/client`` 1.0.0 for
``agui/*``; ``ai`` 5.0.277 / 6.0.326 / 7.0.173 for ``ai-sdk/*``, as selected); ``warning`` means
the stream is accepted but something is lost, duplicated or fragile; ``info`` is a notice the
clients do not care about (nothing is lost). Every error-level verdict of the default profiles
is proven against the real clients by ``tests/conformance/test_differential.py``.

A rule's severity may differ per profile (:mod:`conformance.profiles`): ``agui`` is the stock
``@ag-ui/client`` 1.0.0, ``agui@1.1`` the AG-UI 1.1 specification (``spec/1.1`` of
ag-ui-protocol/ag-ui, with the draft's fatal rules), ``ai-sdk@<major>`` an ``ai`` major. A
profile may also switch a rule off (``None``). The prose of each rule (why, how to fix, the
spec section) is in :mod:`conformance.rule_docs`.

Ids are ``<protocol>/<stage>/<name>``; stages follow the client pipeline: ``sse`` (framing and
JSON), ``compat`` (legacy shapes the client converts), ``schema`` (zod validation), ``chunks``
(chunk expansion), ``verify`` (``verifyEvents``; names come from
:class:`agui_codecs.transitions.Fault`), ``stream`` (``processUIMessageStream``; names from
:class:`agui_codecs.transitions.UiFault`) and ``hygiene`` (legal but harmful).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from agui_codecs.transitions import Fault, UiFault

__all__ = ["RULES", "SEVERITY_RANK", "TRANSPORT_RULES", "Rule", "Severity", "rule"]

Severity = Literal["error", "warning", "info"]

SEVERITY_RANK: Final[dict[str, int]] = {"info": 0, "warning": 1, "error": 2}
"""Order of the severities (``--fail-on`` compares ranks)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: stable ``id``, default ``severity``, a one-line ``summary``, the ``source``
    followed, and ``profiles``: profile name -> severity there (``None``: not reported)."""

    id: str
    severity: Severity
    summary: str
    source: str
    profiles: Mapping[str, Severity | None] = field(default_factory=dict)

    def severity_in(self, profile: str) -> Severity | None:
        """The severity under ``profile`` (``agui``, ``agui@1.1``, ``ai-sdk@7``, ...), or
        ``None`` when that profile does not report the rule."""
        return self.profiles.get(profile, self.severity)


_AGUI_VERIFY = "@ag-ui/client 1.0.0 src/verify/verify.ts"
_AI_STREAM = "ai src/ui/process-ui-message-stream.ts (5.0.277, 6.0.326, 7.0.173)"
_E: Final = "error"
_W: Final = "warning"
_I: Final = "info"

_TABLE: list[tuple[str, Severity, str, str]] = [
    # -- AG-UI: transport and JSON (src/transform/sse.ts, src/transform/http.ts)
    ("agui/sse/invalid-json", _E, "an event's data is not one JSON document "
     "(CRLF framing or a missing blank line merges events)", "@ag-ui/client src/transform/sse.ts"),
    ("agui/sse/not-an-object", _E, "an event's data is JSON but not an object",
     "@ag-ui/client src/transform/http.ts"),
    ("agui/sse/missing-type", _E, "an event has no non-empty string `type`",
     "@ag-ui/client src/transform/http.ts"),
    ("agui/sse/buffer-overflow", _E, "more than 10 MiB without an event boundary",
     "@ag-ui/client src/transform/sse.ts MAX_BUFFER_SIZE"),
    ("agui/sse/line-without-data", _W, "a line of an event is not a `data:` line (nor `event:`, "
     "`id:`, `retry:` or a comment): the client drops it", "@ag-ui/client src/transform/sse.ts"),
    ("agui/sse/invalid-utf8", _W, "bytes that are not UTF-8: the client reads U+FFFD instead",
     "@ag-ui/client src/transform/sse.ts (TextDecoder)"),
    ("agui/sse/crlf-line-endings", _W, "CR in the framing: the client splits events only on "
     "\\n\\n", "docs/protocols.md §1.2"),
    ("agui/sse/unterminated-last-event", _W, "the last event has no blank line after it (the AG-UI "
     "client reads it, eventsource-parser drops it)", "docs/protocols.md §1.2"),
    # -- AG-UI: legacy shapes converted by the always-on compatibility boundary
    ("agui/compat/thinking-event", _W, "THINKING_* event (removed in 1.0) converted to "
     "REASONING_*", "@ag-ui/client src/middleware/compatibility-boundary.ts"),
    # -- AG-UI: schema enforcement (src/enforce/enforce.ts, strip.ts)
    ("agui/schema/unknown-event-type", _W, "event type the protocol does not know: dropped",
     "@ag-ui/client src/enforce/enforce.ts"),
    ("agui/schema/unknown-field", _W, "field the schema does not describe: stripped",
     "@ag-ui/client src/enforce/strip.ts"),
    ("agui/schema/unknown-union-member", _W, "union member with an unknown tag (e.g. message "
     "role): removed", "@ag-ui/client src/enforce/strip.ts"),
    ("agui/schema/null-field", _E, "null for a field that must be omitted when absent",
     "@ag-ui/core 1.0.0 schemas (zod)"),
    ("agui/schema/missing-field", _E, "a required field is absent", "@ag-ui/core 1.0.0 schemas"),
    ("agui/schema/invalid-field", _E, "a field has the wrong type or value",
     "@ag-ui/core 1.0.0 schemas"),
    # -- AG-UI: chunk expansion (src/chunks/transform.ts)
    ("agui/chunks/first-chunk-without-id", _E, "a chunk opens a stream but has no "
     "messageId/toolCallId", "@ag-ui/client src/chunks/transform.ts"),
    ("agui/chunks/first-tool-chunk-without-name", _E, "a TOOL_CALL_CHUNK opens a call without "
     "toolCallName", "@ag-ui/client src/chunks/transform.ts"),
    ("agui/chunks/field-disagrees-with-opener", _E, "a continuation chunk repeats a field with a "
     "different value", "@ag-ui/client src/chunks/transform.ts"),
    ("agui/chunks/ambiguous-continuation", _E, "an id-less chunk could continue several open "
     "streams", "@ag-ui/client src/chunks/transform.ts"),
    ("agui/chunks/subagent-mismatch", _E, "a chunk's subagentRunId disagrees with its open "
     "stream", "@ag-ui/client src/chunks/transform.ts"),
    ("agui/chunks/interleaved", _W, "interleaved chunks of different ids: the client closes and "
     "reopens them, splitting one call or message in two", "docs/protocols.md §2.4"),
    # -- AG-UI: hygiene beyond the verifier
    ("agui/hygiene/no-terminal-event", _W, "the stream ends without RUN_FINISHED or RUN_ERROR",
     "docs/protocols.md §2.3 rule 10"),
    ("agui/hygiene/tool-args-not-json", _W, "a tool call's concatenated ARGS are not JSON at END",
     "docs/protocols.md §2.4"),
    ("agui/hygiene/tool-call-without-args", _W, "TOOL_CALL_START..END with no TOOL_CALL_ARGS: "
     "clients see no arguments", "issue 4 (runtimes that get arguments whole)"),
    ("agui/hygiene/tool-result-unknown-call", _W, "TOOL_CALL_RESULT for a call the stream never "
     "announced", "docs/protocols.md §2.5"),
    ("agui/hygiene/parent-message-unknown", _I, "parentMessageId names a message the stream never "
     "announced", "@ag-ui/client src/apply/default.ts"),
    ("agui/hygiene/id-shared-across-kinds", _W, "one id names entities of different kinds "
     "(message, tool call, reasoning)", "docs/protocols.md §2.5"),
    ("agui/hygiene/id-reopened", _I, "a closed message or tool call id is opened again (the "
     "client continues it)", "@ag-ui/client src/apply/default.ts"),
    ("agui/hygiene/null-optional-field", _W, "null for an optional field (converted by the "
     "client's compatibility boundary; omit it)", "docs/protocols.md §2.1"),
    ("agui/hygiene/open-at-run-error", _W, "RUN_ERROR while messages or calls are open (close "
     "them first)", "docs/protocols.md §2.3 rule 4"),
    ("agui/hygiene/missing-protocol-version", _I, "RUN_STARTED declares no protocolVersion "
     "(optional; the client stays quiet)", "@ag-ui/client src/agent/agent.ts"),
    ("agui/hygiene/protocol-version-newer", _W, "RUN_STARTED declares a protocol newer than the "
     "client's: it warns and strips what it does not know", "@ag-ui/client src/agent/agent.ts"),
    ("agui/hygiene/protocol-version-uninterpretable", _W, "protocolVersion is not MAJOR.MINOR: "
     "handled like a newer one", "@ag-ui/client src/agent/agent.ts"),
    ("agui/hygiene/state-patch-failed", _W, "a STATE_DELTA patch does not apply to the state: the "
     "client keeps the old state", "@ag-ui/client src/apply/default.ts"),
    ("agui/hygiene/run-error-after-finished", _W, "RUN_ERROR after RUN_FINISHED: the run was "
     "reported successful, then failed", "@ag-ui/client src/verify/verify.ts"),
    ("agui/hygiene/timestamp-in-seconds", _W, "a timestamp that reads as seconds: AG-UI "
     "timestamps are milliseconds", "@ag-ui/core 1.0.0 BaseEventSchema"),
    ("agui/hygiene/snapshot-renames-message", _W, "MESSAGES_SNAPSHOT drops a message streamed in "
     "this run and adds its content under a new id", "@ag-ui/client src/apply/default.ts"),
    # -- AG-UI: run identity and interrupts (1.1 draft rules; warnings for the 1.0 client)
    ("agui/lifecycle/run-id-mismatch", _W, "RUN_FINISHED names another runId than its "
     "RUN_STARTED", "spec/draft basic/run-input"),
    ("agui/lifecycle/thread-id-mismatch", _W, "RUN_FINISHED names another threadId than its "
     "RUN_STARTED", "spec/draft basic/run-input"),
    ("agui/lifecycle/second-thread", _W, "a later RUN_STARTED of the stream names another "
     "threadId", "spec/draft basic/run-input"),
    ("agui/lifecycle/duplicate-interrupt-id", _W, "two interrupts of one RUN_FINISHED share an "
     "id: one resume answers both", "spec/draft basic/patterns/interrupt-resume"),
    # -- AI SDK: framing and JSON (eventsource-parser 3.1.1, provider-utils secureJsonParse)
    ("ai-sdk/sse/invalid-json", _E, "an event's data is not one JSON document",
     "@ai-sdk/provider-utils parse-json-event-stream.ts"),
    ("ai-sdk/sse/proto-key", _E, "JSON with a __proto__ key (or constructor.prototype)",
     "@ai-sdk/provider-utils secure-json-parse.ts"),
    ("ai-sdk/sse/invalid-utf8", _W, "bytes that are not UTF-8: the client reads U+FFFD instead",
     "ai src/ui/default-chat-transport.ts (TextDecoderStream)"),
    ("ai-sdk/sse/unterminated-last-event", _W, "the last event has no blank line after it: "
     "silently dropped", "eventsource-parser 3.1.1"),
    ("ai-sdk/sse/ignored-line", _W, "a line that is not an SSE field: ignored",
     "eventsource-parser 3.1.1"),
    ("ai-sdk/sse/missing-done", _W, "the stream does not end with data: [DONE]",
     "docs/protocols.md §3.1"),
    # -- AI SDK: schema (uiMessageChunkSchema)
    ("ai-sdk/schema/unknown-type", _E, "chunk type this major does not know",
     "ai src/ui-message-stream/ui-message-chunks.ts"),
    ("ai-sdk/schema/invalid-chunk", _E, "chunk fields fail the schema (a missing input/output/"
     "data key, a wrong type)", "ai src/ui-message-stream/ui-message-chunks.ts"),
    ("ai-sdk/schema/unsupported-finish-reason", _E, "finishReason this major does not accept",
     "ai src/ui-message-stream/ui-message-chunks.ts"),
    # -- AI SDK: hygiene
    ("ai-sdk/stream/chunks-after-error", _W, "chunks after an `error` chunk are ignored",
     "ai src/ui/chat.ts"),
    ("ai-sdk/hygiene/part-open-at-finish-step", _W, "text or reasoning part still open at "
     "finish-step (v5 and v6 drop it)", "docs/protocols.md §3.3 rule 3"),
    ("ai-sdk/hygiene/part-never-ended", _W, "a text, reasoning or tool-input part is never ended",
     "docs/protocols.md §3.3 rule 2"),
    ("ai-sdk/hygiene/finish-reason-not-portable", _W, "finishReason not accepted by every "
     "supported major", "docs/protocols.md §3.3 rule 4"),
    ("ai-sdk/hygiene/duplicate-part-id", _W, "a part is started again while open: its text is "
     "replaced", "ai src/ui/process-ui-message-stream.ts"),
    ("ai-sdk/hygiene/no-start", _W, "the stream does not begin with a `start` chunk",
     "docs/protocols.md §3.1"),
    ("ai-sdk/hygiene/no-finish", _W, "the stream has no `finish` chunk",
     "docs/protocols.md §3.1"),
]  # fmt: skip


def _words(fault: Fault | UiFault) -> str:
    return str(fault.value).replace("-", " ")


TRANSPORT_RULES: Final[tuple[tuple[str, Severity, str], ...]] = (
    ("http-status", _E, "the endpoint answered with an HTTP error status: the client fails"),
    (
        "aborted",
        _E,
        "the response ended abnormally (connection reset, incomplete chunked body): "
        "the client fails with `terminated`",
    ),
    ("timeout", _E, "no byte arrived within the read timeout"),
    ("content-type", _W, "the response is not `text/event-stream`: proxies may buffer it"),
    ("buffered", _W, "every event arrived in one burst at the end: the response was buffered"),
    ("idle-gap", _W, "a silence longer than the keep-alive bound: proxies close idle streams"),
)
"""Live-mode rules, one per protocol (``agui/transport/<name>``, ``ai-sdk/transport/<name>``)."""

_PROFILE_SEVERITY: Final[dict[str, dict[str, Severity | None]]] = {
    # AG-UI 1.1 (spec/1.1 and the draft's fatal rules): see conformance/conformance/profiles.py
    "agui/hygiene/no-terminal-event": {"agui@1.1": _E},
    "agui/lifecycle/run-id-mismatch": {"agui@1.1": _E},
    "agui/lifecycle/thread-id-mismatch": {"agui@1.1": _E},
    "agui/lifecycle/second-thread": {"agui@1.1": _E},
    "agui/lifecycle/duplicate-interrupt-id": {"agui@1.1": _E},
    "agui/hygiene/id-reopened": {"agui@1.1": None},
    "agui/hygiene/run-error-after-finished": {"agui@1.1": _I},
    "agui/hygiene/protocol-version-newer": {"agui@1.1": _I},
}

RULES: Final[dict[str, Rule]] = {
    **{
        rid: Rule(rid, sev, text, src, _PROFILE_SEVERITY.get(rid, {}))
        for rid, sev, text, src in _TABLE
    },
    **{
        f"{proto}/transport/{name}": Rule(
            f"{proto}/transport/{name}", sev, text, "agui-conformance live mode (HTTP)"
        )
        for proto in ("agui", "ai-sdk")
        for name, sev, text in TRANSPORT_RULES
    },
    **{
        f"agui/verify/{f.value}": Rule(f"agui/verify/{f.value}", "error", _words(f), _AGUI_VERIFY)
        for f in Fault
    },
    **{
        f"ai-sdk/stream/{f.value}": Rule(f"ai-sdk/stream/{f.value}", "error", _words(f), _AI_STREAM)
        for f in UiFault
    },
}
"""Every rule, by id."""


def rule(rule_id: str) -> Rule:
    """Return the rule named ``rule_id``.

    Raises:
        KeyError: no such rule (a programming error: ids are fixed).
    """
    return RULES[rule_id]
