"""Writes the hand-made differential streams under ``tests/conformance/streams/``.

Each case is named after the fault (or the legal-but-unusual shape) it shows. The files are
committed; rerun after editing a case, then rerun ``record_verdicts.py`` to ask the real
clients (the differential test checks the recorded verdicts against the live clients)::

    .venv/bin/python tests/conformance/tools/make_streams.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "streams"

RS = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1", "protocolVersion": "1.0"}
RF = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def frame(events: list[Any], done: bool = False) -> bytes:
    body = b"".join(
        b"data: " + json.dumps(e, separators=(",", ":")).encode() + b"\n\n" for e in events
    )
    return body + (b"data: [DONE]\n\n" if done else b"")


def run(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [RS, *events, RF]


def text(mid: str, delta: str = "hi", **extra: Any) -> list[dict[str, Any]]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant", **extra},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta, **extra},
        {"type": "TEXT_MESSAGE_END", "messageId": mid, **extra},
    ]


def tool(
    cid: str, name: str = "calc", args: str | None = '{"x":1}', **extra: Any
) -> list[dict[str, Any]]:
    out = [{"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": name, **extra}]
    if args is not None:
        out.append({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": args})
    return [*out, {"type": "TOOL_CALL_END", "toolCallId": cid}]


def sub(sid: str, **extra: Any) -> dict[str, Any]:
    return {"type": "SUBAGENT_STARTED", "subagentRunId": sid, "name": "helper", **extra}


def sub_end(sid: str) -> dict[str, Any]:
    return {"type": "SUBAGENT_FINISHED", "subagentRunId": sid}


def step(kind: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"type": f"STEP_{kind}", "stepName": name, **extra}


def result(cid: str, mid: str | None = None, content: Any = "42") -> dict[str, Any]:
    return {"type": "TOOL_CALL_RESULT", "messageId": mid or f"{cid}-r", "toolCallId": cid,
            "content": content, "role": "tool"}  # fmt: skip


def reasoning(mid: str) -> list[dict[str, Any]]:
    return [
        {"type": "REASONING_START", "messageId": mid},
        {"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": "hmm"},
        {"type": "REASONING_MESSAGE_END", "messageId": mid},
        {"type": "REASONING_END", "messageId": mid},
    ]


def agui_cases() -> dict[str, bytes | list[dict[str, Any]]]:
    tc, tx = tool("a"), text("m1")
    return {
        # -- faults seen in public reports (issue 4)
        "two-tool-calls-open-at-once": run(
            {"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "f"},
            {"type": "TOOL_CALL_START", "toolCallId": "b", "toolCallName": "g"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": "{}"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "b", "delta": "{}"},
            {"type": "TOOL_CALL_END", "toolCallId": "a"},
            {"type": "TOOL_CALL_END", "toolCallId": "b"},
        ),
        "tool-call-end-with-other-id": run(*tc[:2], result("a"), {"type": "TOOL_CALL_END", "toolCallId": "b"}),
        "tool-call-start-end-without-args": run(*tool("a", args=None), result("a")),
        "tool-call-parent-message-never-announced": run(*tool("a", parentMessageId="ghost")),
        "text-content-after-end": run(*tx, *tc, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "more"}),
        "tool-args-after-end": run(*tc, {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": "{}"}),
        # -- runs
        "run-error-then-new-run": [RS, {"type": "RUN_ERROR", "message": "x"}, RS, *tx, RF],
        "run-error-then-event": [RS, {"type": "RUN_ERROR", "message": "x"}, *tx],
        "run-finished-then-run-error": [RS, RF, {"type": "RUN_ERROR", "message": "late"}],
        "first-event-run-error": [{"type": "RUN_ERROR", "message": "no start"}],
        "two-runs-in-sequence": [*run(*tx), *run(*text("m2"))],
        "empty-body": b"",
        "only-comments": b": keep-alive\n\n: again\n\n",
        "run-started-only": [RS],
        # -- subagents and ownership (verify.ts)
        "subagent-lifecycle": run(sub("s1"), *text("m1", subagentRunId="s1"), sub_end("s1")),
        "subagent-owner-mismatch": run(
            sub("s1"), sub("s2"),
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "subagentRunId": "s1"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x", "subagentRunId": "s2"},
        ),
        "subagent-tagged-continuation-of-parent-message": run(
            {"type": "TEXT_MESSAGE_START", "messageId": "m1"}, sub("s1"),
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x", "subagentRunId": "s1"},
        ),
        "subagent-finished-not-active": run(sub_end("s9")),
        "subagent-id-reused": run(sub("s1"), sub_end("s1"), sub("s1"), sub_end("s1")),
        "subagent-open-at-run-finished": run(sub("s1")),
        "subagent-parent-unknown": run(sub("s2", parentSubagentRunId="s1"), sub_end("s2")),
        "subagent-error-lifecycle": run(sub("s1"), {"type": "SUBAGENT_ERROR", "subagentRunId": "s1",
                                                    "message": "failed"}),
        "subagent-null-description": run(sub("s1", description=None), sub_end("s1")),
        "steps-same-name-in-parent-and-subagent": run(
            step("STARTED", "tools"), sub("s1"), step("STARTED", "tools", subagentRunId="s1"),
            step("FINISHED", "tools", subagentRunId="s1"), sub_end("s1"), step("FINISHED", "tools"),
        ),
        "step-finished-by-other-owner": run(sub("s1"), step("STARTED", "x"),
                                            step("FINISHED", "x", subagentRunId="s1")),
        "step-started-twice": run(step("STARTED", "x"), step("STARTED", "x")),
        "step-open-at-run-finished": run(step("STARTED", "x")),
        "tool-call-parent-owned-by-other-subagent": run(
            sub("s1"), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "subagentRunId": "s1"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1", "subagentRunId": "s1"},
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f",
             "parentMessageId": "m1", "subagentRunId": "s2"},
        ),
        "encrypted-value-owner-mismatch": run(
            sub("s1"), sub("s2"), *[{**e, "subagentRunId": "s1"} for e in reasoning("r1")],
            {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "r1",
             "encryptedValue": "xx", "subagentRunId": "s2"},
            sub_end("s1"), sub_end("s2"),
        ),
        "activity-delta-owner-mismatch": run(
            {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "plan", "content": {}},
            {"type": "ACTIVITY_DELTA", "messageId": "a1", "activityType": "plan", "patch": [],
             "subagentRunId": "s1"},
        ),
        # -- reasoning
        "reasoning-span-and-message-share-id": run(*reasoning("r1")),
        "reasoning-content-without-start": run({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "x"}),
        "reasoning-end-without-start": run({"type": "REASONING_END", "messageId": "r"}),
        "reasoning-span-open-at-run-finished": run({"type": "REASONING_START", "messageId": "r"}),
        "reasoning-message-start-twice": run(*reasoning("r1")[:2], reasoning("r1")[1]),
        "thinking-events-complete": run(
            {"type": "THINKING_START", "title": "plan"},
            {"type": "THINKING_TEXT_MESSAGE_START"},
            {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "hmm"},
            {"type": "THINKING_TEXT_MESSAGE_END"}, {"type": "THINKING_END"},
        ),
        "thinking-content-without-start": run({"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "x"}),
        "thinking-left-open": run({"type": "THINKING_START"}),
        # -- chunks
        "text-chunk-first-without-id": run({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}),
        "tool-chunk-first-without-name": run({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "delta": "{}"}),
        "text-chunk-role-disagrees": run(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "assistant", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "user", "delta": "b"},
        ),
        "tool-chunk-parent-disagrees": run(
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "p1"},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "parentMessageId": "p2", "delta": "{}"},
        ),
        "tool-chunks-interleaved-with-names": run(
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f", "delta": '{"x":'},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "b", "toolCallName": "g", "delta": '{"y":'},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f", "delta": "1}"},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "b", "toolCallName": "g", "delta": "2}"},
        ),
        "chunks-continue-without-id": run(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f", "delta": "{"},
            {"type": "TOOL_CALL_CHUNK", "delta": "}"},
        ),
        "reasoning-message-chunks": run(
            {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r", "delta": "a"},
            {"type": "REASONING_MESSAGE_CHUNK", "delta": "b"},
        ),
        "chunk-ambiguous-between-subagent-lanes": run(
            sub("s1"), sub("s2"),
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "a", "subagentRunId": "s1"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m2", "delta": "b", "subagentRunId": "s2"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "c"},
        ),
        "chunk-closed-by-raw-event-stays-open": run(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "RAW", "event": {"x": 1}},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
        ),
        "chunk-left-open-at-run-finished": run({"type": "TOOL_CALL_CHUNK", "toolCallId": "c",
                                                "toolCallName": "f", "delta": "{}"}),
        # -- schema
        "unknown-message-role-in-snapshot": run({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "u1", "role": "user", "content": "hi"}, {"id": "w", "role": "wizard"}]}),
        "unknown-content-part-in-snapshot": run({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "u1", "role": "user", "content": [{"type": "text", "text": "a"},
                                                      {"type": "hologram", "x": 1}]}]}),
        "unknown-outcome-type": run({**RF, "outcome": {"type": "weird"}})[:-1],
        "interrupt-outcome-without-interrupts": run({**RF, "outcome": {"type": "interrupt", "interrupts": []}})[:-1],
        "interrupt-outcome": run(*tc, {**RF, "outcome": {"type": "interrupt", "interrupts": [
            {"id": "i1", "reason": "tool_call", "toolCallId": "a"}]}})[:-1],
        "state-delta-bad-pointer": run({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "a", "value": 1}]}),
        "state-delta-remove-with-value": run({"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/a", "value": 1}]}),
        "activity-snapshot-array-content": run({"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "x", "content": []}),
        "custom-without-value": run({"type": "CUSTOM", "name": "x"}),
        "custom-null-value": run({"type": "CUSTOM", "name": "x", "value": None}),
        "raw-null-event": run({"type": "RAW", "event": None}),
        "timestamp-string": run({"type": "CUSTOM", "name": "x", "value": 1, "timestamp": "1"}),
        "metadata-array": run({**tx[0], "metadata": [1]}, *tx[1:]),
        "text-role-tool": run({**tx[0], "role": "tool"}, *tx[1:]),
        "tool-result-content-parts": run(*tc, result("a", content=[{"type": "text", "text": "42"}])),
        "tool-result-unknown-call": run(result("nope")),
        "snapshot-message-subagent-null": run({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "u1", "role": "user", "content": "hi", "subagentRunId": None}]}),
        "null-parent-message-id": run(*tool("a", parentMessageId=None)),
        "null-result-on-run-finished": run({**RF, "result": None})[:-1],
        "run-started-input-null-forwarded-props": [
            {**RS, "input": {"threadId": "t1", "runId": "r1", "messages": [], "forwardedProps": None}}, RF],
        "id-shared-by-text-and-tool-call": run(*text("x"), *tool("x")),
        "text-id-reopened-after-end": run(*tx, *tx),
        "open-text-at-run-error": [RS, tx[0], {"type": "RUN_ERROR", "message": "boom"}],
        "no-protocol-version": [{k: v for k, v in RS.items() if k != "protocolVersion"}, RF],
        # -- framing
        "data-not-json": b"data: hello\n\n",
        "data-json-array": b"data: [1,2]\n\n",
        "data-without-type": b'data: {"threadId":"t"}\n\n',
        "data-empty-type": b'data: {"type":""}\n\n',
        "cr-only-line-endings": frame(run(*tx)).replace(b"\n", b"\r"),
        "single-event-crlf": frame([{"type": "RUN_ERROR", "message": "x"}]).replace(b"\n", b"\r\n"),
        "event-lines-without-data": b"event: ping\n\n" + frame(run(*tx)),
        "data-without-space": frame(run(*tx)).replace(b"data: ", b"data:"),
        "invalid-utf8-in-delta": frame(run(*tx)).replace(b'"hi"', b'"h\xffi"'),
    }  # fmt: skip


def ai_cases() -> dict[str, bytes | list[dict[str, Any]]]:
    start, fin = {"type": "start", "messageId": "m"}, {"type": "finish", "finishReason": "stop"}
    st, fs = {"type": "start-step"}, {"type": "finish-step"}

    def text_part(pid: str = "t1") -> list[dict[str, Any]]:
        return [{"type": "text-start", "id": pid}, {"type": "text-delta", "id": pid, "delta": "hi"},
                {"type": "text-end", "id": pid}]  # fmt: skip

    def call(cid: str = "c1", **extra: Any) -> list[dict[str, Any]]:
        return [{"type": "tool-input-start", "toolCallId": cid, "toolName": "calc", **extra},
                {"type": "tool-input-delta", "toolCallId": cid, "inputTextDelta": "{}"},
                {"type": "tool-input-available", "toolCallId": cid, "toolName": "calc", "input": {},
                 **extra}]  # fmt: skip

    def msg(*chunks: dict[str, Any]) -> list[dict[str, Any]]:
        return [start, st, *chunks, fs, fin]

    out = {"type": "tool-output-available", "toolCallId": "c1", "output": 42}
    return {
        "dynamic-tool-output-without-dynamic-flag": msg(*call(dynamic=True), out),
        "dynamic-tool-output-with-dynamic-flag": msg(*call(dynamic=True), {**out, "dynamic": True}),
        "tool-output-denied": msg(*call(), {"type": "tool-output-denied", "toolCallId": "c1"}),
        "tool-approval-request": msg(*call(), {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"}),
        "tool-approval-request-and-response": msg(
            *call(), {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"},
            {"type": "tool-approval-response", "approvalId": "a1", "approved": True}),
        "tool-approval-response-unknown": msg(*call(), {"type": "tool-approval-response", "approvalId": "zz",
                                                        "approved": False}),
        "tool-approval-for-call-in-earlier-step": [start, st, *call(), fs, st,
            {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"}, fs, fin],
        "reset-step-then-output-for-reset-call": msg(*call(), {"type": "reset-step"}, out),
        "reset-step-then-new-text": msg(*text_part(), {"type": "reset-step"}, *text_part("t2")),
        "custom-chunk": msg({"type": "custom", "kind": "acme.progress"}),
        "reasoning-file-chunk": msg({"type": "reasoning-file", "url": "https://x/y.png", "mediaType": "image/png"}),
        "steering-message-chunk": msg({"type": "steering-message", "id": "s1", "parts": [{"type": "text", "text": "go"}]}),
        "text-end-with-citations": msg(*text_part()[:2], {"type": "text-end", "id": "t1", "citations": [
            {"source": {"type": "source", "sourceType": "url", "id": "s", "url": "https://x"}}]}),
        "source-document-without-title": msg({"type": "source-document", "sourceId": "d", "mediaType": "text/plain"}),
        "provider-metadata-not-object": msg({"type": "text-start", "id": "t1", "providerMetadata": "x"},
                                            {"type": "text-end", "id": "t1"}),
        "finish-without-reason": [start, st, *text_part(), fs, {"type": "finish"}],
        "message-metadata-string-then-object": [{**start, "messageMetadata": "a"}, st, fs,
                                                {**fin, "messageMetadata": {"u": 1}}],
        "message-metadata-string-then-string": [{**start, "messageMetadata": "a"}, {**fin, "messageMetadata": "b"}],
        "message-metadata-object-then-string": [{**start, "messageMetadata": {"a": 1}}, {**fin, "messageMetadata": "x"}],
        "message-metadata-string-then-empty-object": [{**start, "messageMetadata": "a"}, {**fin, "messageMetadata": {}}],
        "message-metadata-array-then-object": [{**start, "messageMetadata": [1]}, {**fin, "messageMetadata": {"0": 2}}],
        "message-metadata-deep-merge": [{**start, "messageMetadata": {"a": {"b": 1}}},
                                        {**fin, "messageMetadata": {"a": {"c": 2}}}],
        "tool-input-error-without-start": msg({"type": "tool-input-error", "toolCallId": "c9", "toolName": "f",
                                               "input": "{", "errorText": "bad json"}),
        "tool-output-error-unknown-call": msg({"type": "tool-output-error", "toolCallId": "zz", "errorText": "x"}),
        "constructor-prototype-key": msg({"type": "data-x", "data": {"constructor": {"prototype": {}}}}),
        "escaped-proto-key": b'data: {"type":"start"}\n\ndata: {"type":"data-x","data":{"\\u005f_proto__":{}}}\n\n',
        "text-delta-after-finish-step": [start, st, text_part()[0], fs, st, text_part()[1], text_part()[2], fs, fin],
        "error-then-invalid-json": frame([start, st, {"type": "error", "errorText": "boom"}]) + b"data: {oops\n\n",
        "error-then-unknown-type": [start, {"type": "error", "errorText": "boom"}, {"type": "nonsense"}],
        "error-as-first-chunk": [{"type": "error", "errorText": "boom"}],
        "empty-body": b"",
        "only-done": b"data: [DONE]\n\n",
        "data-without-space": frame(msg(*text_part()), True).replace(b"data: ", b"data:"),
        "data-line-without-colon": b"data\ndata: {}\n\n" + frame(msg(), True),
        "event-and-id-lines": frame(msg(*text_part()), True).replace(b"data: ", b"event: x\nid: 7\ndata: "),
        "unknown-field-line": b"foo: bar\n" + frame(msg(*text_part()), True),
        "cr-only-line-endings": frame(msg(*text_part()), True).replace(b"\n", b"\r"),
        "chunk-is-array": b"data: [1]\n\n",
        "chunk-is-string": b'data: "x"\n\n',
        "tool-input-delta-after-available": msg(*call(), {"type": "tool-input-delta", "toolCallId": "c1",
                                                           "inputTextDelta": "x"}),
        "text-start-twice": msg(text_part()[0], *text_part()),
        "text-end-twice": msg(*text_part(), text_part()[2]),
        "message-metadata-null": msg({"type": "message-metadata", "messageMetadata": None}),
        "data-part-transient": msg({"type": "data-status", "data": "busy", "transient": True}),
        "file-without-media-type": msg({"type": "file", "url": "https://x"}),
        "abort-with-reason": [start, st, {"type": "abort", "reason": "user"}],
        "tool-output-in-later-step": [start, st, *call(), fs, st, out, fs, fin],
        "start-message-id-number": [{"type": "start", "messageId": 5}],
        "reasoning-end-without-start": msg({"type": "reasoning-end", "id": "r"}),
        "text-open-at-finish": [start, st, text_part()[0], fs, fin],
        "no-start-no-finish": text_part(),
        "finish-reason-content-filter": [start, {"type": "finish", "finishReason": "content-filter"}],
        "extra-keys-everywhere": msg({"type": "text-start", "id": "t1", "x": 1},
                                     {"type": "text-delta", "id": "t1", "delta": "a", "y": [1]},
                                     {"type": "text-end", "id": "t1", "z": None}),
    }  # fmt: skip


def main() -> int:
    for protocol, cases in (("agui", agui_cases()), ("ai-sdk", ai_cases())):
        folder = OUT / protocol
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.sse"):
            old.unlink()
        for name, case in cases.items():
            body = case if isinstance(case, bytes) else frame(case, done=protocol == "ai-sdk")
            (folder / f"{name}.sse").write_bytes(body)
        print(f"{len(cases)} {protocol} streams in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
