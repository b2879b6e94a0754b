"""Gemini ``streamGenerateContent`` decoder (``agui_codecs.protocols.gemini.decoder``): the corpus.

Every recording in ``tests/corpus/gemini`` decodes to a complete run, whole, byte by byte or
split anywhere, with the provider's usage, thought signatures and function-call arguments;
the signatures reach the AI SDK ``providerMetadata``. Expected values come from the recordings
themselves (parsed here independently of the decoder) and from the AG-UI 1.0 TokenUsage
accounting (input/output are totals, reasoning and cached tokens are parts of them). The real
clients keep the signatures (:func:`test_the_real_clients_keep_the_signatures_and_arguments`);
the generic checks (splits, legality, truncation, the clients' verdicts) are the decoder
contract's (``tests/contracts/test_decoder_*.py``).
Tool call ids and Vertex streamed arguments are checked in ``test_gemini_tool_calls.py``,
finish reasons, errors and parts in ``test_gemini.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import Event
from corpus import corpus_files, require_corpus
from decoder_checks import assert_legal_run, wire
from decoder_runs import client_job, client_results
from gemini_fixtures import call_args, decode, expected_usage, of_type, upstream
from real_clients import require_harness

from agui_codecs.encoders.ai_sdk import AiSdkEncoder

FILES = corpus_files("gemini")
FILE_IDS = [p.name for p in FILES]


def parts_of(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part
        for body in bodies
        for cand in body.get("candidates") or []
        for part in (cand.get("content") or {}).get("parts") or []
    ]


def ai_sdk_chunks(events: list[Event]) -> list[Any]:
    encoder = AiSdkEncoder()
    body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    return [
        json.loads(block[6:])
        for block in body.decode().split("\n\n")
        if block.startswith("data: ") and block[6:] != "[DONE]"
    ]


# -- the corpus -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_file_decodes_to_a_successful_run(path: Path) -> None:
    events = decode(path.read_bytes())
    assert wire(events)[-1]["type"] == "RUN_FINISHED"  # every recording has a finishReason


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_usage_equals_the_last_usage_metadata(path: Path) -> None:
    counted = [
        b["usageMetadata"]
        for b in upstream(path)
        if "totalTokenCount" in b.get("usageMetadata", {})
    ]
    finished = wire(decode(path.read_bytes()))[-1]
    assert finished["usage"] == [
        {**expected_usage(counted[-1]), "model": finished["metadata"]["model"]}
    ]


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_every_thought_signature_survives(path: Path) -> None:
    parts = parts_of(upstream(path))
    events = decode(path.read_bytes())
    encrypted = of_type(events, "REASONING_ENCRYPTED_VALUE")
    assert Counter(e["encryptedValue"] for e in encrypted) == Counter(
        p["thoughtSignature"] for p in parts if p.get("thoughtSignature")
    )
    starts = {s["toolCallId"] for s in of_type(events, "TOOL_CALL_START")}
    texts = {s["messageId"] for s in of_type(events, "TEXT_MESSAGE_START")}
    by_value = {e["encryptedValue"]: e for e in encrypted}
    for part in parts:
        if not part.get("thoughtSignature"):
            continue
        event = by_value[part["thoughtSignature"]]
        assert event["metadata"] == {"provider": "google", "field": "thoughtSignature"}
        if "functionCall" in part or "executableCode" in part:
            assert event["subtype"] == "tool-call" and event["entityId"] in starts
        else:
            assert event["subtype"] == "message" and event["entityId"] in texts


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_function_call_arguments_equal_the_provider_arguments(path: Path) -> None:
    whole = [
        p["functionCall"].get("args", {})
        for p in parts_of(upstream(path))
        if "functionCall" in p
        and "name" in p["functionCall"]
        and "partialArgs" not in p["functionCall"]
        and not p["functionCall"].get("willContinue")
    ]
    events = decode(path.read_bytes())
    client = {s["toolCallId"] for s in of_type(events, "TOOL_CALL_START") if "metadata" not in s}
    args = [v for k, v in call_args(events).items() if k in client]
    if not any("willContinue" in json.dumps(b) for b in upstream(path)):  # Vertex: see below
        assert args == whole


def test_vertex_streamed_arguments_concatenate_to_the_final_arguments() -> None:
    files = {p.name: p for p in require_corpus("gemini")}
    # Read off the recordings: each call's partialArgs name one jsonPath with a string split
    # into a first piece and an empty closing piece.
    cases = {
        "vertex-parallel-function-calls-partial-args.jsonl": [
            ("getWeather", {"location": "Boston"}),
            ("getWeather", {"location": "San Francisco"}),
        ],
        "vertex-thought-then-multiple-function-calls.jsonl": [
            ("read_theme", {}),
            ("read_screen", {"id": "A"}),
            ("read_screen", {"id": "B"}),
            ("read_screen", {"id": "C"}),
        ],
    }
    for name, expected in cases.items():
        events = decode(files[name].read_bytes())
        assert_legal_run(events)
        names = [s["toolCallName"] for s in of_type(events, "TOOL_CALL_START")]
        assert list(zip(names, call_args(events).values(), strict=True)) == expected
        finished = wire(events)[-1]
        assert finished["metadata"]["finishReason"] == "tool-calls"
        assert finished["outcome"]["pendingToolCallIds"] == list(call_args(events))


# -- signatures through the AI SDK encoder ------------------------------------------------------
def test_text_signatures_reach_ai_sdk_provider_metadata() -> None:
    for name in ("text-thought-signature-gemini3.jsonl", "thought-summaries.sse"):
        path = next(p for p in require_corpus("gemini") if p.name == name)
        sigs = {p["thoughtSignature"] for p in parts_of(upstream(path)) if "thoughtSignature" in p}
        found = {
            c["providerMetadata"]["google"]["thoughtSignature"]
            for c in ai_sdk_chunks(decode(path.read_bytes()))
            if "providerMetadata" in c
        }
        assert found == sigs, name


def test_function_call_signatures_reach_ai_sdk_tool_input_provider_metadata() -> None:
    path = next(
        p for p in require_corpus("gemini") if p.name == "function-call-thought-signature.sse"
    )
    sig = next(p["thoughtSignature"] for p in parts_of(upstream(path)) if "functionCall" in p)
    available = [
        c for c in ai_sdk_chunks(decode(path.read_bytes())) if c["type"] == "tool-input-available"
    ]
    assert available[0]["providerMetadata"] == {"google": {"thoughtSignature": sig}}


# -- real clients -----------------------------------------------------------------------------
def test_the_real_clients_keep_the_signatures_and_arguments() -> None:
    files = require_corpus("gemini")
    require_harness()
    shared = client_results()  # one replay of the decoder contract suite (whole corpus)
    results = {
        f"{path.name}:agui": shared[client_job(f"gemini/{path.name}", "whole", "agui")]
        for path in files
    }
    # @ag-ui/client stores a functionCall's signature on that tool call, and a text part's
    # signature on the assistant message (REASONING_ENCRYPTED_VALUE subtype tool-call/message).
    name = "vertex-parallel-function-calls-partial-args.jsonl"
    calls = [c for m in results[f"{name}:agui"]["messages"] for c in m.get("toolCalls") or []]
    sig = parts_of(upstream(next(p for p in files if p.name == name)))[0]["thoughtSignature"]
    assert calls[0]["encryptedValue"] == sig
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"location": "Boston"},
        {"location": "San Francisco"},
    ]
    name = "text-thought-signature-gemini3.jsonl"
    texts = [m for m in results[f"{name}:agui"]["messages"] if m.get("role") == "assistant"]
    assert texts[0]["encryptedValue"].startswith("EqsFCqgF")
