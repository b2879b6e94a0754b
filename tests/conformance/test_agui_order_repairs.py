"""Order repairs of the ``agui`` decoder hold and reorder, never drop (issue 11, kind 2).

The upstream fault: pydantic-ai 2.68 (``docs/conformance.md``, scenario ``parallel-tools``)
ends call A when call B's first delta arrives and sends A's remaining TOOL_CALL_ARGS after A's
TOOL_CALL_END; ``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts`` rejects such ARGS ("no tool
call in progress"). Other upstreams send a TOOL_CALL_RESULT while its call's arguments still
stream, or text content after its TEXT_MESSAGE_END.

The generator builds random interleavings of parallel calls' START / ARGS / END / RESULT with
ARGS after END, results during the arguments and late text content. Properties: every text
and argument byte and every result of the input reaches the output exactly once and in order,
the kit accepts the output, and the real client accepts it with the same arguments (batched:
many generated streams per Node invocation). Calls come as START / ARGS / END or as
TOOL_CALL_CHUNKs, which the normalizer expands with the client's own
:class:`~agui_codecs.core.chunks.ChunkExpander` (issue 10): a chunk stream another call's
events closed is adopted again when its chunks go on.
"""

from __future__ import annotations

import json
from typing import Any

import diffcorpus
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.errors import MalformedUpstreamError
from agui_codecs.events import event_to_wire, parse_event
from agui_codecs.protocols.agui._normalizer import HOLD_EVENTS, HOLD_RESULT_BYTES
from agui_codecs.protocols.agui.decoder import AguiDecoder, AguiNormalizer
from conformance import check_bytes

Wire = dict[str, Any]
RS: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
RF: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
PIECE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=5)


@st.composite
def call_events(draw: st.DrawFn, cid: str) -> list[Wire]:
    """One call's events in its own order: START, its ARGS with the END at a random place
    among them (the ARGS after it are late), and maybe a RESULT before the END (during the
    arguments) or after everything."""
    pieces = draw(st.lists(PIECE, min_size=1, max_size=4))
    end_at = draw(st.integers(0, len(pieces)))
    args = [{"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": p} for p in pieces]
    body: list[Wire] = [*args[:end_at], {"type": "TOOL_CALL_END", "toolCallId": cid}]
    body += args[end_at:]
    result = {"type": "TOOL_CALL_RESULT", "messageId": f"{cid}-res", "toolCallId": cid,
              "content": draw(PIECE)}  # fmt: skip
    where = draw(st.sampled_from(["none", "after", "during"]))
    if where == "after":
        body.append(result)
    elif where == "during":
        body.insert(draw(st.integers(0, end_at)), result)  # before the END
    if draw(st.booleans()):  # the same call as TOOL_CALL_CHUNKs (no END: the lane closes)
        chunks = [{"type": "TOOL_CALL_CHUNK", "toolCallId": cid, "delta": p} for p in pieces]
        chunks[0]["toolCallName"] = f"f{cid}"
        if where != "none":
            at = len(chunks) if where == "after" else draw(st.integers(1, len(chunks)))
            chunks.insert(at, result)
        return chunks
    return [{"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": f"f{cid}"}, *body]


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


@st.composite
def text_events(draw: st.DrawFn, mid: str) -> list[Wire]:
    """A text message whose END comes at a random place among its contents."""
    pieces = draw(st.lists(PIECE, min_size=1, max_size=4))
    end_at = draw(st.integers(1, len(pieces)))
    content = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": p} for p in pieces]
    start = {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}
    return [start, *content[:end_at], {"type": "TEXT_MESSAGE_END", "messageId": mid},
            *content[end_at:]]  # fmt: skip


@st.composite
def streams(draw: st.DrawFn) -> list[Wire]:
    """RUN_STARTED, maybe text, parallel calls interleaved, maybe text, RUN_FINISHED."""
    calls = [draw(call_events(f"c{i}")) for i in range(draw(st.integers(1, 4)))]
    before = draw(st.booleans()) and draw(text_events("m0"))
    after = draw(st.booleans()) and draw(text_events("m1"))
    return [RS, *(before or []), *draw(interleaved(calls)), *(after or []), RF]


def _decode(events: list[Wire]) -> tuple[list[Wire], AguiDecoder]:
    decoder = AguiDecoder()
    out = decoder.feed(diffcorpus.frame(events)) + decoder.close()
    return [event_to_wire(e) for e in out], decoder


