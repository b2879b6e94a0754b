"""AI SDK chat request -> RunAgentInput, and the ``start.messageId`` choice.

UIMessage shapes follow ``ai`` 7.0.173 ``dist/index.d.ts`` (``UIMessage``, ``TextUIPart``,
``ReasoningUIPart``, ``FileUIPart``, ``ToolUIPart``/``DynamicToolUIPart`` with their states);
the expected messages follow ``convertToModelMessages`` of the same version (steps split at
``step-start``; tool results after the step's assistant message; text parts concatenated).
"""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import (
    AssistantMessage,
    DataSource,
    DocumentPart,
    FileSource,
    ImagePart,
    ReasoningMessage,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
)
from pydantic import ValidationError

from agui_codecs.protocols.ai_sdk.chat_request import (
    AiSdkChatRequest,
    response_message_id,
    to_run_agent_input,
)


def request(messages: list[dict[str, Any]], **extra: Any) -> AiSdkChatRequest:
    return AiSdkChatRequest.model_validate({"id": "chat-1", "messages": messages, **extra})


def user(text: str, mid: str = "u1") -> dict[str, Any]:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


def test_tool_round_trip_becomes_assistant_tool_calls_then_tool_messages() -> None:
    req = request(
        [
            user("Weather in Rome?"),
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {"type": "step-start"},
                    {"type": "text", "text": "Let me ", "state": "done"},
                    {"type": "text", "text": "check.", "state": "done"},
                    {
                        "type": "tool-get_weather",
                        "toolCallId": "call_1",
                        "state": "output-available",
                        "input": {"city": "Rome"},
                        "output": {"temperature": 21},
                    },
                    {"type": "step-start"},
                    {"type": "text", "text": "It is 21 degrees.", "state": "done"},
                ],
            },
            user("Thanks", "u2"),
        ],
        trigger="submit-message",
    )
    inp = to_run_agent_input(req, run_id="run-1")
    assert inp.thread_id == "chat-1"
    assert inp.run_id == "run-1"
    assert [type(m) for m in inp.messages] == [
        UserMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
        UserMessage,
    ]
    first = inp.messages[1]
    assert isinstance(first, AssistantMessage)
    assert first.id == "a1"
    assert first.content == "Let me check."
    assert first.tool_calls is not None
    assert [(c.id, c.function.name, c.function.arguments) for c in first.tool_calls] == [
        ("call_1", "get_weather", '{"city":"Rome"}')
    ]
    result = inp.messages[2]
    assert isinstance(result, ToolMessage)
    assert (result.tool_call_id, result.content, result.error) == (
        "call_1",
        '{"temperature":21}',
        None,
    )
    second = inp.messages[3]
    assert isinstance(second, AssistantMessage)
    assert second.content == "It is 21 degrees." and second.tool_calls is None
    assert second.id != first.id


def test_tool_states() -> None:
    req = request(
        [
            user("go"),
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {
                        "type": "tool-a",
                        "toolCallId": "c_err",
                        "state": "output-error",
                        "input": {},
                        "errorText": "boom",
                    },
                    {
                        "type": "tool-b",
                        "toolCallId": "c_deny",
                        "state": "output-denied",
                        "input": {"x": 1},
                        "approval": {"id": "ap1", "approved": False, "reason": "not allowed"},
                    },
                    {"type": "tool-c", "toolCallId": "c_stream", "state": "input-streaming"},
                    {
                        "type": "tool-d",
                        "toolCallId": "c_wait",
                        "state": "input-available",
                        "input": {"q": "?"},
                    },
                    {
                        "type": "dynamic-tool",
                        "toolName": "lookup",
                        "toolCallId": "c_dyn",
                        "state": "output-available",
                        "input": None,
                        "output": "plain text",
                    },
                    {
                        "type": "tool-web_search",
                        "toolCallId": "c_srv",
                        "state": "output-available",
                        "input": {},
                        "output": [],
                        "providerExecuted": True,
                    },
                ],
            },
        ]
    )
    messages = to_run_agent_input(req, run_id="r").messages
    assistant = messages[1]
    assert isinstance(assistant, AssistantMessage) and assistant.tool_calls is not None
    assert [(c.id, c.function.name, c.function.arguments) for c in assistant.tool_calls] == [
        ("c_err", "a", "{}"),
        ("c_deny", "b", '{"x":1}'),
        ("c_wait", "d", '{"q":"?"}'),
        ("c_dyn", "lookup", "{}"),
        ("c_srv", "web_search", "{}"),  # the provider's call, flagged as such
    ]
    assert [c.metadata for c in assistant.tool_calls] == [None] * 4 + [{"providerExecuted": True}]
    results = {m.tool_call_id: m for m in messages[2:] if isinstance(m, ToolMessage)}
    assert set(results) == {"c_err", "c_deny", "c_dyn", "c_srv"}
    assert messages[2] == results["c_srv"] and results["c_srv"].content == "[]"
    assert (results["c_err"].content, results["c_err"].error) == ("boom", "boom")
    assert (results["c_deny"].content, results["c_deny"].error) == ("not allowed", "not allowed")
    assert (results["c_dyn"].content, results["c_dyn"].error) == ("plain text", None)


