"""RunAgentInput -> Gemini streamGenerateContent body.

Expected bodies are written from the Gemini API reference (v1beta ``GenerateContentRequest``):
``contents`` of ``{role: "user" | "model", parts}``; parts ``{text}``, ``{text, thought: true}``,
``{inlineData: {mimeType, data}}``, ``{fileData: {fileUri, mimeType}}``, ``{functionCall: {id,
name, args}}``, ``{functionResponse: {id, name, response}}`` (``response`` an object, ``output``
/ ``error`` keys), ``thoughtSignature`` on the part it came with; ``systemInstruction: {parts}``;
``tools: [{functionDeclarations: [{name, description, parametersJsonSchema}]}]``;
``generationConfig`` (``thinkingConfig`` inside); and the thought-signature guide
(``skip_thought_signature_validator`` for Gemini 3 calls whose signature was lost).
"""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import RunAgentInput

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols.gemini.request import SKIP_SIGNATURE, to_gemini

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
GOOGLE = {"provider": "google", "field": "thoughtSignature"}


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


def call(call_id: str, name: str, arguments: str, signature: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    if signature is not None:
        out["encryptedValue"] = signature
    return out


def test_second_turn_matches_the_api_reference_shapes() -> None:
    inp = run_input(
        [
            {"id": "s", "role": "system", "content": "You are terse."},
            {"id": "u1", "role": "user", "content": "Weather in Paris?"},
            {
                "id": "r1",
                "role": "reasoning",
                "content": "Let me think.",
                "encryptedValue": "sig-thought",
                "metadata": GOOGLE,
            },
            {
                "id": "a1",
                "role": "assistant",
                "content": "Checking.",
                "encryptedValue": "sig-text",
                "toolCalls": [call("call_1", "get_weather", '{"city":"Paris"}', "sig-call")],
            },
            {"id": "t1", "role": "tool", "toolCallId": "call_1", "content": '{"temp":18}'},
            {"id": "u2", "role": "user", "content": "And tomorrow?"},
        ],
        tools=[{"name": "get_weather", "description": "Get weather", "parameters": SCHEMA}],
        context=[{"description": "Units", "value": "metric"}],
        forwardedProps={"temperature": 0.3, "maxOutputTokens": 256, "thinkingBudget": 1024},
    )
    assert to_gemini(inp, model="gemini-2.5-flash") == {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Let me think.", "thought": True, "thoughtSignature": "sig-thought"},
                    {"text": "Checking.", "thoughtSignature": "sig-text"},
                    {
                        "functionCall": {
                            "id": "call_1",
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                        },
                        "thoughtSignature": "sig-call",
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "call_1",
                            "name": "get_weather",
                            "response": {"output": {"temp": 18}},
                        }
                    }
                ],
            },
            {"role": "user", "parts": [{"text": "And tomorrow?"}]},
        ],
        "systemInstruction": {
            "parts": [{"text": "You are terse.\n\nContext from the application:\n\nUnits:\nmetric"}]
        },
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_weather",
                        "description": "Get weather",
                        "parametersJsonSchema": SCHEMA,
                    }
                ]
            }
        ],
        "generationConfig": {
            "temperature": 0.3,
            "maxOutputTokens": 256,
            "thinkingConfig": {"thinkingBudget": 1024},
        },
    }


def test_function_response_name_matches_its_call() -> None:
    # Fault: Gemini rejects a functionResponse whose name is not the called function's.
    inp = run_input(
        [
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [call("c1", "get_weather", "{}"), call("c2", "get_time", "")],
            },
            {"id": "t2", "role": "tool", "toolCallId": "c2", "content": "noon"},
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "", "error": "down"},
        ]
    )
    contents = to_gemini(inp, model="gemini-2.5-flash")["contents"]
    assert contents[1] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "c2", "name": "get_time", "response": {"output": "noon"}}},
            {
                "functionResponse": {
                    "id": "c1",
                    "name": "get_weather",
                    "response": {"error": "down"},
                }
            },
        ],
    }  # parallel responses in one content, as Gemini wants them
    assert contents[0]["parts"][1] == {"functionCall": {"id": "c2", "name": "get_time", "args": {}}}


