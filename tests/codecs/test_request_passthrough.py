"""Bodies for ``agui`` and ``ai-sdk`` upstreams.

The UIMessage shapes are the ones ``ai`` 7.0.173 keeps in ``chat.messages`` and posts
(``src/ui/ui-messages.ts``): ``{id, role, parts}`` with ``text``, ``reasoning`` ``{text,
providerMetadata?}``, ``file`` ``{mediaType, url, filename?}``, ``step-start`` and static tool
parts ``tool-<name>`` ``{toolCallId, state, input, output | errorText}``. Round trips go through
:func:`agui_codecs.protocols.ai_sdk.chat_request.to_run_agent_input`, the AI SDK endpoint's own reader.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from ag_ui.core import RunAgentInput

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.agui.request import agui_body, run_input_wire
from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, to_run_agent_input
from agui_codecs.protocols.ai_sdk.request import ai_sdk_body, to_ui_messages


def run_input(messages: list[dict[str, Any]], **extra: Any) -> RunAgentInput:
    body: dict[str, Any] = {"threadId": "t1", "runId": "r1", "messages": messages}
    body.update(extra)
    return RunAgentInput.model_validate(body)


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


HISTORY: list[dict[str, Any]] = [
    {"id": "s", "role": "system", "content": "Be brief."},
    {"id": "u1", "role": "user", "content": "Weather in Paris and Rome?"},
    {
        "id": "r1",
        "role": "reasoning",
        "content": "Two cities.",
        "encryptedValue": "sig-1",
        "metadata": {"provider": "anthropic", "field": "signature"},
    },
    {
        "id": "a1",
        "role": "assistant",
        "content": "Checking.",
        "toolCalls": [
            call("c1", "get_weather", '{"city":"Paris"}'),
            call("c2", "get_weather", '{"city":"Rome"}'),
        ],
    },
    {"id": "t1", "role": "tool", "toolCallId": "c1", "content": '{"temp":18}'},
    {"id": "t2", "role": "tool", "toolCallId": "c2", "content": "", "error": "unavailable"},
    {"id": "a2", "role": "assistant", "content": "Paris is 18C."},
    {"id": "act", "role": "activity", "activityType": "a2ui-surface", "content": {}},
    {
        "id": "u2",
        "role": "user",
        "content": [
            {"type": "text", "text": "And this?"},
            {
                "type": "image",
                "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"},
                "metadata": {"filename": "map.png"},
            },
            {"type": "image", "source": {"type": "url", "value": "https://x.test/a"}},
        ],
    },
]


def test_conversation_becomes_ui_messages_with_steps() -> None:
    assert to_ui_messages(run_input(HISTORY)) == [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {
            "id": "u1",
            "role": "user",
            "parts": [{"type": "text", "text": "Weather in Paris and Rome?"}],
        },
        {
            "id": "r1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "reasoning",
                    "text": "Two cities.",
                    "providerMetadata": {"anthropic": {"signature": "sig-1"}},
                },
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool-get_weather",
                    "toolCallId": "c1",
                    "state": "output-available",
                    "input": {"city": "Paris"},
                    "output": {"temp": 18},
                },
                {
                    "type": "tool-get_weather",
                    "toolCallId": "c2",
                    "state": "output-error",
                    "input": {"city": "Rome"},
                    "errorText": "unavailable",
                },
                {"type": "step-start"},
                {"type": "text", "text": "Paris is 18C."},
            ],
        },
        {
            "id": "u2",
            "role": "user",
            "parts": [
                {"type": "text", "text": "And this?"},
                {
                    "type": "file",
                    "mediaType": "image/png",
                    "url": "data:image/png;base64,iVBO",
                    "filename": "map.png",
                },
                {"type": "file", "mediaType": "image/*", "url": "https://x.test/a"},
            ],
        },
    ]


def test_ui_messages_read_back_by_the_ai_sdk_endpoint_give_the_same_turns() -> None:
    inp = run_input(HISTORY[:7], forwardedProps={"temperature": 0.2})
    body = ai_sdk_body(ClientRequest(inp))
    assert isinstance(body, dict)
    assert body["id"] == "t1" and body["trigger"] == "submit-message"
    assert body["temperature"] == 0.2
    back = to_run_agent_input(AiSdkChatRequest.model_validate(body), run_id="r2")
    assert [m.role for m in back.messages] == [
        "system",
        "user",
        "reasoning",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert back.messages[2].encrypted_value == "sig-1"
    assert back.messages[3].tool_calls is not None
    assert [c.id for c in back.messages[3].tool_calls] == ["c1", "c2"]
    assert back.messages[5].error == "unavailable"
    assert back.forwarded_props == {"temperature": 0.2}


def test_tools_and_context_use_the_ag_ui_shapes() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        tools=[{"name": "f", "description": "d", "parameters": {"type": "object"}}],
        context=[{"description": "Units", "value": "metric"}],
        forwardedProps={"messages": "not yours", "locale": "de"},
    )
    body = ai_sdk_body(ClientRequest(inp))
    assert isinstance(body, dict)
    assert body["tools"] == [{"name": "f", "description": "d", "parameters": {"type": "object"}}]
    assert body["context"] == [{"description": "Units", "value": "metric"}]
    assert body["messages"][0]["parts"] == [{"type": "text", "text": "hi"}]
    assert body["locale"] == "de"


def test_same_protocol_requests_are_forwarded_byte_for_byte() -> None:
    raw = b'{"id":"c","messages":[],"trigger":"submit-message","custom":1}'
    inp = run_input([])
    assert ai_sdk_body(ClientRequest(inp, wire="ai-sdk", raw=raw)) is raw
    agui_raw = b'{"threadId":"t1","runId":"r1","messages":[],"x-extra":true}'
    assert agui_body(ClientRequest(inp, wire="agui", raw=agui_raw)) is agui_raw


def test_ai_sdk_request_to_agui_runtime_is_run_agent_input_wire() -> None:
    inp = run_input([{"id": "u", "role": "user", "content": "hi"}])
    body = agui_body(ClientRequest(inp, wire="ai-sdk", raw=b"{}"))
    assert body == {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    assert b"null" not in orjson.dumps(run_input_wire(inp))


def test_provider_file_handle_has_no_ui_message_form() -> None:
    inp = run_input(
        [
            {
                "id": "u",
                "role": "user",
                "content": [{"type": "document", "source": {"type": "file", "value": "file-1"}}],
            }
        ]
    )
    with pytest.raises(RequestTranslationError) as info:
        to_ui_messages(inp)
    assert "messages[0].content[0]" in info.value.message