def test_reasoning_provider_metadata_becomes_encrypted_value() -> None:
    req = request(
        [
            user("hi"),
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {
                        "type": "reasoning",
                        "text": "hmm",
                        "providerMetadata": {"anthropic": {"signature": "sig"}},
                    },
                    {
                        "type": "reasoning",
                        "text": "",
                        "providerMetadata": {"anthropic": {"redactedData": "opaque"}},
                    },
                    {"type": "reasoning", "text": "plain"},
                    {"type": "text", "text": "hello"},
                ],
            },
        ]
    )
    messages = to_run_agent_input(req, run_id="r").messages
    reasoning = [m for m in messages if isinstance(m, ReasoningMessage)]
    assert [(m.content, m.encrypted_value, m.metadata) for m in reasoning] == [
        ("hmm", "sig", {"provider": "anthropic", "field": "signature"}),
        ("", "opaque", {"provider": "anthropic", "field": "redactedData"}),
        ("plain", None, None),
    ]
    assert isinstance(messages[-1], AssistantMessage)  # reasoning precedes its answer


def test_user_file_parts() -> None:
    req = request(
        [
            {
                "id": "u1",
                "role": "user",
                "parts": [
                    {"type": "text", "text": "Look"},
                    {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBO"},
                    {
                        "type": "file",
                        "mediaType": "application/pdf",
                        "filename": "a.pdf",
                        "url": "https://x.test/a.pdf",
                    },
                    {"type": "file", "mediaType": "text/plain", "url": "data:,hi%20there"},
                    {
                        "type": "file",
                        "mediaType": "application/pdf",
                        "url": "https://x.test/b",
                        "providerReference": {"openai": "file-123"},
                    },
                ],
            }
        ]
    )
    message = to_run_agent_input(req, run_id="r").messages[0]
    assert isinstance(message, UserMessage) and isinstance(message.content, list)
    text, image, pdf, plain, ref = message.content
    assert isinstance(text, TextPart) and text.text == "Look"
    assert isinstance(image, ImagePart)
    assert image.source == DataSource(value="iVBO", mime_type="image/png")
    assert isinstance(pdf, DocumentPart) and pdf.metadata == {"filename": "a.pdf"}
    assert pdf.source == UrlSource(value="https://x.test/a.pdf", mime_type="application/pdf")
    assert isinstance(plain, DocumentPart)
    assert plain.source == DataSource(value="aGkgdGhlcmU=", mime_type="text/plain")
    assert isinstance(ref, DocumentPart)
    assert ref.source == FileSource(
        value="file-123", provider="openai", mime_type="application/pdf"
    )


def test_single_text_part_is_a_string_and_system_is_kept() -> None:
    req = request(
        [
            {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
            user("hi"),
        ]
    )
    messages = to_run_agent_input(req, run_id="r").messages
    assert messages[0].role == "system" and messages[0].content == "Be brief."
    assert isinstance(messages[1], UserMessage) and messages[1].content == "hi"


def test_extra_body_keys_become_forwarded_props_and_tools_context_are_read() -> None:
    req = request(
        [user("hi")],
        trigger="submit-message",
        messageId=None,
        temperature=0.4,
        tools=[{"name": "f", "description": "d", "parameters": {"type": "object"}}],
        context=[{"description": "k", "value": "v"}],
    )
    inp = to_run_agent_input(req, run_id="r")
    assert inp.forwarded_props == {"temperature": 0.4}
    assert inp.tools is not None and [t.name for t in inp.tools] == ["f"]
    assert inp.context is not None and inp.context[0].value == "v"


def test_unknown_parts_are_accepted_and_dropped() -> None:
    req = request(
        [
            {
                "id": "u1",
                "role": "user",
                "parts": [
                    {"type": "text", "text": "a"},
                    {"type": "data-weather", "data": {"x": 1}},
                ],
            },
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {"type": "source-url", "sourceId": "s", "url": "https://x.test"},
                    {"type": "text", "text": "b"},
                ],
            },
        ]
    )
    messages = to_run_agent_input(req, run_id="r").messages
    assert isinstance(messages[0], UserMessage) and messages[0].content == "a"
    assert isinstance(messages[1], AssistantMessage) and messages[1].content == "b"


