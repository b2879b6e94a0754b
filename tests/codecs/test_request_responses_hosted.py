"""Provider-executed tool calls go back to OpenAI Responses in the provider's form, never as
client function calls (issue 11, kinds 5/6).

A history built from a run with hosted tools holds them as tool calls (``@ag-ui/client``
1.0.0 keeps TOOL_CALL_START ``metadata.providerExecuted`` on the tool call) and their results
as ``tool`` messages (the done item as JSON). Expected bodies: what ``@ai-sdk/openai`` 4.0.46
sends (vercel/ai ``packages/openai/src/responses/convert-to-openai-responses-input.ts`` at
ed857f5): with ``store: false`` a provider-executed call is skipped and its result not sent
(the text answer stays); with ``store: true`` the item is ``{"type": "item_reference", "id"}``;
client calls stay ``function_call`` / ``function_call_output`` (API reference, "Create a model
response", ``input``). Item ids come from the recorded upstream stream (tests/corpus), never
from our output.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_responses_fixtures import cfile, upstream_payloads

from agui_codecs.identity import derived_id
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.openai_responses.request import build_request, to_openai_responses

WEB_SEARCH = "web-search-calls-url-citations.sse"
MCP = "mcp-list-tools-mcp-call.sse"
DECLARED = ("get_weather", "web_search", "lookup")  # a client may name a function web_search
# hosted item type -> the AG-UI call name the decoder gives it (decoder docstring)
HOSTED = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "mcp_list_tools": "mcp_list_tools",
    "mcp_call": "mcp.ask_question",
}


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


def upstream_items(name: str) -> list[dict[str, Any]]:
    return [
        p["item"]
        for p in upstream_payloads(cfile(name))
        if p["type"] == "response.output_item.done"
    ]


def hosted_turn(item: dict[str, Any], *, flagged: bool, call_id: str | None = None) -> list[Any]:
    """A hosted item as ``@ag-ui/client`` holds it: the call (with or without the metadata a
    client keeps) and its result, the done item's JSON."""
    name = HOSTED[item["type"]]
    if item["type"] == "mcp_call":
        name = f"mcp.{item['name']}"
    call_id = call_id or item["id"]
    call: dict[str, Any] = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": "{}"},
    }
    if flagged:
        call["metadata"] = {"providerExecuted": True}
    return [
        {"id": f"{call_id}-a", "role": "assistant", "toolCalls": [call]},
        {
            "id": f"{call_id}-result",
            "role": "tool",
            "toolCallId": call_id,
            "content": orjson.dumps(item).decode(),
        },
    ]


def web_search_history(*, flagged: bool) -> tuple[list[dict[str, Any]], list[str], str]:
    items = upstream_items(WEB_SEARCH)
    searches = [i for i in items if i["type"] == "web_search_call"]
    [answer] = [i for i in items if i["type"] == "message"]
    text = "".join(p["text"] for p in answer["content"] if p["type"] == "output_text")
    messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "Tallest?"}]
    for item in searches:
        messages += hosted_turn(item, flagged=flagged)
    messages.append({"id": "m1", "role": "assistant", "content": text})
    messages.append({"id": "u2", "role": "user", "content": "And in BC?"})
    return messages, [i["id"] for i in searches], text


def test_web_search_calls_are_left_out_statelessly_and_the_answer_kept() -> None:
    """``store: false``: both recorded ``web_search_call`` items are skipped, whether the client
    kept the metadata or not; the provider's answer and the user turns stay."""
    for flagged in (True, False):
        messages, _, text = web_search_history(flagged=flagged)
        body = build_request(ClientRequest(run_input(messages)), model="gpt-5", params={})
        assert body["store"] is False
        assert body["input"] == [
            {"role": "user", "content": "Tallest?"},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "And in BC?"},
        ]


