"""An answered MCP approval sent statelessly carries its ``mcp_approval_request`` item (issue 11
kind 7).

The gateway sends Responses requests with ``store: false`` and no ``previous_response_id``, so
the ``mcp_approval_response`` is resolvable only against the request item in the same
``input``: ``{"type": "mcp_approval_request", "id", "server_label", "name", "arguments"}``,
every field required (API reference, "Create a model response", ``input`` -> "MCP approval
request"; the ``openai`` SDK's ``McpApprovalRequest`` input item, checked below). Expected
values come from the recorded upstream item (``tests/corpus/openai-responses/
mcp-approval-request.jsonl``, vercel/ai fixture) and from the API reference, never from our
output.
"""

from __future__ import annotations

from typing import Any, Required, get_origin, get_type_hints

import orjson
from ag_ui.core import RunAgentInput
from openai.types.responses import response_input_item_param as sdk
from openai_responses_fixtures import cfile, decoded, of_type, upstream_payloads

from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.openai_responses.request import build_request

MCP_FILE = "mcp-approval-request.jsonl"


def run_input(messages: list[dict[str, Any]], resume: list[dict[str, Any]]) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r2",
            "messages": messages,
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
            "resume": resume,
        }
    )


def upstream_item() -> dict[str, Any]:
    path = cfile(MCP_FILE)
    return next(
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "mcp_approval_request"
    )


def corpus_answer(*, in_history: bool, approve: bool = True) -> ClientRequest:
    """The next turn after the recorded stream: the approval call as the AG-UI client holds it
    (TOOL_CALL_START / ARGS of the decoded stream), the interrupt answered by ``resume[]``, and
    the interrupt's ``toolCallId`` / ``metadata`` as the gateway reads them from the stored
    RUN_FINISHED."""
    events = decoded(cfile(MCP_FILE))
    [interrupt] = events[-1]["outcome"]["interrupts"]
    call_id = interrupt["toolCallId"]
    [start] = [e for e in of_type(events, "TOOL_CALL_START") if e["toolCallId"] == call_id]
    args = "".join(
        e["delta"] for e in of_type(events, "TOOL_CALL_ARGS") if e["toolCallId"] == call_id
    )
    messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "Shorten it."}]
    if in_history:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": start["toolCallName"], "arguments": args},
        }
        messages.append({"id": "a1", "role": "assistant", "toolCalls": [call]})
    entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": approve}
    return ClientRequest(
        run_input(messages, [entry]),
        interrupt_calls={interrupt["id"]: call_id},
        interrupt_metadata={interrupt["id"]: interrupt["metadata"]},
    )


def test_the_sdk_input_item_has_exactly_the_fields_rebuilt() -> None:
    fields = get_type_hints(sdk.McpApprovalRequest, include_extras=True)
    assert set(fields) == {"type", "id", "server_label", "name", "arguments"}
    assert all(get_origin(a) is Required for a in fields.values())  # every one required


def test_the_recorded_request_item_is_rebuilt_field_by_field_in_place_of_its_call() -> None:
    item = upstream_item()
    body = build_request(corpus_answer(in_history=True), model="gpt-5-mini", params={})
    user, rebuilt, response = body["input"]
    assert user == {"role": "user", "content": "Shorten it."}
    for field in ("type", "id", "server_label", "name", "arguments"):
        assert rebuilt[field] == item[field], field
    assert rebuilt == item  # nothing more than the upstream's item
    assert response == {
        "type": "mcp_approval_response",
        "approval_request_id": item["id"],
        "approve": True,
    }
    assert not [i for i in body["input"] if i.get("type") == "function_call"]


def test_without_the_call_in_history_the_request_item_goes_just_before_its_response() -> None:
    item = upstream_item()
    body = build_request(
        corpus_answer(in_history=False, approve=False), model="gpt-5-mini", params={}
    )
    assert body["input"] == [
        {"role": "user", "content": "Shorten it."},
        item,
        {"type": "mcp_approval_response", "approval_request_id": item["id"], "approve": False},
    ]


# -- a denial, the body written from the API reference ---------------------------------------

DEEPWIKI_ARGS = orjson.dumps(
    {"repoName": "modelcontextprotocol/modelcontextprotocol", "question": "Which transports?"}
).decode()
DEEPWIKI_METADATA = {
    "provider": "openai",
    "type": "mcp_approval_request",
    "itemId": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
    "name": "ask_question",
    "serverLabel": "deepwiki",
    "arguments": DEEPWIKI_ARGS,
}


def deepwiki(
    metadata: dict[str, Any] | None, *, interrupt_id: str = DEEPWIKI_METADATA["itemId"]
) -> ClientRequest:
    call = {
        "id": interrupt_id,
        "type": "function",
        "function": {"name": "mcp.ask_question", "arguments": DEEPWIKI_ARGS},
    }
    messages = [
        {"id": "u1", "role": "user", "content": "What transport protocols does MCP support?"},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
    ]
    resume = [
        {"interruptId": interrupt_id, "status": "cancelled", "payload": {"reason": "not this repo"}}
    ]
    recorded = {interrupt_id: metadata} if metadata is not None else {}
    return ClientRequest(run_input(messages, resume), interrupt_metadata=recorded)


def test_golden_denial_body() -> None:
    body = build_request(deepwiki(DEEPWIKI_METADATA), model="gpt-4.1", params={})
    assert body == {
        "model": "gpt-4.1",
        "input": [
            {"role": "user", "content": "What transport protocols does MCP support?"},
            {
                "type": "mcp_approval_request",
                "id": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
                "server_label": "deepwiki",
                "name": "ask_question",
                "arguments": DEEPWIKI_ARGS,
            },
            {
                "type": "mcp_approval_response",
                "approval_request_id": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
                "approve": False,
                "reason": "not this repo",
            },
        ],
        "store": False,
        "stream": True,
    }


BEFORE = [
    {"role": "user", "content": "What transport protocols does MCP support?"},
    {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_682d498e3bd4819196a0ce1664f8e77b",
        "approve": False,
        "reason": "not this repo",
    },
]
"""The input without a rebuilt item: the call left out, the response alone."""


def test_no_metadata_changes_nothing() -> None:
    assert build_request(deepwiki(None), model="gpt-4.1", params={})["input"] == BEFORE


def test_metadata_short_of_a_field_rebuilds_nothing() -> None:
    """An interrupt recorded before the item's fields were kept (``serverLabel`` only), or of
    another kind, leaves the body as without metadata."""
    old = {"provider": "openai", "type": "mcp_approval_request", "serverLabel": "deepwiki"}
    other = {**DEEPWIKI_METADATA, "type": "tool-approval-request"}
    for metadata in (old, other, {**DEEPWIKI_METADATA, "arguments": {"q": 1}}):
        assert build_request(deepwiki(metadata), model="gpt-4.1", params={})["input"] == BEFORE


def test_the_upstream_item_id_is_answered_when_the_interrupt_id_was_remapped() -> None:
    """An interrupt id the gateway remapped (``gateway/upstream_ids.py``, ``up-<hex>``) still
    answers the upstream's item id, which the metadata keeps."""
    body = build_request(deepwiki(DEEPWIKI_METADATA, interrupt_id="up-0f"), model="m", params={})
    _, request, response = body["input"]
    assert request["id"] == response["approval_request_id"] == DEEPWIKI_METADATA["itemId"]
