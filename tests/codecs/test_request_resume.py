"""``RunAgentInput.resume[]`` answers to tool approvals, per provider (issue 11 kind 7).

The expected bodies are written from each provider's API reference, not from our output:

* AI SDK (``ai`` 7.0.173 ``src/ui/ui-messages.ts``, ``ToolUIPart``): the answered call's tool
  part is ``{type: "tool-<name>", toolCallId, state: "approval-responded", input, approval:
  {id, approved, reason?}}``, what ``addToolApprovalResponse`` leaves before the resubmit.
* OpenAI Responses ("Create a model response", ``input`` -> "MCP approval response"):
  ``{"type": "mcp_approval_response", "approval_request_id", "approve", "reason"?}``.
* Providers without tool approval (the gateway's documented mapping, ``docs/protocols.md`` §6):
  the answer is the call's tool result, in each API's tool-result shape (OpenAI Chat ``{role:
  "tool", tool_call_id, content}``; Anthropic ``tool_result {tool_use_id, content,
  is_error?}``; Gemini ``functionResponse {id, name, response: {output} | {error}}``; Bedrock
  ``toolResult {toolUseId, content: [{json} | {text}], status}``): an approval's is the
  ``payload.result``, a denial's an error result with the reason, else ``ai``'s "Tool call
  execution denied." (``@ai-sdk/openai`` ``convert-to-openai-chat-messages.ts``,
  ``execution-denied``).

The property: random resume[] sets (statuses, payload forms, several interrupts, the call found
through ``payload.toolCallId`` or through the gateway's interrupt record) give exactly those
bodies; an approval without a result is ``INVALID_TOOL_RESULT`` where the gateway would have to
execute the tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.errors import InvalidInputError, RequestTranslationError
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.ai_sdk.request import build_request as ai_sdk_request
from agui_codecs.protocols.anthropic.request import build_request as anthropic_request
from agui_codecs.protocols.bedrock_converse.request import build_request as bedrock_request
from agui_codecs.protocols.gemini.request import build_request as gemini_request
from agui_codecs.protocols.openai_chat.request import build_request as chat_request
from agui_codecs.protocols.openai_responses.request import build_request as responses_request

DENIED = "Tool call execution denied."


@dataclass(frozen=True)
class Case:
    """One call awaiting approval and its resume entry, with the answer it means."""

    call_id: str
    name: str
    args: dict[str, Any]
    interrupt_id: str
    entry: dict[str, Any]
    approved: bool
    reason: str | None
    result: Any  # None: no result given
    via_payload: bool  # the call named in payload.toolCallId (else the gateway's record)


@st.composite
def entries(draw: st.DrawFn, index: int, *, needs_result: bool) -> Case:
    call_id, interrupt_id = f"call_{index}", f"approval_{index}"
    reason = draw(st.one_of(st.none(), st.sampled_from(["not now", "looks fine", "ünïcode ✓"])))
    result = draw(
        st.one_of(
            st.none(),
            st.sampled_from([{"deleted": True, "n": index}, f"done-{index}", {"list": [1, 2]}]),
        )
    )
    form = draw(st.sampled_from(["cancelled", "true", "false", "object", "absent"]))
    via_payload = draw(st.booleans())
    payload: Any
    if form == "cancelled":
        status, approved = "cancelled", False
        payload = {"reason": reason} if reason else None
        result = None
    elif form in ("true", "absent"):
        status, approved, reason = "resolved", True, None
        payload = True if form == "true" else None
        result = None
    elif form == "false":
        status, approved, payload, reason, result = "resolved", False, False, None, None
    else:
        status = "resolved"
        approved = draw(st.booleans())
        payload = {"approved": approved}
        if reason:
            payload["reason"] = reason
        if result is not None:
            payload["result"] = result
    if via_payload:
        if not isinstance(payload, dict):  # only an object names its call
            payload = {"approved": approved} if status == "resolved" else {}
        payload["toolCallId"] = call_id
    if needs_result and approved and result is None:
        result = {"ok": index}
        payload = dict(payload) if isinstance(payload, dict) else {"approved": True}
        payload["result"] = result
    entry: dict[str, Any] = {"interruptId": interrupt_id, "status": status}
    if payload is not None:
        entry["payload"] = payload
    if not approved:
        result = None
    return Case(
        call_id,
        f"tool_{index}",
        {"i": index},
        interrupt_id,
        entry,
        approved,
        reason,
        result,
        via_payload,
    )


def resume_sets(*, needs_result: bool) -> st.SearchStrategy[list[Case]]:
    return st.integers(1, 4).flatmap(
        lambda n: st.tuples(*(entries(i, needs_result=needs_result) for i in range(n))).map(list)
    )


def request(cases: list[Case], *, interrupt_ids_are_calls: bool = False) -> ClientRequest:
    calls = [
        {
            "id": c.interrupt_id if interrupt_ids_are_calls else c.call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.args)},
        }
        for c in cases
    ]
    run_input = RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r2",
            "messages": [
                {"id": "u1", "role": "user", "content": "Do it."},
                {"id": "a1", "role": "assistant", "toolCalls": calls},
            ],
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
            "resume": [c.entry for c in cases],
        }
    )
    recorded = {c.interrupt_id: c.call_id for c in cases if not c.via_payload}
    return ClientRequest(run_input, interrupt_calls={} if interrupt_ids_are_calls else recorded)


def text_of(case: Case) -> str:
    if not case.approved:
        return case.reason or DENIED
    return (
        case.result
        if isinstance(case.result, str)
        else json.dumps(case.result, separators=(",", ":"))
    )


def by_order(cases: list[Case]) -> list[Case]:
    return sorted(cases, key=lambda c: c.call_id)


# --- providers with tool approval ----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(resume_sets(needs_result=False))
def test_ai_sdk_gets_approval_responded_tool_parts(cases: list[Case]) -> None:
    body = ai_sdk_request(request(cases), model="", params={})
    assert isinstance(body, dict)
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    for c in cases:
        approval: dict[str, Any] = {"id": c.interrupt_id, "approved": c.approved}
        if c.reason:
            approval["reason"] = c.reason
        parts.append(
            {
                "type": f"tool-{c.name}",
                "toolCallId": c.call_id,
                "state": "approval-responded",
                "input": c.args,
                "approval": approval,
            }
        )
    assert body["messages"] == [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Do it."}]},
        {"id": "a1", "role": "assistant", "parts": parts},
    ]


@settings(max_examples=60, deadline=None)
@given(resume_sets(needs_result=False))
def test_responses_gets_mcp_approval_responses(cases: list[Case]) -> None:
    body = responses_request(request(cases, interrupt_ids_are_calls=True), model="m", params={})
    expected: list[dict[str, Any]] = [{"role": "user", "content": "Do it."}]
    for c in cases:
        item: dict[str, Any] = {
            "type": "mcp_approval_response",
            "approval_request_id": c.interrupt_id,
            "approve": c.approved,
        }
        if c.reason:
            item["reason"] = c.reason
        expected.append(item)
    assert body["input"] == expected


def mcp_metadata(c: Case) -> dict[str, Any]:
    """The interrupt metadata the Responses decoder records for an ``mcp_approval_request``
    item ``{id: <interruptId>, server_label, name, arguments}``."""
    return {
        "provider": "openai",
        "type": "mcp_approval_request",
        "itemId": c.interrupt_id,
        "name": c.name,
        "serverLabel": f"server_{c.name}",
        "arguments": json.dumps(c.args),
    }


def mcp_request_item(c: Case) -> dict[str, Any]:
    """The input item "MCP approval request" of the API reference for that item."""
    return {
        "type": "mcp_approval_request",
        "id": c.interrupt_id,
        "server_label": f"server_{c.name}",
        "name": c.name,
        "arguments": json.dumps(c.args),
    }


@settings(max_examples=80, deadline=None)
@given(
    resume_sets(needs_result=False).flatmap(
        lambda cases: st.tuples(
            st.just(cases),
            st.lists(st.booleans(), min_size=len(cases), max_size=len(cases)),
            st.lists(st.booleans(), min_size=len(cases), max_size=len(cases)),
            st.booleans(),
        )
    )
)
def test_responses_gets_the_rebuilt_request_item_with_its_response(
    drawn: tuple[list[Case], list[bool], list[bool], bool],
) -> None:
    """Stateless: each answered approval whose interrupt metadata the gateway recorded gets its
    ``mcp_approval_request`` item, in place of its call in the history (found through the
    recorded ``toolCallId``, ``payload.toolCallId`` or the interrupt id), else just before its
    response; an answer without metadata gets the response alone, its call left out."""
    cases, with_metadata, in_history, ids_are_calls = drawn
    base = request(cases, interrupt_ids_are_calls=ids_are_calls)
    wire = base.run_input.model_dump(mode="json", by_alias=True, exclude_none=True)
    calls = wire["messages"][1]["toolCalls"]
    wire["messages"][1]["toolCalls"] = [
        k for k, keep in zip(calls, in_history, strict=True) if keep
    ]
    if not any(in_history):
        del wire["messages"][1]
    metadata = {
        c.interrupt_id: mcp_metadata(c) for c, m in zip(cases, with_metadata, strict=True) if m
    }
    client = ClientRequest(
        RunAgentInput.model_validate(wire),
        interrupt_calls=base.interrupt_calls,
        interrupt_metadata=metadata,
    )
    body = responses_request(client, model="m", params={})
    expected: list[dict[str, Any]] = [{"role": "user", "content": "Do it."}]
    for c, meta, held in zip(cases, with_metadata, in_history, strict=True):
        if meta and held:
            expected.append(mcp_request_item(c))  # in place of its call
    for c, meta, held in zip(cases, with_metadata, in_history, strict=True):
        if meta and not held:
            expected.append(mcp_request_item(c))
        item: dict[str, Any] = {
            "type": "mcp_approval_response",
            "approval_request_id": c.interrupt_id,
            "approve": c.approved,
        }
        if c.reason:
            item["reason"] = c.reason
        expected.append(item)
    assert body["input"] == expected


# --- providers without: the answer is the tool result --------------------------------------


def assistant_calls(cases: list[Case]) -> list[dict[str, Any]]:
    return [
        {
            "id": c.call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.args)},
        }
        for c in cases
    ]


@settings(max_examples=60, deadline=None)
@given(resume_sets(needs_result=True))
def test_openai_chat_gets_tool_messages(cases: list[Case]) -> None:
    body = chat_request(request(cases), model="m", params={})
    messages = body["messages"]
    assert messages[0] == {"role": "user", "content": "Do it."}
    assert messages[1]["role"] == "assistant"
    assert messages[1]["tool_calls"] == assistant_calls(cases)
    results = sorted(messages[2:], key=lambda m: m["tool_call_id"])
    assert results == [
        {"role": "tool", "tool_call_id": c.call_id, "content": text_of(c)} for c in by_order(cases)
    ]


@settings(max_examples=60, deadline=None)
@given(resume_sets(needs_result=True))
def test_anthropic_gets_tool_result_blocks(cases: list[Case]) -> None:
    body = anthropic_request(request(cases), model="m", params={})
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args} for c in cases
        ],
    }
    last = body["messages"][2]
    assert last["role"] == "user" and len(body["messages"]) == 3
    expected = []
    for c in by_order(cases):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": c.call_id,
            "content": text_of(c),
        }
        if not c.approved:
            block["is_error"] = True
        expected.append(block)
    assert sorted(last["content"], key=lambda b: b["tool_use_id"]) == expected


@settings(max_examples=60, deadline=None)
@given(resume_sets(needs_result=True))
def test_gemini_gets_function_responses(cases: list[Case]) -> None:
    body = gemini_request(request(cases), model="m", params={})
    contents = body["contents"]
    assert len(contents) == 3 and contents[2]["role"] == "user"
    expected = []
    for c in by_order(cases):
        response = {"output": c.result} if c.approved else {"error": text_of(c)}
        expected.append(
            {"functionResponse": {"id": c.call_id, "name": c.name, "response": response}}
        )
    assert sorted(contents[2]["parts"], key=lambda p: p["functionResponse"]["id"]) == expected


@settings(max_examples=60, deadline=None)
@given(resume_sets(needs_result=True))
def test_bedrock_gets_tool_results(cases: list[Case]) -> None:
    body = bedrock_request(request(cases), model="m", params={})
    messages = body["messages"]
    assert len(messages) == 3 and messages[2]["role"] == "user"
    expected = []
    for c in by_order(cases):
        content = [{"json": c.result}] if isinstance(c.result, dict) else [{"text": text_of(c)}]
        status = "success" if c.approved else "error"
        expected.append(
            {"toolResult": {"toolUseId": c.call_id, "content": content, "status": status}}
        )
    assert sorted(messages[2]["content"], key=lambda b: b["toolResult"]["toolUseId"]) == expected


# --- refusals ------------------------------------------------------------------------------


BUILDERS = [chat_request, anthropic_request, gemini_request, bedrock_request]


@pytest.mark.parametrize("build", BUILDERS)
def test_an_approval_without_result_is_invalid_tool_result(build: Any) -> None:
    case = Case(
        "call_0",
        "tool_0",
        {},
        "approval_0",
        {"interruptId": "approval_0", "status": "resolved", "payload": {"toolCallId": "call_0"}},
        True,
        None,
        None,
        True,
    )
    with pytest.raises(RequestTranslationError) as refused:
        build(request([case]), model="m", params={})
    assert refused.value.code == "INVALID_TOOL_RESULT"


@pytest.mark.parametrize("build", [*BUILDERS, ai_sdk_request])
@pytest.mark.parametrize(
    "payload",
    ["yes", 3, [True], {"approved": "yes"}, {"reason": 5}, {"toolCallId": ""}],
)
def test_a_payload_that_is_no_answer_is_invalid_request(build: Any, payload: Any) -> None:
    case = Case(
        "call_0",
        "tool_0",
        {},
        "approval_0",
        {"interruptId": "approval_0", "status": "resolved", "payload": payload},
        True,
        None,
        None,
        False,
    )
    with pytest.raises(InvalidInputError):
        build(request([case]), model="m", params={})


@pytest.mark.parametrize("build", [*BUILDERS, ai_sdk_request])
def test_an_answer_naming_no_tool_call_is_invalid_request(build: Any) -> None:
    case = Case(
        "call_0",
        "tool_0",
        {},
        "approval_0",
        {"interruptId": "approval_0", "status": "cancelled", "payload": {"toolCallId": "call_9"}},
        False,
        None,
        None,
        True,
    )
    with pytest.raises(InvalidInputError):
        build(request([case]), model="m", params={})


@pytest.mark.parametrize("build", [*BUILDERS, ai_sdk_request, responses_request])
def test_two_answers_to_one_interrupt_are_invalid_request(build: Any) -> None:
    entry = {"interruptId": "call_0", "status": "cancelled"}
    case = Case("call_0", "tool_0", {}, "call_0", entry, False, None, None, False)
    req = request([case, case], interrupt_ids_are_calls=True)
    with pytest.raises(InvalidInputError):
        build(req, model="m", params={})


def test_a_call_with_its_result_keeps_it() -> None:
    entry = {"interruptId": "approval_0", "status": "cancelled"}
    case = Case("call_0", "tool_0", {}, "approval_0", entry, False, None, None, False)
    req = request([case])
    wire = req.run_input.model_dump(mode="json", by_alias=True, exclude_none=True)
    wire["messages"].append(
        {"id": "t1", "role": "tool", "toolCallId": "call_0", "content": "ran already"}
    )
    answered = ClientRequest(
        RunAgentInput.model_validate(wire), interrupt_calls=req.interrupt_calls
    )
    body = chat_request(answered, model="m", params={})
    assert [m for m in body["messages"] if m["role"] == "tool"] == [
        {"role": "tool", "tool_call_id": "call_0", "content": "ran already"}
    ]