def test_web_search_calls_are_item_references_with_store() -> None:
    """``store: true`` (route ``params``): each item once as ``item_reference`` by its id."""
    messages, ids, text = web_search_history(flagged=True)
    body = to_openai_responses(run_input(messages), model="gpt-5", params={"store": True})
    assert body["input"] == [
        {"role": "user", "content": "Tallest?"},
        *({"type": "item_reference", "id": i} for i in ids),
        {"role": "assistant", "content": text},
        {"role": "user", "content": "And in BC?"},
    ]


def test_mcp_list_tools_and_call_are_never_function_calls() -> None:
    """The recorded ``mcp_list_tools`` and ``mcp_call`` (``mcp.ask_question``) beside a client
    call: only the client's call and result go as function items."""
    items = {i["type"]: i for i in upstream_items(MCP)}
    messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "About?"}]
    messages += hosted_turn(items["mcp_list_tools"], flagged=False)
    messages += hosted_turn(items["mcp_call"], flagged=False)
    weather = {"id": "call_1", "type": "function", "function": {"name": "get_weather"}}
    weather["function"]["arguments"] = '{"city":"Paris"}'
    messages += [
        {"id": "a2", "role": "assistant", "content": "Also:", "toolCalls": [weather]},
        {"id": "t2", "role": "tool", "toolCallId": "call_1", "content": "18C"},
    ]
    body = to_openai_responses(run_input(messages, DECLARED), model="gpt-5")
    assert body["input"] == [
        {"role": "user", "content": "About?"},
        {"role": "assistant", "content": "Also:"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
    ]
    stored = to_openai_responses(
        run_input(messages, DECLARED), model="gpt-5", params={"store": True}
    )
    refs = [i["id"] for i in stored["input"] if i.get("type") == "item_reference"]
    assert refs == [items["mcp_list_tools"]["id"], items["mcp_call"]["id"]]


def test_a_client_function_named_like_a_hosted_tool_stays_a_function_call() -> None:
    """A declared ``web_search`` function the model called, whose result merely looks like a
    hosted item (another id), is the client's: ``function_call`` + ``function_call_output``."""
    near_miss = orjson.dumps({"type": "web_search_call", "id": "ws_other"}).decode()
    call = {"id": "call_ws", "type": "function", "function": {"name": "web_search"}}
    call["function"]["arguments"] = '{"q":"x"}'
    messages = [
        {"id": "u1", "role": "user", "content": "Search."},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "call_ws", "content": near_miss},
    ]
    body = to_openai_responses(run_input(messages, DECLARED), model="gpt-5")
    assert body["input"][1:] == [
        {
            "type": "function_call",
            "call_id": "call_ws",
            "name": "web_search",
            "arguments": '{"q":"x"}',
        },
        {"type": "function_call_output", "call_id": "call_ws", "output": near_miss},
    ]


def test_an_unanswered_mcp_approval_request_is_no_function_call() -> None:
    """An approval call (``mcp.<name>``, no result) the user did not answer: a name no OpenAI
    function can have, so it is left out (a ``function_call`` without output is refused)."""
    call = {"id": "mcpr_1", "type": "function", "function": {"name": "mcp.shorten_url"}}
    call["function"]["arguments"] = '{"url":"https://a.b"}'
    messages = [
        {"id": "u1", "role": "user", "content": "Shorten."},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "u2", "role": "user", "content": "Never mind."},
    ]
    body = to_openai_responses(run_input(messages), model="gpt-5")
    assert body["input"] == [
        {"role": "user", "content": "Shorten."},
        {"role": "user", "content": "Never mind."},
    ]


# -- the property ------------------------------------------------------------------------------

