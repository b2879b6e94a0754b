"""RunAgentInput -> Chat Completions body.

Expected bodies are written from the OpenAI API reference ("Create chat completion"): message
objects by role (system, developer, user with text / image_url / input_audio / file parts,
assistant with ``tool_calls`` of ``{id, type: "function", function: {name, arguments}}``,
tool with ``tool_call_id``), function tools ``{type: "function", function: {name,
description, parameters}}``, ``stream_options.include_usage``.
"""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import RunAgentInput

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols.openai_chat.request import to_openai_chat

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def run_input(messages: list[dict[str, Any]], **extra: Any) -> RunAgentInput:
    body = {
        "threadId": "t1",
        "runId": "r1",
        "messages": messages,
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }
    body.update(extra)
    return RunAgentInput.model_validate(body)


def test_full_conversation_matches_the_api_reference_shapes() -> None:
    inp = run_input(
        [
            {"id": "s", "role": "system", "content": "You are terse."},
            {"id": "d", "role": "developer", "content": "Use metric units."},
            {
                "id": "u1",
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this image?"},
                    {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png"}},
                    {
                        "type": "image",
                        "source": {
                            "type": "data",
                            "value": "iVBORw0KGgo=",
                            "mimeType": "image/png",
                        },
                    },
                ],
            },
            {"id": "r", "role": "reasoning", "content": "thinking..."},
            {
                "id": "a1",
                "role": "assistant",
                "content": "Let me check.",
                "toolCalls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"id": "t1", "role": "tool", "toolCallId": "call_1", "content": '{"temp":18}'},
            {"id": "u2", "role": "user", "content": "Thanks"},
        ],
        tools=[{"name": "get_weather", "description": "Get weather", "parameters": WEATHER_SCHEMA}],
        context=[{"description": "User location", "value": "Paris"}],
        forwardedProps={"temperature": 0.2, "maxTokens": 100},
    )
    assert to_openai_chat(inp, model="gpt-4o-mini") == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "developer", "content": "Use metric units."},
            {"role": "system", "content": "Context from the application:\n\nUser location:\nParis"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this image?"},
                    {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temp":18}'},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Get weather",
                    "parameters": WEATHER_SCHEMA,
                },
            }
        ],
        "temperature": 0.2,
        "max_tokens": 100,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_context_without_system_messages_comes_first() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        context=[{"description": "a", "value": "1"}, {"description": "b", "value": "2"}],
    )
    messages = to_openai_chat(inp, model="m")["messages"]
    assert messages[0] == {
        "role": "system",
        "content": "Context from the application:\n\na:\n1\n\nb:\n2",
    }
    assert messages[1] == {"role": "user", "content": "hi"}


def test_assistant_with_only_tool_calls_omits_content() -> None:
    # API reference: assistant ``content`` is "required unless tool_calls is specified".
    inp = run_input(
        [
            {"id": "u", "role": "user", "content": "hi"},
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"id": "t", "role": "tool", "toolCallId": "c", "content": "ok"},
        ]
    )
    assistant = to_openai_chat(inp, model="m")["messages"][1]
    assert assistant == {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }


def test_assistant_with_nothing_to_say_is_skipped() -> None:
    inp = run_input(
        [
            {"id": "u", "role": "user", "content": "hi"},
            {"id": "a", "role": "assistant", "content": ""},
            {"id": "u2", "role": "user", "content": "again"},
        ]
    )
    assert [m["role"] for m in to_openai_chat(inp, model="m")["messages"]] == ["user", "user"]


def test_tool_error_without_content_sends_the_error_text() -> None:
    inp = run_input(
        [{"id": "t", "role": "tool", "toolCallId": "c", "content": "", "error": "city unknown"}]
    )
    assert to_openai_chat(inp, model="m")["messages"] == [
        {"role": "tool", "tool_call_id": "c", "content": "city unknown"}
    ]


def test_document_and_audio_parts() -> None:
    inp = run_input(
        [
            {
                "id": "u",
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {
                            "type": "data",
                            "value": "JVBERi0=",
                            "mimeType": "application/pdf",
                        },
                        "metadata": {"filename": "a.pdf"},
                    },
                    {"type": "document", "source": {"type": "file", "value": "file-abc"}},
                    {
                        "type": "audio",
                        "source": {"type": "data", "value": "UklGRg==", "mimeType": "audio/wav"},
                    },
                ],
            }
        ]
    )
    assert to_openai_chat(inp, model="m")["messages"][0]["content"] == [
        {
            "type": "file",
            "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
        },
        {"type": "file", "file": {"file_id": "file-abc"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]


@pytest.mark.parametrize(
    "part",
    [
        {"type": "video", "source": {"type": "url", "value": "https://x.test/v.mp4"}},
        {"type": "image", "source": {"type": "file", "value": "file-1"}},
        {"type": "document", "source": {"type": "url", "value": "https://x.test/d.pdf"}},
        {"type": "audio", "source": {"type": "data", "value": "AA==", "mimeType": "audio/ogg"}},
    ],
)
def test_parts_without_equivalent_are_refused(part: dict[str, Any]) -> None:
    inp = run_input([{"id": "u", "role": "user", "content": [part]}])
    with pytest.raises(RequestTranslationError) as info:
        to_openai_chat(inp, model="m")
    assert info.value.code == "UNSUPPORTED_CONTENT"
    assert "messages[0].content[0]" in info.value.message


def test_client_cannot_override_model_or_stream_and_unknown_props_are_ignored() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        forwardedProps={"model": "gpt-5", "stream": False, "foo": 1, "topP": 0.5, "seed": None},
    )
    body = to_openai_chat(inp, model="gpt-4o-mini", params={"temperature": 0.1, "stream": False})
    assert body["model"] == "gpt-4o-mini"
    assert body["stream"] is True
    assert body["temperature"] == 0.1
    assert body["top_p"] == 0.5
    assert "foo" not in body and "seed" not in body


def test_client_params_override_route_defaults() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}], forwardedProps={"temperature": 0.9}
    )
    assert to_openai_chat(inp, model="m", params={"temperature": 0.1})["temperature"] == 0.9


def test_no_tools_means_no_tools_key() -> None:
    inp = run_input([{"id": "u", "role": "user", "content": "hi"}])
    assert "tools" not in to_openai_chat(inp, model="m")


def test_tool_without_parameters_gets_an_empty_object_schema() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        tools=[{"name": "now", "description": "current time"}],
    )
    assert to_openai_chat(inp, model="m")["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "now",
                "description": "current time",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
