"""DeepSeek thinking-mode ``reasoning_content`` round trips through Chat Completions (issue 11
kind 5: what a provider needs back is never dropped).

Expected values come from DeepSeek's "Thinking Mode" guide
(https://api-docs.deepseek.com/guides/thinking_mode, "Tool Calls" and its sample output
``api_samples/thinking_mode_api_example_tool_call_output``), written out here: in a tool-calling
turn the assistant message goes back with its ``reasoning_content`` in every later request
(else HTTP 400 "The reasoning_content in the thinking mode must be passed back to the API");
the weather loop's turns 1.1 (``get_date``) and 1.2 (``get_weather``) are :data:`TURN_1_1` and
:data:`TURN_1_2`. The builder leaves out an empty ``content`` beside ``tool_calls`` (its
Chat Completions convention, ``content`` is optional on an assistant message with calls).

The clients' side is the real one: both wires are replayed through ``@ag-ui/client`` 1.0.0 and
``ai`` 7 (``tests/harness``), and the next request is built from what each client kept, as in
``tests/codecs/test_openrouter_reasoning_details.py``.
"""

from __future__ import annotations

from typing import Any

import orjson
from ag_ui.core import RunAgentInput
from decoder_checks import assert_legal_run, decode_all, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.protocols._reasoning_content import MARK
from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, to_run_agent_input
from agui_codecs.protocols.anthropic.request import to_anthropic
from agui_codecs.protocols.bedrock_converse.request import to_converse
from agui_codecs.protocols.gemini.request import to_gemini
from agui_codecs.protocols.openai_chat.request import to_openai_chat
from agui_codecs.protocols.openai_responses.request import to_openai_responses

QUESTION = "How's the weather in Hangzhou Tomorrow"
TOOLS = [
    {"name": "get_date", "description": "today's date", "parameters": {"type": "object"}},
    {"name": "get_weather", "description": "weather", "parameters": {"type": "object"}},
]
TURN_1_1: dict[str, Any] = {
    "role": "assistant",
    "content": "Let me check tomorrow's weather in Hangzhou for you. First, let me get "
    "tomorrow's date.",
    "reasoning_content": "The user is asking about the weather in Hangzhou tomorrow. I need to "
    "get tomorrow's date first, then call the weather function.",
    "tool_calls": [
        {
            "id": "call_00_kw66qNnNto11bSfJVIdlV5Oo",
            "type": "function",
            "function": {"name": "get_date", "arguments": "{}"},
        }
    ],
}
RESULT_1_1 = "2026-04-19"
TURN_1_2: dict[str, Any] = {
    "role": "assistant",
    "reasoning_content": "Today is 2026-04-19, so tomorrow is 2026-04-20. Now I'll call the "
    "weather function for Hangzhou.",
    "tool_calls": [
        {
            "id": "call_00_H2SCW6136vWJGq9SQlBuhVt4",
            "type": "function",
            "function": {
                "name": "get_weather",
                "arguments": '{"location": "Hangzhou", "date": "2026-04-20"}',
            },
        }
    ],
}
RESULT_1_2 = "Cloudy 7~13°C"


