"""Tool results with content parts reach each provider in its native form (issue 11, kind 6).

AG-UI 1.0 ``ToolMessage.content`` is ``string | ContentPart[]`` (ag_ui.core ``ToolMessage``).
Expected bodies are written from the references:

* Anthropic Messages, "Tool use" -> tool_result ``content``: a string or a list of ``text`` /
  ``image`` / ``document`` blocks (same block shapes as in a user turn).
* OpenAI Responses, "Create a model response" -> ``function_call_output.output``: a string or
  a list of ``input_text`` / ``input_image`` / ``input_file`` items.
* Gemini v1beta ``FunctionResponse.parts`` (``FunctionResponsePart`` with ``inlineData``
  ``{mimeType, data}`` or ``fileData``), "Multimodal function responses" (Gemini 3 models);
  for older models ``@ai-sdk/google`` 3.0.141 (``convert-to-google-generative-ai-messages.ts``,
  ``appendLegacyToolResultParts``) sends the media as top-level ``inlineData`` parts.
* Bedrock Converse ``ToolResultContentBlock``: ``json`` | ``text`` | ``image`` | ``document`` |
  ``video`` (botocore ``bedrock-runtime/2023-09-30/service-2``).
"""

from __future__ import annotations

from typing import Any

import orjson
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.protocols.anthropic.request import to_anthropic
from agui_codecs.protocols.bedrock_converse.request import to_converse
from agui_codecs.protocols.gemini.request import to_gemini
from agui_codecs.protocols.openai_responses.request import to_openai_responses

PNG = "iVBORw0KGgo="
PDF = "JVBERi0xLjQ="


def run_input(results: list[list[dict[str, Any]]]) -> RunAgentInput:
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": "chart", "arguments": "{}"}}
        for n in range(len(results))
    ]
    messages: list[dict[str, Any]] = [
        {"id": "u1", "role": "user", "content": "Draw it."},
        {"id": "a1", "role": "assistant", "toolCalls": calls},
    ]
    for n, content in enumerate(results):
        messages.append(
            {"id": f"t{n}", "role": "tool", "toolCallId": f"call_{n}", "content": content}
        )
    return RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": messages,
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
        }
    )


CHART = [
    {"type": "text", "text": "Here is the chart."},
    {"type": "image", "source": {"type": "data", "value": PNG, "mimeType": "image/png"}},
    {"type": "document", "source": {"type": "data", "value": PDF, "mimeType": "application/pdf"}},
]


def test_golden_anthropic_tool_result_blocks() -> None:
    body = to_anthropic(run_input([CHART]), model="claude-sonnet-4-5")
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_0",
                "content": [
                    {"type": "text", "text": "Here is the chart."},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                    },
                ],
            }
        ],
    }


def test_golden_responses_output_list() -> None:
    body = to_openai_responses(run_input([CHART]), model="gpt-5")
    assert body["input"][2] == {
        "type": "function_call_output",
        "call_id": "call_0",
        "output": [
            {"type": "input_text", "text": "Here is the chart."},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            {
                "type": "input_file",
                "filename": "document",
                "file_data": f"data:application/pdf;base64,{PDF}",
            },
        ],
    }


def test_golden_gemini3_function_response_parts() -> None:
    body = to_gemini(run_input([CHART]), model="gemini-3-pro-preview")
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "call_0",
                    "name": "chart",
                    "response": {"output": "Here is the chart."},
                    "parts": [
                        {"inlineData": {"mimeType": "image/png", "data": PNG}},
                        {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
                    ],
                }
            }
        ],
    }


def test_golden_gemini_before_3_media_after_the_responses() -> None:
    body = to_gemini(run_input([CHART, "plain"]), model="gemini-2.5-flash")  # type: ignore[list-item]
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "call_0",
                    "name": "chart",
                    "response": {"output": "Here is the chart."},
                }
            },
            {
                "functionResponse": {
                    "id": "call_1",
                    "name": "chart",
                    "response": {"output": "plain"},
                }
            },
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
        ],
    }


def test_golden_bedrock_tool_result_content_blocks() -> None:
    body = to_converse(run_input([CHART]))
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "call_0",
                    "content": [
                        {"text": "Here is the chart."},
                        {"image": {"format": "png", "source": {"bytes": PNG}}},
                        {
                            "document": {
                                "format": "pdf",
                                "name": "document-2",
                                "source": {"bytes": PDF},
                            }
                        },
                    ],
                    "status": "success",
                }
            }
        ],
    }


# --- property: every part of every result reaches every provider, once ---------------------


@st.composite
def results(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    out = []
    n = 0
    for _ in range(draw(st.integers(1, 3))):
        content = []
        for _ in range(draw(st.integers(1, 4))):
            n += 1
            token = f"TOK{n:04d}"  # base64 alphabet, unique
            kind = draw(st.sampled_from(["text", "image", "document"]))
            if kind == "text":
                content.append({"type": "text", "text": token})
            elif kind == "image":
                source = {"type": "data", "value": token, "mimeType": "image/png"}
                content.append({"type": "image", "source": source})
            else:
                source = {"type": "data", "value": token, "mimeType": "application/pdf"}
                content.append({"type": "document", "source": source})
        out.append(content)
    return out


def _tokens(node: Any) -> list[str]:
    text = orjson.dumps(node).decode()
    return sorted(t for t in (text[i : i + 7] for i in range(len(text))) if t[:3] == "TOK")


@settings(max_examples=100, deadline=None)
@given(results())
def test_every_part_of_every_result_reaches_every_provider_once(
    parts: list[list[dict[str, Any]]],
) -> None:
    inp = run_input(parts)
    for n, content in enumerate(parts):
        expected = sorted(
            p["text"] if p["type"] == "text" else p["source"]["value"] for p in content
        )
        call = f"call_{n}"
        anthropic = to_anthropic(inp, model="m")["messages"][2]["content"]
        assert _tokens([b for b in anthropic if b["tool_use_id"] == call]) == expected
        responses = to_openai_responses(inp, model="m")["input"]
        outputs = [i for i in responses if i.get("call_id") == call and "output" in i]
        assert _tokens(outputs) == expected
        gemini3 = to_gemini(inp, model="gemini-3-flash")["contents"][2]["parts"]
        assert _tokens([p for p in gemini3 if p["functionResponse"]["id"] == call]) == expected
        bedrock = to_converse(inp)["messages"][2]["content"]
        assert _tokens([b for b in bedrock if b["toolResult"]["toolUseId"] == call]) == expected
    all_tokens = sorted(t for c in parts for t in _tokens(c))
    assert _tokens(to_gemini(inp, model="gemini-2.5-flash")["contents"][2]) == all_tokens
