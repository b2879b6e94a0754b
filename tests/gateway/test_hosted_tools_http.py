"""Hosted (provider-executed) Responses tools through the gateway: the next turn never sends
them back as client function calls (issue 11, kinds 5/6; docs/protocols.md §4.2).

Run 1 of each thread replays a recorded OpenAI Responses stream with hosted tools
(tests/corpus/openai-responses, see MANIFEST.md: web search, file search, code interpreter,
image generation, remote MCP); the real ``@ag-ui/client`` 1.0.0 builds the history from what
the gateway answered; run 2 sends that history with a new user turn. Expected request (what
``@ai-sdk/openai`` 4.0.46 sends, vercel/ai ``convert-to-openai-responses-input.ts``): with
``store: false`` no ``function_call`` / ``function_call_output`` at all (none of the recorded
calls is the client's), the recorded answer text kept; with ``store: true`` each hosted item
once as ``{"type": "item_reference", "id"}``, ids as the upstream sent them. The same for an
Anthropic route and its recorded web search: the next request's assistant turn holds the
``server_tool_use`` and ``web_search_tool_result`` blocks as the API sent them (Messages API
input blocks; ``@ai-sdk/anthropic`` 4.0.41 ``convert-to-anthropic-prompt.ts``), no
``tool_use`` / ``tool_result``. The real ``ai`` 7 client's history of the same runs (tool
parts with ``providerExecuted: true``) through ``/v1/ai-sdk`` makes the very request the
``@ag-ui/client`` history makes through ``/v1/agui``; so does the recorded Gemini code
execution (``executableCode`` with its ``thoughtSignature``, then ``codeExecutionResult``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import FAST

from gateway.app import create_app
from gateway.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from corpus import CORPUS_DIR, require_corpus
from durable_support import call, events_of, running
from openai_responses_fixtures import completed, created, upstream_payloads
from openai_responses_fixtures import sse as responses_sse
from real_clients import replay, require_harness

pytestmark = pytest.mark.timeout(180)

BASE = "https://openai.test/v1"
ANTHROPIC_BASE = "https://anthropic.test/v1"
GEMINI_BASE = "https://gemini.test/v1beta"
GEMINI_URL = f"{GEMINI_BASE}/models/gemini-3-flash-preview:streamGenerateContent"
ROUTES = f"""
[[routes]]
name = "resp"
upstream_url = "{BASE}"
protocol = "openai-responses"
model = "gpt-5-mini"

[[routes]]
name = "resp-store"
upstream_url = "{BASE}"
protocol = "openai-responses"
model = "gpt-5-mini"
params = {{ store = true }}

[[routes]]
name = "claude"
upstream_url = "{ANTHROPIC_BASE}"
protocol = "anthropic"
model = "claude-sonnet-4-5"
auth = {{ type = "header", header = "x-api-key", env = "TEST_ANTHROPIC_KEY" }}

