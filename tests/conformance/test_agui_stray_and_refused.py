"""The ``agui`` decoder drops nothing it cannot place (issue 11, "drops and leftovers").

Rule (``docs/protocols.md`` §2, the module docstring of ``agui_codecs.protocols.agui.decoder``):
a repair reorders or holds, it never drops; bad input gets a typed error with a code, open
parts closed first. Two former drops:

* TOOL_CALL_ARGS for a call not opened (``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts``
  rejects them: "no tool call in progress"), and a TOOL_CALL_CHUNK with a delta that cannot
  open its call (``src/chunks/transform.ts`` needs ``toolCallName`` on the first chunk): held
  until the call's TOOL_CALL_START; if it never comes, RUN_FINISHED becomes RUN_ERROR
  ``UPSTREAM_MALFORMED`` naming the calls, the held events in ``metadata.unsent``.
* an event the verifier still refuses (a SUBAGENT_STARTED naming a parent that never started,
  or reusing an id): RUN_ERROR ``UPSTREAM_PROTOCOL_ERROR`` ``agui/verify/<fault>``, the event
  in ``metadata.unsent``.

The generator mixes normal calls, calls whose ARGS come before their START, calls never
started, nameless chunk streams named later, a text message, refused subagent events and cut
streams. Properties: every text and argument byte and every result the decoder read reaches
the output or the typed RUN_ERROR's ``metadata.unsent`` (in order, once); the RUN_ERROR says
which calls; the kit and the real client accept the output.
"""

from __future__ import annotations

from typing import Any

import diffcorpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.events import event_to_wire, parse_event
from agui_codecs.protocols.agui._normalizer import HOLD_STRAY_BYTES
from agui_codecs.protocols.agui.decoder import AguiDecoder
from conformance import check_bytes

Wire = dict[str, Any]
RS: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
RF: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
PIECE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=5)
MODES = ("normal", "late-start", "never-started", "nameless-chunks")


def _arg(cid: str, delta: str) -> Wire:
    return {"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": delta}


