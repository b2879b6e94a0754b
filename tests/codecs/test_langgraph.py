"""The ``langgraph`` decoder and request builder.

The corpus (``tests/corpus/langgraph``) is what the LangGraph API server (langgraph-api 0.16.7,
in-memory edition) streamed for the scripted graph of ``tests/support/langgraph_graph.py``
(recorded with ``tests/support/langgraph_recorder.py``); what each run must show is read off
those payloads. Request bodies are compared with what the official client, langgraph-sdk's
``client.runs.stream``, POSTs for the same call (captured through an httpx mock transport).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from ag_ui.core import RunAgentInput
from corpus import corpus_path
from decoder_checks import assert_legal_run
from decoder_runs import decode, wire
from langgraph_sdk import get_client

from agui_codecs import InvalidInputError
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.langgraph import SPEC
from agui_codecs.protocols.langgraph.decoder import CUSTOM_PART, INTERRUPT_REASON
from agui_codecs.protocols.langgraph.request import thread_uuid

NAME = "langgraph"


def events_of(file: str) -> list[dict[str, Any]]:
    events, _ = decode(NAME, corpus_path(f"langgraph/{file}").read_bytes())
    assert_legal_run(events)
    return wire(events)


def sse(file: str) -> list[tuple[str, Any]]:
    out, event = [], "message"
    for line in corpus_path(f"langgraph/{file}").read_text().splitlines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            out.append((event, json.loads(line[6:])))
    return out


def texts(events: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        if e["type"] == "TEXT_MESSAGE_CONTENT":
            out[e["messageId"]] = out.get(e["messageId"], "") + e["delta"]
    return out


FILE = "weather-tool-subgraph-custom-interrupt.sse"


def test_tokens_tool_call_and_tool_result_of_the_parent_graph() -> None:
    parts = sse(FILE)
    model_update = next(d["model"] for e, d in parts if e == "updates" and "model" in d)
    [ai] = model_update["messages"]
    tool_update = next(d["tools"] for e, d in parts if e == "updates" and "tools" in d)
    [tool] = tool_update["messages"]
    events = events_of(FILE)
    assert next(iter(texts(events).values())) == ai["content"]
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    [call] = ai["tool_calls"]
    assert (start["toolCallId"], start["toolCallName"]) == (call["id"], call["name"])
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == call["args"]
    [result] = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == (tool["tool_call_id"], tool["content"])
    types = [e["type"] for e in events]
    assert types.index("TOOL_CALL_END") < types.index("TOOL_CALL_RESULT")


def test_subgraph_output_is_attributed_to_its_node() -> None:
    parts = sse(FILE)
    [namespace] = {e.split("|", 1)[1] for e, _ in parts if "|" in e}
    events = events_of(FILE)
    starts = [e for e in events if e["type"] == "TEXT_MESSAGE_START"]
    assert "metadata" not in starts[0]  # the parent graph's model
    assert starts[1]["metadata"] == {"subagent": "research", "langgraphNamespace": [namespace]}
    assert texts(events)[starts[1]["messageId"]] == "Sunny, 21 degrees."
    [custom] = [e for e in events if e["type"] == "CUSTOM"]
    assert custom["name"] == CUSTOM_PART
    assert custom["value"] == {
        "data": {"progress": 0.5, "step": "summarizing"},
        "namespace": [namespace],
    }


def test_an_interrupt_ends_the_run_with_its_id_and_question() -> None:
    [item] = next(
        d["__interrupt__"] for e, d in sse(FILE) if e == "updates" and "__interrupt__" in d
    )
    finished = events_of(FILE)[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"] == {
        "type": "interrupt",
        "interrupts": [
            {
                "id": item["id"],
                "reason": INTERRUPT_REASON,
                "message": "Send the report?",
                "metadata": {"value": item["value"], "namespace": []},
            }
        ],
    }


def test_the_resumed_run_streams_the_final_answer() -> None:
    events = events_of("weather-resume-command-final-answer.sse")
    assert list(texts(events).values()) == [
        "It is sunny in Paris. Report: Sunny, 21 degrees. (approved: yes)"
    ]
    assert events[-1]["metadata"]["finishReason"] == "stop"


def test_messages_mode_partials_give_the_same_text_as_tuples() -> None:
    partial = texts(events_of("text-messages-partial.sse"))
    assert list(partial.values()) == ["You said: hello again"]
    assert list(texts(events_of("text-messages-tuple.sse")).values()) == ["You said: hello there"]


def test_an_error_event_is_a_run_error_with_the_exception_class() -> None:
    [(_, error)] = [(e, d) for e, d in sse("error-event.sse") if e == "error"]
    events = events_of("error-event.sse")
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert (events[-1]["code"], events[-1]["message"]) == (error["error"], error["message"])


def test_an_end_event_finishes_and_what_follows_is_trailing() -> None:
    body = b'event: metadata\ndata: {"run_id": "r"}\n\nevent: end\ndata: null\n\nevent: messages\ndata: []\n\n'
    events, decoder = decode(NAME, body)
    assert wire(events)[-1]["type"] == "RUN_FINISHED" and decoder.trailing == 1


def test_a_client_tool_call_left_unanswered_finishes_for_tool_calls() -> None:
    chunk = {"type": "AIMessageChunk", "id": "m1", "content": "",
             "tool_call_chunks": [{"name": "confirm", "args": "{}", "id": "c1", "index": 0}],
             "chunk_position": "last"}  # fmt: skip
    body = f"event: messages\ndata: {json.dumps([chunk, {}])}\n\n".encode()
    events, _ = decode(NAME, body)
    finished = wire(events)[-1]
    assert finished["metadata"]["finishReason"] == "tool-calls"
    assert finished["outcome"]["pendingToolCallIds"] == ["c1"]


def test_complete_messages_with_odd_tool_call_ids_stay_typed() -> None:
    # regression: an id that is not a string (here an object) was looked up in a set
    message = {"type": "ai", "id": "m1", "content": "ok",
               "tool_calls": [{"id": {"x": 1}, "name": "f", "args": {}}, {"name": "", "args": {}}]}  # fmt: skip
    body = f"event: messages/complete\ndata: {json.dumps([message])}\n\n".encode()
    events, decoder = decode(NAME, body)
    assert decoder.error is None
    [start] = [e for e in wire(events) if e["type"] == "TOOL_CALL_START"]
    assert start["toolCallName"] == "f"


@pytest.mark.parametrize("event", ["messages", "messages/complete"])
def test_a_message_type_that_is_not_a_string_is_skipped_not_a_crash(event: str) -> None:
    # regression (found by the fuzz suite): a list "type" was looked up in a frozenset
    message = {"type": ["ai"], "id": "m1", "content": "x"}
    data = [message, {}] if event == "messages" else [message]
    body = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
    events, decoder = decode(NAME, body)
    assert decoder.error is None and wire(events)[-1]["type"] == "RUN_FINISHED"


# -- requests, against the official client ----------------------------------------------------


def run_input(messages: list[dict[str, Any]], **extra: Any) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {"threadId": "thread-1", "runId": "run-1", "tools": [], "context": [], "state": None,
         "forwardedProps": {}, "messages": messages, **extra}
    )  # fmt: skip


async def sdk_body(thread_id: str, **kwargs: Any) -> tuple[str, dict[str, Any]]:
    """What ``langgraph_sdk``'s ``client.runs.stream(thread_id, "agent", **kwargs)`` POSTs."""
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")

    client = get_client(url="http://lg.test", api_key=None)
    client.http.client = httpx.AsyncClient(
        base_url="http://lg.test", transport=httpx.MockTransport(handler)
    )
    async for _ in client.runs.stream(
        thread_id, "agent", stream_mode=["messages-tuple", "updates", "custom"],
        stream_subgraphs=True, if_not_exists="create", **kwargs,
    ):  # fmt: skip
        pass
    [request] = sent
    return request.url.path, json.loads(request.content)


