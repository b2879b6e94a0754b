"""Tool results directly after their calls, for every strict provider (issue 11, kind 6).

Rules, from each provider's API reference:

* OpenAI Chat Completions ("Create chat completion", ``messages``: an assistant message with
  ``tool_calls`` "must be followed by tool messages responding to each 'tool_call_id'", the
  API's 400 text): the ``tool`` messages of every call id come right after it.
* OpenAI Responses ("Create a model response", ``input`` item ``function_call_output``): the
  output item for a ``call_id`` comes after the ``function_call`` item with that ``call_id``.
* Anthropic Messages ("Tool use" -> handling tool use and tool result content blocks): the
  ``tool_result`` blocks follow their ``tool_use`` blocks in the next ``user`` message and come
  first in its ``content``.
* Gemini (``generateContent`` "Function calling" -> multi-turn: the ``functionResponse`` parts
  are the content right after the ``model`` content with the ``functionCall`` parts).
* Bedrock Converse (``ContentBlock`` ``toolUse`` / ``toolResult``; "Call a tool with the
  Converse API": the ``toolResult`` goes in the next ``user`` message).

The property: random conversations (user and assistant text, assistant tool calls, several per
turn, results after text, reasoning, later calls) give bodies that satisfy each rule, and every
text and every result of the input appears exactly once. Golden bodies for one conversation
(a frontend tool / approval turn: the assistant asks, the user answers, then the result comes)
are written from the same references.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.protocols._request import results_after_calls
from agui_codecs.protocols.anthropic.request import DEFAULT_MAX_TOKENS, to_anthropic
from agui_codecs.protocols.bedrock_converse.request import to_converse
from agui_codecs.protocols.gemini.request import to_gemini
from agui_codecs.protocols.openai_chat.request import to_openai_chat
from agui_codecs.protocols.openai_responses.request import to_openai_responses


def run_input(messages: list[dict[str, Any]]) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r1",
            "messages": messages,
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
        }
    )


# --- random conversations ----------------------------------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """AG-UI messages: every call gets exactly one result, some time after its call, with
    anything (text, reasoning, other calls, other results) in between."""
    messages: list[dict[str, Any]] = [{"id": "m0", "role": "user", "content": "u0"}]
    pending: list[str] = []
    answered: list[str] = []
    counter = 0
    for _ in range(draw(st.integers(1, 10))):
        counter += 1
        n = counter
        kind = draw(st.sampled_from(["user", "assistant", "calls", "result", "result", "reason"]))
        if kind == "user":
            messages.append({"id": f"m{n}", "role": "user", "content": f"u{n}"})
        elif kind == "assistant":
            messages.append({"id": f"m{n}", "role": "assistant", "content": f"a{n}"})
        elif kind == "reason":
            messages.append({"id": f"m{n}", "role": "reasoning", "content": f"think{n}"})
        elif kind == "calls":
            ids = [f"c{n}_{k}" for k in range(draw(st.integers(1, 3)))]
            reusable = [i for i in answered if i not in pending]
            if reusable and draw(st.booleans()):  # some providers number calls per turn
                ids = [draw(st.sampled_from(reusable))]
            message: dict[str, Any] = {
                "id": f"m{n}",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": i,
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": 1}'},
                    }
                    for i in ids
                ],
            }
            if draw(st.booleans()):
                message["content"] = f"a{n}"
            messages.append(message)
            pending.extend(ids)
        elif pending:
            call_id = pending.pop(draw(st.integers(0, len(pending) - 1)))
            answered.append(call_id)
            messages.append(_result(f"m{n}", call_id))
    while pending:  # the remaining results, in a random order, text possibly between them
        counter += 1
        call_id = pending.pop(draw(st.integers(0, len(pending) - 1)))
        if draw(st.booleans()):
            messages.append({"id": f"x{counter}", "role": "user", "content": f"u{counter}"})
        messages.append(_result(f"m{counter}", call_id))
    return messages


def _result(message_id: str, call_id: str) -> dict[str, Any]:
    content = f"r-{call_id}#{message_id}"
    return {"id": message_id, "role": "tool", "toolCallId": call_id, "content": content}


def _inputs(messages: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """(user/assistant texts, tool results) of the input, with multiplicity."""
    texts = Counter(
        m["content"] for m in messages if m["role"] in ("user", "assistant") and m.get("content")
    )
    results = Counter(m["content"] for m in messages if m["role"] == "tool")
    return texts, results


# --- per-provider rules ------------------------------------------------------------------


def check_openai_chat(body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    out = body["messages"]
    texts: Counter[str] = Counter()
    results: Counter[str] = Counter()
    for i, message in enumerate(out):
        if message["role"] in ("user", "assistant") and message.get("content"):
            texts[message["content"]] += 1
        if message["role"] == "tool":
            assert message["content"].startswith(f"r-{message['tool_call_id']}#")
            results[message["content"]] += 1
        calls = [c["id"] for c in message.get("tool_calls", [])]
        if calls:
            following = out[i + 1 : i + 1 + len(calls)]
            assert [m["role"] for m in following] == ["tool"] * len(calls), (i, out)
            assert sorted(m["tool_call_id"] for m in following) == sorted(calls)
    return texts, results


def check_responses(body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    texts: Counter[str] = Counter()
    results: Counter[str] = Counter()
    seen_calls: set[str] = set()
    for item in body["input"]:
        if item.get("role") in ("user", "assistant"):
            texts[item["content"]] += 1
        elif item["type"] == "function_call":
            seen_calls.add(item["call_id"])
        elif item["type"] == "function_call_output":
            assert item["call_id"] in seen_calls
            assert item["output"].startswith(f"r-{item['call_id']}#")
            results[item["output"]] += 1
    return texts, results


def _check_blocks(
    turns: list[dict[str, Any]],
    *,
    content: str,
    model_role: str,
    call_of: Callable[[dict[str, Any]], str | None],
    result_of: Callable[[dict[str, Any]], str | None],
    text_of: Callable[[dict[str, Any]], str | None],
    output_of: Callable[[dict[str, Any]], str],
) -> tuple[Counter[str], Counter[str]]:
    texts: Counter[str] = Counter()
    results: Counter[str] = Counter()
    for i, turn in enumerate(turns):
        blocks = turn[content]
        for block in blocks:
            text = text_of(block)
            if text is not None:
                texts[text] += 1
            result = result_of(block)
            if result is not None:
                assert turn["role"] == "user"
                assert output_of(block).startswith(f"r-{result}#")
                results[output_of(block)] += 1
        calls = [c for c in map(call_of, blocks) if c is not None]
        if calls:
            assert turn["role"] == model_role
            assert i + 1 < len(turns), turns
            head = [result_of(b) for b in turns[i + 1][content][: len(calls)]]
            assert turns[i + 1]["role"] == "user"
            assert sorted(h or "" for h in head) == sorted(calls), (i, turns)
    return texts, results


def check_anthropic(body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    roles = [t["role"] for t in body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))
    return _check_blocks(
        body["messages"],
        content="content",
        model_role="assistant",
        call_of=lambda b: b["id"] if b["type"] == "tool_use" else None,
        result_of=lambda b: b["tool_use_id"] if b["type"] == "tool_result" else None,
        text_of=lambda b: b["text"] if b["type"] == "text" else None,
        output_of=lambda b: b["content"],
    )


def check_gemini(body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    return _check_blocks(
        body["contents"],
        content="parts",
        model_role="model",
        call_of=lambda p: p["functionCall"]["id"] if "functionCall" in p else None,
        result_of=lambda p: p["functionResponse"]["id"] if "functionResponse" in p else None,
        text_of=lambda p: p["text"] if "text" in p and not p.get("thought") else None,
        output_of=lambda p: p["functionResponse"]["response"]["output"],
    )


def check_bedrock(body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    roles = [t["role"] for t in body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))
    return _check_blocks(
        body["messages"],
        content="content",
        model_role="assistant",
        call_of=lambda b: b["toolUse"]["toolUseId"] if "toolUse" in b else None,
        result_of=lambda b: b["toolResult"]["toolUseId"] if "toolResult" in b else None,
        text_of=lambda b: b.get("text"),
        output_of=lambda b: b["toolResult"]["content"][0]["text"],
    )


PROVIDERS: dict[str, tuple[Callable[[RunAgentInput], dict[str, Any]], Callable[..., Any]]] = {
    "openai_chat": (lambda r: to_openai_chat(r, model="m"), check_openai_chat),
    "openai_responses": (lambda r: to_openai_responses(r, model="m"), check_responses),
    "anthropic": (lambda r: to_anthropic(r, model="m"), check_anthropic),
    "gemini": (lambda r: to_gemini(r, model="gemini-2.5-flash"), check_gemini),
    "bedrock": (lambda r: to_converse(r), check_bedrock),
}


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_every_provider_gets_results_right_after_their_calls(
    messages: list[dict[str, Any]],
) -> None:
    inp = run_input(messages)
    texts, results = _inputs(messages)
    for name, (build, check) in PROVIDERS.items():
        body = build(inp)
        got_texts, got_results = check(body)
        assert got_texts == texts, name
        assert got_results == results, name


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_reordering_is_a_permutation(messages: list[dict[str, Any]]) -> None:
    inp = run_input(messages)
    order = results_after_calls(inp.messages)
    assert sorted(i for i, _ in order) == list(range(len(inp.messages)))
    assert all(inp.messages[i] is m for i, m in order)


# --- golden bodies -------------------------------------------------------------------------

APPROVAL = [
    {"id": "u1", "role": "user", "content": "Delete the draft."},
    {
        "id": "a1",
        "role": "assistant",
        "content": "I will ask first.",
        "toolCalls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "confirm", "arguments": '{"action": "delete"}'},
            }
        ],
    },
    {"id": "a2", "role": "assistant", "content": "Please approve the deletion."},
    {"id": "u2", "role": "user", "content": "Yes."},
    {"id": "t1", "role": "tool", "toolCallId": "call_1", "content": '{"approved": true}'},
]
"""A frontend tool / approval turn: text between the call and its result."""


def test_golden_openai_chat() -> None:
    # "Create chat completion": assistant message with tool_calls, then a tool message
    # {role: "tool", tool_call_id, content}; the text after them.
    body = to_openai_chat(run_input(APPROVAL), model="gpt-4.1")
    assert body["messages"] == [
        {"role": "user", "content": "Delete the draft."},
        {
            "role": "assistant",
            "content": "I will ask first.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "confirm", "arguments": '{"action": "delete"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"approved": true}'},
        {"role": "assistant", "content": "Please approve the deletion."},
        {"role": "user", "content": "Yes."},
    ]


def test_golden_openai_responses() -> None:
    # "Create a model response", input items: EasyInputMessage {role, content},
    # function_call {type, call_id, name, arguments}, function_call_output {type, call_id,
    # output}.
    body = to_openai_responses(run_input(APPROVAL), model="gpt-5")
    assert body["input"] == [
        {"role": "user", "content": "Delete the draft."},
        {"role": "assistant", "content": "I will ask first."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "confirm",
            "arguments": '{"action": "delete"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": '{"approved": true}'},
        {"role": "assistant", "content": "Please approve the deletion."},
        {"role": "user", "content": "Yes."},
    ]


def test_golden_anthropic() -> None:
    # Messages API "Tool use": tool_use {type, id, name, input} in the assistant turn, then a
    # user turn whose content starts with tool_result {type, tool_use_id, content}.
    body = to_anthropic(run_input(APPROVAL), model="claude-sonnet-4-5")
    assert body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": DEFAULT_MAX_TOKENS,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Delete the draft."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "I will ask first."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "confirm",
                        "input": {"action": "delete"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": '{"approved": true}',
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Please approve the deletion."}],
            },
            {"role": "user", "content": [{"type": "text", "text": "Yes."}]},
        ],
        "stream": True,
    }


def test_golden_gemini() -> None:
    # generateContent "Function calling": model content with functionCall {id, name, args},
    # then a user content with functionResponse {id, name, response}.
    body = to_gemini(run_input(APPROVAL), model="gemini-2.5-flash")
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Delete the draft."}]},
        {
            "role": "model",
            "parts": [
                {"text": "I will ask first."},
                {"functionCall": {"id": "call_1", "name": "confirm", "args": {"action": "delete"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_1",
                        "name": "confirm",
                        "response": {"output": {"approved": True}},
                    }
                }
            ],
        },
        {"role": "model", "parts": [{"text": "Please approve the deletion."}]},
        {"role": "user", "parts": [{"text": "Yes."}]},
    ]


def test_golden_bedrock() -> None:
    # Converse API: Message {role, content: [ContentBlock]}; toolUse {toolUseId, name, input};
    # toolResult {toolUseId, content: [{json}], status} in the next user message.
    body = to_converse(run_input(APPROVAL))
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "Delete the draft."}]},
        {
            "role": "assistant",
            "content": [
                {"text": "I will ask first."},
                {
                    "toolUse": {
                        "toolUseId": "call_1",
                        "name": "confirm",
                        "input": {"action": "delete"},
                    }
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "call_1",
                        "content": [{"json": {"approved": True}}],
                        "status": "success",
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "Please approve the deletion."}]},
        {"role": "user", "content": [{"text": "Yes."}]},
    ]


def test_golden_bodies_are_json() -> None:
    for build, _ in PROVIDERS.values():
        orjson.dumps(build(run_input(APPROVAL)))