@st.composite
def call_events(draw: st.DrawFn, cid: str) -> list[Wire]:
    """One call's events in its own order, by mode."""
    mode = draw(st.sampled_from(MODES))
    pieces = draw(st.lists(PIECE, min_size=1, max_size=4))
    result = {"type": "TOOL_CALL_RESULT", "messageId": f"{cid}-res", "toolCallId": cid,
              "content": draw(PIECE)}  # fmt: skip
    start = {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": f"f{cid}"}
    end = {"type": "TOOL_CALL_END", "toolCallId": cid}
    args = [_arg(cid, p) for p in pieces]
    if mode == "never-started":
        return args
    if mode == "nameless-chunks":  # the name comes on a later chunk
        named = draw(st.integers(1, len(pieces)))
        chunks = [{"type": "TOOL_CALL_CHUNK", "toolCallId": cid, "delta": p} for p in pieces]
        if named == len(pieces):
            chunks.append({"type": "TOOL_CALL_CHUNK", "toolCallId": cid, "toolCallName": f"f{cid}"})
        else:
            chunks[named]["toolCallName"] = f"f{cid}"
        return chunks
    at = draw(st.integers(1, len(pieces))) if mode == "late-start" else 0
    body = [*args[:at], start, *args[at:], end]
    if draw(st.booleans()):
        body.append(result)
    return body


@st.composite
def interleaved(draw: st.DrawFn, seqs: list[list[Wire]]) -> list[Wire]:
    """A random merge of ``seqs`` keeping each one's order."""
    rest = [list(s) for s in seqs if s]
    out: list[Wire] = []
    while rest:
        i = draw(st.integers(0, len(rest) - 1))
        out.append(rest[i].pop(0))
        rest = [s for s in rest if s]
    return out


REFUSED = st.sampled_from(
    [
        [
            {
                "type": "SUBAGENT_STARTED",
                "subagentRunId": "s1",
                "name": "a",
                "parentSubagentRunId": "never",
            }
        ],
        [
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s2", "name": "a"},
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s2"},
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s2", "name": "a"},
        ],
    ]
)


@st.composite
def streams(draw: st.DrawFn) -> list[Wire]:
    """RUN_STARTED, maybe text, calls of every mode interleaved, maybe a refused event, and
    RUN_FINISHED unless the stream is cut."""
    calls = [draw(call_events(f"c{i}")) for i in range(draw(st.integers(1, 4)))]
    if draw(st.booleans()):
        pieces = draw(st.lists(PIECE, min_size=1, max_size=3))
        calls.append(
            [
                {"type": "TEXT_MESSAGE_START", "messageId": "m0", "role": "assistant"},
                *({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m0", "delta": p} for p in pieces),
                {"type": "TEXT_MESSAGE_END", "messageId": "m0"},
            ]
        )
    if draw(st.booleans()):
        calls.append(draw(REFUSED))
    body = draw(interleaved(calls))
    return [RS, *body, *([RF] if draw(st.booleans()) or not body else [])]


def _decode(events: list[Wire]) -> tuple[list[Wire], AguiDecoder, int]:
    """The output, the decoder, and how many input events it read before its run ended."""
    decoder = AguiDecoder()
    out, read = [], len(events)
    for n, event in enumerate(events):
        out += decoder.feed(diffcorpus.frame([event]))
        if decoder.run.ended:
            read = n + 1
            break
    out += decoder.close()
    return [event_to_wire(e) for e in out], decoder, read


def _data(events: list[Wire]) -> tuple[dict[str, str], str, list[tuple[str, str]]]:
    """Arguments by call, text, results."""
    args: dict[str, str] = {}
    for e in events:
        if e["type"] in ("TOOL_CALL_ARGS", "TOOL_CALL_CHUNK") and e.get("delta"):
            args[e["toolCallId"]] = args.get(e["toolCallId"], "") + e["delta"]
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    results = sorted(
        (e["toolCallId"], e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"
    )
    return args, text, results


def _check(events: list[Wire]) -> list[Wire]:
    out, _decoder, read = _decode(events)
    last = out[-1]
    unsent = (last.get("metadata") or {}).get("unsent", [])
    kept = _data(out + unsent)
    assert kept == _data(events[:read])  # every byte read: sent, or carried by the typed error
    never = [e["toolCallId"] for e in unsent if e["type"] == "TOOL_CALL_ARGS"]
    if never:
        assert last["type"] == "RUN_ERROR"
        assert last["code"] in (
            "UPSTREAM_MALFORMED",
            "UPSTREAM_TRUNCATED",
            "UPSTREAM_PROTOCOL_ERROR",
        )
        assert all(repr(cid) in last["message"] for cid in never), last["message"]
    refused = [e for e in unsent if e["type"].startswith("SUBAGENT_")]
    if refused:
        assert last["type"] == "RUN_ERROR" and last["code"] == "UPSTREAM_PROTOCOL_ERROR"
        assert last["metadata"]["rule"].startswith("agui/verify/subagent-")
        assert last["message"].startswith(last["metadata"]["rule"])
    if last["type"] == "RUN_FINISHED":
        assert not unsent and read == len(events)
    sent_args = _data(out)[0]
    for cid in sent_args:  # arguments only inside their call: START < ARGS < END < RESULT
        kinds = [e["type"] for e in out if e.get("toolCallId") == cid]
        assert kinds[0] == "TOOL_CALL_START" and kinds.count("TOOL_CALL_START") == 1
        end = kinds.index("TOOL_CALL_END")
        assert "TOOL_CALL_ARGS" not in kinds[end:] and "TOOL_CALL_RESULT" not in kinds[:end]
    report = check_bytes(diffcorpus.frame(out), protocol="agui")
    assert not report.rejected, [v.to_json() for v in report.errors]
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_stray_arguments_and_refused_events_are_placed_or_carried_by_a_typed_error(
    events: list[Wire],
) -> None:
    _check(events)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.data_too_large])  # fmt: skip
@given(st.lists(streams(), min_size=40, max_size=40))
def test_the_real_client_accepts_the_output_with_every_sent_argument(
    batch: list[list[Wire]],
) -> None:
    require_harness()
    jobs, expected = [], {}
    for n, events in enumerate(batch):
        out = _check(events)
        body = b"".join(AguiEncoder().encode(parse_event(e)) for e in out)
        jobs.append((f"s{n}", "agui", body))
        expected[f"s{n}"] = _data(out)
    results = replay(jobs)
    for job, (args, _, tool_results) in expected.items():
        result = results[job]
        assert result["accepted"], (job, result["error"])
        calls = {c["id"]: c["function"]["arguments"]
                 for m in result["messages"] for c in m.get("toolCalls") or []}  # fmt: skip
        assert {k: v for k, v in calls.items() if v} == args, job
        got = sorted((m["toolCallId"], m["content"]) for m in result["messages"]
                     if m["role"] == "tool")  # fmt: skip
        assert got == tool_results, job


# -- the cases one by one ----------------------------------------------------------------------
def _start(cid: str) -> Wire:
    return {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": "f"}


def _end(cid: str) -> Wire:
    return {"type": "TOOL_CALL_END", "toolCallId": cid}


def test_arguments_before_their_start_follow_the_start() -> None:
    out, decoder, _ = _decode([RS, _arg("a", '{"ci'), _start("a"), _arg("a", 'ty":1}'),
                               _end("a"), RF])  # fmt: skip
    assert [e["type"] for e in out] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]  # fmt: skip
    assert _data(out)[0] == {"a": '{"city":1}'}
    assert decoder.repairs["stray-tool-args-held"] == 1
    assert "unsent" not in out[-1]["metadata"]


def test_arguments_of_a_call_never_started_end_the_run_with_a_typed_error() -> None:
    out, decoder, _ = _decode([RS, _start("b"), _arg("x", '{"q":"kept"}'), _arg("b", "{}"),
                               _end("b"), RF])  # fmt: skip
    assert [e["type"] for e in out] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS",
        "TOOL_CALL_END", "RUN_ERROR"]  # fmt: skip
    error = out[-1]
    assert error["code"] == "UPSTREAM_MALFORMED" and "'x' (12 bytes)" in error["message"]
    assert error["metadata"]["unsent"] == [_arg("x", '{"q":"kept"}'), RF]
    assert decoder.error is not None and decoder.error.code == "UPSTREAM_MALFORMED"


def test_a_cut_stream_carries_the_held_arguments_in_its_error() -> None:
    out, _, _ = _decode([RS, _arg("x", "{}")])
    assert out[-1]["code"] == "UPSTREAM_TRUNCATED"
    assert out[-1]["metadata"]["unsent"] == [_arg("x", "{}")]


def test_an_upstream_run_error_keeps_its_code_and_carries_the_held_arguments() -> None:
    failed = {"type": "RUN_ERROR", "message": "boom", "code": "RATE_LIMITED"}
    out, _, _ = _decode([RS, _arg("x", "{}"), failed])
    assert (out[-1]["code"], out[-1]["message"]) == ("RATE_LIMITED", "boom")
    assert out[-1]["metadata"]["unsent"] == [_arg("x", "{}")]


def test_a_nameless_tool_chunk_waits_for_the_chunk_that_names_it() -> None:
    chunk = {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "delta": '{"x"'}
    named = {"type": "TOOL_CALL_CHUNK", "toolCallId": "a", "toolCallName": "f", "delta": ":1}"}
    out, decoder, _ = _decode([RS, chunk, named, RF])
    assert out[-1]["type"] == "RUN_FINISHED"
    assert _data(out)[0] == {"a": '{"x":1}'}
    assert decoder.repairs["stray-tool-args-held"] == 1


def test_stray_arguments_past_the_hold_bound_end_the_run_with_a_typed_error() -> None:
    big = "x" * (HOLD_STRAY_BYTES // 2 + 1)
    out, _, read = _decode([RS, _arg("x", big), _arg("y", big), _arg("z", "{}"), RF])
    assert read == 3 and out[-1]["code"] == "UPSTREAM_MALFORMED"
    assert [e["delta"] for e in out[-1]["metadata"]["unsent"]] == [big, big]


def test_a_refused_event_ends_the_run_after_closing_what_is_open() -> None:
    sub = {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "a",
           "parentSubagentRunId": "never"}  # fmt: skip
    text = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}
    out, decoder, read = _decode([RS, text, sub, RF])
    assert [e["type"] for e in out] == ["RUN_STARTED", "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_ERROR"]  # fmt: skip
    error = out[-1]
    assert error["code"] == "UPSTREAM_PROTOCOL_ERROR"
    assert error["message"].startswith("agui/verify/subagent-parent-unknown: ")
    assert error["metadata"]["rule"] == "agui/verify/subagent-parent-unknown"
    assert error["metadata"]["eventType"] == "SUBAGENT_STARTED"
    assert error["metadata"]["unsent"] == [sub]
    assert read == 3 and decoder.error is not None
