"""Upstream AI SDK UI message stream decoder (``agui_codecs.decoders.ai_sdk``).

Expected values come from the upstream chunks themselves (``shared/corpus/aisdk-ui``, parsed
here independently of the decoder), from the chunk semantics of ``ai`` 7.0.173
``src/ui/process-ui-message-stream.ts`` (what a part, a tool call and a step are) and from the
AG-UI 1.0 rules in ``shared/docs/PROTOCOLS.md`` (outcomes, interrupts, balanced steps). The real
clients judge the re-encoded output in :func:`test_runs_are_accepted_by_the_real_clients`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from ag_ui.core import Event
from agui_codecs.decoders.ai_sdk import AiSdkUpstreamDecoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.errors import MalformedUpstreamError
from corpus import corpus_files, require_corpus
from decoder_checks import assert_well_formed_run, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

FILES = corpus_files("aisdk-ui")
FILE_IDS = [p.name for p in FILES] or ["corpus-absent"]


# -- helpers ------------------------------------------------------------------------------
def decode(data: bytes, cuts: Iterable[int] = (), **options: Any) -> list[Event]:
    decoder = AiSdkUpstreamDecoder(**options)
    out: list[Event] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    return out + decoder.feed(data[start:]) + decoder.close()


def of_type(events: list[Event], *types: str) -> list[dict[str, Any]]:
    return [w for w in wire(events) if w["type"] in types]


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """The wire form of ``createUIMessageStreamResponse``: ``data: <json>`` + ``[DONE]``."""
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def run(*chunks: dict[str, Any]) -> bytes:
    """A complete stream: start, start-step, ``chunks``, finish-step, finish, [DONE]."""
    return sse(
        {"type": "start", "messageId": "msg-1"},
        {"type": "start-step"},
        *chunks,
        {"type": "finish-step"},
        {"type": "finish"},
    )


def call_args(events: list[Event]) -> dict[str, str]:
    args: dict[str, str] = {}
    for w in wire(events):
        if w["type"] == "TOOL_CALL_START":
            args[w["toolCallId"]] = ""
        elif w["type"] == "TOOL_CALL_ARGS":
            args[w["toolCallId"]] += w["delta"]
    return args


def ai_sdk_chunks(events: list[Event]) -> list[Any]:
    encoder = AiSdkEncoder()
    body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    return [
        json.loads(block[6:])
        for block in body.decode().split("\n\n")
        if block.startswith("data: ") and block[6:] != "[DONE]"
    ]


def upstream(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text("utf-8")))


# -- the corpus -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_file_decodes_to_a_complete_successful_run(path: Path | None) -> None:
    if path is None:
        require_corpus("aisdk-ui")
        return
    events = decode(path.read_bytes())
    assert_well_formed_run(events)
    assert wire(events)[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_file_fed_byte_by_byte_gives_identical_events(path: Path | None) -> None:
    if path is None:
        require_corpus("aisdk-ui")
        return
    data = path.read_bytes()
    assert wire(decode(data, range(1, len(data)))) == wire(decode(data))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corpus_random_splits_give_identical_events(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(require_corpus("aisdk-ui")))
    raw = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=30))
    assert wire(decode(raw, cuts)) == wire(decode(raw))


@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_text_reasoning_and_tool_input_are_carried_whole(path: Path | None) -> None:
    if path is None:
        require_corpus("aisdk-ui")
        return
    chunks = upstream(path)
    events = decode(path.read_bytes())
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    reasoning = "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta")
    assert "".join(w["delta"] for w in of_type(events, "TEXT_MESSAGE_CONTENT")) == text
    assert "".join(w["delta"] for w in of_type(events, "REASONING_MESSAGE_CONTENT")) == reasoning
    deltas: dict[str, str] = {}
    for c in chunks:
        if c["type"] == "tool-input-delta":
            deltas[c["toolCallId"]] = deltas.get(c["toolCallId"], "") + c["inputTextDelta"]
    assert call_args(events) == deltas  # same ids, same text, JSON at END (run checks)


def test_tool_input_without_available_is_closed_and_answered() -> None:
    # @ai-sdk/langchain react-agent snapshot: start + deltas, never tool-input-available.
    path = next(p for p in require_corpus("aisdk-ui") if "react-agent" in p.name)
    events = decode(path.read_bytes())
    evs = wire(events)
    types = [(w["type"], w.get("toolCallId") or w.get("stepName")) for w in evs]
    for call_id in call_args(events):
        # the input is final when its step ends: END before step-1 finishes, result after
        assert types.index(("TOOL_CALL_END", call_id)) < types.index(("STEP_FINISHED", "step-1"))
        assert types.index(("STEP_FINISHED", "step-1")) < types.index(("TOOL_CALL_RESULT", call_id))
    outputs = {
        c["toolCallId"]: c["output"] for c in upstream(path) if c["type"] == "tool-output-available"
    }
    assert {r["toolCallId"]: r["content"] for r in of_type(events, "TOOL_CALL_RESULT")} == outputs
    assert evs[-1]["outcome"] == {"type": "success"}
    assert evs[-1]["metadata"]["finishReason"] == "stop"


def test_corpus_steps_are_named_in_order_and_balanced() -> None:
    path = next(p for p in require_corpus("aisdk-ui") if "react-agent" in p.name)
    steps = [
        (w["type"], w["stepName"])
        for w in of_type(decode(path.read_bytes()), "STEP_STARTED", "STEP_FINISHED")
    ]
    assert steps == [(t, f"step-{n}") for n in (1, 2, 3) for t in ("STEP_STARTED", "STEP_FINISHED")]


def test_tool_approval_request_ends_the_run_with_an_interrupt_outcome() -> None:
    path = next(p for p in require_corpus("aisdk-ui") if "hitl" in p.name)
    request = next(c for c in upstream(path) if c["type"] == "tool-approval-request")
    finished = wire(decode(path.read_bytes()))[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"] == {
        "type": "interrupt",
        "interrupts": [
            {
                "id": request["approvalId"],
                "reason": "tool_approval",
                "toolCallId": request["toolCallId"],
            }
        ],
    }


# -- chunk semantics --------------------------------------------------------------------------
def test_start_message_id_is_the_base_message_id() -> None:
    events = decode(
        run(
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hi"},
            {"type": "text-end", "id": "t"},
        )
    )
    assert_well_formed_run(events)
    assert of_type(events, "TEXT_MESSAGE_START")[0]["messageId"] == "msg-1"


def test_tool_input_available_without_deltas_gives_one_args_with_the_input_json() -> None:
    tool_input = {"city": "Zürich", "days": [1, 2], "unit": None}
    events = decode(
        run(
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "weather",
                "input": tool_input,
            }
        )
    )
    assert_well_formed_run(events)
    args = of_type(events, "TOOL_CALL_ARGS")
    assert len(args) == 1 and json.loads(args[0]["delta"]) == tool_input
    finished = wire(events)[-1]
    assert finished["metadata"]["finishReason"] == "tool-calls"  # inferred: a call awaits
    assert finished["outcome"]["pendingToolCallIds"] == ["c1"]


def test_streamed_tool_input_is_passed_through_and_closed_by_available() -> None:
    events = decode(
        run(
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a":'},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "1}"},
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "f",
                "input": {"a": 1},
            },
        )
    )
    assert_well_formed_run(events)
    assert [a["delta"] for a in of_type(events, "TOOL_CALL_ARGS")] == ['{"a":', "1}"]


def test_provider_executed_tool_is_marked() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-available",
                "toolCallId": "s1",
                "toolName": "web_search",
                "input": {"q": "x"},
                "providerExecuted": True,
            },
            {
                "type": "tool-output-available",
                "toolCallId": "s1",
                "output": [{"url": "u"}],
                "providerExecuted": True,
            },
        )
    )
    assert of_type(events, "TOOL_CALL_START")[0]["metadata"] == {"providerExecuted": True}
    assert json.loads(of_type(events, "TOOL_CALL_RESULT")[0]["content"]) == [{"url": "u"}]
    assert wire(events)[-1]["metadata"]["finishReason"] == "stop"


def test_tool_output_error_is_an_error_result() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "boom"},
        )
    )
    assert_well_formed_run(events)
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert (result["content"], result["metadata"]) == ("boom", {"isError": True})


def test_tool_input_error_closes_the_call_and_answers_it_with_the_error() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "f",
                "input": "{not json",
                "errorText": "Invalid input",
            },
        )
    )
    assert_well_formed_run(events)
    assert call_args(events) == {"c1": ""}  # the unparsable input is not sent as ARGS
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert (result["toolCallId"], result["content"], result["metadata"]) == (
        "c1",
        "Invalid input",
        {"isError": True},
    )


def test_tool_output_denied_is_a_denied_result() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {"type": "tool-output-denied", "toolCallId": "c1"},
        )
    )
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert result["metadata"] == {"denied": True}
    assert json.loads(result["content"]) == {"type": "execution-denied"}


def test_preliminary_tool_output_is_not_the_result() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {
                "type": "tool-output-available",
                "toolCallId": "c1",
                "output": "50%",
                "preliminary": True,
            },
            {"type": "tool-output-available", "toolCallId": "c1", "output": "done"},
        )
    )
    assert [r["content"] for r in of_type(events, "TOOL_CALL_RESULT")] == ["done"]
    assert of_type(events, "CUSTOM")[0]["name"] == "tool-output-preliminary"


def test_approval_answered_in_the_same_stream_is_no_longer_an_interrupt() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "f",
                "input": {},
                "providerExecuted": True,
            },
            {
                "type": "tool-approval-request",
                "approvalId": "a1",
                "toolCallId": "c1",
                "signature": "signed",
            },
            {"type": "tool-approval-response", "approvalId": "a1", "approved": True},
        )
    )
    assert wire(events)[-1]["outcome"]["type"] == "success"


def test_approval_request_metadata_keeps_the_signature() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {
                "type": "tool-approval-request",
                "approvalId": "a1",
                "toolCallId": "c1",
                "reason": "deletes files",
                "signature": "signed",
            },
        )
    )
    interrupt = wire(events)[-1]["outcome"]["interrupts"][0]
    assert interrupt == {
        "id": "a1",
        "reason": "tool_approval",
        "toolCallId": "c1",
        "message": "deletes files",
        "metadata": {"signature": "signed"},
    }


def test_reasoning_signature_becomes_an_encrypted_value_of_its_provider() -> None:
    events = decode(
        run(
            {"type": "reasoning-start", "id": "r"},
            {"type": "reasoning-delta", "id": "r", "delta": "Let me think."},
            {
                "type": "reasoning-delta",
                "id": "r",
                "delta": "",
                "providerMetadata": {"anthropic": {"signature": "sig-abc"}},
            },
            {
                "type": "reasoning-end",
                "id": "r",
                "providerMetadata": {"anthropic": {"signature": "sig-abc"}},
            },
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Answer"},
            {"type": "text-end", "id": "t"},
        )
    )
    assert_well_formed_run(events)
    values = of_type(events, "REASONING_ENCRYPTED_VALUE")
    reasoning_id = of_type(events, "REASONING_MESSAGE_START")[0]["messageId"]
    assert values == [
        {  # emitted once, not once per chunk that repeats it
            "type": "REASONING_ENCRYPTED_VALUE",
            "metadata": {"provider": "anthropic", "field": "signature"},
            "subtype": "message",
            "entityId": reasoning_id,
            "encryptedValue": "sig-abc",
        }
    ]
    reasoning = [c for c in ai_sdk_chunks(events) if c["type"].startswith("reasoning")]
    assert {"anthropic": {"signature": "sig-abc"}} in [c.get("providerMetadata") for c in reasoning]


def test_reasoning_signature_after_the_part_was_closed_by_a_tool_call_survives() -> None:
    # The langgraph snapshots end reasoning after the tool calls that closed it.
    events = decode(
        run(
            {"type": "reasoning-start", "id": "r"},
            {"type": "reasoning-delta", "id": "r", "delta": "plan"},
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {
                "type": "reasoning-end",
                "id": "r",
                "providerMetadata": {"google": {"thoughtSignature": "gsig"}},
            },
        )
    )
    assert_well_formed_run(events)
    value = of_type(events, "REASONING_ENCRYPTED_VALUE")[0]
    assert value["entityId"] == of_type(events, "REASONING_MESSAGE_START")[0]["messageId"]
    assert value["metadata"] == {"provider": "google", "field": "thoughtSignature"}


def test_tool_call_signature_is_a_tool_call_encrypted_value() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-start",
                "toolCallId": "c1",
                "toolName": "f",
                "providerMetadata": {"google": {"thoughtSignature": "fsig"}},
            },
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "f",
                "input": {},
                "providerMetadata": {"google": {"thoughtSignature": "fsig"}},
            },
        )
    )
    values = of_type(events, "REASONING_ENCRYPTED_VALUE")
    assert [(v["subtype"], v["entityId"], v["encryptedValue"]) for v in values] == [
        ("tool-call", "c1", "fsig")
    ]


def test_sources_files_and_data_parts_are_relayed() -> None:
    events = decode(
        run(
            {"type": "source-url", "sourceId": "s1", "url": "https://a.example", "title": "A"},
            {
                "type": "source-document",
                "sourceId": "d1",
                "mediaType": "application/pdf",
                "title": "Doc",
                "filename": "doc.pdf",
            },
            {"type": "file", "url": "data:image/png;base64,AA", "mediaType": "image/png"},
            {"type": "data-weather", "id": "w1", "data": {"temp": 20}},
            {"type": "some-future-chunk", "x": 1},
        )
    )
    assert_well_formed_run(events)
    customs = [(c["name"], c["value"]) for c in of_type(events, "CUSTOM")]
    assert customs == [
        (
            "source",
            {"sourceType": "url", "sourceId": "s1", "url": "https://a.example", "title": "A"},
        ),
        (
            "source",
            {
                "sourceType": "document",
                "sourceId": "d1",
                "mediaType": "application/pdf",
                "title": "Doc",
                "filename": "doc.pdf",
            },
        ),
        ("file", {"url": "data:image/png;base64,AA", "mediaType": "image/png"}),
        ("data-weather", {"id": "w1", "data": {"temp": 20}}),
    ]


def test_finish_reason_and_message_metadata_and_usage_reach_run_finished() -> None:
    usage = {
        "inputTokens": 10,
        "outputTokens": 7,
        "totalTokens": 17,
        "inputTokenDetails": {"cacheReadTokens": 4},
        "outputTokenDetails": {"reasoningTokens": 3},
    }
    events = decode(
        sse(
            {"type": "start", "messageId": "m", "messageMetadata": {"createdAt": 1}},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "x"},
            {"type": "message-metadata", "messageMetadata": {"model": "gpt-x"}},
            {"type": "finish", "finishReason": "length", "messageMetadata": {"totalUsage": usage}},
        )
    )
    finished = wire(events)[-1]
    assert finished["metadata"]["finishReason"] == "length"
    assert finished["metadata"]["messageMetadata"] == {
        "createdAt": 1,
        "model": "gpt-x",
        "totalUsage": usage,
    }
    assert finished["usage"] == [
        {
            "provider": "ai-sdk",
            "inputTokens": 10,
            "outputTokens": 7,
            "totalTokens": 17,
            "reasoningTokens": 3,
            "cachedInputTokens": 4,
        }
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", "stop"),
        ("tool-calls", "tool-calls"),
        ("content-filter", "content-filter"),
        ("error", "error"),
        ("other", "other"),
        ("unknown", "other"),
        ("interrupted", "other"),
    ],
)
def test_finish_reason_outside_the_safe_set_becomes_other(raw: str, expected: str) -> None:
    finished = wire(decode(sse({"type": "start"}, {"type": "finish", "finishReason": raw})))[-1]
    assert finished["metadata"]["finishReason"] == expected
    assert finished["metadata"]["providerFinishReason"] == raw


def test_error_chunk_closes_open_parts_then_run_error() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hal"},
            {"type": "error", "errorText": "Rate limited"},
        )
    )
    assert_well_formed_run(events)
    assert [w["type"] for w in wire(events)][-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert (wire(events)[-1]["code"], wire(events)[-1]["message"]) == (
        "UPSTREAM_ERROR",
        "Rate limited",
    )


def test_abort_is_a_cancelled_run_not_an_error() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hal"},
            {"type": "abort", "reason": "user stop"},
        )
    )
    assert_well_formed_run(events)
    finished = wire(events)[-1]
    assert finished["outcome"] == {"type": "cancelled"}
    assert finished["metadata"]["abortReason"] == "user stop"


def test_stream_cut_before_finish_is_truncated_not_a_short_success() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hal"},
            done=False,
        )
    )
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_done_without_finish_chunk_ends_the_run() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hi"},
        )
    )
    assert_well_formed_run(events)
    assert wire(events)[-1]["metadata"]["finishReason"] == "stop"


def test_unbalanced_steps_come_out_balanced() -> None:
    events = decode(
        sse(
            {"type": "start"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "start-step"},
            {"type": "finish"},
        )
    )
    assert_well_formed_run(events)
    steps = [(w["type"], w["stepName"]) for w in of_type(events, "STEP_STARTED", "STEP_FINISHED")]
    assert steps == [
        ("STEP_STARTED", "step-1"),
        ("STEP_FINISHED", "step-1"),
        ("STEP_STARTED", "step-2"),
        ("STEP_FINISHED", "step-2"),
    ]


def test_jsonl_framing_is_accepted() -> None:
    body = b"".join(
        orjson.dumps(c) + b"\n"
        for c in (
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "x"},
            {"type": "finish"},
        )
    )
    assert wire(decode(body))[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize(
    "chunk",
    [
        {"no": "type"},
        {"type": "tool-input-delta", "toolCallId": "nope", "inputTextDelta": "{"},
        {"type": "text-delta", "delta": "no id"},
        {"type": "tool-input-start", "toolCallId": "c1"},
    ],
)
def test_malformed_chunk_is_a_typed_error_and_a_clean_run_error(chunk: dict[str, Any]) -> None:
    decoder = AiSdkUpstreamDecoder()
    events = decoder.feed(sse({"type": "start"}, {"type": "text-start", "id": "t"}, chunk))
    events += decoder.close()
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"
    assert isinstance(decoder.error, MalformedUpstreamError)


# -- real clients -----------------------------------------------------------------------------
def test_runs_are_accepted_by_the_real_clients() -> None:
    files = require_corpus("aisdk-ui")
    require_harness()
    cases = {p.name: p.read_bytes() for p in files}
    cases["signatures.sse"] = run(
        {"type": "reasoning-start", "id": "r"},
        {
            "type": "reasoning-delta",
            "id": "r",
            "delta": "think",
            "providerMetadata": {"anthropic": {"signature": "sig-abc"}},
        },
        {"type": "reasoning-end", "id": "r"},
        {
            "type": "tool-input-available",
            "toolCallId": "c1",
            "toolName": "f",
            "input": {"a": 1},
            "providerMetadata": {"google": {"thoughtSignature": "fsig"}},
        },
    )
    jobs: list[tuple[str, str, bytes]] = []
    for name, data in cases.items():
        events = decode(data)
        agui = AguiEncoder()
        jobs.append((f"{name}:agui", "agui", b"".join(agui.encode(e) for e in events)))
        for client in ("ai-v7", "ai-v6", "ai-v5"):
            enc = AiSdkEncoder()
            body = b"".join(enc.encode(e) for e in events) + enc.close()
            jobs.append((f"{name}:{client}", client, body))
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], f"{job_id}: {result['error']}"
        assert not result["warnings"], f"{job_id}: {result['warnings']}"
    # AG-UI: the approval becomes a pending interrupt the client must answer on resume.
    hitl = next(n for n in cases if "hitl" in n)
    pending = results[f"{hitl}:agui"]["pendingInterrupts"]
    assert [(i["reason"], i["toolCallId"]) for i in pending] == [
        ("tool_approval", "call_LOd3dMxgYxmNLWZVWXra9xWQ")
    ]
    # AG-UI: the tool call keeps its signature; the reasoning message keeps its own.
    messages = results["signatures.sse:agui"]["messages"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert calls[0]["encryptedValue"] == "fsig"
    assert [m.get("encryptedValue") for m in messages if m["role"] == "reasoning"] == ["sig-abc"]
    # AI SDK: the reasoning signature reaches the UIMessage reasoning part.
    parts = results["signatures.sse:ai-v7"]["messages"][-1]["parts"]
    reasoning = [p for p in parts if p["type"] == "reasoning"]
    assert reasoning[0]["providerMetadata"] == {"anthropic": {"signature": "sig-abc"}}
