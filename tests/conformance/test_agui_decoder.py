"""The ``agui`` upstream decoder: passthrough plus normalization (issue 4, item 4).

Each repair of the module docstring has a test named after the upstream fault it repairs; the
property tests feed every AG-UI stream of the differential corpus (stored cases, witnesses,
mutants, the recorded ``agui`` family) through the decoder and require the result to pass the
kit with no error-level violation, and the real clients (AG-UI, ai 7/6/5) to accept it.
"""

from __future__ import annotations

import json
from typing import Any

import diffcorpus
import pytest
from corpus import CORPUS_DIR, require_corpus
from decoder_checks import random_cuts
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from agui_codecs.identity import derived_id
from agui_codecs.protocols.agui.decoder import AguiDecoder, AguiNormalizer
from conformance import check_bytes

RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
STORED = {n.split("/", 2)[2]: b for n, p, b in diffcorpus.stored_streams() if p == "agui"}


def decode(*events: Any, **options: Any) -> tuple[list[dict[str, Any]], AguiDecoder]:
    decoder = AguiDecoder(**options)
    out = decoder.feed(diffcorpus.frame(list(events))) + decoder.close()
    return [event_to_wire(e) for e in out], decoder


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def clean(events: list[dict[str, Any]]) -> None:
    report = check_bytes(diffcorpus.frame(events), protocol="agui")
    assert not report.rejected, [v.to_json() for v in report.errors]


# -- the faults of issue 4 ------------------------------------------------------------------
def test_tool_call_without_args_gets_one_args_from_its_raw_event() -> None:
    start = {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "calc",
             "rawEvent": {"function": {"name": "calc", "arguments": '{"x":1}'}}}  # fmt: skip
    out, decoder = decode(RS, start, {"type": "TOOL_CALL_END", "toolCallId": "c"}, RF)
    assert types(out) == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
                          "RUN_FINISHED"]  # fmt: skip
    assert out[2]["delta"] == '{"x":1}'
    assert decoder.repairs == {"tool-args-synthesized": 1}
    clean(out)


def test_tool_call_without_args_gets_args_from_a_later_result() -> None:
    result = {"type": "TOOL_CALL_RESULT", "messageId": "res", "toolCallId": "c", "content": "2",
              "rawEvent": {"args": {"x": 1}}}  # fmt: skip
    out, decoder = decode(
        RS, {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "calc"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"}, {"type": "CUSTOM", "name": "n", "value": 1},
        result, RF,
    )  # fmt: skip
    assert types(out)[1:6] == ["TOOL_CALL_START", "CUSTOM", "TOOL_CALL_ARGS", "TOOL_CALL_END",
                               "TOOL_CALL_RESULT"]  # fmt: skip
    assert json.loads(out[3]["delta"]) == {"x": 1}
    assert decoder.repairs["tool-args-synthesized"] == 1


def test_tool_call_without_args_and_nothing_carrying_them_ends_before_the_terminal() -> None:
    out, _ = decode(RS, *diffcorpus.unframe(STORED["tool-call-start-end-without-args"])[1:-1], RF)
    assert "TOOL_CALL_ARGS" not in types(out)
    assert types(out).index("TOOL_CALL_END") < types(out).index("TOOL_CALL_RESULT")
    clean(out)


def test_tool_args_after_end_are_held_not_dropped() -> None:
    """Issue 11: the END waits for the late ARGS (test_agui_order_repairs.py has the generator)."""
    out, decoder = decode(*diffcorpus.unframe(STORED["tool-args-after-end"]))
    assert types(out)[1:-1] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
    assert [e["delta"] for e in out if e["type"] == "TOOL_CALL_ARGS"] == ['{"x":1}', "{}"]
    assert decoder.repairs == {"late-tool-args-held": 1}
    clean(out)


def test_tool_call_end_with_another_id_leaves_the_call_open_until_the_terminal() -> None:
    """The result came while call a was open: it is held until a's END (issue 11)."""
    out, decoder = decode(*diffcorpus.unframe(STORED["tool-call-end-with-other-id"]))
    assert types(out)[-3:] == ["TOOL_CALL_END", "TOOL_CALL_RESULT", "RUN_FINISHED"]
    assert out[-3]["toolCallId"] == "a"
    assert decoder.repairs == {
        "orphan-end-dropped": 1,
        "closed-before-terminal": 1,
        "tool-result-held": 1,
    }
    assert out[-1]["metadata"]["repairs"] == decoder.repairs
    clean(out)


def test_text_content_after_end_opens_a_new_message() -> None:
    out, decoder = decode(*diffcorpus.unframe(STORED["text-content-after-end"]))
    starts = [e["messageId"] for e in out if e["type"] == "TEXT_MESSAGE_START"]
    # the second message's id is the identity rule's derived id (agui_codecs.identity)
    assert starts == ["m1", derived_id("m1", 2)]
    late = [e for e in out if e["type"] == "TEXT_MESSAGE_CONTENT"][-1]
    assert late == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": derived_id("m1", 2),
        "delta": "more",
    }
    assert decoder.repairs["text-reopened"] == 1
    clean(out)