def _args(events: list[Wire]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        if e["type"] in ("TOOL_CALL_ARGS", "TOOL_CALL_CHUNK"):
            out[e["toolCallId"]] = out.get(e["toolCallId"], "") + e["delta"]
    return out


def _text(events: list[Wire]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def _results(events: list[Wire]) -> list[tuple[str, str]]:
    return sorted(
        (e["toolCallId"], e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"
    )


def _check(events: list[Wire]) -> list[Wire]:
    out, decoder = _decode(events)
    assert decoder.error is None, decoder.error
    assert out[-1]["type"] == "RUN_FINISHED"
    assert _args(out) == _args(events)
    assert _text(out) == _text(events)
    assert _results(out) == _results(events)
    for cid in _args(events):  # a call's arguments all come before its END, results after it
        kinds = [e["type"] for e in out if e.get("toolCallId") == cid]
        end = kinds.index("TOOL_CALL_END")
        assert "TOOL_CALL_ARGS" not in kinds[end:] and "TOOL_CALL_RESULT" not in kinds[:end]
    report = check_bytes(diffcorpus.frame(out), protocol="agui")
    assert not report.rejected, [v.to_json() for v in report.errors]
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_late_arguments_results_and_content_reach_the_output_exactly_once(
    events: list[Wire],
) -> None:
    _check(events)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.data_too_large])  # fmt: skip
@given(st.lists(streams(), min_size=40, max_size=40))
def test_the_real_client_accepts_the_repaired_streams_with_every_argument(
    batch: list[list[Wire]],
) -> None:
    require_harness()
    jobs, expected = [], {}
    for n, events in enumerate(batch):
        out = _check(events)
        encoder = AguiEncoder()
        body = b"".join(encoder.encode(parse_event(e)) for e in out)
        jobs.append((f"s{n}", "agui", body))
        expected[f"s{n}"] = (_args(events), _results(events))
    results = replay(jobs)
    for job, (args, tool_results) in expected.items():
        result = results[job]
        assert result["accepted"], (job, result["error"])
        calls = {c["id"]: c["function"]["arguments"]
                 for m in result["messages"] for c in m.get("toolCalls") or []}  # fmt: skip
        assert calls == args, job
        got = sorted((m["toolCallId"], m["content"]) for m in result["messages"]
                     if m["role"] == "tool")  # fmt: skip
        assert got == tool_results, job


# -- the cases one by one ----------------------------------------------------------------------
def _start(cid: str) -> Wire:
    return {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": "f"}


def _arg(cid: str, delta: str) -> Wire:
    return {"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": delta}


def _end(cid: str) -> Wire:
    return {"type": "TOOL_CALL_END", "toolCallId": cid}


def test_pydantic_ai_parallel_calls_keep_the_arguments_sent_after_end() -> None:
    """The shape of pydantic-ai's parallel-tools run (docs/conformance.md)."""
    events = [RS, _start("a"), _arg("a", '{"ci'), _end("a"), _start("b"), _arg("b", '{"tz'),
              _arg("a", 'ty":"Paris"}'), _arg("b", '":"CET"}'), _end("b"), RF]  # fmt: skip
    out, decoder = _decode(events)
    assert _args(out) == {"a": '{"city":"Paris"}', "b": '{"tz":"CET"}'}
    assert [e["type"] for e in out][-3:] == ["TOOL_CALL_END", "TOOL_CALL_END", "RUN_FINISHED"]
    assert decoder.repairs == {"late-tool-args-held": 1}
    assert out[-1]["metadata"]["repairs"] == {"late-tool-args-held": 1}


def test_a_result_during_the_arguments_waits_for_the_end() -> None:
    result = {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "a", "content": "ok"}
    out, decoder = _decode([RS, _start("a"), _arg("a", "{"), result, _arg("a", "}"), _end("a"), RF])
    assert [e["type"] for e in out][1:-1] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS",
                                              "TOOL_CALL_END", "TOOL_CALL_RESULT"]  # fmt: skip
    assert decoder.repairs == {"tool-result-held": 1}


def test_text_content_after_its_end_joins_the_message() -> None:
    events = [RS, {"type": "TEXT_MESSAGE_START", "messageId": "m"},
              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"},
              {"type": "TEXT_MESSAGE_END", "messageId": "m"},
              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"}, RF]  # fmt: skip
    out, decoder = _decode(events)
    assert [(e["type"], e.get("delta")) for e in out][1:-1] == [
        ("TEXT_MESSAGE_START", None), ("TEXT_MESSAGE_CONTENT", "a"),
        ("TEXT_MESSAGE_CONTENT", "b"), ("TEXT_MESSAGE_END", None)]  # fmt: skip
    assert decoder.repairs == {"late-content-held": 1}


def test_arguments_after_the_hold_end_the_run_with_a_typed_error() -> None:
    """Past the hold (here: a text message ended the tool phase) the call cannot be
    re-opened: the run ends with RUN_ERROR UPSTREAM_MALFORMED, not a silent drop."""
    text = {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"}
    out, decoder = _decode([RS, _start("a"), _arg("a", "{"), _end("a"), text, _arg("a", "}"), RF])
    assert isinstance(decoder.error, MalformedUpstreamError)
    assert out[-1]["type"] == "RUN_ERROR" and out[-1]["code"] == "UPSTREAM_MALFORMED"
    assert _args(out) == {"a": "{"}


def test_a_held_end_is_sent_after_hold_events_at_the_latest() -> None:
    norm = AguiNormalizer()
    out = norm.push(RS) + norm.push(_start("a")) + norm.push(_arg("a", "{}")) + norm.push(_end("a"))
    raw = {"type": "RAW", "event": {}}
    for _ in range(HOLD_EVENTS - 1):
        out += norm.push(raw)
    assert "TOOL_CALL_END" not in [e["type"] for e in out]
    assert norm.push(raw)[0] == _end("a")


def test_held_results_past_the_byte_bound_are_a_typed_error() -> None:
    norm = AguiNormalizer()
    norm.push(RS), norm.push(_start("a")), norm.push(_arg("a", "{"))
    big = {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "a",
           "content": "x" * HOLD_RESULT_BYTES}  # fmt: skip
    with pytest.raises(MalformedUpstreamError):
        norm.push(big)


def test_everything_held_is_sent_before_a_truncation_error() -> None:
    result = {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "a", "content": "ok"}
    out, _ = _decode([RS, _start("a"), _arg("a", "{"), result])
    assert [e["type"] for e in out] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                                        "TOOL_CALL_END", "TOOL_CALL_RESULT", "RUN_ERROR"]  # fmt: skip
    assert json.loads(json.dumps(out[-1]["metadata"]["repairs"]))["tool-result-held"] == 1
