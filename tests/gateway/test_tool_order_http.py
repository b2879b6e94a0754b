"""Issue 11 kind 6 over HTTP: what the gateway sends when text sits between a call and its
result (a frontend tool / approval turn).

respx checks the exact ``messages`` / ``input`` / ``contents`` the upstream gets; the expected
bodies are written from each provider's API reference (OpenAI "Create chat completion":
``tool`` messages right after the assistant message with ``tool_calls``; Anthropic Messages
"Tool use": ``tool_result`` first in the next ``user`` turn; OpenAI Responses "Create a model
response": ``function_call_output`` items after their ``function_call``). The replies are
recorded streams of the corpus (``tests/corpus/MANIFEST.md``); only the request is checked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from corpus import CORPUS_DIR, require_corpus
from gwtest import drive

CHAT_BASE = "https://chat.test/v1"
ANTHROPIC_BASE = "https://anthropic.test/v1"
RESPONSES_BASE = "https://responses.test/v1"

ROUTES = f"""
[[routes]]
name = "chat"
upstream_url = "{CHAT_BASE}"
protocol = "openai-chat"
model = "gpt-4.1"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}

[[routes]]
name = "claude"
upstream_url = "{ANTHROPIC_BASE}"
protocol = "anthropic"
model = "claude-sonnet-4-5"
auth = {{ type = "header", header = "x-api-key", env = "TEST_ANTHROPIC_KEY" }}

[[routes]]
name = "resp"
upstream_url = "{RESPONSES_BASE}"
protocol = "openai-responses"
model = "gpt-5"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
"""

CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "confirm", "arguments": '{"action": "delete"}'},
}
RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-1",
    "runId": "run-2",
    "messages": [
        {"id": "u1", "role": "user", "content": "Delete the draft."},
        {"id": "a1", "role": "assistant", "toolCalls": [CALL]},
        {"id": "a2", "role": "assistant", "content": "Please approve."},
        {"id": "u2", "role": "user", "content": "Yes."},
        {"id": "t1", "role": "tool", "toolCallId": "call_1", "content": "approved"},
    ],
    "tools": [],
    "context": [],
    "state": None,
    "forwardedProps": {},
}


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test")
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")


def _reply(protocol: str) -> Any:
    require_corpus(protocol)
    name = sorted(p.name for p in (CORPUS_DIR / protocol).iterdir() if p.suffix == ".sse")[0]
    body = (CORPUS_DIR / protocol / name).read_bytes()
    return lambda request: httpx.Response(
        200, content=body, headers={"content-type": "text/event-stream"}
    )


def _sent(route: respx.Route) -> Any:
    return orjson.loads(route.calls.last.request.content)


def test_text_between_call_and_result_is_sent_after_the_result(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    chat = router.post(f"{CHAT_BASE}/chat/completions").mock(side_effect=_reply("openai-chat"))
    claude = router.post(f"{ANTHROPIC_BASE}/messages").mock(side_effect=_reply("anthropic"))
    resp = router.post(f"{RESPONSES_BASE}/responses").mock(side_effect=_reply("openai-responses"))

    async def run() -> None:
        for name in ("chat", "claude", "resp"):
            await drive(make_app(), f"/v1/agui/{name}", RUN_INPUT)

    asyncio.run(run())
    assert _sent(chat)["messages"] == [
        {"role": "user", "content": "Delete the draft."},
        {"role": "assistant", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "approved"},
        {"role": "assistant", "content": "Please approve."},
        {"role": "user", "content": "Yes."},
    ]
    assert _sent(claude)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Delete the draft."}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "confirm",
                    "input": {"action": "delete"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "approved"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Please approve."}]},
        {"role": "user", "content": [{"type": "text", "text": "Yes."}]},
    ]
    assert _sent(resp)["input"] == [
        {"role": "user", "content": "Delete the draft."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "confirm",
            "arguments": '{"action": "delete"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "approved"},
        {"role": "assistant", "content": "Please approve."},
        {"role": "user", "content": "Yes."},
    ]
