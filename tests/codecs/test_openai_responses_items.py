"""openai-responses decoder (issue 5): output items other than plain text.

Custom and hosted tool calls, reasoning summaries and encrypted content, citations, MCP
approval requests, partial images, unknown items, and how item events are keyed. Expected values
come from the recorded events of the corpus files or from the hand-made events themselves.
"""

from __future__ import annotations

import orjson
from corpus import require_corpus
from decoder_checks import decode_all, wire
from openai_responses_fixtures import (
    FUNCTION_CALL_ITEM,
    MESSAGE_ITEM,
    NAME,
    ai_sdk_chunks,
    cfile,
    completed,
    created,
    decoded,
    of_type,
    sse,
    upstream_payloads,
)


# -- items --------------------------------------------------------------------------------
def test_custom_tool_input_is_sent_as_a_json_string() -> None:
    path = cfile("custom-tool-call.jsonl")
    events = decode_all(NAME, path.read_bytes())
    args = "".join(e["delta"] for e in of_type(wire(events), "TOOL_CALL_ARGS"))
    assert orjson.loads(args) == "SELECT * FROM users WHERE age > 25"
    chunks = ai_sdk_chunks(events)
    available = [c for c in chunks if c["type"] == "tool-input-available"]
    assert available[0]["input"] == "SELECT * FROM users WHERE age > 25"


def test_reasoning_encrypted_content_is_keyed_to_its_reasoning_message() -> None:
    path = cfile("code-interpreter-reasoning-summary.sse")
    evs = decoded(path)
    final = [
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "reasoning"
    ]
    values = of_type(evs, "REASONING_ENCRYPTED_VALUE")
    assert [v["encryptedValue"] for v in values] == [i["encrypted_content"] for i in final]
    reasoning_ids = {e["messageId"] for e in of_type(evs, "REASONING_MESSAGE_START")}
    for v in values:
        assert v["subtype"] == "message" and v["entityId"] in reasoning_ids
        assert v["metadata"] == {"provider": "openai", "field": "encryptedContent"}
    summary = "".join(e["delta"] for e in of_type(evs, "REASONING_MESSAGE_CONTENT"))
    assert summary == final[0]["summary"][0]["text"]


