"""Upstream AI SDK UI message stream decoder (``agui_codecs.protocols.ai_sdk.decoder``): the corpus.

Every recording in ``tests/corpus/aisdk-ui`` decodes to a complete run, whole, byte by byte or
split anywhere, carrying its text, reasoning and tool input whole; then the steps, tool results
and approvals of named recordings. Expected values come from the upstream chunks themselves
(parsed here independently of the decoder), from the chunk semantics of ``ai`` 7.0.173
``src/ui/process-ui-message-stream.ts`` and from the AG-UI 1.0 rules in
``docs/protocols.md`` §2. The real clients judge the re-encoded output in
:func:`test_the_real_clients_keep_interrupts_and_signatures` (interrupts, signatures); the
generic checks (splits, legality, truncation, the clients' verdicts) are the decoder contract's
(``tests/contracts/test_decoder_*.py``). Tool chunks are checked in
``test_ai_sdk_decoder_tools.py``, the other chunk semantics in ``test_ai_sdk_decoder.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ai_sdk_decoder_fixtures import call_args, decode, of_type, run
from corpus import corpus_files, require_corpus
from decoder_checks import wire
from decoder_runs import client_job, client_results
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder

FILES = corpus_files("aisdk-ui")
FILE_IDS = [p.name for p in FILES]


def upstream(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text("utf-8")))


# -- the corpus -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_file_decodes_to_a_successful_run(path: Path) -> None:
    assert wire(decode(path.read_bytes()))[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_text_reasoning_and_tool_input_are_carried_whole(path: Path) -> None:
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


# -- real clients -----------------------------------------------------------------------------
SIGNATURES = run(
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


def test_the_real_clients_keep_interrupts_and_signatures() -> None:
    files = require_corpus("aisdk-ui")
    require_harness()
    events = decode(SIGNATURES)
    agui = AguiEncoder()
    jobs: list[tuple[str, str, bytes]] = [
        ("signatures:agui", "agui", b"".join(agui.encode(e) for e in events))
    ]
    for client in ("ai-v7", "ai-v6", "ai-v5"):
        enc = AiSdkEncoder()
        body = b"".join(enc.encode(e) for e in events) + enc.close()
        jobs.append((f"signatures:{client}", client, body))
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], f"{job_id}: {result['error']}"
        assert not result["warnings"], f"{job_id}: {result['warnings']}"
    # AG-UI: the approval becomes a pending interrupt the client must answer on resume (the
    # corpus runs come from the decoder contract suite's one replay).
    hitl = next(p.name for p in files if "hitl" in p.name)
    pending = client_results()[client_job(f"ai-sdk/{hitl}", "whole", "agui")]["pendingInterrupts"]
    assert [(i["reason"], i["toolCallId"]) for i in pending] == [
        ("tool_approval", "call_LOd3dMxgYxmNLWZVWXra9xWQ")
    ]
    # AG-UI: the tool call keeps its signature; the reasoning message keeps its own.
    messages = results["signatures:agui"]["messages"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert calls[0]["encryptedValue"] == "fsig"
    assert [m.get("encryptedValue") for m in messages if m["role"] == "reasoning"] == ["sig-abc"]
    # AI SDK: the reasoning signature reaches the UIMessage reasoning part.
    parts = results["signatures:ai-v7"]["messages"][-1]["parts"]
    reasoning = [p for p in parts if p["type"] == "reasoning"]
    assert reasoning[0]["providerMetadata"] == {"anthropic": {"signature": "sig-abc"}}
