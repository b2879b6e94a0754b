"""Anthropic Messages stream decoder (``agui_codecs.protocols.anthropic.decoder``): the whole corpus.

Every recorded stream in ``tests/corpus/anthropic`` decodes to a complete run, whole, byte by
byte or split anywhere, without dropping a tool call, a tool result or argument text. Expected
values come from the recordings themselves, parsed independently here, and from the AG-UI 1.0
rules in ``docs/protocols.md`` §2; the real clients (``@ag-ui/client`` 1.0.0, ``ai``
7/6/5) judge the encoded output in :func:`test_corpus_runs_are_accepted_by_the_real_clients`.
The semantics are checked in ``test_anthropic.py``, the named faults in
``test_anthropic_faults.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic_fixtures import (
    T,
    assert_complete_run,
    decode,
    decode_bytewise,
    of_type,
    upstream_events,
)
from corpus import corpus_files, require_corpus
from decoder_checks import wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire

FILES = corpus_files("anthropic")
FILE_IDS = [p.name for p in FILES] or ["corpus-absent"]


# -- every corpus file --------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_file_decodes_to_a_complete_run_whole_or_bytewise(path: Path | None) -> None:
    if path is None:
        require_corpus("anthropic")
        return
    data = path.read_bytes()
    events = decode(data)
    assert_complete_run(events)
    assert events[-1].type == T.RUN_FINISHED  # every recording ends with message_stop
    assert wire(decode_bytewise(data)) == wire(events)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corpus_random_splits_give_identical_events(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(require_corpus("anthropic")))
    raw = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=30))
    assert wire(decode(raw, cuts)) == wire(decode(raw))


def test_corpus_server_tool_calls_and_results_are_never_dropped() -> None:
    for path in require_corpus("anthropic"):
        upstream = upstream_events(path)
        blocks = [u["content_block"] for u in upstream if u["type"] == "content_block_start"]
        events = decode(path.read_bytes())
        starts = {w["toolCallId"]: w for w in of_type(events, T.TOOL_CALL_START)}
        results = {w["toolCallId"]: w for w in of_type(events, T.TOOL_CALL_RESULT)}
        for block in blocks:
            if block["type"].endswith("tool_use"):
                start = starts[block["id"]]
                assert start["toolCallName"] == block["name"]
                executed = (start.get("metadata") or {}).get("providerExecuted", False)
                assert executed is (block["type"] != "tool_use"), path.name
            elif block["type"].endswith("_tool_result"):
                result = results[block["tool_use_id"]]
                assert json.loads(result["content"]) == block["content"], path.name


def test_corpus_streamed_tool_arguments_concatenate_to_the_upstream_json() -> None:
    for path in require_corpus("anthropic"):
        upstream = upstream_events(path)
        expected: dict[str, str] = {}
        ids: dict[int, str] = {}
        for u in upstream:
            if u["type"] == "content_block_start" and "id" in u["content_block"]:
                ids[u["index"]] = u["content_block"]["id"]
                expected[ids[u["index"]]] = ""
            elif u["type"] == "content_block_delta" and u["delta"]["type"] == "input_json_delta":
                expected[ids[u["index"]]] += u["delta"]["partial_json"]
        got: dict[str, str] = {}
        for w in of_type(decode(path.read_bytes()), T.TOOL_CALL_ARGS):
            got[w["toolCallId"]] = got.get(w["toolCallId"], "") + w["delta"]
        want = {k: json.loads(v) if v else {} for k, v in expected.items()}
        assert {k: json.loads(v) for k, v in got.items()} == want, path.name


# -- real clients -------------------------------------------------------------------------
def test_corpus_runs_are_accepted_by_the_real_clients() -> None:
    files = require_corpus("anthropic")
    require_harness()
    jobs: list[tuple[str, str, bytes]] = []
    expected_finish: dict[str, str] = {}
    for path in files:
        events = decode(path.read_bytes())
        agui = AguiEncoder()
        jobs.append((f"{path.name}:agui", "agui", b"".join(agui.encode(e) for e in events)))
        expected_finish[path.name] = event_to_wire(events[-1])["metadata"]["finishReason"]
        for client in ("ai-v7", "ai-v6", "ai-v5"):
            enc = AiSdkEncoder()
            body = b"".join(enc.encode(e) for e in events) + enc.close()
            jobs.append((f"{path.name}:{client}", client, body))
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], f"{job_id}: {result['error']}"
        assert not result["warnings"], f"{job_id}: {result['warnings']}"
        name, client = job_id.rsplit(":", 1)
        if client != "agui":
            assert result["finishReason"] == expected_finish[name], job_id
    # The signature reaches the AI SDK UIMessage reasoning part (round-trip to Anthropic).
    parts = results["thinking-signature.sse:ai-v7"]["messages"][-1]["parts"]
    reasoning = [p for p in parts if p["type"] == "reasoning"]
    assert reasoning and reasoning[0]["providerMetadata"]["anthropic"]["signature"]
    # Parallel client tool calls become two tool calls with parsable arguments in AG-UI.
    messages = results["tool-use-parallel-no-args.sse:agui"]["messages"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{}, {}]