def _sse(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "ds-1",
        "object": "chat.completion.chunk",
        "model": "deepseek-v4-pro",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _stream(turn: dict[str, Any], pieces: int = 3) -> bytes:
    """``turn`` as DeepSeek streams it: reasoning_content, then content, then the calls."""
    body = _sse({"role": "assistant", "content": None, "reasoning_content": ""})
    text = turn["reasoning_content"]
    step = max(1, len(text) // pieces)
    for at in range(0, len(text), step):
        body += _sse({"content": None, "reasoning_content": text[at : at + step]})
    if turn.get("content"):
        body += _sse({"content": turn["content"], "reasoning_content": None})
    for n, call in enumerate(turn["tool_calls"]):
        body += _sse({"tool_calls": [{"index": n, **call}]})
    return body + _sse({}, "tool_calls") + b"data: [DONE]\n\n"


def _wires(events: list[Any]) -> tuple[bytes, bytes]:
    agui, ai = AguiEncoder(), AiSdkEncoder(ai_sdk_major=7)
    return (
        b"".join(agui.encode(e) for e in events) + agui.close(),
        b"".join(ai.encode(e) for e in events) + ai.close(),
    )


def _kept(streams: list[bytes], job: str) -> dict[str, list[list[dict[str, Any]]]]:
    """Decode each stream (one run each), replay both wires through the real clients: the
    messages each client kept, per run."""
    jobs: list[tuple[str, str, bytes]] = []
    for n, stream in enumerate(streams):
        events = decode_all("openai-chat", stream, thread_id="t1", run_id=f"run-{n}")
        assert_legal_run(events)
        agui_body, ai_body = _wires(events)
        jobs += [(f"{job}-{n}-agui", "agui", agui_body), (f"{job}-{n}-ai", "ai", ai_body)]
    jobs = [(i, "ai-v7" if c == "ai" else c, b) for i, c, b in jobs]
    results = replay(jobs)
    out: dict[str, list[list[dict[str, Any]]]] = {"agui": [], "ai": []}
    for n in range(len(streams)):
        for client in out:
            result = results[f"{job}-{n}-{client}"]
            assert result["accepted"], (client, result["error"])
            assert result["streamError"] is None, (client, result)
            out[client].append(result["messages"])
    return out


def _calls_agui(messages: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for m in messages for c in m.get("toolCalls") or []]


def _agui_history(runs: list[list[dict[str, Any]]], results: list[str]) -> RunAgentInput:
    """The next AG-UI run: the question, each run's messages with a result per call."""
    history: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": QUESTION}]
    for n, (messages, result) in enumerate(zip(runs, results, strict=True)):
        history += messages
        calls = _calls_agui(messages)
        for call in calls:
            result_id = f"r{n}-{call}"
            history.append({"id": result_id, "role": "tool", "toolCallId": call, "content": result})
        if not calls:  # a turn without calls ends with the user's next message
            history.append({"id": f"u-{n}", "role": "user", "content": "and?"})
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "next",
            "messages": history,
            "tools": TOOLS,
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    )


def _ai_history(runs: list[list[dict[str, Any]]], results: list[str]) -> RunAgentInput:
    """The next AI SDK request: the question, each run's assistant message, tool parts
    answered."""
    history: list[dict[str, Any]] = [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": QUESTION}]}
    ]
    for n, (messages, result) in enumerate(zip(runs, results, strict=True)):
        calls = False
        for message in messages:
            for part in message.get("parts", []):
                if part.get("type", "").startswith("tool-"):
                    part.update(state="output-available", output=result)
                    calls = True
            history.append(message)
        if not calls:  # a turn without calls ends with the user's next message
            history.append(
                {"id": f"u-{n}", "role": "user", "parts": [{"type": "text", "text": "and?"}]}
            )
    body = AiSdkChatRequest.model_validate({"id": "t1", "messages": history, "tools": TOOLS})
    return to_run_agent_input(body, run_id="next")


def _next_bodies(streams: list[bytes], results: list[str], job: str) -> dict[str, dict[str, Any]]:
    kept = _kept(streams, job)
    return {
        "agui": to_openai_chat(_agui_history(kept["agui"], results), model="deepseek-v4-pro"),
        "ai": to_openai_chat(_ai_history(kept["ai"], results), model="deepseek-v4-pro"),
    }


def _tool(call: dict[str, Any], result: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": result}


def test_the_documented_tool_loop_sends_reasoning_content_back_in_both_requests() -> None:
    """The guide's weather loop through both real clients: the request after turn 1.1 and the
    one after turn 1.2 hold each turn's assistant message with its ``reasoning_content``."""
    require_harness()
    user = {"role": "user", "content": QUESTION}
    second = _next_bodies([_stream(TURN_1_1)], [RESULT_1_1], "doc-1")
    third = _next_bodies([_stream(TURN_1_1), _stream(TURN_1_2)], [RESULT_1_1, RESULT_1_2], "doc-2")
    for client in ("agui", "ai"):
        expected_second = [user, TURN_1_1, _tool(TURN_1_1, RESULT_1_1)]
        expected_third = [*expected_second, TURN_1_2, _tool(TURN_1_2, RESULT_1_2)]
        assert _args_parsed(second[client]["messages"]) == _args_parsed(expected_second), client
        assert _args_parsed(third[client]["messages"]) == _args_parsed(expected_third), client
    # @ag-ui/client keeps the arguments' text as streamed (ai keeps a parsed object)
    assert third["agui"]["messages"][3] == TURN_1_2


def _args_parsed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each call's ``arguments`` parsed: an ``ai`` tool part holds its input
    as an object, so the text comes back re-serialized (``{"location":"Hangzhou",...}``)."""
    out = []
    for message in messages:
        message = dict(message)
        if "tool_calls" in message:
            message["tool_calls"] = [
                {
                    **c,
                    "function": {
                        **c["function"],
                        "arguments": orjson.loads(c["function"]["arguments"]),
                    },
                }
                for c in message["tool_calls"]
            ]
        out.append(message)
    return out


def test_a_turn_without_calls_and_unmarked_reasoning_send_nothing() -> None:
    """Reasoning of a turn without tool calls is not needed back (the guide: "will be
    ignored"); ``delta.reasoning`` (OpenRouter, Groq) and Mistral thinking parts get no mark."""
    plain = _sse({"reasoning_content": "think"}) + _sse({"content": "9.8 is greater"})
    plain += _sse({}, "stop") + b"data: [DONE]\n\n"
    other = _sse({"reasoning": "think"}) + _sse(
        {"content": [{"type": "thinking", "thinking": "t"}]}
    )
    other += _sse({"tool_calls": [{"index": 0, **TURN_1_1["tool_calls"][0]}]}, "tool_calls")
    other += b"data: [DONE]\n\n"
    marks = [
        w
        for w in wire(decode_all("openai-chat", other))
        if w["type"] == "REASONING_ENCRYPTED_VALUE"
    ]
    assert marks == []
    events = wire(decode_all("openai-chat", plain))
    assert [w["encryptedValue"] for w in events if w["type"] == "REASONING_ENCRYPTED_VALUE"] == [
        MARK
    ]


def _history(reasoning: dict[str, Any]) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": [
                {"id": "u", "role": "user", "content": "hi"},
                {"id": "rs", "role": "reasoning", "content": "thought", **reasoning},
                {
                    "id": "a",
                    "role": "assistant",
                    "content": "",
                    "toolCalls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"id": "t", "role": "tool", "toolCallId": "c", "content": "ok"},
            ],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    )


def test_the_mark_is_never_sent_as_another_providers_signature() -> None:
    """Without provenance (``@ag-ui/client`` keeps only the value) the mark says it is
    DeepSeek's: Anthropic, Gemini, Bedrock and Responses send nothing of it; Chat Completions
    sends the text as ``reasoning_content`` and not as OpenRouter ``reasoning_details``."""
    run_input = _history({"encryptedValue": MARK})
    anthropic = to_anthropic(run_input, model="claude-sonnet-4")["messages"]
    assert not [
        b
        for m in anthropic
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") in ("thinking", "redacted_thinking")
    ]
    gemini = to_gemini(run_input, model="gemini-2.5-pro")["contents"]
    assert not [p for c in gemini for p in c["parts"] if "thoughtSignature" in p]
    bedrock = to_converse(run_input)["messages"]
    assert not [b for m in bedrock for b in m["content"] if "reasoningContent" in b]
    responses = to_openai_responses(run_input, model="o4-mini")["input"]
    assert not [i for i in responses if i.get("type") == "reasoning"]
    assistant = [
        m for m in to_openai_chat(run_input, model="m")["messages"] if m["role"] == "assistant"
    ]
    assert assistant == [
        {
            "role": "assistant",
            "reasoning_content": "thought",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    ]
    other = _history({"encryptedValue": MARK, "metadata": {"provider": "anthropic"}})
    sent = [m for m in to_openai_chat(other, model="m")["messages"] if m["role"] == "assistant"]
    assert "reasoning_content" not in sent[0]


# -- the properties -------------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)


@st.composite
def turns(draw: st.DrawFn) -> tuple[list[str], bool, bytes]:
    """(reasoning_content pieces, whether the turn made calls, its stream): reasoning_content,
    content and tool-call pieces in random order and chunks."""
    reasoning = draw(st.lists(TEXT, min_size=1, max_size=4))
    items: list[tuple[str, Any]] = [("reasoning_content", r) for r in reasoning]
    for text in draw(st.lists(TEXT, max_size=3)):
        items.insert(draw(st.integers(0, len(items))), ("content", text))
    calls = draw(st.integers(0, 2))
    for n in range(calls):
        call = {
            "index": n,
            "id": f"call_0{n}_x",
            "type": "function",
            "function": {"name": "get_weather", "arguments": f'{{"n": {n}}}'},
        }
        items.insert(draw(st.integers(0, len(items))), ("tool_calls", [call]))
    body = _sse({"role": "assistant", "content": None, "reasoning_content": ""})
    for key, value in items:
        body += _sse({key: value})
    body += _sse({}, "tool_calls" if calls else "stop") + b"data: [DONE]\n\n"
    return reasoning, bool(calls), body


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=turns())
def test_every_reasoning_message_is_marked_once_on_both_wires(
    case: tuple[list[str], bool, bytes],
) -> None:
    reasoning, _, stream = case
    events = decode_all("openai-chat", stream)
    assert_legal_run(events)
    agui = wire(events)
    ids = [w["messageId"] for w in agui if w["type"] == "REASONING_MESSAGE_START"]
    marks = [w for w in agui if w["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert sorted(w["entityId"] for w in marks) == sorted(ids)
    assert all(w["subtype"] == "message" and w["encryptedValue"] == MARK for w in marks)
    assert all(
        w["metadata"] == {"provider": "deepseek", "field": "reasoningContent"} for w in marks
    )
    text = "".join(w["delta"] for w in agui if w["type"] == "REASONING_MESSAGE_CONTENT")
    assert text == "".join(reasoning)
    _, ai_body = _wires(events)
    chunks = [orjson.loads(x[6:]) for x in ai_body.split(b"\n") if x.startswith(b"data: {")]
    started = [c["id"] for c in chunks if c["type"] == "reasoning-start"]
    carried: dict[str, int] = {}
    for c in chunks:
        if c["type"].startswith("reasoning-") and "providerMetadata" in c:
            assert c["providerMetadata"] == {"deepseek": {"reasoningContent": MARK}}
            carried[c["id"]] = carried.get(c["id"], 0) + 1
    assert sorted(carried) == sorted(started)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=st.lists(turns(), min_size=3, max_size=3))
def test_exactly_the_turns_text_lands_on_the_message_with_the_calls(
    cases: list[tuple[list[str], bool, bytes]],
) -> None:
    """Three turns (runs) of one conversation, through both real clients: in the next body the
    first assistant message with ``tool_calls`` of each calling turn holds exactly that turn's
    reasoning text; no other message has ``reasoning_content``."""
    require_harness()
    streams = [stream for _, _, stream in cases]
    results = [f"result {n}" for n in range(len(cases))]
    bodies = _next_bodies(streams, results, "prop")
    expected = ["".join(reasoning) for reasoning, calls, _ in cases if calls]
    for client, body in bodies.items():
        sent = body["messages"]
        found: list[str] = []
        for message in sent:
            if message["role"] == "assistant" and "reasoning_content" in message:
                assert "tool_calls" in message, (client, sent)
                found.append(message["reasoning_content"])
        assert found == expected, (client, sent)
