"""Upstream AI SDK UI message stream decoder (``agui_codecs.protocols.ai_sdk.decoder``): tool chunks.

Tool input (streamed or whole), provider-executed tools, tool output (result, error, denied,
preliminary), approvals and tool-call signatures. Expected values come from the chunk semantics
of ``ai`` 7.0.173 ``src/ui/process-ui-message-stream.ts`` (what a tool call is) and from the
AG-UI 1.0 rules in ``docs/protocols.md`` §2 (outcomes, interrupts). The corpus and the real
clients are in ``test_ai_sdk_decoder_corpus.py``, the other chunks in ``test_ai_sdk_decoder.py``.
"""

from __future__ import annotations

import json

from ai_sdk_decoder_fixtures import call_args, decode, of_type, run
from decoder_checks import assert_legal_run, wire


# -- tool chunks ------------------------------------------------------------------------------
def test_tool_input_available_without_deltas_gives_one_args_with_the_input_json() -> None:
    tool_input = {"city": "Zürich", "days": [1, 2], "unit": None}
    events = decode(
        run(
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "weather",
                "input": tool_input,
            }
        )
    )
    assert_legal_run(events)
    args = of_type(events, "TOOL_CALL_ARGS")
    assert len(args) == 1 and json.loads(args[0]["delta"]) == tool_input
    finished = wire(events)[-1]
    assert finished["metadata"]["finishReason"] == "tool-calls"  # inferred: a call awaits
    assert finished["outcome"]["pendingToolCallIds"] == ["c1"]


def test_streamed_tool_input_is_passed_through_and_closed_by_available() -> None:
    events = decode(
        run(
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "f"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"a":'},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "1}"},
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "f",
                "input": {"a": 1},
            },
        )
    )
    assert_legal_run(events)
    assert [a["delta"] for a in of_type(events, "TOOL_CALL_ARGS")] == ['{"a":', "1}"]


def test_provider_executed_tool_is_marked() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-available",
                "toolCallId": "s1",
                "toolName": "web_search",
                "input": {"q": "x"},
                "providerExecuted": True,
            },
            {
                "type": "tool-output-available",
                "toolCallId": "s1",
                "output": [{"url": "u"}],
                "providerExecuted": True,
            },
        )
    )
    assert of_type(events, "TOOL_CALL_START")[0]["metadata"] == {"providerExecuted": True}
    assert json.loads(of_type(events, "TOOL_CALL_RESULT")[0]["content"]) == [{"url": "u"}]
    assert wire(events)[-1]["metadata"]["finishReason"] == "stop"


def test_tool_output_error_is_an_error_result() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "boom"},
        )
    )
    assert_legal_run(events)
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert (result["content"], result["metadata"]) == ("boom", {"isError": True})


def test_tool_input_error_closes_the_call_and_answers_it_with_the_error() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "f",
                "input": "{not json",
                "errorText": "Invalid input",
            },
        )
    )
    # The unparsable input is not sent as ARGS: the call has none (a kit hygiene warning).
    assert_legal_run(events, allowed_warnings={"agui/hygiene/tool-call-without-args"})
    assert call_args(events) == {"c1": ""}
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert (result["toolCallId"], result["content"], result["metadata"]) == (
        "c1",
        "Invalid input",
        {"isError": True},
    )


def test_tool_output_denied_is_a_denied_result() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {"type": "tool-output-denied", "toolCallId": "c1"},
        )
    )
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert result["metadata"] == {"denied": True}
    assert json.loads(result["content"]) == {"type": "execution-denied"}


def test_preliminary_tool_output_is_not_the_result() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {
                "type": "tool-output-available",
                "toolCallId": "c1",
                "output": "50%",
                "preliminary": True,
            },
            {"type": "tool-output-available", "toolCallId": "c1", "output": "done"},
        )
    )
    assert [r["content"] for r in of_type(events, "TOOL_CALL_RESULT")] == ["done"]
    assert of_type(events, "CUSTOM")[0]["name"] == "tool-output-preliminary"


def test_approval_answered_in_the_same_stream_is_no_longer_an_interrupt() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "f",
                "input": {},
                "providerExecuted": True,
            },
            {
                "type": "tool-approval-request",
                "approvalId": "a1",
                "toolCallId": "c1",
                "signature": "signed",
            },
            {"type": "tool-approval-response", "approvalId": "a1", "approved": True},
        )
    )
    assert wire(events)[-1]["outcome"]["type"] == "success"


def test_approval_request_metadata_keeps_the_signature() -> None:
    events = decode(
        run(
            {"type": "tool-input-available", "toolCallId": "c1", "toolName": "f", "input": {}},
            {
                "type": "tool-approval-request",
                "approvalId": "a1",
                "toolCallId": "c1",
                "reason": "deletes files",
                "signature": "signed",
            },
        )
    )
    interrupt = wire(events)[-1]["outcome"]["interrupts"][0]
    assert interrupt == {
        "id": "a1",
        "reason": "tool_approval",
        "toolCallId": "c1",
        "message": "deletes files",
        "metadata": {"signature": "signed"},
    }


def test_tool_call_signature_is_a_tool_call_encrypted_value() -> None:
    events = decode(
        run(
            {
                "type": "tool-input-start",
                "toolCallId": "c1",
                "toolName": "f",
                "providerMetadata": {"google": {"thoughtSignature": "fsig"}},
            },
            {
                "type": "tool-input-available",
                "toolCallId": "c1",
                "toolName": "f",
                "input": {},
                "providerMetadata": {"google": {"thoughtSignature": "fsig"}},
            },
        )
    )
    values = of_type(events, "REASONING_ENCRYPTED_VALUE")
    assert [(v["subtype"], v["entityId"], v["encryptedValue"]) for v in values] == [
        ("tool-call", "c1", "fsig")
    ]