def test_summary_parts_of_one_item_are_separate_paragraphs_of_one_reasoning_message() -> None:
    where = {"item_id": "rs_1", "output_index": 0}
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    body = sse(
        created(),
        {"type": "response.output_item.added", **where, "item": item},
        {
            "type": "response.reasoning_summary_text.delta",
            **where,
            "summary_index": 0,
            "delta": "One.",
        },
        {
            "type": "response.reasoning_summary_text.delta",
            **where,
            "summary_index": 1,
            "delta": "Two.",
        },
        {"type": "response.output_item.done", **where, "item": item},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert len(of_type(evs, "REASONING_MESSAGE_START")) == 1
    assert "".join(e["delta"] for e in of_type(evs, "REASONING_MESSAGE_CONTENT")) == "One.\n\nTwo."


def test_hosted_tools_are_provider_executed_calls_with_results() -> None:
    for name, item_type in [
        ("web-search-calls-url-citations.sse", "web_search_call"),
        ("file-search-call-file-citations.sse", "file_search_call"),
        ("code-interpreter-reasoning-summary.sse", "code_interpreter_call"),
        ("mcp-list-tools-mcp-call.sse", "mcp_call"),
        ("image-generation-call.jsonl", "image_generation_call"),
    ]:
        path = require_corpus("openai-responses")[0].parent / name
        evs = decoded(path)
        items = [
            p["item"]
            for p in upstream_payloads(path)
            if p["type"] == "response.output_item.done" and p["item"]["type"] == item_type
        ]
        assert items, name
        for item in items:
            start = [e for e in of_type(evs, "TOOL_CALL_START") if e["toolCallId"] == item["id"]]
            assert start and start[0]["metadata"] == {"providerExecuted": True}, name
            results = [e for e in of_type(evs, "TOOL_CALL_RESULT") if e["toolCallId"] == item["id"]]
            assert [orjson.loads(r["content"]) for r in results] == [item], name


def test_code_interpreter_arguments_parse_to_container_and_code() -> None:
    path = cfile("code-interpreter-reasoning-summary.sse")
    evs = decoded(path)
    items = [
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "code_interpreter_call"
    ]
    for item in items:
        args = "".join(
            e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS") if e["toolCallId"] == item["id"]
        )
        assert orjson.loads(args) == {"container_id": item["container_id"], "code": item["code"]}


def test_citations_become_sources_once_each() -> None:
    web = decoded(cfile("web-search-calls-url-citations.sse"))
    sources = [e["value"] for e in of_type(web, "CUSTOM") if e["name"] == "source"]
    url = "https://www.britannica.com/place/Mount-Columbia?utm_source=openai"
    assert sources == [
        {
            "sourceType": "url",
            "sourceId": url,
            "url": url,
            "title": "Mount Columbia | mountain, Alberta, Canada | Britannica",
        }
    ]
    files = decoded(cfile("file-search-call-file-citations.sse"))
    docs = [e["value"] for e in of_type(files, "CUSTOM") if e["name"] == "source"]
    assert docs == [
        {
            "sourceType": "document",
            "sourceId": "file-9RhPAs9YqVajpGXRfcgavJ",
            "title": "tmp8l5_2pzy.txt",
            "filename": "tmp8l5_2pzy.txt",
            "mediaType": "text/plain",
            "fileId": "file-9RhPAs9YqVajpGXRfcgavJ",
        }
    ]


def test_mcp_approval_request_is_a_tool_call_and_an_interrupt() -> None:
    path = cfile("mcp-approval-request.jsonl")
    evs = decoded(path)
    request = next(
        p["item"]
        for p in upstream_payloads(path)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "mcp_approval_request"
    )
    start = [e for e in of_type(evs, "TOOL_CALL_START") if e["toolCallId"] == request["id"]]
    assert start[0]["toolCallName"] == "mcp.create_short_url"
    args = "".join(
        e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS") if e["toolCallId"] == request["id"]
    )
    assert orjson.loads(args) == orjson.loads(request["arguments"])
    outcome = evs[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    assert interrupt["id"] == interrupt["toolCallId"] == request["id"]
    assert interrupt["reason"] == "tool_approval"  # ARCHITECTURE.md convention
    assert interrupt["metadata"] == {  # what rebuilds the item for a stateless continuation
        "provider": "openai",
        "type": "mcp_approval_request",
        "itemId": request["id"],
        "name": request["name"],
        "serverLabel": request["server_label"],
        "arguments": request["arguments"],
    }


def test_partial_image_is_a_preliminary_output_of_its_call() -> None:
    path = cfile("image-generation-call.jsonl")
    upstream = next(
        p
        for p in upstream_payloads(path)
        if p["type"].endswith("image_generation_call.partial_image")
    )
    [partial] = [
        e for e in of_type(decoded(path), "CUSTOM") if e["name"] == "tool-output-preliminary"
    ]
    assert partial["value"]["toolCallId"] == upstream["item_id"]
    assert partial["value"]["preliminary"] is True
    assert partial["value"]["output"]["result"] == upstream["partial_image_b64"]
    assert partial["value"]["output"]["partial_image_index"] == 0


def test_failed_hosted_call_result_is_flagged_as_error() -> None:
    item = {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "ask",
        "server_label": "wiki",
        "arguments": "{}",
        "status": "failed",
        "error": {"type": "mcp_tool_error", "message": "boom"},
        "output": None,
    }
    body = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress", "error": None},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        completed(),
    )
    [result] = of_type(wire(decode_all(NAME, body)), "TOOL_CALL_RESULT")
    assert result["metadata"] == {"isError": True}
    assert orjson.loads(result["content"]) == item


def test_unknown_items_are_kept_and_unknown_client_calls_are_tool_calls() -> None:
    shell = {
        "type": "shell_call",
        "id": "sh_1",
        "call_id": "call_shell_1",
        "status": "completed",
        "action": {"commands": ["ls"]},
    }
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"}
    body = sse(
        created(),
        {"type": "response.output_item.done", "output_index": 0, "item": shell},
        {"type": "response.output_item.done", "output_index": 1, "item": compaction},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    start = of_type(evs, "TOOL_CALL_START")[0]
    assert (start["toolCallId"], start["toolCallName"]) == ("call_shell_1", "shell")
    args = "".join(e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS"))
    assert orjson.loads(args) == {"action": {"commands": ["ls"]}}
    custom = [e for e in of_type(evs, "CUSTOM") if e["name"] == "openai.output_item"]
    assert custom[0]["value"] == {"outputIndex": 1, "item": compaction}
    assert evs[-1]["metadata"]["finishReason"] == "tool-calls"


def test_events_without_output_index_are_keyed_by_item_id() -> None:
    item = {**FUNCTION_CALL_ITEM}
    body = sse(
        created(),
        {"type": "response.output_item.added", "item": item},
        {"type": "response.function_call_arguments.delta", "item_id": item["id"], "delta": '{"a":'},
        {"type": "response.function_call_arguments.delta", "item_id": item["id"], "delta": "1}"},
        {"type": "response.output_item.done", "item": {**item, "arguments": '{"a":1}'}},
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert "".join(e["delta"] for e in of_type(evs, "TOOL_CALL_ARGS")) == '{"a":1}'


def test_item_events_missing_output_index_join_the_item_announced_with_one() -> None:
    where = {"item_id": "msg_1", "content_index": 0}
    body = sse(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": []},
        },
        {"type": "response.output_text.delta", **where, "delta": "Hi"},
        {"type": "response.output_text.done", **where, "text": "Hi"},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**MESSAGE_ITEM, "content": [{"type": "output_text", "text": "Hi"}]},
        },
        completed(),
    )
    evs = wire(decode_all(NAME, body))
    assert [e["delta"] for e in of_type(evs, "TEXT_MESSAGE_CONTENT")] == ["Hi"]