def test_malformed_known_part_is_a_validation_error() -> None:
    with pytest.raises(ValidationError) as info:
        request([{"id": "a", "role": "assistant", "parts": [{"type": "tool-x", "state": "bogus"}]}])
    locs = {tuple(e["loc"]) for e in info.value.errors()}
    assert ("messages", 0, "parts", 0, "tool", "toolCallId") in locs


# -- start.messageId -------------------------------------------------------------------------

ASSISTANT = {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "x"}]}


def test_continuation_reuses_the_assistant_message_id() -> None:
    # After addToolOutput the client re-sends with the assistant message last.
    assert response_message_id(request([user("q"), ASSISTANT], trigger="submit-message")) == "a1"
    named = request([user("q"), ASSISTANT], trigger="submit-message", messageId="a1")
    assert response_message_id(named) == "a1"


def test_new_user_turn_gets_a_fresh_id() -> None:
    req = request([user("q"), ASSISTANT, user("next", "u2")], trigger="submit-message")
    assert response_message_id(req) is None
    # Editing a user message: messageId names the user message; still a fresh assistant id.
    edited = request([user("q")], trigger="submit-message", messageId="u1")
    assert response_message_id(edited) is None


def test_regenerate_gets_a_fresh_id() -> None:
    # The client drops the regenerated assistant message before sending.
    req = request([user("q")], trigger="regenerate-message", messageId="a1")
    assert response_message_id(req) is None


def test_provider_artefacts_of_text_and_tool_parts_are_read_back() -> None:
    # Fault: openai.encryptedContent and google.thoughtSignature (text providerMetadata, tool
    # callProviderMetadata) were dropped, so the next turn lost its reasoning.
    chat = AiSdkChatRequest.model_validate(
        {
            "id": "c",
            "messages": [
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
                {
                    "id": "a1",
                    "role": "assistant",
                    "parts": [
                        {"type": "step-start"},
                        {
                            "type": "reasoning",
                            "text": "",
                            "providerMetadata": {"openai": {"encryptedContent": "ENC"}},
                        },
                        {
                            "type": "text",
                            "text": "Sure",
                            "providerMetadata": {"google": {"thoughtSignature": "TSIG"}},
                        },
                        {
                            "type": "tool-get_country",
                            "toolCallId": "c1",
                            "state": "input-available",
                            "input": {"city": "Paris"},
                            "callProviderMetadata": {"google": {"thoughtSignature": "CSIG"}},
                        },
                    ],
                },
            ],
        }
    )
    reasoning, assistant = to_run_agent_input(chat, run_id="r").messages[1:3]
    assert reasoning.encrypted_value == "ENC"
    assert reasoning.metadata == {"provider": "openai", "field": "encryptedContent"}
    assert assistant.encrypted_value == "TSIG"
    [call] = assistant.tool_calls or []
    assert call.encrypted_value == "CSIG"
    assert call.metadata == {"provider": "google", "field": "thoughtSignature"}
