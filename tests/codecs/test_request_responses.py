"""RunAgentInput -> OpenAI Responses body.

Expected bodies are written from the Responses API reference ("Create a model response"):
``instructions``; ``input`` items: easy input messages ``{role, content}`` (string, or
``input_text`` / ``input_image`` / ``input_file`` parts), ``function_call`` ``{call_id, name,
arguments}``, ``function_call_output`` ``{call_id, output}``, ``reasoning`` ``{summary:
[{type: "summary_text", text}], encrypted_content}``; function tools ``{type: "function", name,
description, parameters, strict}``; ``include: ["reasoning.encrypted_content"]`` with
``store: false`` (reasoning guide, "Encrypted reasoning items").
"""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import RunAgentInput

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols.openai_responses.request import to_openai_responses

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


def reasoning(text: str, value: str | None, provider: str | None = "openai") -> dict[str, Any]:
    message: dict[str, Any] = {"id": f"rs-{text[:3]}", "role": "reasoning", "content": text}
    if value is not None:
        message["encryptedValue"] = value
    if provider is not None:
        message["metadata"] = {"provider": provider, "field": "encryptedContent"}
    return message


CONVERSATION: list[dict[str, Any]] = [
    {"id": "s", "role": "system", "content": "You are terse."},
    {"id": "d", "role": "developer", "content": "Use metric units."},
    {"id": "u1", "role": "user", "content": "Weather in Paris?"},
    reasoning("I should call the tool.", "gAAAA-enc-1"),
    {
        "id": "a1",
        "role": "assistant",
        "content": "Checking.",
        "toolCalls": [call("call_1", "get_weather", '{"city":"Paris"}')],
    },
    {"id": "t1", "role": "tool", "toolCallId": "call_1", "content": "18C"},
    {"id": "u2", "role": "user", "content": "And tomorrow?"},
]


def test_second_turn_matches_the_api_reference_shapes() -> None:
    inp = run_input(
        CONVERSATION,
        tools=[{"name": "get_weather", "description": "Get weather", "parameters": SCHEMA}],
        context=[{"description": "Units", "value": "metric"}],
        forwardedProps={"temperature": 0.3, "reasoningEffort": "low", "maxOutputTokens": 512},
    )
    assert to_openai_responses(inp, model="gpt-5") == {
        "model": "gpt-5",
        "instructions": "You are terse.\n\nUse metric units.\n\n"
        "Context from the application:\n\nUnits:\nmetric",
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "I should call the tool."}],
                "encrypted_content": "gAAAA-enc-1",
            },
            {"role": "assistant", "content": "Checking."},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
            {"role": "user", "content": "And tomorrow?"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Get weather",
                "parameters": SCHEMA,
                "strict": False,
            }
        ],
        "store": False,
        "temperature": 0.3,
        "max_output_tokens": 512,
        "reasoning": {"effort": "low"},
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }


def test_reasoning_item_is_sent_without_a_minted_id() -> None:
    # Fault (public reports): a replayed encrypted reasoning item with a made-up id is
    # rejected, "Encrypted content item_id did not match the target item id".
    body = to_openai_responses(run_input(CONVERSATION), model="gpt-5")
    [item] = [i for i in body["input"] if i.get("type") == "reasoning"]
    assert "id" not in item


def test_include_encrypted_content_only_for_reasoning_requests() -> None:
    # Fault (public reports): gpt-4o / gpt-4.1 answer 400 "Encrypted content is not supported
    # with this model" when the include is always sent.
    plain = run_input([{"id": "u", "role": "user", "content": "hi"}])
    assert "include" not in to_openai_responses(plain, model="gpt-4.1")
    asked = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        forwardedProps={"reasoning": {"effort": "high", "summary": "auto"}},
    )
    body = to_openai_responses(asked, model="gpt-5")
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}