_CLIENT_IDS = ("call_0", "call_1", "call_2")  # hosts reuse these every turn
_HOSTED_BASES = ("ws_a", "fs_b", "ci_c", "ig_d", "mcpl_e", "mcp_f")
_TYPES = tuple(HOSTED)


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    """A conversation mixing client calls (reused ids, results in any order and interleaved
    with user turns, results that look like hosted items) and hosted calls (with or without
    the client's metadata, reused item ids as derived ids, unanswered MCP approvals)."""
    messages: list[dict[str, Any]] = [{"id": "u0", "role": "user", "content": "go"}]
    client_calls: list[str] = []
    client_results: list[str] = []
    texts: list[str] = []
    items: set[str] = set()
    uses: Counter[str] = Counter()
    for turn in range(draw(st.integers(1, 4))):
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for k in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["client", "hosted", "approval"]))
            if kind == "client":
                call_id = draw(st.sampled_from(_CLIENT_IDS))
                if any(c["id"] == call_id for c in calls):
                    continue  # one id per call within a turn
                name = draw(st.sampled_from(DECLARED))
                calls.append({"id": call_id, "type": "function", "function": {"name": name}})
                calls[-1]["function"]["arguments"] = "{}"
                client_calls.append(call_id)
                content = draw(
                    st.one_of(
                        st.text(max_size=5),
                        st.sampled_from(_TYPES).map(
                            lambda t: orjson.dumps({"type": t, "id": "other"}).decode()
                        ),
                    )
                )
                client_results.append(call_id)
                results.append({"role": "tool", "toolCallId": call_id, "content": content})
            elif kind == "hosted":
                itype = draw(st.sampled_from(_TYPES))
                base = draw(st.sampled_from(_HOSTED_BASES))
                uses[base] += 1
                call_id = base if uses[base] == 1 else derived_id(base, uses[base])
                item = {"id": base, "type": itype, "status": "completed"}
                if itype == "mcp_call":
                    item["name"] = "ask_question"
                call = {"id": call_id, "type": "function", "function": {"name": HOSTED[itype]}}
                call["function"]["arguments"] = "{}"
                flagged = draw(st.booleans())
                content = orjson.dumps(item).decode()
                if flagged:
                    call["metadata"] = {"providerExecuted": True}
                    content = draw(st.sampled_from([content, "kept elsewhere"]))
                calls.append(call)
                items.add(base)
                results.append({"role": "tool", "toolCallId": call_id, "content": content})
            else:
                call_id = f"mcpr_{turn}_{k}"
                call = {"id": call_id, "type": "function", "function": {"name": "mcp.shorten"}}
                call["function"]["arguments"] = "{}"
                calls.append(call)
                items.add(call_id)
        assistant: dict[str, Any] = {"id": f"a{turn}", "role": "assistant"}
        if calls:
            assistant["toolCalls"] = calls
        text = draw(st.sampled_from([None, f"step {turn}"]))
        if text or not calls:
            assistant["content"] = text = text or f"answer {turn}"
            texts.append(text)
        messages.append(assistant)
        order = draw(st.permutations(results))
        for n, result in enumerate(order):
            messages.append({"id": f"t{turn}-{n}", **result})
            if draw(st.booleans()):
                messages.append({"id": f"u{turn}-{n}", "role": "user", "content": "ok"})
    return {
        "messages": messages,
        "client_calls": client_calls,
        "client_results": client_results,
        "texts": texts,
        "items": items,
    }


@settings(max_examples=150, deadline=None)
@given(histories(), st.booleans())
def test_no_hosted_call_goes_out_as_a_function_call(case: dict[str, Any], store: bool) -> None:
    """Whatever the mix: every client call goes exactly once as ``function_call`` (in order)
    and every client result exactly once as ``function_call_output``; nothing else is a
    function item; every assistant text is kept; with ``store: true`` each hosted item is
    referenced exactly once, without it nothing is."""
    params = {"store": True} if store else {}
    body = to_openai_responses(run_input(case["messages"], DECLARED), model="m", params=params)
    items = body["input"]
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert calls == case["client_calls"]
    assert Counter(outputs) == Counter(case["client_results"])
    texts = [i["content"] for i in items if i.get("role") == "assistant"]
    assert texts == case["texts"]
    refs = [i["id"] for i in items if i.get("type") == "item_reference"]
    assert Counter(refs) == (Counter(case["items"]) if store else Counter())
    for item in items:  # nothing else: messages, function items, references
        assert "role" in item or item["type"] in {
            "function_call",
            "function_call_output",
            "item_reference",
        }
