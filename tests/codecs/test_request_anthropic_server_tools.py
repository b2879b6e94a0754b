"""Anthropic server tool calls go back as the API's own blocks, never as client ``tool_use``
(issue 11, kinds 5/6).

Expected blocks come from the recorded upstream streams (tests/corpus/anthropic: the
``content_block_start`` blocks and their ``input_json_delta`` as the API sent them) and from
the Messages API input types (``anthropic`` 2.15.0 ``ServerToolUseBlockParam``,
``WebSearchToolResultBlockParam``..., required keys checked below); placement as
``@ai-sdk/anthropic`` 4.0.41 (vercel/ai ``convert-to-anthropic-prompt.ts``): the
``server_tool_use`` and its result block in the assistant turn, in stream order.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, get_type_hints

from ag_ui.core import RunAgentInput
from anthropic.types import (
    bash_code_execution_tool_result_block_param,
    server_tool_use_block_param,
    web_fetch_tool_result_block_param,
    web_search_tool_result_block_param,
)
from anthropic_fixtures import upstream_events
from corpus import CORPUS_DIR, require_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.identity import derived_id
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.anthropic.request import build_request, to_anthropic

SDK_TYPES = {
    "server_tool_use": server_tool_use_block_param.ServerToolUseBlockParam,
    "web_search_tool_result": web_search_tool_result_block_param.WebSearchToolResultBlockParam,
    "web_fetch_tool_result": web_fetch_tool_result_block_param.WebFetchToolResultBlockParam,
    "bash_code_execution_tool_result": (
        bash_code_execution_tool_result_block_param.BashCodeExecutionToolResultBlockParam
    ),
}
RECORDED = ("web-search-citations.sse", "web-fetch-thinking.sse", "code-execution-thinking.sse")


def run_input(messages: list[dict[str, Any]], tools: tuple[str, ...] = ()) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r2",
            "messages": messages,
            "tools": [{"name": n, "description": n, "parameters": {}} for n in tools],
            "context": [],
            "state": None,
            "forwardedProps": {},
        }
    )


def recorded_blocks(name: str) -> list[dict[str, Any]]:
    """The server blocks of a recorded stream as the API sent them (inputs from their deltas)."""
    require_corpus("anthropic")
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for p in upstream_events(CORPUS_DIR / "anthropic" / name):
        if p["type"] == "content_block_start":
            blocks[p["index"]] = dict(p["content_block"])
        elif p["type"] == "content_block_delta" and p["delta"]["type"] == "input_json_delta":
            inputs[p["index"]] = inputs.get(p["index"], "") + p["delta"]["partial_json"]
    out = []
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "server_tool_use":
            text = inputs.get(index, "")
            block["input"] = json.loads(text) if text else block.get("input", {})
            out.append({k: block[k] for k in ("type", "id", "name", "input")})
        elif block["type"].endswith("_tool_result"):
            out.append({k: block[k] for k in ("type", "tool_use_id", "content")})
    return out


def history(blocks: list[dict[str, Any]], *, flagged: bool) -> list[dict[str, Any]]:
    """The recorded server calls as ``@ag-ui/client`` holds them: each call (with or without
    the metadata it keeps) then its result, the JSON text of the result block's content."""
    messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "Go."}]
    for block in blocks:
        if block["type"] == "server_tool_use":
            call: dict[str, Any] = {
                "id": block["id"],
                "type": "function",
                "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
            }
            if flagged:
                call["metadata"] = {"providerExecuted": True}
            messages.append({"id": f"a-{block['id']}", "role": "assistant", "toolCalls": [call]})
        else:
            messages.append(
                {
                    "id": f"{block['tool_use_id']}-result",
                    "role": "tool",
                    "toolCallId": block["tool_use_id"],
                    "content": json.dumps(block["content"]),
                }
            )
    messages.append({"id": "m1", "role": "assistant", "content": "Answer."})
    messages.append({"id": "u2", "role": "user", "content": "More."})
    return messages


def required(block_type: str) -> set[str]:
    hints = get_type_hints(SDK_TYPES[block_type], include_extras=True)
    return {k for k, v in hints.items() if "Required" in str(v) and "NotRequired" not in str(v)}


def test_recorded_server_calls_go_back_as_their_own_blocks() -> None:
    for name in RECORDED:
        blocks = recorded_blocks(name)
        assert blocks, name
        for flagged in (True, False):  # the srvtoolu_ id alone also tells
            body = build_request(
                ClientRequest(run_input(history(blocks, flagged=flagged))), model="m", params={}
            )
            assert body["messages"] == [
                {"role": "user", "content": [{"type": "text", "text": "Go."}]},
                {"role": "assistant", "content": [*blocks, {"type": "text", "text": "Answer."}]},
                {"role": "user", "content": [{"type": "text", "text": "More."}]},
            ], name
            for block in body["messages"][1]["content"]:
                if block["type"] in SDK_TYPES:
                    assert required(block["type"]) <= set(block), block["type"]