[[routes]]
name = "gem"
upstream_url = "{GEMINI_BASE}"
protocol = "gemini"
model = "gemini-3-flash-preview"
"""
RECORDED = (
    "openai-responses/web-search-calls-url-citations.sse",
    "openai-responses/file-search-call-file-citations.sse",
    "openai-responses/code-interpreter-reasoning-summary.sse",
    "openai-responses/image-generation-call.jsonl",
    "openai-responses/mcp-list-tools-mcp-call.sse",
)
HOSTED_TYPES = {  # the Responses API's provider-executed output items (API reference)
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_list_tools",
    "mcp_call",
}


def recorded(name: str) -> tuple[bytes, list[str], list[str]]:
    """The body to serve, the hosted item ids and the answer texts, as the upstream sent them."""
    path = CORPUS_DIR / name
    payloads = upstream_payloads(path)
    body = path.read_bytes() if name.endswith(".sse") else responses_sse(*payloads)
    done = [p["item"] for p in payloads if p["type"] == "response.output_item.done"]
    hosted = [i["id"] for i in done if i["type"] in HOSTED_TYPES]
    texts = [
        "".join(part["text"] for part in i["content"] if part["type"] == "output_text")
        for i in done
        if i["type"] == "message"
    ]
    return body, hosted, texts


def run_input(thread: str, run: str, messages: list[Any]) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }


async def test_hosted_calls_of_recorded_runs_are_never_sent_back_as_function_calls(
    tmp_path: Path, router: respx.MockRouter
) -> None:
    require_harness()
    require_corpus("openai-responses")
    cases = {name: recorded(name) for name in RECORDED}
    assert all(hosted for _, hosted, _ in cases.values())  # each recording has hosted items
    replies = [body for body, _, _ in cases.values()]
    served: list[int] = []

    def reply(request: httpx.Request) -> httpx.Response:
        n = len(served)
        served.append(n)
        body = replies[n] if n < len(replies) else responses_sse(created(), completed())
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    route = router.post(f"{BASE}/responses").mock(side_effect=reply)
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=path, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    user = {"id": "u1", "role": "user", "content": "Go."}
    follow = {"id": "u2", "role": "user", "content": "Thanks, and then?"}
    async with running(app):
        firsts = []
        for n, name in enumerate(RECORDED):
            first = await call(app, "POST", "/v1/agui/resp", run_input(f"t{n}", "r1", [user]))
            assert events_of(first.body)[-1]["type"] == "RUN_FINISHED", name
            firsts.append((name, "agui", first.body))
        held = replay(firsts)
        sent: dict[str, dict[str, Any]] = {}
        for n, name in enumerate(RECORDED):
            assert held[name]["accepted"], held[name]["error"]
            history = [user, *held[name]["messages"], follow]
            second = await call(app, "POST", "/v1/agui/resp", run_input(f"t{n}", "r2", history))
            assert second.status == 200, second.body
            sent[name] = orjson.loads(route.calls[-1].request.content)
        # the same history of the web search run, on a route that stores responses
        name = RECORDED[0]
        history = [user, *held[name]["messages"], follow]
        stored = await call(app, "POST", "/v1/agui/resp-store", run_input("ts", "r2", history))
        assert stored.status == 200, stored.body
        with_store = orjson.loads(route.calls[-1].request.content)
    await client.aclose()
    for name, (_, hosted, texts) in cases.items():
        body = sent[name]
        assert body["store"] is False and "previous_response_id" not in body
        kinds = {i.get("type") for i in body["input"]}
        assert not kinds & {"function_call", "function_call_output"}, name
        assert not any(i.get("call_id") in hosted for i in body["input"]), name
        answers = [i["content"] for i in body["input"] if i.get("role") == "assistant"]
        assert [t for t in texts if t] == answers, name  # the provider's answer is kept
        assert body["input"][0] == {"role": "user", "content": "Go."}
        assert body["input"][-1] == {"role": "user", "content": "Thanks, and then?"}
    _, hosted, texts = cases[RECORDED[0]]
    assert with_store["store"] is True
    refs = [i["id"] for i in with_store["input"] if i.get("type") == "item_reference"]
    assert refs == hosted
    assert not {i.get("type") for i in with_store["input"]} & {"function_call"}


def anthropic_server_blocks(path: Path) -> list[dict[str, Any]]:
    """The server blocks of a recorded Anthropic stream as the API sent them."""
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for line in path.read_text("utf-8").splitlines():
        if not line.startswith("data:"):
            continue
        p = orjson.loads(line[5:])
        if p["type"] == "content_block_start":
            blocks[p["index"]] = p["content_block"]
        elif p["type"] == "content_block_delta" and p["delta"]["type"] == "input_json_delta":
            inputs[p["index"]] = inputs.get(p["index"], "") + p["delta"]["partial_json"]
    out = []
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "server_tool_use":
            given = orjson.loads(inputs[index]) if inputs.get(index) else block["input"]
            out.append({"type": block["type"], "id": block["id"], "name": block["name"]})
            out[-1]["input"] = given
        elif block["type"] == "web_search_tool_result":
            out.append({k: block[k] for k in ("type", "tool_use_id", "content")})
    return out


async def test_anthropic_server_tools_go_back_as_their_own_blocks(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    require_harness()
    require_corpus("anthropic")
    path = CORPUS_DIR / "anthropic" / "web-search-citations.sse"
    expected = anthropic_server_blocks(path)
    assert [b["type"] for b in expected][:2] == ["server_tool_use", "web_search_tool_result"]
    end = [
        {"type": "message_start", "message": {"id": "msg_2", "role": "assistant", "content": []}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    end_body = "".join(f"data: {orjson.dumps(p).decode()}\n\n" for p in end).encode()
    replies = [path.read_bytes(), end_body]
    served: list[bytes] = []

    def reply(request: httpx.Request) -> httpx.Response:
        served.append(replies[min(len(served), 1)])
        return httpx.Response(
            200, content=served[-1], headers={"content-type": "text/event-stream"}
        )

    route = router.post(f"{ANTHROPIC_BASE}/messages").mock(side_effect=reply)
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=routes, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    user = {"id": "u1", "role": "user", "content": "News?"}
    async with running(app):
        first = await call(app, "POST", "/v1/agui/claude", run_input("ta", "r1", [user]))
        assert events_of(first.body)[-1]["type"] == "RUN_FINISHED"
        [held] = replay([("a1", "agui", first.body)]).values()
        assert held["accepted"], held["error"]
        follow = {"id": "u2", "role": "user", "content": "More?"}
        history = [user, *held["messages"], follow]
        second = await call(app, "POST", "/v1/agui/claude", run_input("ta", "r2", history))
    await client.aclose()
    assert second.status == 200 and route.call_count == 2
    sent = orjson.loads(route.calls[1].request.content)
    blocks = [b for turn in sent["messages"] for b in turn["content"]]
    assert not {b["type"] for b in blocks} & {"tool_use", "tool_result"}
    server = [b for b in blocks if b["type"] in {"server_tool_use", "web_search_tool_result"}]
    assert server == expected  # as the API sent them, encrypted_content included
    [assistant] = [t for t in sent["messages"] if t["role"] == "assistant"]
    assert {b["type"] for b in assistant["content"]} >= {"server_tool_use", "text"}


def chat(chat_id: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``ai`` 7 ``DefaultChatTransport`` body (``src/ui/http-chat-transport.ts``)."""
    return {"id": chat_id, "trigger": "submit-message", "messages": messages}


