"""Anthropic Messages stream decoder (``agui_codecs.protocols.anthropic.decoder``): the whole corpus.

Every recorded stream in ``tests/corpus/anthropic`` decodes to a complete run, whole, byte by
byte or split anywhere, without dropping a tool call, a tool result or argument text. Expected
values come from the recordings themselves, parsed independently here, and from the AG-UI 1.0
rules in ``docs/protocols.md`` §2; the real clients (``@ag-ui/client`` 1.0.0, ``ai``
7/6/5) keep the signatures and the parallel calls' arguments
(:func:`test_the_real_clients_keep_signatures_and_parallel_call_arguments`). The generic checks
(splits, legality, truncation, the clients' verdicts) are the decoder contract's
(``tests/contracts/test_decoder_*.py``). The semantics are checked in ``test_anthropic.py``,
the named faults in ``test_anthropic_faults.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic_fixtures import (
    T,
    assert_complete_run,
    decode,
    of_type,
    upstream_events,
)
from corpus import corpus_files, require_corpus
from decoder_runs import client_job, client_results
from real_clients import ReplayResult, require_harness

FILES = corpus_files("anthropic")
FILE_IDS = [p.name for p in FILES]


# -- every corpus file --------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_corpus_file_ends_in_run_finished_and_keeps_the_decoder_promises(path: Path) -> None:
    events = decode(path.read_bytes())
    assert_complete_run(events)
    assert events[-1].type == T.RUN_FINISHED  # every recording ends with message_stop


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
def test_the_real_clients_keep_signatures_and_parallel_call_arguments() -> None:
    require_harness()
    results = client_results()  # one replay of the decoder contract suite (whole corpus)

    def result(name: str, client: str) -> ReplayResult:
        return results[client_job(f"anthropic/{name}", "whole", client)]

    # The signature reaches the AI SDK UIMessage reasoning part (round-trip to Anthropic).
    parts = result("thinking-signature.sse", "ai-v7")["messages"][-1]["parts"]
    reasoning = [p for p in parts if p["type"] == "reasoning"]
    assert reasoning and reasoning[0]["providerMetadata"]["anthropic"]["signature"]
    # Parallel client tool calls become two tool calls with parsable arguments in AG-UI.
    messages = result("tool-use-parallel-no-args.sse", "agui")["messages"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{}, {}]