def test_web_search_results_keep_their_encrypted_content() -> None:
    blocks = recorded_blocks("web-search-citations.sse")
    body = to_anthropic(run_input(history(blocks, flagged=True)), model="m")
    results = [b for b in body["messages"][1]["content"] if b["type"] == "web_search_tool_result"]
    assert results and all(
        hit["encrypted_content"] for r in results for hit in r["content"]
    )  # what the API needs back to cite them (WebSearchResultBlockParam: required)


def test_mcp_tool_use_without_its_server_name_is_left_out() -> None:
    """``mcp_tool_use`` needs ``server_name``, which the history does not hold: the call and
    its result are left out (as ``@ai-sdk/anthropic`` without it), never a ``tool_use``."""
    call = {"id": "mcptoolu_1", "type": "function", "function": {"name": "ask_question"}}
    call["function"]["arguments"] = '{"q":"x"}'
    call["metadata"] = {"providerExecuted": True}
    messages = [
        {"id": "u1", "role": "user", "content": "Ask."},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "mcptoolu_1", "content": '[{"type":"text"}]'},
        {"id": "m1", "role": "assistant", "content": "It is a framework."},
    ]
    body = to_anthropic(run_input(messages), model="m")
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Ask."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is a framework."}]},
    ]


# -- the property ------------------------------------------------------------------------------

_CLIENT_IDS = ("toolu_0", "toolu_1")
_SERVER_BASES = ("srvtoolu_a", "srvtoolu_b", "mcptoolu_c")
_SERVER_NAMES = ("web_search", "web_fetch", "code_execution", "ask_question")
DECLARED = ("get_weather", "web_search")


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    """Client calls (reused ids, results in any order, user turns between) mixed with server
    calls (flagged or not, reused ids as derived ids, rebuildable or not)."""
    messages: list[dict[str, Any]] = [{"id": "u0", "role": "user", "content": "go"}]
    client_calls: list[str] = []
    client_results: list[str] = []
    rebuilt: list[str] = []
    server_ids: set[str] = set()
    uses: Counter[str] = Counter()
    for turn in range(draw(st.integers(1, 4))):
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                call_id = draw(st.sampled_from(_CLIENT_IDS))
                if any(c["id"] == call_id for c in calls):
                    continue
                name = draw(st.sampled_from(DECLARED))
                calls.append({"id": call_id, "type": "function", "function": {"name": name}})
                client_calls.append(call_id)
                client_results.append(call_id)
                content = draw(st.sampled_from(["18C", '[{"type":"web_search_result"}]']))
                results.append({"role": "tool", "toolCallId": call_id, "content": content})
            else:
                base = draw(st.sampled_from(_SERVER_BASES))
                uses[base] += 1
                call_id = base if uses[base] == 1 else derived_id(base, uses[base])
                name = draw(st.sampled_from(_SERVER_NAMES))
                call = {"id": call_id, "type": "function", "function": {"name": name}}
                if draw(st.booleans()):
                    call["metadata"] = {"providerExecuted": True}
                calls.append(call)
                server_ids.add(call_id)
                content = draw(st.sampled_from(['{"type":"x_result"}', "not json", None]))
                if content is not None:
                    results.append({"role": "tool", "toolCallId": call_id, "content": content})
                own = base.startswith("srvtoolu_") and name != "ask_question"
                if own and content is not None and content != "not json":
                    rebuilt.append(call_id)
            calls[-1]["function"]["arguments"] = "{}"
        assistant: dict[str, Any] = {"id": f"a{turn}", "role": "assistant"}
        if calls:
            assistant["toolCalls"] = calls
        else:
            assistant["content"] = f"answer {turn}"
        messages.append(assistant)
        for n, result in enumerate(draw(st.permutations(results))):
            messages.append({"id": f"t{turn}-{n}", **result})
            if draw(st.booleans()):
                messages.append({"id": f"u{turn}-{n}", "role": "user", "content": "ok"})
    return {
        "messages": messages,
        "client_calls": client_calls,
        "client_results": client_results,
        "rebuilt": rebuilt,
        "server_ids": server_ids,
    }


@settings(max_examples=150, deadline=None)
@given(histories())
def test_no_server_call_goes_out_as_a_tool_use(case: dict[str, Any]) -> None:
    """Every client call exactly once as ``tool_use`` and its result once as ``tool_result``;
    no server id in either; each rebuildable server call once as ``server_tool_use`` directly
    followed by its result block, the others left out."""
    body = to_anthropic(run_input(case["messages"], DECLARED), model="m")
    blocks = [b for turn in body["messages"] for b in turn["content"]]
    uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert uses == case["client_calls"]
    assert Counter(results) == Counter(case["client_results"])
    servers = [n for n, b in enumerate(blocks) if b["type"] == "server_tool_use"]
    assert [blocks[n]["id"] for n in servers] == case["rebuilt"]
    for n in servers:
        assert blocks[n + 1]["type"].endswith("_tool_result")
        assert blocks[n + 1]["tool_use_id"] == blocks[n]["id"]
    tails = [b for b in blocks if b["type"].endswith("_tool_result") and b["type"] != "tool_result"]
    assert len(tails) == len(servers)
