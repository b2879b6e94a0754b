"""The differential-test corpus: good streams and the mutations that break them.

A stream is ``(name, protocol, body bytes)`` with protocol ``"agui"`` or ``"ai-sdk"``. Sources:

* :func:`stored_streams`: hand-made cases under ``tests/conformance/streams/`` (``agui/*.sse``,
  ``ai-sdk/*.sse``), each named after the fault it shows;
* :func:`corpus_streams`: every ``tests/corpus`` file a registered decoder reads, translated by
  our encoders (good streams), plus the raw ``agui`` and ``aisdk-ui`` families re-framed as SSE;
* :func:`mutants`: each kind of fault applied to good streams (:data:`AGUI_MUTATIONS`,
  :data:`AI_SDK_MUTATIONS`), so every fault kind is exercised on real shapes.

No verdict is written down here: the test asks the real clients.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agui_codecs import DECODERS, get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.sse import SSEDecoder

__all__ = [
    "AGUI_MUTATIONS",
    "AI_SDK_MUTATIONS",
    "STREAMS_DIR",
    "Stream",
    "corpus_streams",
    "frame",
    "mutants",
    "stored_streams",
    "unframe",
]

Stream = tuple[str, str, bytes]
Events = list[dict[str, Any]]
STREAMS_DIR = Path(__file__).resolve().parent / "streams"
_FAMILIES = {"openai-chat": "openai-chat", "anthropic": "anthropic", "gemini": "gemini",
             "openai-responses": "openai-responses", "agui": "agui", "aisdk-ui": "ai-sdk"}  # fmt: skip


def frame(events: list[Any], *, done: bool = False) -> bytes:
    """``data: <compact JSON>\\n\\n`` per event (``[DONE]`` appended when ``done``)."""
    body = b"".join(
        b"data: " + json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"
        for e in events
    )
    return body + (b"data: [DONE]\n\n" if done else b"")


def unframe(body: bytes) -> list[Any]:
    """The JSON payloads of an SSE body (``[DONE]`` skipped), read with the WHATWG decoder, so
    CR, LF and CRLF framings all work.

    Raises:
        ValueError: a payload is not JSON.
    """
    decoder = SSEDecoder()
    return [
        json.loads(event.data)
        for event in decoder.feed(body) + decoder.close()
        if event.data != "[DONE]"
    ]


def _objects(body: bytes) -> Events | None:
    """The payloads of ``body`` when every one is a JSON object, else None (such a stream is
    not a base the event mutations can change)."""
    try:
        events = unframe(body)
    except ValueError:
        return None
    return events if all(isinstance(e, dict) for e in events) else None


def _load(path: Path) -> list[Any]:
    raw = path.read_bytes().decode("utf-8-sig")
    if path.suffix == ".json":
        value = json.loads(raw)
        return value if isinstance(value, list) else [value]
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def stored_streams() -> list[Stream]:
    """Every ``streams/<protocol>/*.sse`` file."""
    out = []
    for protocol in ("agui", "ai-sdk"):
        for path in sorted((STREAMS_DIR / protocol).glob("*.sse")):
            out.append((f"stored/{protocol}/{path.stem}", protocol, path.read_bytes()))
    return out


def corpus_streams(corpus_dir: Path) -> list[Stream]:
    """Encoder outputs for each corpus file a registered decoder reads, and the raw AG-UI and
    AI SDK families as SSE."""
    out: list[Stream] = []
    for family, decoder in _FAMILIES.items():
        folder = corpus_dir / family
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if family == "agui":
                out.append((f"raw/agui/{path.stem}", "agui", frame(_load(path))))
            if family == "aisdk-ui":
                out.append((f"raw/ai-sdk/{path.stem}", "ai-sdk", frame(_load(path), done=True)))
            if decoder not in DECODERS:
                continue
            d = get_decoder(decoder)
            events = d.feed(path.read_bytes()) + d.close()
            agui, ai = AguiEncoder(), AiSdkEncoder()
            name = f"{decoder}/{path.stem}"
            out.append((f"encoded-agui/{name}", "agui", b"".join(map(agui.encode, events))))
            ai_body = b"".join(map(ai.encode, events)) + ai.close()
            out.append((f"encoded-ai-sdk/{name}", "ai-sdk", ai_body))
    return out


# -- mutations --------------------------------------------------------------------------------
def _first(events: Events, *types: str) -> int | None:
    return next((i for i, e in enumerate(events) if e.get("type") in types), None)


def _drop_end(events: Events) -> Events | None:
    i = _first(
        events, "TEXT_MESSAGE_END", "TOOL_CALL_END", "REASONING_MESSAGE_END", "STEP_FINISHED"
    )
    return None if i is None else events[:i] + events[i + 1 :]


def _dup_start(events: Events) -> Events | None:
    i = _first(events, "TEXT_MESSAGE_START", "TOOL_CALL_START", "REASONING_MESSAGE_START",
               "text-start")  # fmt: skip
    return None if i is None else [*events[: i + 1], events[i], *events[i + 1 :]]


def _args_after_end(events: Events) -> Events | None:
    i = _first(events, "TOOL_CALL_END")
    if i is None:
        return None
    stray = {"type": "TOOL_CALL_ARGS", "toolCallId": events[i]["toolCallId"], "delta": "{}"}
    return [*events[: i + 1], stray, *events[i + 1 :]]


def _content_after_end(events: Events) -> Events | None:
    i = _first(events, "TEXT_MESSAGE_END")
    if i is None:
        return None
    more = {"type": "TEXT_MESSAGE_CONTENT", "messageId": events[i]["messageId"], "delta": " more"}
    return [*events[: i + 1], more, *events[i + 1 :]]


def _set_field(types: tuple[str, ...], key: str, value: Any) -> Callable[[Events], Events | None]:
    def mutate(events: Events) -> Events | None:
        i = _first(events, *types)
        if i is None:
            return None
        return [*events[:i], {**events[i], key: value}, *events[i + 1 :]]

    return mutate


def _del_field(types: tuple[str, ...], key: str) -> Callable[[Events], Events | None]:
    def mutate(events: Events) -> Events | None:
        i = _first(events, *types)
        if i is None or key not in events[i]:
            return None
        return [*events[:i], {k: v for k, v in events[i].items() if k != key}, *events[i + 1 :]]

    return mutate


def _insert(at: str, event: dict[str, Any]) -> Callable[[Events], Events | None]:
    def mutate(events: Events) -> Events | None:
        if not events:
            return None
        i = {"start": 0, "second": 1, "end": len(events), "before-end": len(events) - 1}[at]
        return [*events[:i], event, *events[i:]]

    return mutate


def _drop_last(events: Events) -> Events | None:
    return events[:-1] if len(events) > 1 else None


def _to_chunks(events: Events) -> Events | None:
    out, changed = [], False
    for e in events:
        if e["type"] == "TEXT_MESSAGE_START":
            changed = True
            continue
        if e["type"] == "TEXT_MESSAGE_CONTENT":
            out.append(
                {"type": "TEXT_MESSAGE_CHUNK", "messageId": e["messageId"], "delta": e["delta"]}
            )
        elif e["type"] != "TEXT_MESSAGE_END":
            out.append(e)
    return out if changed else None


def _interleaved_tool_chunks(events: Events) -> Events | None:
    i = _first(events, "RUN_FINISHED")
    if i is None:
        return None
    chunks = [
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "ca", "toolCallName": "a", "delta": '{"x":'},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "cb", "toolCallName": "b", "delta": '{"y":'},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "ca", "delta": "1}"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "cb", "delta": "2}"},
    ]
    return events[:i] + chunks + events[i:]


def _to_thinking(events: Events) -> Events | None:
    names = {"REASONING_START": "THINKING_START", "REASONING_END": "THINKING_END",
             "REASONING_MESSAGE_START": "THINKING_TEXT_MESSAGE_START",
             "REASONING_MESSAGE_CONTENT": "THINKING_TEXT_MESSAGE_CONTENT",
             "REASONING_MESSAGE_END": "THINKING_TEXT_MESSAGE_END"}  # fmt: skip
    if _first(events, *names) is None:
        return None
    out = []
    for e in events:
        if e["type"] in names:
            e = {k: v for k, v in e.items() if k not in ("messageId", "role")}
            e["type"] = names[e["type"]]
        out.append(e)
    return out


AGUI_MUTATIONS: dict[str, Callable[[Events], Events | None]] = {
    "dropped-end": _drop_end,
    "duplicated-start": _dup_start,
    "args-after-end": _args_after_end,
    "content-after-end": _content_after_end,
    "no-terminal-event": _drop_last,
    "null-parent-message-id": _set_field(("TOOL_CALL_START",), "parentMessageId", None),
    "null-role": _set_field(("TEXT_MESSAGE_START",), "role", None),
    "null-metadata": _set_field(("TEXT_MESSAGE_START", "TOOL_CALL_START"), "metadata", None),
    "null-raw-event": _set_field(("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS"), "rawEvent", None),
    "null-outcome": _set_field(("RUN_FINISHED",), "outcome", None),
    "null-usage": _set_field(("RUN_FINISHED",), "usage", None),
    "float-timestamp": _set_field(("RUN_STARTED",), "timestamp", 1.5),
    "integral-float-timestamp": _set_field(("RUN_STARTED",), "timestamp", 1700000000.0),
    "number-delta": _set_field(("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS"), "delta", 7),
    "missing-message-id": _del_field(("TEXT_MESSAGE_CONTENT",), "messageId"),
    "unknown-field": _set_field(("TEXT_MESSAGE_START", "TOOL_CALL_START"), "vendorExtra", {"a": 1}),
    "proto-key": _set_field(("RUN_FINISHED",), "metadata", json.loads('{"__proto__": {"x": 1}}')),
    "unknown-type": _insert("second", {"type": "VENDOR_PROGRESS", "pct": 5}),
    "event-before-run-started": _insert("start", {"type": "STEP_STARTED", "stepName": "early"}),
    "event-after-run-finished": _insert("end", {"type": "CUSTOM", "name": "late", "value": 1}),
    "second-run-started": _insert("second", {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
    "step-finished-not-started": _insert("before-end", {"type": "STEP_FINISHED", "stepName": "x"}),
    "unknown-message-role": _insert(
        "second",
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m0", "role": "wizard", "content": "x"}]},
    ),
    "tool-result-unknown-call": _insert(
        "before-end",
        {"type": "TOOL_CALL_RESULT", "messageId": "res-x", "toolCallId": "never", "content": "1"},
    ),
    "text-as-chunks": _to_chunks,
    "interleaved-tool-chunks": _interleaved_tool_chunks,
    "thinking-events": _to_thinking,
}
"""AG-UI mutations on a list of wire events; None when the stream has nothing to mutate."""


def _byte_mutations() -> dict[str, Callable[[bytes], bytes | None]]:
    def crlf(body: bytes) -> bytes | None:
        return body.replace(b"\n", b"\r\n")

    def missing_blank_line(body: bytes) -> bytes | None:
        return body.replace(b"\n\n", b"\n", 1) if body.count(b"\n\n") > 2 else None

    def no_final_blank_line(body: bytes) -> bytes | None:
        return body[:-1] if body.endswith(b"\n\n") else None

    def done_line(body: bytes) -> bytes | None:
        return body + b"data: [DONE]\n\n"

    def empty_data(body: bytes) -> bytes | None:
        i = body.find(b"\n\n")
        return body[: i + 2] + b"data:\n\n" + body[i + 2 :] if i > 0 else None

    def comments_and_ids(body: bytes) -> bytes | None:
        return b": keep-alive\n\n" + body.replace(b"data: ", b"id: 1\nevent: x\ndata: ", 3)

    def bom(body: bytes) -> bytes | None:
        return b"\xef\xbb\xbf" + body

    def multiline_data(body: bytes) -> bytes | None:
        return body.replace(b',"', b',\ndata: "', 2)

    return {
        "crlf-framing": crlf,
        "missing-blank-line": missing_blank_line,
        "missing-final-blank-line": no_final_blank_line,
        "done-sentinel": done_line,
        "empty-data-event": empty_data,
        "comments-ids-event-lines": comments_and_ids,
        "leading-bom": bom,
        "multi-line-data": multiline_data,
    }


BYTE_MUTATIONS = _byte_mutations()
"""Framing mutations, for both protocols."""


def _ai_drop_first(ctype: str) -> Callable[[Events], Events | None]:
    def mutate(chunks: Events) -> Events | None:
        i = _first(chunks, ctype)
        return None if i is None else chunks[:i] + chunks[i + 1 :]

    return mutate


def _ai_open_over_finish_step(later_delta: bool) -> Callable[[Events], Events | None]:
    def mutate(chunks: Events) -> Events | None:
        i, f = _first(chunks, "text-end"), _first(chunks, "finish-step")
        if i is None or f is None or f < i:
            return None
        end = chunks[i]
        rest = chunks[:i] + chunks[i + 1 :]
        f -= 1
        tail = [{"type": "start-step"}, {"type": "text-delta", "id": end["id"], "delta": "!"}, end,
                {"type": "finish-step"}] if later_delta else []  # fmt: skip
        return rest[: f + 1] + tail + rest[f + 1 :]

    return mutate


def _ai_error_then_more(chunks: Events) -> Events | None:
    i = _first(chunks, "finish")
    if i is None:
        return None
    return [*chunks[:i], {"type": "error", "errorText": "boom"}, *chunks[i:]]


AI_SDK_MUTATIONS: dict[str, Callable[[Events], Events | None]] = {
    "delta-without-start": _ai_drop_first("text-start"),
    "reasoning-delta-without-start": _ai_drop_first("reasoning-start"),
    "tool-delta-without-start": _ai_drop_first("tool-input-start"),
    "text-open-over-finish-step": _ai_open_over_finish_step(False),
    "text-delta-after-finish-step": _ai_open_over_finish_step(True),
    "error-then-more-chunks": _ai_error_then_more,
    "proto-key": _set_field(("start",), "messageMetadata", json.loads('{"__proto__": {"a": 1}}')),
    "unknown-type": _insert("second", {"type": "vendor-progress", "pct": 1}),
    "finish-reason-unknown": _set_field(("finish",), "finishReason", "unknown"),
    "finish-reason-interrupted": _set_field(("finish",), "finishReason", "interrupted"),
    "input-key-missing": _del_field(("tool-input-available",), "input"),
    "input-null": _set_field(("tool-input-available",), "input", None),
    "output-unknown-call": _insert(
        "before-end", {"type": "tool-output-available", "toolCallId": "nope", "output": 1}
    ),
    "approval-request": _insert(
        "before-end", {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "nope"}
    ),
    "reset-step": _insert("before-end", {"type": "reset-step"}),
    "data-part": _insert("second", {"type": "data-weather", "data": {"t": 20}}),
    "data-part-without-data": _insert("second", {"type": "data-weather", "id": "w"}),
    "number-delta": _set_field(("text-delta",), "delta", 3),
    "message-metadata-missing": _insert("before-end", {"type": "message-metadata"}),
    "duplicate-text-start": _dup_start,
}
"""AI SDK mutations on a list of chunk objects."""


def mutants(good: list[Stream]) -> Iterator[Stream]:
    """Apply every mutation to the first good streams of each protocol that it changes."""
    per_protocol = {"agui": AGUI_MUTATIONS, "ai-sdk": AI_SDK_MUTATIONS}
    for protocol, table in per_protocol.items():
        bases = [(n, b) for n, p, b in good if p == protocol and not n.startswith("raw/")]
        for mname, mutate in table.items():
            made = 0
            for name, body in bases:
                events = _objects(body)
                if events is None:
                    continue
                changed = mutate(events)
                if changed is None:
                    continue
                yield (f"mutant/{protocol}/{mname}/{name}", protocol,
                       frame(changed, done=protocol == "ai-sdk"))  # fmt: skip
                made += 1
                if made == 2:
                    break
        for mname, bmutate in BYTE_MUTATIONS.items():
            for name, body in bases[:2]:
                changed_body = bmutate(body)
                if changed_body is not None:
                    yield (f"mutant/{protocol}/{mname}/{name}", protocol, changed_body)


# -- one witness per rule ------------------------------------------------------------------------
_RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
_RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
_TS = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
_TC = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}
_TE = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
_CS = {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"}
_CA = {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}
_CE = {"type": "TOOL_CALL_END", "toolCallId": "c"}


def _sub(sid: str, **extra: Any) -> dict[str, Any]:
    return {"type": "SUBAGENT_STARTED", "subagentRunId": sid, "name": "n", **extra}


def _run(*events: dict[str, Any]) -> bytes:
    return frame([_RS, *events, _RF])


def _msg(*chunks: dict[str, Any]) -> bytes:
    return frame([{"type": "start"}, *chunks, {"type": "finish"}], done=True)


AGUI_WITNESSES: dict[str, bytes] = {
    "agui/sse/invalid-json": b"data: {nope\n\n",
    "agui/sse/not-an-object": b"data: 1\n\n",
    "agui/sse/missing-type": b'data: {"x":1}\n\n',
    "agui/sse/crlf-line-endings": frame([{"type": "RUN_ERROR", "message": "x"}]).replace(b"\n", b"\r\n"),
    "agui/sse/unterminated-last-event": _run()[:-2],
    "agui/compat/thinking-event": _run({"type": "THINKING_START"}, {"type": "THINKING_END"}),
    "agui/schema/unknown-event-type": _run({"type": "NOT_A_TYPE"}),
    "agui/schema/unknown-field": _run({"type": "CUSTOM", "name": "n", "value": 1, "extra": 2}),
    "agui/schema/unknown-union-member": _run({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "x", "role": "alien"}]}),
    "agui/schema/null-field": _run({**_TS, "name": None}, _TE),
    "agui/schema/missing-field": _run({"type": "TEXT_MESSAGE_START"}),
    "agui/schema/invalid-field": _run({**_TS, "role": "robot"}, _TE),
    "agui/chunks/first-chunk-without-id": _run({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}),
    "agui/chunks/first-tool-chunk-without-name": _run({"type": "TOOL_CALL_CHUNK", "toolCallId": "c"}),
    "agui/chunks/field-disagrees-with-opener": _run(
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "g"},
    ),
    "agui/chunks/ambiguous-continuation": _run(
        _sub("s1"), _sub("s2"),
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "x", "subagentRunId": "s1"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "b", "delta": "x", "subagentRunId": "s2"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "x"},
    ),
    "agui/chunks/subagent-mismatch": _run(
        _sub("s1"), _sub("s2"),
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "x", "subagentRunId": "s1"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "y", "subagentRunId": "s2"},
    ),
    "agui/chunks/interleaved": _run(
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f", "delta": "{"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "b", "toolCallName": "g", "delta": "{"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f", "delta": "}"},
    ),
    "agui/hygiene/no-terminal-event": frame([_RS]),
    "agui/hygiene/tool-args-not-json": _run(_CS, {**_CA, "delta": "{oops"}, _CE),
    "agui/hygiene/tool-call-without-args": _run(_CS, _CE),
    "agui/hygiene/tool-result-unknown-call": _run({"type": "TOOL_CALL_RESULT", "messageId": "r1",
                                                   "toolCallId": "zz", "content": "1"}),
    "agui/hygiene/parent-message-unknown": _run({**_CS, "parentMessageId": "ghost"}, _CA, _CE),
    "agui/hygiene/id-shared-across-kinds": _run(_TS, _TE, {**_CS, "toolCallId": "m"},
                                                {**_CE, "toolCallId": "m"}),
    "agui/hygiene/id-reopened": _run(_TS, _TE, _TS, _TE),
    "agui/hygiene/null-optional-field": _run({**_CS, "parentMessageId": None}, _CA, _CE),
    "agui/hygiene/open-at-run-error": frame([_RS, _TS, {"type": "RUN_ERROR", "message": "x"}]),
    "agui/hygiene/missing-protocol-version": frame([{k: v for k, v in _RS.items() if k != "protocolVersion"}, _RF]),
    "agui/hygiene/protocol-version-newer": frame([{**_RS, "protocolVersion": "1.1"}, _RF]),
    "agui/hygiene/protocol-version-uninterpretable": frame([{**_RS, "protocolVersion": "draft"}, _RF]),
    "agui/hygiene/state-patch-failed": _run({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
                                            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/b/c", "value": 2}]}),
    "agui/hygiene/run-error-after-finished": frame([_RS, _RF, {"type": "RUN_ERROR", "message": "x"}]),
    "agui/hygiene/timestamp-in-seconds": _run({"type": "CUSTOM", "name": "n", "value": 1, "timestamp": 1700000000}),
    "agui/hygiene/snapshot-renames-message": _run(_TS, _TC, _TE, {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "m-renamed", "role": "assistant", "content": "x"}]}),
    "agui/sse/line-without-data": b'event: x\nDATA: {"type": "CUSTOM"}\n' + _run(),
    "agui/sse/invalid-utf8": _run(_TS, {**_TC, "delta": "zz"}, _TE).replace(b'"zz"', b'"\xffz"'),
    "agui/lifecycle/run-id-mismatch": frame([_RS, {**_RF, "runId": "r-other"}]),
    "agui/lifecycle/thread-id-mismatch": frame([_RS, {**_RF, "threadId": "t-other"}]),
    "agui/lifecycle/second-thread": frame([_RS, _RF, {**_RS, "threadId": "t2", "runId": "r2"},
                                           {**_RF, "threadId": "t2", "runId": "r2"}]),
    "agui/lifecycle/duplicate-interrupt-id": frame([_RS, {**_RF, "outcome": {"type": "interrupt", "interrupts": [
        {"id": "i1", "reason": "approval"}, {"id": "i1", "reason": "approval"}]}}]),
    "agui/verify/first-event-not-run-started": frame([_TS, _TE]),
    "agui/verify/run-started-while-active": frame([_RS, _RS, _RF]),
    "agui/verify/event-after-run-finished": frame([_RS, _RF, _TS]),
    "agui/verify/event-after-run-error": frame([_RS, {"type": "RUN_ERROR", "message": "x"}, _TS]),
    "agui/verify/run-finished-while-open": _run(_TS),
    "agui/verify/text-start-already-open": _run(_TS, _TS),
    "agui/verify/text-content-without-start": _run(_TC),
    "agui/verify/text-end-without-start": _run(_TE),
    "agui/verify/tool-start-already-open": _run(_CS, _CS),
    "agui/verify/tool-args-without-start": _run(_CA),
    "agui/verify/tool-end-without-start": _run(_CE),
    "agui/verify/reasoning-start-already-open": _run(*[{"type": "REASONING_START", "messageId": "r"}] * 2),
    "agui/verify/reasoning-end-without-start": _run({"type": "REASONING_END", "messageId": "r"}),
    "agui/verify/reasoning-message-start-already-open": _run(
        *[{"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"}] * 2
    ),
    "agui/verify/reasoning-message-content-without-start": _run(
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "x"}
    ),
    "agui/verify/reasoning-message-end-without-start": _run({"type": "REASONING_MESSAGE_END", "messageId": "r"}),
    "agui/verify/step-already-active": _run(*[{"type": "STEP_STARTED", "stepName": "s"}] * 2),
    "agui/verify/step-finished-not-started": _run({"type": "STEP_FINISHED", "stepName": "s"}),
    "agui/verify/step-finished-by-other-owner": _run(
        _sub("s1"), {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "STEP_FINISHED", "stepName": "s", "subagentRunId": "s1"},
    ),
    "agui/verify/subagent-already-active": _run(_sub("s1"), _sub("s1")),
    "agui/verify/subagent-id-reused": _run(_sub("s1"), {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"},
                                           _sub("s1")),
    "agui/verify/subagent-parent-unknown": _run(_sub("s1", parentSubagentRunId="p")),
    "agui/verify/subagent-not-active": _run({"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"}),
    "agui/verify/subagent-owner-mismatch": _run(_sub("s1"), _TS, {**_TC, "subagentRunId": "s1"}),
}  # fmt: skip
"""A minimal AG-UI stream for each rule the wire can reach (rules reachable only in-process,
``subagent-field-invalid`` and ``null-subagent-run-id``, are caught by the schema first)."""

AI_SDK_WITNESSES: dict[str, tuple[int, bytes]] = {
    "ai-sdk/sse/invalid-json": (7, b"data: {nope\n\n"),
    "ai-sdk/sse/proto-key": (7, _msg({"type": "data-x", "data": json.loads('{"__proto__": 1}')})),
    "ai-sdk/sse/unterminated-last-event": (7, _msg()[:-1]),
    "ai-sdk/sse/ignored-line": (7, b"junk\n" + _msg()),
    "ai-sdk/sse/invalid-utf8": (7, _msg({"type": "text-start", "id": "t"}, {"type": "text-delta", "id": "t", "delta": "zz"},
                                        {"type": "text-end", "id": "t"}).replace(b'"zz"', b'"\xffz"')),
    "ai-sdk/sse/missing-done": (7, frame([{"type": "start"}, {"type": "finish"}])),
    "ai-sdk/schema/unknown-type": (5, _msg({"type": "tool-output-denied", "toolCallId": "c"})),
    "ai-sdk/schema/invalid-chunk": (7, _msg({"type": "tool-input-available", "toolCallId": "c",
                                             "toolName": "f"})),
    "ai-sdk/schema/unsupported-finish-reason": (6, frame([{"type": "finish", "finishReason": "interrupted"}], done=True)),
    "ai-sdk/stream/chunks-after-error": (7, _msg({"type": "error", "errorText": "x"})),
    "ai-sdk/hygiene/part-open-at-finish-step": (7, _msg({"type": "start-step"}, {"type": "text-start", "id": "t"},
                                                       {"type": "finish-step"})),
    "ai-sdk/hygiene/part-never-ended": (7, _msg({"type": "text-start", "id": "t"})),
    "ai-sdk/hygiene/finish-reason-not-portable": (7, frame([{"type": "finish", "finishReason": "interrupted"}], done=True)),
    "ai-sdk/hygiene/duplicate-part-id": (7, _msg(*[{"type": "text-start", "id": "t"}] * 2, {"type": "text-end", "id": "t"})),
    "ai-sdk/hygiene/no-start": (7, frame([{"type": "finish"}], done=True)),
    "ai-sdk/hygiene/no-finish": (7, frame([{"type": "start"}], done=True)),
    "ai-sdk/stream/text-delta-without-start": (7, _msg({"type": "text-delta", "id": "t", "delta": "x"})),
    "ai-sdk/stream/text-end-without-start": (7, _msg({"type": "text-end", "id": "t"})),
    "ai-sdk/stream/reasoning-delta-without-start": (7, _msg({"type": "reasoning-delta", "id": "r", "delta": "x"})),
    "ai-sdk/stream/reasoning-end-without-start": (7, _msg({"type": "reasoning-end", "id": "r"})),
    "ai-sdk/stream/tool-input-delta-without-start": (7, _msg({"type": "tool-input-delta", "toolCallId": "c",
                                                              "inputTextDelta": "{"})),
    "ai-sdk/stream/tool-chunk-for-unknown-call": (7, _msg({"type": "tool-output-available", "toolCallId": "c",
                                                           "output": 1})),
    "ai-sdk/stream/approval-response-for-unknown-approval": (7, _msg({"type": "tool-approval-response",
                                                                      "approvalId": "a", "approved": True})),
    "ai-sdk/stream/message-metadata-not-mergeable": (7, frame([{"type": "start", "messageMetadata": 1},
                                                               {"type": "message-metadata", "messageMetadata": [1]}],
                                                              done=True)),
}  # fmt: skip
"""A minimal AI SDK stream (and the major it targets) for each AI SDK rule."""


def witness_streams() -> list[Stream]:
    """The witnesses as differential streams (replayed through every client of the protocol)."""
    out = [(f"witness/{rule}", "agui", body) for rule, body in AGUI_WITNESSES.items()]
    return out + [
        (f"witness/{rule}", "ai-sdk", body) for rule, (_, body) in AI_SDK_WITNESSES.items()
    ]