def test_reasoning_that_cannot_be_replayed_is_dropped() -> None:
    inp = run_input(
        [
            {"id": "u", "role": "user", "content": "hi"},
            reasoning("summary only", None),
            reasoning("claude thinking", "sig-anthropic", provider="anthropic"),
            {"id": "a", "role": "assistant", "content": "hello"},
        ]
    )
    body = to_openai_responses(inp, model="gpt-5")
    assert body["input"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert "include" not in body


def test_reasoning_without_provenance_is_assumed_to_be_this_routes() -> None:
    # @ag-ui/client 1.0 keeps encryptedValue on the message but not the event metadata.
    inp = run_input([{"id": "u", "role": "user", "content": "hi"}, reasoning("", "enc", None)])
    body = to_openai_responses(inp, model="gpt-5")
    assert body["input"][1] == {"type": "reasoning", "summary": [], "encrypted_content": "enc"}
    assert body["include"] == ["reasoning.encrypted_content"]


def test_route_params_own_store_and_include() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        forwardedProps={"store": True, "include": ["x"], "top_p": 0.9, "input": "evil"},
    )
    body = to_openai_responses(inp, model="gpt-5")
    assert body["store"] is False and "include" not in body
    assert body["top_p"] == 0.9 and body["input"] == [{"role": "user", "content": "hi"}]
    routed = to_openai_responses(
        run_input(CONVERSATION),
        model="gpt-5",
        params={"store": True, "include": ["message.output_text.logprobs"]},
    )
    assert routed["store"] is True
    assert routed["include"] == ["message.output_text.logprobs", "reasoning.encrypted_content"]


def test_verbosity_and_summary_are_nested() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        forwardedProps={"verbosity": "low", "reasoningSummary": "auto"},
    )
    body = to_openai_responses(inp, model="gpt-5", params={"reasoning": {"effort": "minimal"}})
    assert body["text"] == {"verbosity": "low"}
    assert body["reasoning"] == {"effort": "minimal", "summary": "auto"}


def test_media_parts_and_multimodal_tool_output() -> None:
    inp = run_input(
        [
            {
                "id": "u",
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look"},
                    {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png"}},
                    {
                        "type": "image",
                        "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"},
                    },
                    {
                        "type": "document",
                        "source": {"type": "data", "value": "JVBE", "mimeType": "application/pdf"},
                        "metadata": {"filename": "a.pdf"},
                    },
                    {"type": "document", "source": {"type": "url", "value": "https://x.test/b"}},
                    {"type": "document", "source": {"type": "file", "value": "file-1"}},
                ],
            },
            {"id": "a", "role": "assistant", "toolCalls": [call("call_2", "shot", "")]},
            {
                "id": "t",
                "role": "tool",
                "toolCallId": "call_2",
                "content": [{"type": "text", "text": "done"}],
            },
        ]
    )
    body = to_openai_responses(inp, model="gpt-5")
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Look"},
                {"type": "input_image", "image_url": "https://x.test/a.png", "detail": "auto"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,iVBO",
                    "detail": "auto",
                },
                {
                    "type": "input_file",
                    "filename": "a.pdf",
                    "file_data": "data:application/pdf;base64,JVBE",
                },
                {"type": "input_file", "file_url": "https://x.test/b"},
                {"type": "input_file", "file_id": "file-1"},
            ],
        },
        {"type": "function_call", "call_id": "call_2", "name": "shot", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": [{"type": "input_text", "text": "done"}],
        },
    ]


def test_tool_error_text_is_the_output_and_tools_default_schema() -> None:
    inp = run_input(
        [
            {"id": "a", "role": "assistant", "toolCalls": [call("call_3", "f", "{}")]},
            {"id": "t", "role": "tool", "toolCallId": "call_3", "content": "", "error": "boom"},
        ],
        tools=[{"name": "f", "description": "", "parameters": None}],
    )
    body = to_openai_responses(inp, model="gpt-5")
    assert body["input"][1] == {
        "type": "function_call_output",
        "call_id": "call_3",
        "output": "boom",
    }
    assert body["tools"] == [
        {
            "type": "function",
            "name": "f",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }
    ]


def test_audio_has_no_responses_equivalent() -> None:
    inp = run_input(
        [
            {
                "id": "u",
                "role": "user",
                "content": [
                    {
                        "type": "audio",
                        "source": {"type": "data", "value": "UklG", "mimeType": "audio/wav"},
                    }
                ],
            }
        ]
    )
    with pytest.raises(RequestTranslationError) as info:
        to_openai_responses(inp, model="gpt-5")
    assert info.value.code == "UNSUPPORTED_CONTENT"
    assert "messages[0].content[0]" in info.value.message
