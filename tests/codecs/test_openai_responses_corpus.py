"""openai-responses decoder (issue 5) on the recorded corpus, then on named recordings.

Expected values come from the upstream bytes themselves (ids, arguments, usage, cost read
straight from the recorded events) or from the real clients, which judge the encoded output in
:func:`test_synthetic_runs_are_accepted_by_the_real_clients` (the corpus files themselves, and
the generic checks, are the decoder contract's: ``tests/contracts/test_decoder_*.py``). The faults are pinned by name in
``test_openai_responses.py``, the output items in ``test_openai_responses_items.py``.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from corpus import require_corpus
from decoder_checks import decode_all, wire
from openai_responses_fixtures import (
    FAMILY,
    MESSAGE_ITEM,
    NAME,
    REFUSAL,
    ai_sdk_chunks,
    cfile,
    completed,
    created,
    decoded,
    of_type,
    refusal_body,
    response,
    sse,
    upstream_payloads,
)
from real_clients import AI_SDK_CLIENTS, replay, require_harness

from agui_codecs.cost import price_usage
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import TokenUsage

CORPUS = sorted(FAMILY.iterdir()) if FAMILY.is_dir() else []
CORPUS_IDS = [p.name for p in CORPUS]


# -- the corpus -------------------------------------------------------------------------
def test_corpus_family_is_present() -> None:
    assert len(require_corpus("openai-responses")) >= 19


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_file_decodes_to_one_run_per_response_with_its_calls(path: Path) -> None:
    require_corpus("openai-responses")
    evs = decoded(path)  # legality, splits, truncation: the decoder contract suite
    upstream = upstream_payloads(path)
    responses = {p["response"]["id"] for p in upstream if p.get("type") == "response.created"}
    assert len(of_type(evs, "RUN_STARTED")) == max(1, len(responses))
    # Every client function call is announced under its call_... id, with its own arguments.
    calls = {
        p["item"]["call_id"]: p["item"]
        for p in upstream
        if p.get("type") == "response.output_item.done"
        and p["item"]["type"] in ("function_call", "custom_tool_call")
    }
    starts = [e for e in of_type(evs, "TOOL_CALL_START") if not e.get("metadata")]
    assert {e["toolCallId"] for e in starts} == set(calls)
    assert all(call_id.startswith("call_") for call_id in calls)
    for call_id, item in calls.items():
        args = "".join(
            e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS") if e["toolCallId"] == call_id
        )
        expected = item.get("arguments", item.get("input"))
        if item["type"] == "function_call":
            assert orjson.loads(args) == orjson.loads(expected or "{}")
        else:  # free-form input travels as a JSON string
            assert orjson.loads(args) == expected


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_usage_equals_the_upstream_figures(path: Path) -> None:
    require_corpus("openai-responses")
    finals = [
        p["response"]
        for p in upstream_payloads(path)
        if p.get("type") in ("response.completed", "response.incomplete", "response.failed")
    ]
    terminals = [e for e in decoded(path) if e["type"] in ("RUN_FINISHED", "RUN_ERROR")]
    assert len(terminals) == len(finals) or not finals
    for final, terminal in zip(finals, terminals, strict=False):
        u = final.get("usage")
        if not u:
            assert "usage" not in terminal
            continue
        expected = {
            "provider": "openai",
            "model": final["model"],
            "inputTokens": u["input_tokens"],
            "outputTokens": u["output_tokens"],
            "totalTokens": u["total_tokens"],
            "cachedInputTokens": u["input_tokens_details"]["cached_tokens"],
            "reasoningTokens": u["output_tokens_details"]["reasoning_tokens"],
        }
        assert terminal["usage"] == [expected]
        # AG-UI accounting: reasoning is a part of the output total, never added to it.
        assert expected["totalTokens"] == expected["inputTokens"] + expected["outputTokens"]
        cost = price_usage(TokenUsage(**{k: v for k, v in expected.items()}))
        if "cost" in u:  # OpenRouter reports the charge itself
            assert terminal["metadata"]["cost"] == u["cost"]
            assert terminal["metadata"]["costSource"] == "provider"
        else:
            assert terminal["metadata"]["cost"] == cost["cost"]
            assert terminal["metadata"]["costSource"] == "catalog_fallback"


def test_concatenated_agent_loop_becomes_one_run_per_response_not_one_corrupted_run() -> None:
    path = cfile("agent-loop-4-concatenated-responses-reasoning-function-calls.jsonl")
    evs = decoded(path)
    starts = of_type(evs, "RUN_STARTED")
    finishes = of_type(evs, "RUN_FINISHED")
    assert len(starts) == len(finishes) == 4
    assert len({s["runId"] for s in starts}) == 4  # distinct runs, -2 -3 -4 suffixed
    assert {s["threadId"] for s in starts} == {starts[0]["threadId"]}  # one conversation
    assert [f["metadata"]["finishReason"] for f in finishes] == [
        "tool-calls",
        "tool-calls",
        "tool-calls",
        "stop",
    ]
    responses = [
        p["response"]["id"] for p in upstream_payloads(path) if p["type"] == "response.created"
    ]
    assert [f["metadata"]["responseId"] for f in finishes] == responses
    text = "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT"))
    assert text == "The final result is **570**."
    # The AI SDK sees one assistant message: one start, one step per response.
    chunks = ai_sdk_chunks(decode_all(NAME, path.read_bytes()))
    assert [c["type"] for c in chunks].count("start") == 1
    assert [c["type"] for c in chunks].count("start-step") == 4


def test_resumed_stream_without_response_created_still_starts_the_run() -> None:
    path = cfile("background-resume-starting-after.sse")
    evs = decoded(path)
    assert evs[0]["type"] == "RUN_STARTED"
    assert evs[0]["runId"] == "run_resp_0850765c843cca5300699cc47d93c0819089a181f5feeff8eb"
    assert "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")) == "2 + 2 equals 4."
    assert evs[-1]["type"] == "RUN_FINISHED"


def test_rotating_item_ids_stay_one_message_keyed_by_output_index() -> None:
    path = cfile("compat-github-copilot-rotating-item-ids.jsonl")
    evs = decoded(path)
    assert len(of_type(evs, "TEXT_MESSAGE_START")) == 1
    done = [p for p in upstream_payloads(path) if p["type"] == "response.output_text.done"]
    assert "".join(e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")) == done[0]["text"]
    assert of_type(evs, "TEXT_MESSAGE_START")[0]["metadata"] == {"phase": "final_answer"}


# -- provider cost ----------------------------------------------------------------------
def test_openrouter_reported_cost_is_the_run_cost() -> None:
    evs = decoded(cfile("compat-openrouter-raw-cot-reasoning-text.sse"))
    meta = evs[-1]["metadata"]
    assert (meta["cost"], meta["currency"], meta["costSource"]) == (1.13e-05, "USD", "provider")


def test_openrouter_byok_cost_without_upstream_cost_is_partial() -> None:
    usage = {
        "input_tokens": 1000,
        "output_tokens": 100,
        "total_tokens": 1100,
        "cost": 0.0001,
        "is_byok": True,
        "cost_details": {"upstream_inference_cost": None},
    }
    meta = wire(decode_all(NAME, sse(created(), completed(usage))))[-1]["metadata"]
    assert meta["costSource"] == "catalog_fallback_incomplete_provider_cost"
    assert meta["providerCost"] == 0.0001
    # gpt-4o list price (USD per 1M tokens): 2.50 input, 10.00 output.
    assert meta["cost"] == pytest.approx((1000 * 2.50 + 100 * 10.00) / 1e6)


# -- real clients ---------------------------------------------------------------------------
def test_synthetic_runs_are_accepted_by_the_real_clients() -> None:
    require_harness()
    incomplete = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Once upon a",
        },
        {
            "type": "response.incomplete",
            "response": response("incomplete", incomplete_details={"reason": "max_output_tokens"}),
        },
    )
    bodies = {"refusal": refusal_body(), "incomplete": incomplete}
    jobs = []
    for key, body in bodies.items():
        events = decode_all(NAME, body)
        agui = b"".join(AguiEncoder().encode(e) for e in events)
        encoder = AiSdkEncoder()
        ai = b"".join(encoder.encode(e) for e in events) + encoder.close()
        jobs.append((f"{key}|agui", "agui", agui))
        jobs += [(f"{key}|{client}", client, ai) for client in AI_SDK_CLIENTS]
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], (job_id, result["error"])
    for client in AI_SDK_CLIENTS:
        refusal = results[f"refusal|{client}"]
        assert refusal["finishReason"] == "content-filter"
        parts = [p for m in refusal["messages"] for p in m["parts"] if p["type"] == "text"]
        assert "".join(p["text"] for p in parts) == REFUSAL
        assert results[f"incomplete|{client}"]["finishReason"] == "length"
    agui_texts = [m.get("content") for m in results["refusal|agui"]["messages"]]
    assert REFUSAL in agui_texts
