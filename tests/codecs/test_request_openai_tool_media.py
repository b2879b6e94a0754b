"""OpenAI Chat Completions: media parts of a tool result are sent, not omitted (issue 11).

AG-UI 1.0 ``ToolMessage.content`` is ``string | ContentPart[]`` (ag_ui.core ``ToolMessage``).
The Chat Completions reference (openapi.yaml ``ChatCompletionRequestToolMessage``): a tool
message's ``content`` is a string or an array of content parts, "For tool messages, only type
``text`` is supported"; a ``user`` message takes ``text`` / ``image_url`` {url} /
``input_audio`` {data, format: wav|mp3} / ``file`` {file_data, filename} | {file_id} parts
(``ChatCompletionRequestUserMessageContentPart``), and every ``tool_calls`` id of an assistant
message must be answered by the ``tool`` messages that follow it before any other message.
So the expected body: the text in the ``tool`` message, the media in a ``user`` message after
the turn's last ``tool`` message.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.errors import RequestTranslationError
from agui_codecs.protocols.openai_chat.request import MEDIA_ONLY_RESULT, to_openai_chat

PNG = "iVBORw0KGgo="
PDF = "JVBERi0xLjQ="
WAV = "UklGRiQAAABXQVZF"


def run_input(results: list[list[dict[str, Any]] | str], *, after: bool = True) -> RunAgentInput:
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
    if after:
        messages.append({"id": "a2", "role": "assistant", "content": "Done."})
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


IMAGE = {"type": "image", "source": {"type": "data", "value": PNG, "mimeType": "image/png"}}
DOCUMENT = {
    "type": "document",
    "source": {"type": "data", "value": PDF, "mimeType": "application/pdf"},
    "metadata": {"filename": "chart.pdf"},
}
AUDIO = {"type": "audio", "source": {"type": "data", "value": WAV, "mimeType": "audio/wav"}}


def test_golden_text_in_the_tool_message_media_in_a_user_message_after_the_turn() -> None:
    chart = [{"type": "text", "text": "Here is the chart."}, IMAGE, DOCUMENT]
    body = to_openai_chat(run_input([chart, "42"]), model="gpt-4o")
    assert body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_0", "content": "Here is the chart."},
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Attachments of the result of tool call call_0:"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {
                    "type": "file",
                    "file": {
                        "file_data": f"data:application/pdf;base64,{PDF}",
                        "filename": "chart.pdf",
                    },
                },
            ],
        },
        {"role": "assistant", "content": "Done."},
    ]


def test_golden_media_only_result_with_audio_and_an_image_url() -> None:
    url_image = {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png"}}
    body = to_openai_chat(run_input([[AUDIO, url_image]], after=False), model="gpt-4o")
    assert body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_0", "content": MEDIA_ONLY_RESULT},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Attachments of the result of tool call call_0:"},
                {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
            ],
        },
    ]


def test_a_part_with_no_chat_completions_form_is_refused_not_omitted() -> None:
    video = {"type": "video", "source": {"type": "data", "value": "AAAA", "mimeType": "video/mp4"}}
    with pytest.raises(RequestTranslationError) as caught:
        to_openai_chat(run_input([[{"type": "text", "text": "clip"}, video]]), model="m")
    assert caught.value.code == "UNSUPPORTED_CONTENT"
    assert "messages[2].content[1]" in caught.value.message  # the tool message, part 1


@st.composite
def results(draw: st.DrawFn) -> list[list[dict[str, Any]] | str]:
    out: list[list[dict[str, Any]] | str] = []
    n = 0
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            n += 1
            out.append(f"TOK{n:04d}")
            continue
        content = []
        for _ in range(draw(st.integers(1, 4))):
            n += 1
            token = f"TOK{n:04d}"  # base64 alphabet, unique
            kind = draw(st.sampled_from(["text", "image", "document", "audio"]))
            if kind == "text":
                content.append({"type": "text", "text": token})
            else:
                mime = {"image": "image/png", "document": "application/pdf",
                        "audio": "audio/mpeg"}[kind]  # fmt: skip
                content.append({"type": kind, "source": {"type": "data", "value": token,
                                                         "mimeType": mime}})  # fmt: skip
        out.append(content)
    return out


def _tokens(node: Any) -> list[str]:
    text = orjson.dumps(node).decode()
    return sorted(t for t in (text[i : i + 7] for i in range(len(text))) if t[:3] == "TOK")


@settings(max_examples=100, deadline=None)
@given(results(), st.booleans())
def test_every_part_of_every_result_is_sent_once_and_tool_messages_stay_together(
    parts: list[list[dict[str, Any]] | str], after: bool
) -> None:
    messages = to_openai_chat(run_input(parts, after=after), model="m")["messages"]
    roles = [m["role"] for m in messages]
    n = len(parts)
    assert roles[: 2 + n] == ["user", "assistant"] + ["tool"] * n  # answered before anything else
    for m in messages:
        if m["role"] == "tool":  # text only in tool messages
            assert isinstance(m["content"], str) and m["content"]
    for k, content in enumerate(parts):
        call = f"call_{k}"
        expected = sorted(_tokens(content))
        tool = [m for m in messages if m.get("tool_call_id") == call]
        media = [
            m for m in messages if m["role"] == "user" and call + ":" in orjson.dumps(m).decode()
        ]
        assert _tokens(tool + media) == expected
    assert _tokens(messages) == sorted(_tokens(parts))
