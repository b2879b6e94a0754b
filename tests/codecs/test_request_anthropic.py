"""RunAgentInput -> Anthropic Messages body.

Expected bodies are written from the Messages API reference (version 2023-06-01): top-level
``system`` string, ``messages`` of alternating ``user``/``assistant`` turns made of content
blocks (``text``, ``image`` with ``source`` ``base64``/``url``, ``document``, ``tool_use``
``{id, name, input}``, ``tool_result`` ``{tool_use_id, content, is_error}``, ``thinking``
``{thinking, signature}``, ``redacted_thinking`` ``{data}``), ``tools`` with ``input_schema``,
required ``max_tokens``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from ag_ui.core import RunAgentInput

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols.anthropic.request import DEFAULT_MAX_TOKENS, to_anthropic

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def run_input(messages: list[dict[str, Any]], **extra: Any) -> RunAgentInput:
    body: dict[str, Any] = {
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


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_full_conversation_matches_the_api_reference_shapes() -> None:
    inp = run_input(
        [
            {"id": "s", "role": "system", "content": "You are terse."},
            {"id": "d", "role": "developer", "content": "Use metric units."},
            {"id": "u1", "role": "user", "content": "Weather in Paris?"},
            {
                "id": "r1",
                "role": "reasoning",
                "content": "I should call the tool.",
                "encryptedValue": "sig-1",
                "metadata": {"provider": "anthropic", "field": "signature"},
            },
            {
                "id": "a1",
                "role": "assistant",
                "content": "Checking.",
                "toolCalls": [call("toolu_1", "get_weather", '{"city":"Paris"}')],
            },
            {"id": "t1", "role": "tool", "toolCallId": "toolu_1", "content": "18C"},
            {"id": "u2", "role": "user", "content": "And tomorrow?"},
        ],
        tools=[{"name": "get_weather", "description": "Get weather", "parameters": SCHEMA}],
        context=[{"description": "Units", "value": "metric"}],
        forwardedProps={"temperature": 0.3},
    )
    assert to_anthropic(inp, model="claude-sonnet-4-5") == {
        "model": "claude-sonnet-4-5",
        "max_tokens": DEFAULT_MAX_TOKENS,
        "system": "You are terse.\n\nUse metric units.\n\n"
        "Context from the application:\n\nUnits:\nmetric",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "I should call the tool.",
                        "signature": "sig-1",
                    },
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
        "tools": [{"name": "get_weather", "description": "Get weather", "input_schema": SCHEMA}],
        "temperature": 0.3,
        "stream": True,
    }
    assert DEFAULT_MAX_TOKENS == 4096


def test_parallel_tool_results_merge_into_one_user_turn() -> None:
    inp = run_input(
        [
            {"id": "u", "role": "user", "content": "both"},
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [call("toolu_a", "f", "{}"), call("toolu_b", "g", "")],
            },
            {"id": "ta", "role": "tool", "toolCallId": "toolu_a", "content": "A"},
            {"id": "tb", "role": "tool", "toolCallId": "toolu_b", "content": "B"},
        ]
    )
    messages = to_anthropic(inp, model="m")["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}},
            {"type": "tool_use", "id": "toolu_b", "name": "g", "input": {}},
        ],
    }
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "B"},
        ],
    }


def test_consecutive_user_messages_merge_and_empty_text_is_dropped() -> None:
    inp = run_input(
        [
            {"id": "u1", "role": "user", "content": "one"},
            {"id": "u2", "role": "user", "content": ""},
            {"id": "u3", "role": "user", "content": "two"},
        ]
    )
    assert to_anthropic(inp, model="m")["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        }
    ]


def test_redacted_thinking_round_trips_and_unsigned_reasoning_is_dropped() -> None:
    inp = run_input(
        [
            {"id": "u", "role": "user", "content": "hi"},
            {"id": "r0", "role": "reasoning", "content": "no signature here"},
            {
                "id": "r1",
                "role": "reasoning",
                "content": "",
                "encryptedValue": "opaque",
                "metadata": {"provider": "anthropic", "field": "redactedData"},
            },
            {"id": "r2", "role": "reasoning", "content": "", "encryptedValue": "opaque-2"},
            {"id": "a", "role": "assistant", "content": "hello"},
        ]
    )
    assert to_anthropic(inp, model="m")["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "redacted_thinking", "data": "opaque-2"},
            {"type": "text", "text": "hello"},
        ],
    }


def test_tool_error_sets_is_error() -> None:
    inp = run_input(
        [{"id": "t", "role": "tool", "toolCallId": "toolu_1", "content": "", "error": "boom"}]
    )
    assert to_anthropic(inp, model="m")["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "boom",
                    "is_error": True,
                }
            ],
        }
    ]


def test_media_sources() -> None:
    text_doc = base64.b64encode(b"plain words").decode()
    inp = run_input(
        [
            {
                "id": "u",
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {
                            "type": "data",
                            "value": "iVBORw0KGgo=",
                            "mimeType": "image/png",
                        },
                    },
                    {"type": "image", "source": {"type": "url", "value": "https://x.test/a.jpg"}},
                    {
                        "type": "document",
                        "source": {
                            "type": "data",
                            "value": "JVBERi0=",
                            "mimeType": "application/pdf",
                        },
                        "metadata": {"filename": "a.pdf"},
                    },
                    {
                        "type": "document",
                        "source": {"type": "data", "value": text_doc, "mimeType": "text/plain"},
                    },
                    {"type": "document", "source": {"type": "file", "value": "file_011"}},
                ],
            }
        ]
    )
    assert to_anthropic(inp, model="m")["messages"][0]["content"] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
        {"type": "image", "source": {"type": "url", "url": "https://x.test/a.jpg"}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
            "title": "a.pdf",
        },
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "plain words"},
        },
        {"type": "document", "source": {"type": "file", "file_id": "file_011"}},
    ]


def test_max_tokens_from_route_then_client() -> None:
    inp = run_input([{"id": "u", "role": "user", "content": "hi"}])
    assert to_anthropic(inp, model="m", params={"max_tokens": 1000})["max_tokens"] == 1000
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        forwardedProps={"maxOutputTokens": 50, "topK": 5, "system": "injected"},
    )
    body = to_anthropic(inp, model="m", params={"max_tokens": 1000})
    assert body["max_tokens"] == 50
    assert body["top_k"] == 5
    assert "system" not in body


@pytest.mark.parametrize(
    ("part", "code"),
    [
        (
            {"type": "audio", "source": {"type": "data", "value": "AA==", "mimeType": "audio/wav"}},
            "UNSUPPORTED_CONTENT",
        ),
        (
            {
                "type": "document",
                "source": {"type": "data", "value": "AA==", "mimeType": "application/zip"},
            },
            "UNSUPPORTED_CONTENT",
        ),
        (
            {
                "type": "document",
                "source": {"type": "data", "value": "%%%", "mimeType": "text/plain"},
            },
            "INVALID_CONTENT",
        ),
    ],
)
def test_parts_without_equivalent_are_refused(part: dict[str, Any], code: str) -> None:
    inp = run_input([{"id": "u", "role": "user", "content": [part]}])
    with pytest.raises(RequestTranslationError) as info:
        to_anthropic(inp, model="m")
    assert info.value.code == code


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]"])
def test_tool_arguments_that_are_not_an_object_are_refused(arguments: str) -> None:
    inp = run_input(
        [{"id": "a", "role": "assistant", "toolCalls": [call("toolu_1", "f", arguments)]}]
    )
    with pytest.raises(RequestTranslationError) as info:
        to_anthropic(inp, model="m")
    assert info.value.code == "INVALID_TOOL_ARGUMENTS"
    assert "messages[0].toolCalls[0]" in info.value.message