def test_two_tool_calls_open_at_once_pass_through_unchanged() -> None:
    events = diffcorpus.unframe(STORED["two-tool-calls-open-at-once"])
    out, decoder = decode(*events)
    assert out[1:-1] == events[1:-1]
    assert decoder.repairs == {}


def test_parent_message_never_announced_passes_through() -> None:
    events = diffcorpus.unframe(STORED["tool-call-parent-message-never-announced"])
    out, _ = decode(*events)
    assert out[1]["parentMessageId"] == "ghost"


# -- the normalizations of issue 4 -------------------------------------------------------------
def test_thinking_events_become_reasoning_events() -> None:
    out, decoder = decode(*diffcorpus.unframe(STORED["thinking-events-complete"]), run_id="run9")
    assert types(out)[1:6] == ["REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
                               "REASONING_MESSAGE_END", "REASONING_END"]  # fmt: skip
    assert {e["messageId"] for e in out[1:6]} == {"run9-reasoning-1"}
    assert "title" not in out[1] and decoder.repairs == {
        "thinking-converted": 5,
        "run-id-mismatch": 2,
    }
    clean(out)


def test_interleaved_parallel_tool_call_chunks_are_kept_apart() -> None:
    out, decoder = decode(*diffcorpus.unframe(STORED["tool-chunks-interleaved-with-names"]))
    starts = [e["toolCallId"] for e in out if e["type"] == "TOOL_CALL_START"]
    assert starts == ["a", "b"], "each call opened once"
    args = {cid: "".join(e["delta"] for e in out if e.get("toolCallId") == cid and e["type"] == "TOOL_CALL_ARGS")
            for cid in starts}  # fmt: skip
    assert args == {"a": '{"x":1}', "b": '{"y":2}'}
    assert decoder.repairs == {"chunk-expanded": 4}
    report = check_bytes(diffcorpus.frame(out), protocol="agui")
    assert report.violations == []


def test_text_message_chunks_without_ids_continue_the_open_message() -> None:
    out, _ = decode(*diffcorpus.unframe(STORED["chunks-continue-without-id"]))
    assert types(out)[1:4] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT"]
    assert [e["delta"] for e in out if e["type"] == "TOOL_CALL_ARGS"] == ["{", "}"]
    clean(out)


