"""The ``a2a`` decoder and request builder, judged by the official ``a2a-sdk`` server.

The corpus (``tests/corpus/a2a``) is what the SDK's JSON-RPC server wrote for the scripted agent
of ``tests/support/a2a_agents.py`` (v0.3 ``message/stream`` and v1.0 ``SendStreamingMessage``);
what each run must show is read off those payloads and the A2A specification's states
(``completed``, ``input-required``, ``auth-required``, ``canceled``, ``failed``). The request
builder's bodies are posted to the same SDK server, which must accept them and continue an
interrupted task when the client answers it (the AG-UI ``resume`` entry).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a_agents import a2a_app, record
from ag_ui.core import RunAgentInput
from corpus import corpus_path
from decoder_checks import assert_legal_run
from decoder_runs import decode, wire

from agui_codecs import InvalidInputError
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.a2a import SPEC
from agui_codecs.protocols.a2a.decoder import ARTIFACT_PART, state_of

NAME = "a2a"


def run(body: bytes) -> list[dict[str, Any]]:
    events, _ = decode(NAME, body)
    assert_legal_run(events)
    return wire(events)


def results(file: str) -> list[dict[str, Any]]:
    body = corpus_path(f"a2a/{file}").read_bytes().decode()
    return [
        json.loads(line[6:])["result"] for line in body.splitlines() if line.startswith("data: ")
    ]


def texts(events: list[dict[str, Any]]) -> list[str]:
    out: dict[str, str] = {}
    for e in events:
        if e["type"] == "TEXT_MESSAGE_CONTENT":
            out[e["messageId"]] = out.get(e["messageId"], "") + e["delta"]
    return list(out.values())


@pytest.mark.parametrize("version", ["v03", "v10"])
def test_status_messages_and_a_chunked_artifact_are_texts(version: str) -> None:
    file = f"{version}-hello-status-message-artifact-chunks.sse"
    events = run(corpus_path(f"a2a/{file}").read_bytes())
    chunks = [
        r.get("artifact") or r.get("artifactUpdate", {}).get("artifact") for r in results(file)
    ]
    artifact = "".join(p["text"] for c in chunks if c for p in c["parts"])
    assert texts(events) == ["Looking that up...", artifact]  # the chunks make one message
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["metadata"]["finishReason"] == "stop"


@pytest.mark.parametrize("version", ["v03", "v10"])
def test_input_required_is_an_interrupt_named_by_the_task(version: str) -> None:
    file = f"{version}-weather-input-required.sse"
    first = results(file)[0]
    task_id = first.get("id") or first["task"]["id"]
    events = run(corpus_path(f"a2a/{file}").read_bytes())
    assert texts(events) == ["Which city?"]
    outcome = events[-1]["outcome"]
    assert outcome == {
        "type": "interrupt",
        "interrupts": [{"id": task_id, "reason": "input_required", "message": "Which city?"}],
    }


def test_auth_required_is_an_interrupt_too() -> None:
    events = run(corpus_path("a2a/v03-auth-required.sse").read_bytes())
    [interrupt] = events[-1]["outcome"]["interrupts"]
    assert interrupt["reason"] == "auth_required"


@pytest.mark.parametrize("version", ["v03", "v10"])
def test_a_data_artifact_is_kept_whole_as_a_data_part(version: str) -> None:
    file = f"{version}-weather-continuation-data-artifact.sse"
    [artifact] = [
        r.get("artifact") or r["artifactUpdate"]["artifact"]
        for r in results(file)
        if "artifact" in r or "artifactUpdate" in r
    ]
    events = run(corpus_path(f"a2a/{file}").read_bytes())
    [custom] = [e for e in events if e["type"] == "CUSTOM"]
    assert custom["name"] == ARTIFACT_PART
    assert custom["value"] == {
        "id": artifact["artifactId"],
        "data": {
            "artifactId": artifact["artifactId"],
            "parts": artifact["parts"],
            "name": "forecast",
        },
    }
    assert texts(events) == ["Forecast for Paris is ready."]


def test_canceled_is_a_cancelled_outcome_and_failed_a_run_error() -> None:
    canceled = run(corpus_path("a2a/v03-cancel-canceled.sse").read_bytes())
    assert canceled[-1]["outcome"] == {"type": "cancelled"}
    failed = run(corpus_path("a2a/v03-fail-failed-with-message.sse").read_bytes())
    assert failed[-1]["type"] == "RUN_ERROR"
    assert (failed[-1]["code"], failed[-1]["message"]) == (
        "A2A_TASK_FAILED",
        "The weather service is down.",
    )


def test_v1_states_read_as_v03_states() -> None:
    assert state_of({"state": "TASK_STATE_INPUT_REQUIRED"}) == "input-required"
    assert state_of({"state": "completed"}) == "completed"
    assert state_of({}) == ""


def test_final_on_an_interrupted_state_ends_the_run_at_once() -> None:
    # The specification's example (v0.3 section 7.2.1): input-required with final: true.
    update = {"kind": "status-update", "taskId": "t1", "contextId": "c1", "final": True,
              "status": {"state": "input-required"}}  # fmt: skip
    body = f"data: {json.dumps({'jsonrpc': '2.0', 'id': 1, 'result': update})}\n\n".encode()
    decoder_events, decoder = decode(NAME, body + b"data: {}\n\n")
    assert wire(decoder_events)[-1]["outcome"]["interrupts"][0]["id"] == "t1"
    assert decoder.trailing == 1


def test_eof_while_working_is_truncated() -> None:
    body = corpus_path("a2a/v03-fail-failed-with-message.sse").read_bytes()
    events, decoder = decode(NAME, body.rsplit(b"data: ", 1)[0])
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"
    assert decoder.error is not None


# -- live against the SDK server ------------------------------------------------------------


def run_input(messages: list[dict[str, Any]], **extra: Any) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {"threadId": "ctx-live", "runId": "run-1", "tools": [], "context": [], "state": None,
         "forwardedProps": {}, "messages": messages, **extra}
    )  # fmt: skip


def body_for(value: RunAgentInput) -> dict[str, Any]:
    body = SPEC.build_request(ClientRequest(value), model="", params={})
    assert isinstance(body, dict)
    return body


async def test_the_sdk_server_answers_a_direct_message_and_we_end_the_run() -> None:
    request = body_for(run_input([{"id": "u1", "role": "user", "content": "quick question"}]))
    response = await record(a2a_app(), request)
    events = run(response.content)
    assert texts(events) == ["Quick answer."]
    assert events[-1]["type"] == "RUN_FINISHED"


async def test_the_answer_to_an_interrupt_continues_the_same_task() -> None:
    app = a2a_app()
    history: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "weather"}]
    first = run((await record(app, body_for(run_input(history)))).content)
    [interrupt] = first[-1]["outcome"]["interrupts"]
    history.append({"id": "a1", "role": "assistant", "content": "Which city?"})
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "Paris"}]
    request = body_for(run_input(history, runId="run-2", resume=resume))
    assert request["params"]["message"]["taskId"] == interrupt["id"]
    second = run((await record(app, request)).content)
    assert texts(second) == ["Forecast for Paris is ready."]
    assert second[-1]["metadata"]["finishReason"] == "stop"


async def test_a_task_the_agent_does_not_know_is_its_json_rpc_error() -> None:
    resume = [{"interruptId": "no-such-task", "status": "resolved", "payload": "Paris"}]
    request = body_for(run_input([{"id": "u1", "role": "user", "content": "x"}], resume=resume))
    events = run((await record(a2a_app(), request)).content)
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "TaskNotFoundError"


def test_the_request_is_the_new_user_turn_in_the_threads_context() -> None:
    body = body_for(
        run_input(
            [
                {"id": "s", "role": "system", "content": "ignored: the agent has its own"},
                {"id": "u1", "role": "user", "content": "earlier"},
                {"id": "a1", "role": "assistant", "content": "answer"},
                {"id": "u2", "role": "user", "content": [
                    {"type": "text", "text": "Look at this"},
                    {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png",
                                                 "mimeType": "image/png"}}]},
            ],
            forwardedProps={"metadata": {"locale": "de"}},
        )
    )  # fmt: skip
    assert body == {
        "jsonrpc": "2.0",
        "id": "run-1",
        "method": "message/stream",
        "params": {
            "message": {
                "kind": "message",
                "messageId": "u2",
                "role": "user",
                "contextId": "ctx-live",
                "parts": [
                    {"kind": "text", "text": "Look at this"},
                    {
                        "kind": "file",
                        "file": {"uri": "https://x.test/a.png", "mimeType": "image/png"},
                    },
                ],
            },
            "metadata": {"locale": "de"},
        },
    }


def test_nothing_new_to_say_is_refused() -> None:
    value = run_input(
        [
            {"id": "u1", "role": "user", "content": "hi"},
            {"id": "a1", "role": "assistant", "content": "yo"},
        ]
    )
    with pytest.raises(InvalidInputError):
        body_for(value)
