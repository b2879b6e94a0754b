"""Identity across turns (issue 11, kind 1): reused upstream ids, over HTTP, both endpoints.

An AI SDK backend that reuses ``toolCallId`` ``call_0`` in its second step (and again in the
next turn) is mocked with respx. Turn 1 goes through the gateway to the real ``@ag-ui/client``
1.0.0 and ``ai`` 7 clients (``tests/harness``), which must hold two calls, not one. Turn 2 is
what those clients then post: the history they hold. respx checks that each provider gets its
own id back: ``call_0`` for both calls to the AI SDK backend (UI message parts, also when the
AI SDK request is forwarded as bytes) and to a Chat Completions upstream (``tool_calls[].id``,
``tool_call_id``; OpenAI API reference, "Create chat completion"), and that the new turn's
calls get AG-UI ids the thread does not hold yet.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import drive, sse
from real_clients import replay, require_harness

AI_SDK_URL = "https://agent.test/api/chat"
CHAT_BASE = "https://openai.test/v1"

ROUTES = f"""
[[routes]]
name = "sdk"
upstream_url = "{AI_SDK_URL}"
protocol = "ai-sdk"

[[routes]]
name = "oc"
upstream_url = "{CHAT_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
"""

PROVIDER_CALL = "call_0"


def two_steps_one_id(first: str, second: str) -> bytes:
    """An AI SDK UI message stream whose two steps each call ``lookup`` as ``call_0``."""
    chunks: list[Any] = [{"type": "start", "messageId": "msg_1"}]
    for n, q in enumerate((first, second)):
        chunks += [
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": PROVIDER_CALL, "toolName": "lookup"},
            {
                "type": "tool-input-delta",
                "toolCallId": PROVIDER_CALL,
                "inputTextDelta": orjson.dumps({"q": q}).decode(),
            },
            {
                "type": "tool-input-available",
                "toolCallId": PROVIDER_CALL,
                "toolName": "lookup",
                "input": {"q": q},
            },
            {"type": "tool-output-available", "toolCallId": PROVIDER_CALL, "output": {"n": n}},
            {"type": "finish-step"},
        ]
    chunks += [
        {"type": "start-step"},
        {"type": "text-start", "id": "0"},
        {"type": "text-delta", "id": "0", "delta": "done"},
        {"type": "text-end", "id": "0"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]
    return sse(*chunks, "[DONE]")


CHAT_REPLY = sse(
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "ok"}}]},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    "[DONE]",
)

RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-1",
    "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": "look up a and b"}],
    "tools": [],
    "context": [],
    "state": {},
    "forwardedProps": {},
}


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


def sent(route: respx.Route) -> tuple[bytes, Any]:
    request = route.calls.last.request
    return request.content, orjson.loads(request.content)


def replace_value(value: Any, old: str, new: str) -> Any:
    if value == old:
        return new
    if isinstance(value, dict):
        return {k: replace_value(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_value(v, old, new) for v in value]
    return value


def test_each_provider_gets_its_own_ids_back_next_turn(
    make_app: Any, router: respx.MockRouter
) -> None:
    require_harness()
    turn1, turn2_reply = two_steps_one_id("a", "b"), two_steps_one_id("c", "d")
    replies = iter([turn1, turn1, turn2_reply, turn2_reply])
    sdk = router.post(AI_SDK_URL).mock(
        side_effect=lambda request: httpx.Response(200, content=next(replies))
    )
    oc = router.post(f"{CHAT_BASE}/chat/completions").mock(
        side_effect=lambda request: httpx.Response(200, content=CHAT_REPLY)
    )
    chat_request = {
        "id": "chat-1",
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "a, b"}]}],
    }

    async def first() -> tuple[bytes, bytes]:
        agui = await drive(make_app(), "/v1/agui/sdk", RUN_INPUT)
        ai_sdk = await drive(make_app(), "/v1/ai-sdk/sdk", chat_request)
        return agui.body, ai_sdk.body

    agui_body, ai_sdk_body = asyncio.run(first())
    results = replay([("agui", "agui", agui_body), ("ai", "ai-v7", ai_sdk_body)])
    assert results["agui"]["accepted"], results["agui"]["error"]
    assert results["ai"]["accepted"], results["ai"]["error"]

    # turn 1: two calls, each with its own input and output, under two ids
    history = results["agui"]["messages"]
    calls = [c for m in history if m["role"] == "assistant" for c in m.get("toolCalls") or ()]
    assert [orjson.loads(c["function"]["arguments"]) for c in calls] == [{"q": "a"}, {"q": "b"}]
    assert len({c["id"] for c in calls}) == 2
    tools = [m for m in history if m["role"] == "tool"]
    assert [m["toolCallId"] for m in tools] == [c["id"] for c in calls]
    assert [orjson.loads(m["content"]) for m in tools] == [{"n": 0}, {"n": 1}]
    (assistant,) = [m for m in results["ai"]["messages"] if m["role"] == "assistant"]
    parts = [p for p in assistant["parts"] if p["type"] == "tool-lookup"]
    assert [(p["input"], p["output"]) for p in parts] == [
        ({"q": "a"}, {"n": 0}),
        ({"q": "b"}, {"n": 1}),
    ]
    assert len({p["toolCallId"] for p in parts}) == 2

    # turn 2: what the clients hold goes back; each provider sees its own call_0 twice
    turn2 = {
        **RUN_INPUT,
        "runId": "run-2",
        "messages": [
            *RUN_INPUT["messages"],
            *history,
            {"id": "m2", "role": "user", "content": "again"},
        ],
    }
    chat_turn2 = {
        **chat_request,
        "messages": [
            *chat_request["messages"],
            assistant,
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]},
        ],
    }
    chat_raw = orjson.dumps(chat_turn2)

    async def second() -> tuple[list[Any], bytes]:
        events = (await drive(make_app(), "/v1/agui/sdk", turn2)).data()
        _, ui_body = sent(sdk)
        await drive(make_app(), "/v1/agui/oc", turn2)
        await drive(make_app(), "/v1/ai-sdk/sdk", raw=chat_raw)
        return events, ui_body

    events, ui_body = asyncio.run(second())
    ui_calls = [p for m in ui_body["messages"] for p in m["parts"] if "toolCallId" in p]
    assert [p["toolCallId"] for p in ui_calls] == [PROVIDER_CALL, PROVIDER_CALL]
    assert [p["input"] for p in ui_calls] == [{"q": "a"}, {"q": "b"}]

    _, chat_body = sent(oc)
    sent_calls = [
        c
        for m in chat_body["messages"]
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    ]
    assert [(c["id"], orjson.loads(c["function"]["arguments"])) for c in sent_calls] == [
        (PROVIDER_CALL, {"q": "a"}),
        (PROVIDER_CALL, {"q": "b"}),
    ]
    answers = [m["tool_call_id"] for m in chat_body["messages"] if m["role"] == "tool"]
    assert answers == [PROVIDER_CALL, PROVIDER_CALL]

    # the AI SDK request, forwarded: the client's JSON with the provider's id in its place
    _, forwarded = sent(sdk)
    expected = orjson.loads(chat_raw)
    for part in parts:
        expected = replace_value(expected, part["toolCallId"], PROVIDER_CALL)
    assert forwarded == expected

    # the new turn's calls (call_0 again) get ids the thread does not hold
    held = {m["id"] for m in history} | {c["id"] for c in calls}
    new_ids = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert len(new_ids) == 2 and not set(new_ids) & held, (new_ids, held)
