"""Decoder contract: the real clients accept both outputs of every decoded corpus run.

Every corpus file of every registered decoder's family, decoded whole and cut short (an
early, a middle and a late frame boundary, ``decoder_runs.replayed_cuts``), and every
decoder's empty body, encoded by ``AguiEncoder`` and ``AiSdkEncoder``, goes through
``@ag-ui/client`` 1.0.0 and ``ai`` 7 / 6 / 5 in one Node process for the whole session
(``decoder_runs.client_results``). Each client must accept the stream without a warning and
build what the AG-UI events describe: the texts per message and the tool calls with their
arguments (AG-UI), the text and the tool inputs (AI SDK), the finish reason, and a run error
as an error. Expected values are read off the decoded events, whose legality the kit checks
(``test_decoder_contract.py``); the clients are the judges here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from ag_ui.core import Event
from decoder_runs import (
    client_job,
    client_results,
    corpus_cases,
    decoder_names,
    replayed_cuts,
    translate,
    wire,
)
from real_clients import AI_SDK_CLIENTS, ReplayResult, require_harness

CASES = [pytest.param(name, path, id=f"{name}/{path.name}") for name, path in corpus_cases()]


@pytest.fixture(scope="module")
def results() -> dict[str, ReplayResult]:
    require_harness()
    return client_results()


def _expected(events: list[Event]) -> dict[str, Any]:
    """What a client must build, read off the AG-UI events: texts per message, tool calls."""
    texts: dict[str, str] = {}
    calls: dict[str, dict[str, Any]] = {}
    snapshot = False
    for e in wire(events):
        t = e["type"]
        if t == "MESSAGES_SNAPSHOT":
            snapshot = True  # the client replaces its messages with the snapshot's
        elif t == "TEXT_MESSAGE_START":
            texts.setdefault(e["messageId"], "")
        elif t == "TEXT_MESSAGE_CONTENT":
            texts[e["messageId"]] += e["delta"]
        elif t == "TOOL_CALL_START":
            calls[e["toolCallId"]] = {"name": e["toolCallName"], "args": ""}
        elif t == "TOOL_CALL_ARGS":
            calls[e["toolCallId"]]["args"] += e["delta"]
    last = wire(events)[-1]
    return {"texts": texts, "calls": calls, "snapshot": snapshot, "last": last}


def _check_agui(result: ReplayResult, events: list[Event], job: str) -> None:
    assert result["accepted"], (job, result["error"])
    assert result["warnings"] == [], (job, result["warnings"])
    expected = _expected(events)
    if expected["last"]["type"] == "RUN_ERROR":
        assert result["streamError"], f"{job}: RUN_ERROR must reach the client as an error"
    if expected["snapshot"]:
        return  # messages come from the runtime's MESSAGES_SNAPSHOT, not the streamed events
    messages = {m["id"]: m for m in result["messages"]}
    for message_id, text in expected["texts"].items():
        if text:
            assert messages[message_id]["content"] == text, job
    built = {
        c["id"]: c["function"]
        for m in result["messages"]
        if m.get("role") == "assistant"
        for c in m.get("toolCalls") or []
    }
    for call_id, call in expected["calls"].items():
        assert built[call_id]["name"] == call["name"], job
        assert built[call_id]["arguments"] == call["args"], job


def _check_ai_sdk(result: ReplayResult, events: list[Event], job: str) -> None:
    assert result["accepted"], (job, result["error"])
    assert result["warnings"] == [], (job, result["warnings"])
    expected = _expected(events)
    if expected["last"]["type"] == "RUN_ERROR":
        assert result["streamError"], f"{job}: RUN_ERROR must reach the client as an error chunk"
        assert result["status"] == "error", job
        return
    assert result["finishReason"] == expected["last"]["metadata"]["finishReason"], job
    parts = [p for m in result["messages"] if m["role"] == "assistant" for p in m["parts"]]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert "".join(texts) == "".join(expected["texts"].values()), job
    tools = {p["toolCallId"]: p for p in parts if "toolCallId" in p}
    for call_id, call in expected["calls"].items():
        args = call["args"]
        assert tools[call_id]["input"] == (orjson.loads(args) if args.strip() else {}), job


def _check(results: dict[str, ReplayResult], key: str, variant: str, events: list[Event]) -> None:
    job = client_job(key, variant, "agui")
    _check_agui(results[job], events, job)
    for client in AI_SDK_CLIENTS:
        job = client_job(key, variant, client)
        _check_ai_sdk(results[job], events, job)


@pytest.mark.parametrize(("name", "path"), CASES)
def test_the_clients_accept_the_run_and_build_what_it_describes(
    name: str, path: Path, results: dict[str, ReplayResult]
) -> None:
    run = translate(name, path)
    _check(results, run.key, "whole", run.events)


@pytest.mark.parametrize(("name", "path"), CASES)
def test_the_clients_accept_a_run_cut_short_and_see_the_error(
    name: str, path: Path, results: dict[str, ReplayResult]
) -> None:
    run = translate(name, path)
    picked = replayed_cuts(name, path)
    assert picked
    for cut in picked:
        _check(results, run.key, f"cut@{cut.at}", cut.events)


@pytest.mark.parametrize("name", decoder_names())
def test_the_clients_see_an_empty_upstream_as_an_error(
    name: str, results: dict[str, ReplayResult]
) -> None:
    for client in ("agui", *AI_SDK_CLIENTS):
        result = results[client_job(f"{name}/<empty>", "whole", client)]
        assert result["accepted"], result["error"]
        assert result["streamError"], client