def ui_user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "parts": [{"type": "text", "text": text}]}


async def test_ai_sdk_history_of_hosted_calls_sends_what_the_agui_history_sends(
    tmp_path: Path, router: respx.MockRouter, keys: None
) -> None:
    """The ``ai`` 7 history of each recorded hosted-tool run (its provider-executed tool parts,
    ``providerExecuted: true`` with their outputs) through ``/v1/ai-sdk`` makes the same
    upstream request as the ``@ag-ui/client`` history of the same run through ``/v1/agui``."""
    require_harness()
    require_corpus("openai-responses")
    require_corpus("anthropic")
    require_corpus("gemini")
    end = [
        {"type": "message_start", "message": {"id": "msg_2", "role": "assistant", "content": []}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    anthropic_end = "".join(f"data: {orjson.dumps(p).decode()}\n\n" for p in end).encode()
    anthropic = (CORPUS_DIR / "anthropic" / "web-search-citations.sse").read_bytes()
    cases = [
        ("resp", name, recorded(name)[0], responses_sse(created(), completed()))
        for name in RECORDED
    ]
    cases.append(("resp-store", RECORDED[0], recorded(RECORDED[0])[0], cases[0][3]))
    cases.append(("claude", "anthropic/web-search-citations.sse", anthropic, anthropic_end))
    gemini = (CORPUS_DIR / "gemini" / "code-execution.sse").read_bytes()
    done = {"content": {"parts": [{"text": "ok"}], "role": "model"}, "finishReason": "STOP"}
    gemini_end = b"data: " + orjson.dumps({"candidates": [done]}) + b"\n\n"
    cases.append(("gem", "gemini/code-execution.sse", gemini, gemini_end))
    queue: list[bytes] = []
    sent: list[dict[str, Any]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        sent.append(orjson.loads(request.content))
        return httpx.Response(
            200, content=queue.pop(0), headers={"content-type": "text/event-stream"}
        )

    router.post(f"{BASE}/responses").mock(side_effect=reply)
    router.post(f"{ANTHROPIC_BASE}/messages").mock(side_effect=reply)
    router.post(GEMINI_URL).mock(side_effect=reply)
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=path, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    user = {"id": "u1", "role": "user", "content": "Go."}
    follow = {"id": "u2", "role": "user", "content": "Thanks, and then?"}
    async with running(app):
        firsts = []
        for n, (route, name, body, _) in enumerate(cases):
            queue[:] = [body, body]
            agui = await call(app, "POST", f"/v1/agui/{route}", run_input(f"t{n}", "r1", [user]))
            ai = await call(
                app, "POST", f"/v1/ai-sdk/{route}", chat(f"c{n}", [ui_user("u1", "Go.")])
            )
            assert events_of(agui.body)[-1]["type"] == "RUN_FINISHED", name
            firsts += [(f"{n}-agui", "agui", agui.body), (f"{n}-ai", "ai-v7", ai.body)]
        held = replay(firsts)
        seconds: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        for n, (route, name, _, ending) in enumerate(cases):
            agui_held, ai_held = held[f"{n}-agui"], held[f"{n}-ai"]
            assert agui_held["accepted"] and ai_held["accepted"], (name, ai_held["error"])
            [assistant] = ai_held["messages"]
            parts = [p for p in assistant["parts"] if p.get("providerExecuted")]
            assert parts and all(p["state"] == "output-available" for p in parts), name
            queue[:] = [ending, ending]
            history = [user, *agui_held["messages"], follow]
            agui = await call(app, "POST", f"/v1/agui/{route}", run_input(f"t{n}", "r2", history))
            ui_history = [ui_user("u1", "Go."), assistant, ui_user("u2", "Thanks, and then?")]
            ai = await call(app, "POST", f"/v1/ai-sdk/{route}", chat(f"c{n}", ui_history))
            assert agui.status == 200 and ai.status == 200, (agui.body, ai.body)
            seconds[f"{route} {name}"] = (sent[-2], sent[-1])
    await client.aclose()
    assert [k for k, (agui_body, ai_body) in seconds.items() if ai_body != agui_body] == []
    # what the equality covers: the provider's items sent back, not only left out
    stored = seconds[f"resp-store {RECORDED[0]}"][1]
    assert [i["id"] for i in stored["input"] if i.get("type") == "item_reference"]
    claude = seconds["claude anthropic/web-search-citations.sse"][1]
    blocks = [b["type"] for turn in claude["messages"] for b in turn["content"]]
    assert {"server_tool_use", "web_search_tool_result"} <= set(blocks)
    assert not {"tool_use", "tool_result"} & set(blocks)
    gem = seconds["gem gemini/code-execution.sse"][1]
    model = [part for turn in gem["contents"] if turn["role"] == "model" for part in turn["parts"]]
    assert {"executableCode", "codeExecutionResult"} <= {k for part in model for k in part}