def test_everything_open_is_closed_before_run_finished() -> None:
    out, decoder = decode(RS, {"type": "STEP_STARTED", "stepName": "s"},
                          {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                          {"type": "REASONING_START", "messageId": "r"},
                          {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
                          {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}, RF)  # fmt: skip
    assert types(out)[-5:] == ["TOOL_CALL_END", "TEXT_MESSAGE_END", "REASONING_END", "STEP_FINISHED",
                               "RUN_FINISHED"]  # fmt: skip
    assert decoder.repairs == {"closed-before-terminal": 4}
    clean(out)


def test_run_error_is_synthesized_when_the_upstream_ends_without_a_terminal_event() -> None:
    out, _ = decode(RS, {"type": "TEXT_MESSAGE_START", "messageId": "m"})
    assert types(out) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END", "RUN_ERROR"]
    assert out[-1]["code"] == "UPSTREAM_TRUNCATED"
    assert out[-1]["metadata"]["repairs"] == {
        "closed-before-terminal": 1,
        "run-error-synthesized": 1,
    }


def test_null_optional_fields_are_dropped_and_counted() -> None:
    out, decoder = decode(RS, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": None, "name": None},
                          {"type": "TEXT_MESSAGE_END", "messageId": "m", "rawEvent": None}, RF)  # fmt: skip
    assert out[1] == {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
    assert decoder.repairs == {"null-field-dropped": 3}


def test_snake_case_thread_and_run_ids_are_tolerated() -> None:
    out, decoder = decode({"type": "RUN_STARTED", "thread_id": "t", "run_id": "r"},
                          {"type": "RUN_FINISHED", "thread_id": "t", "run_id": "r"})  # fmt: skip
    assert out[0] == {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
    }
    assert decoder.repairs == {"snake-case-field": 4}


def test_events_after_the_terminal_event_are_ignored() -> None:
    path = CORPUS_DIR / "agui" / "custom-gemini-raw-nonstandard-run-error.jsonl"
    require_corpus("agui")
    decoder = AguiDecoder()
    out = decoder.feed(path.read_bytes()) + decoder.close()
    assert [e.type.value for e in out][-1] == "RUN_ERROR"
    assert decoder.trailing == 1
    assert decoder.repairs["tool-result-reshaped"] == 1


def test_unknown_union_members_are_stripped_like_the_client_does() -> None:
    out, decoder = decode(*diffcorpus.unframe(STORED["unknown-message-role-in-snapshot"]))
    assert [m["id"] for m in out[1]["messages"]] == ["u1"]
    assert decoder.repairs == {"invalid-part-dropped": 1}


def test_malformed_event_ends_the_run_with_a_typed_error_and_a_code() -> None:
    out, decoder = decode(RS, {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                          {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 7}, RF)  # fmt: skip
    assert types(out) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END", "RUN_ERROR"]
    assert out[-1]["code"] == "UPSTREAM_MALFORMED"
    assert decoder.error is not None and "delta" in decoder.error.message


def test_subagent_tag_that_contradicts_the_opener_is_dropped_not_the_event() -> None:
    out, decoder = decode(*diffcorpus.unframe(STORED["subagent-owner-mismatch"]))
    content = next(e for e in out if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert "subagentRunId" not in content
    assert decoder.repairs["subagent-tag-dropped"] == 1
    clean(out)


def test_gateway_ids_replace_the_upstream_ids() -> None:
    out, decoder = decode(RS, RF, thread_id="gw-t", run_id="gw-r")
    assert (out[0]["threadId"], out[0]["runId"], out[-1]["runId"]) == ("gw-t", "gw-r", "gw-r")
    assert decoder.repairs == {"run-id-mismatch": 4}


def test_finish_reason_reflects_pending_tool_calls() -> None:
    out, _ = decode(RS, {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
                    {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
                    {"type": "TOOL_CALL_END", "toolCallId": "c"}, RF)  # fmt: skip
    assert out[-1]["metadata"] == {"provider": "agui", "finishReason": "tool-calls"}


def test_normalizer_is_usable_without_the_decoder() -> None:
    norm = AguiNormalizer()
    assert types(norm.push({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"})) == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]  # fmt: skip
    assert types(norm.close_open()) == ["TEXT_MESSAGE_END"]
    assert norm.repairs == {
        "run-started-synthesized": 1,
        "chunk-expanded": 1,
        "closed-before-terminal": 1,
    }


def _split_decode(body: bytes, cuts: list[int]) -> list[dict[str, Any]]:
    decoder, out, prev = AguiDecoder(), [], 0
    for cut in sorted({c for c in cuts if 0 < c < len(body)}):
        out += decoder.feed(body[prev:cut])
        prev = cut
    out += decoder.feed(body[prev:]) + decoder.close()
    return [event_to_wire(e) for e in out]


@pytest.mark.parametrize("name", ["chunks-continue-without-id", "thinking-events-complete",
                                  "tool-call-end-with-other-id", "subagent-owner-mismatch"])  # fmt: skip
def test_any_split_of_the_input_gives_the_same_events(name: str) -> None:
    body = STORED[name]
    whole = _split_decode(body, [])
    for seed in range(3):
        assert _split_decode(body, random_cuts(body, seed)) == whole
    assert _split_decode(body, list(range(1, len(body)))) == whole


# -- properties over the whole corpus -------------------------------------------------------------
def _agui_inputs() -> list[diffcorpus.Stream]:
    good = diffcorpus.corpus_streams(CORPUS_DIR)
    streams = diffcorpus.stored_streams() + diffcorpus.witness_streams() + good
    streams += list(diffcorpus.mutants(good))
    return [s for s in streams if s[1] == "agui"]


def _normalized(body: bytes) -> tuple[bytes, bytes]:
    decoder = AguiDecoder()
    events = decoder.feed(body) + decoder.close()
    agui, ai = AguiEncoder(), AiSdkEncoder()
    return b"".join(map(agui.encode, events)), b"".join(map(ai.encode, events)) + ai.close()


INPUTS = _agui_inputs()


def test_every_agui_input_comes_out_clean() -> None:
    assert len(INPUTS) > 150
    dirty = []
    for name, _, body in INPUTS:
        agui, ai = _normalized(body)
        report = check_bytes(agui, protocol="agui")
        if report.rejected or any(
            check_bytes(ai, protocol="ai-sdk", major=m).rejected for m in (5, 6, 7)
        ):
            dirty.append((name, [v.to_json() for v in report.errors]))
    assert dirty == []


def test_real_clients_accept_every_normalized_stream() -> None:
    require_harness()
    jobs = []
    for name, _, body in INPUTS:
        agui, ai = _normalized(body)
        jobs.append((f"agui|{name}", "agui", agui))
        jobs += [(f"{c}|{name}", c, ai) for c in ("ai-v7", "ai-v6", "ai-v5")]
    results = replay(jobs)
    assert [(j, r["error"]) for j, r in sorted(results.items()) if not r["accepted"]] == []