def ours(value: RunAgentInput) -> dict[str, Any]:
    body = SPEC.build_request(ClientRequest(value), model="agent", params={})
    assert isinstance(body, dict)
    return body


async def test_the_new_turn_is_the_input_the_sdk_would_send() -> None:
    value = run_input(
        [
            {"id": "u0", "role": "user", "content": "earlier"},
            {"id": "a0", "role": "assistant", "content": "ok",
             "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "done"},
            {"id": "u1", "role": "user", "content": "weather in Paris?"},
        ]
    )  # fmt: skip
    messages = [
        {"role": "tool", "content": "done", "tool_call_id": "c1", "id": "t1"},
        {"role": "user", "content": "weather in Paris?", "id": "u1"},
    ]
    path, expected = await sdk_body(thread_uuid("thread-1"), input={"messages": messages})
    assert ours(value) == expected
    assert SPEC.path_for("agent", thread_id="thread-1") == path


async def test_a_resume_entry_is_the_platforms_command() -> None:
    resume = [{"interruptId": "0079e1", "status": "resolved", "payload": "yes"}]
    value = run_input([{"id": "u1", "role": "user", "content": "weather"}], resume=resume)
    _, expected = await sdk_body(thread_uuid("thread-1"), command={"resume": "yes"})
    assert ours(value) == expected


def test_several_resume_entries_answer_each_interrupt_by_id() -> None:
    resume = [{"interruptId": "i1", "status": "resolved", "payload": 1},
              {"interruptId": "i2", "status": "resolved", "payload": {"ok": True}},
              {"interruptId": "i3", "status": "cancelled"}]  # fmt: skip
    body = ours(run_input([], resume=resume))
    assert body["command"] == {"resume": {"i1": 1, "i2": {"ok": True}}}
    assert "input" not in body


def test_thread_ids_become_stable_uuids() -> None:
    given = "6f1d9c7e-1b7a-4b8e-9d55-0c7b7c2f0a11"
    assert thread_uuid(given) == given
    assert thread_uuid("thread-1") == thread_uuid("thread-1") != thread_uuid("thread-2")
    assert uuid.UUID(thread_uuid("thread-1")).version == 5


def test_nothing_new_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        ours(
            run_input(
                [
                    {"id": "u", "role": "user", "content": "x"},
                    {"id": "a", "role": "assistant", "content": "y"},
                ]
            )
        )