def test_tool_result_without_its_call_is_refused() -> None:
    inp = run_input([{"id": "t", "role": "tool", "toolCallId": "ghost", "content": "x"}])
    with pytest.raises(RequestTranslationError) as info:
        to_gemini(inp, model="gemini-2.5-flash")
    assert info.value.code == "INVALID_TOOL_RESULT" and "'ghost'" in info.value.message


def test_gemini3_call_without_signature_gets_the_documented_sentinel() -> None:
    # Fault (public reports): Gemini 3 answers 400 for a replayed functionCall without its
    # thoughtSignature; only the first call of a parallel batch carries one.
    lost = run_input(
        [
            {"id": "u", "role": "user", "content": "go"},
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [call("c1", "f", "{}"), call("c2", "g", "{}")],
            },
        ]
    )
    parts = to_gemini(lost, model="gemini-3-pro-preview")["contents"][1]["parts"]
    assert parts[0]["thoughtSignature"] == SKIP_SIGNATURE
    assert "thoughtSignature" not in parts[1]
    kept = run_input(
        [
            {"id": "u", "role": "user", "content": "go"},
            {
                "id": "a",
                "role": "assistant",
                "toolCalls": [call("c1", "f", "{}", "sig-1"), call("c2", "g", "{}")],
            },
        ]
    )
    parts = to_gemini(kept, model="models/gemini-3-flash")["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == ["sig-1", None]
    older = to_gemini(lost, model="gemini-2.5-pro")["contents"][1]["parts"]
    assert all("thoughtSignature" not in p for p in older)


def test_signatures_of_other_providers_are_not_sent() -> None:
    anthropic = {"provider": "anthropic", "field": "signature"}
    inp = run_input(
        [
            {"id": "u", "role": "user", "content": "go"},
            {
                "id": "r",
                "role": "reasoning",
                "content": "claude thinking",
                "encryptedValue": "sig-a",
                "metadata": anthropic,
            },
            {
                "id": "a",
                "role": "assistant",
                "content": "ok",
                "encryptedValue": "sig-b",
                "metadata": anthropic,
                "toolCalls": [
                    {**call("c1", "f", "{}", "sig-c"), "metadata": anthropic},
                ],
            },
            {"id": "r2", "role": "reasoning", "content": "", "encryptedValue": "sig-only"},
        ]
    )
    model_parts = to_gemini(inp, model="gemini-2.5-flash")["contents"][1]["parts"]
    assert model_parts == [
        {"text": "ok"},
        {"functionCall": {"id": "c1", "name": "f", "args": {}}},
    ]


def test_media_parts() -> None:
    inp = run_input(
        [
            {
                "id": "u",
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image",
                        "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"},
                    },
                    {
                        "type": "video",
                        "source": {
                            "type": "url",
                            "value": "https://www.youtube.com/watch?v=x",
                            "mimeType": "video/mp4",
                        },
                    },
                    {"type": "document", "source": {"type": "file", "value": "files/abc"}},
                ],
            }
        ]
    )
    assert to_gemini(inp, model="gemini-2.5-flash")["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "What is this?"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                {
                    "fileData": {
                        "fileUri": "https://www.youtube.com/watch?v=x",
                        "mimeType": "video/mp4",
                    }
                },
                {"fileData": {"fileUri": "files/abc"}},
            ],
        }
    ]


def test_route_params_and_client_params() -> None:
    inp = run_input(
        [{"id": "u", "role": "user", "content": "hi"}],
        forwardedProps={
            "temperature": 0.9,
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            "safetySettings": [],
            "contents": [],
        },
    )
    body = to_gemini(
        inp,
        model="gemini-2.5-flash",
        params={
            "generationConfig": {"temperature": 0.1, "topK": 40},
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
            "maxOutputTokens": 100,
        },
    )
    assert body["generationConfig"] == {"temperature": 0.9, "topK": 40, "maxOutputTokens": 100}
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert body["safetySettings"] == [
        {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}
    ]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
