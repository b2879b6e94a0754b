"""The new upstream protocols over HTTP: openai-responses, gemini, ai-sdk, agui.

For each protocol, respx checks exactly what the gateway sends (URL, auth header, body) from
both endpoints, a recorded stream of the corpus (``tests/corpus/MANIFEST.md``) is the mocked reply,
and the real clients (``@ag-ui/client`` 1.0.0, ``ai`` 7/6/5) accept every output. The round-trip
test feeds the messages the real AG-UI client built back as the next request and checks the
provider gets its own reasoning artefacts back (Responses ``encrypted_content``, Gemini
``thoughtSignature``), the condition for the provider to accept the next turn.
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
from gwtest import drive, sse
from real_clients import replay, require_harness

from gateway.config import load_routes
from gateway.errors import ConfigError

RESPONSES_BASE = "https://openai.test/v1"
GEMINI_BASE = "https://gemini.test/v1beta"
GEMINI_MODEL = "gemini-3-pro-preview"
GEMINI_URL = f"{GEMINI_BASE}/models/{GEMINI_MODEL}:streamGenerateContent"
AI_SDK_URL = "https://agent.test/api/chat"
AGUI_URL = "https://runtime.test/agent"

RESPONSES_REASONING_CALL = "openai-responses/reasoning-function-call-usage.sse"
GEMINI_SIGNED_CALL = "gemini/function-call-thought-signature.sse"
AISDK_TOOLS = "aisdk-ui/langgraph-react-agent-reasoning-tool-calls.json"
AGUI_TOOL = "agui/pydantic-ai-openai-tool-call.jsonl"

ROUTES = f"""
[[routes]]
name = "resp"
upstream_url = "{RESPONSES_BASE}"
protocol = "openai-responses"
model = "gpt-5"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}

[[routes]]
name = "gem"
upstream_url = "{GEMINI_BASE}"
protocol = "gemini"
model = "{GEMINI_MODEL}"
auth = {{ type = "header", header = "x-goog-api-key", env = "TEST_GEMINI_KEY" }}

[[routes]]
name = "sdk"
upstream_url = "{AI_SDK_URL}"
protocol = "ai-sdk"
auth = {{ type = "bearer", env = "TEST_AGENT_KEY" }}

[[routes]]
name = "rt"
upstream_url = "{AGUI_URL}"
protocol = "agui"
"""

RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-1",
    "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": "Which country is Paris in?"}],
    "tools": [
        {
            "name": "get_country",
            "description": "Look up a city's country",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ],
    "context": [],
    "state": None,
    "forwardedProps": {"temperature": 0.5},
}

CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-1",
    "trigger": "submit-message",
    "messages": [
        {
            "id": "u1",
            "role": "user",
            "parts": [{"type": "text", "text": "Which country is Paris in?"}],
        }
    ],
    "temperature": 0.5,
}


def corpus(name: str) -> bytes:
    require_corpus(name.split("/")[0])
    return (CORPUS_DIR / name).read_bytes()


def as_sse(name: str) -> bytes:
    """A corpus file of JSON events (array or lines) served the way the upstream sends it."""
    raw = corpus(name).decode("utf-8-sig")
    items = (
        orjson.loads(raw)
        if raw.lstrip().startswith("[")
        else [orjson.loads(line) for line in raw.splitlines() if line.strip()]
    )
    return sse(*items, "[DONE]") if name.startswith("aisdk-ui/") else sse(*items)


def types(events: list[Any]) -> list[str]:
    return [e["type"] for e in events if isinstance(e, dict)]


def sent(route: respx.Route) -> tuple[httpx.Request, Any]:
    request = route.calls.last.request
    return request, orjson.loads(request.content)


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test-openai")
    monkeypatch.setenv("TEST_GEMINI_KEY", "gm-test")
    monkeypatch.setenv("TEST_AGENT_KEY", "agent-key")


def mock_all(router: respx.MockRouter) -> dict[str, respx.Route]:
    def reply(body: bytes) -> Any:
        return lambda request: httpx.Response(200, content=body)

    routes = {
        "resp": router.post(f"{RESPONSES_BASE}/responses").mock(
            side_effect=reply(corpus(RESPONSES_REASONING_CALL))
        ),
        "gem": router.post(GEMINI_URL, params={"alt": "sse"}).mock(
            side_effect=reply(corpus(GEMINI_SIGNED_CALL))
        ),
        "sdk": router.post(AI_SDK_URL).mock(side_effect=reply(as_sse(AISDK_TOOLS))),
        "rt": router.post(AGUI_URL).mock(side_effect=reply(as_sse(AGUI_TOOL))),
    }
    return routes


# -- OpenAI Responses ------------------------------------------------------------------------


async def test_responses_both_endpoints(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    route = mock_all(router)["resp"]
    result = await drive(make_app(), "/v1/agui/resp", RUN_INPUT)
    events = result.data()
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
    [encrypted] = [e for e in events if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert encrypted["metadata"] == {"provider": "openai", "field": "encryptedContent"}
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert start["toolCallId"].startswith("call_")  # the item's call_id, not its fc_ id
    request, body = sent(route)
    assert request.headers["authorization"] == "Bearer sk-test-openai"
    assert request.headers["accept"] == "text/event-stream"
    assert body == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "Which country is Paris in?"}],
        "tools": [
            {
                "type": "function",
                "name": "get_country",
                "description": "Look up a city's country",
                "parameters": RUN_INPUT["tools"][0]["parameters"],
                "strict": False,
            }
        ],
        "store": False,
        "temperature": 0.5,
        "stream": True,
    }

    result = await drive(make_app(), "/v1/ai-sdk/resp", CHAT_REQUEST)
    chunks = result.data()
    assert chunks[-1] == "[DONE]"
    reasoning = [c for c in chunks if isinstance(c, dict) and c.get("providerMetadata")]
    assert reasoning and "encryptedContent" in reasoning[0]["providerMetadata"]["openai"]
    assert "tool-input-available" in types(chunks)
    _, body = sent(route)
    assert body["input"] == [{"role": "user", "content": "Which country is Paris in?"}]
    assert body["temperature"] == 0.5


# -- Gemini ----------------------------------------------------------------------------------


async def test_gemini_both_endpoints(make_app: Any, router: respx.MockRouter, keys: None) -> None:
    route = mock_all(router)["gem"]
    result = await drive(make_app(), "/v1/agui/gem", RUN_INPUT)
    events = result.data()
    assert types(events)[-1] == "RUN_FINISHED"
    [signature] = [e for e in events if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert signature["subtype"] == "tool-call"
    request, body = sent(route)
    assert str(request.url) == f"{GEMINI_URL}?alt=sse"
    assert request.headers["x-goog-api-key"] == "gm-test"
    assert "authorization" not in request.headers
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "Which country is Paris in?"}]}],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_country",
                        "description": "Look up a city's country",
                        "parametersJsonSchema": RUN_INPUT["tools"][0]["parameters"],
                    }
                ]
            }
        ],
        "generationConfig": {"temperature": 0.5},
    }

    result = await drive(make_app(), "/v1/ai-sdk/gem", CHAT_REQUEST)
    chunks = result.data()
    [available] = [c for c in chunks if isinstance(c, dict) and c["type"] == "tool-input-available"]
    assert (
        available["providerMetadata"]["google"]["thoughtSignature"] == signature["encryptedValue"]
    )
    _, body = sent(route)
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Which country is Paris in?"}]}]


# -- AI SDK backend --------------------------------------------------------------------------


async def test_ai_sdk_backend_gets_ui_messages_or_the_exact_bytes(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    route = mock_all(router)["sdk"]
    result = await drive(make_app(), "/v1/agui/sdk", RUN_INPUT)
    events = result.data()
    assert types(events)[-1] == "RUN_FINISHED"
    results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert results[0].startswith("Weather in Tokyo")
    request, body = sent(route)
    assert request.headers["authorization"] == "Bearer agent-key"
    assert body == {
        "temperature": 0.5,
        "id": "thread-1",
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "parts": [{"type": "text", "text": "Which country is Paris in?"}],
            }
        ],
        "trigger": "submit-message",
        "tools": RUN_INPUT["tools"],
    }

    raw = orjson.dumps(CHAT_REQUEST) + b"  "  # whitespace proves the bytes are not re-encoded
    result = await drive(make_app(), "/v1/ai-sdk/sdk", raw=raw)
    chunks = result.data()
    assert types(chunks).count("tool-output-available") == 2
    assert chunks[-1] == "[DONE]"
    request, _ = sent(route)
    assert request.content == raw
    assert request.headers["content-type"] == "application/json"


# -- AG-UI runtime ---------------------------------------------------------------------------


async def test_agui_runtime_gets_the_run_input_exactly(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    route = mock_all(router)["rt"]
    raw = orjson.dumps({**RUN_INPUT, "x-client": {"kept": True}})
    result = await drive(make_app(), "/v1/agui/rt", raw=raw)
    events = result.data()
    assert types(events)[-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" in types(events)
    request, _ = sent(route)
    assert request.content == raw
    assert request.headers["accept"] == "text/event-stream"

    result = await drive(make_app(), "/v1/ai-sdk/rt", CHAT_REQUEST)
    assert result.data()[-1] == "[DONE]"
    _, body = sent(route)
    assert body["threadId"] == "chat-1" and body["runId"].startswith("run_")
    assert body["messages"] == [
        {"id": "u1", "role": "user", "content": "Which country is Paris in?"}
    ]
    assert body["forwardedProps"] == {"temperature": 0.5}
    assert {"state", "tools", "context"} <= set(body)


# -- real clients ----------------------------------------------------------------------------


def _outputs(make_app: Any) -> dict[str, bytes]:
    names = ["resp", "gem", "sdk", "rt"]

    async def run() -> dict[str, bytes]:
        out = {}
        for name in names:
            out[f"agui-{name}"] = (await drive(make_app(), f"/v1/agui/{name}", RUN_INPUT)).body
            out[f"sdk-{name}"] = (await drive(make_app(), f"/v1/ai-sdk/{name}", CHAT_REQUEST)).body
        return out

    return asyncio.run(run())


def test_real_clients_accept_every_protocol(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    require_harness()
    mock_all(router)
    jobs: list[Any] = []
    for key, body in _outputs(make_app).items():
        clients = ("agui",) if key.startswith("agui") else ("ai-v7", "ai-v6", "ai-v5")
        jobs += [(f"{key}-{client}", client, body) for client in clients]
    results = replay(jobs)
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        assert res["streamError"] is None, (job_id, res["streamError"])
    gem = results["agui-gem-agui"]["messages"]
    assert gem[-1]["toolCalls"][0]["encryptedValue"]
    sdk = results["sdk-sdk-ai-v5"]["messages"][-1]["parts"]
    assert [p["state"] for p in sdk if p["type"].startswith(("tool-", "dynamic-tool"))] == [
        "output-available",
        "output-available",
    ]


def test_next_turn_sends_the_providers_own_artefacts_back(
    make_app: Any, router: respx.MockRouter, keys: None
) -> None:
    require_harness()
    routes = mock_all(router)
    first = _outputs(make_app)
    results = replay([("resp", "agui", first["agui-resp"]), ("gem", "agui", first["agui-gem"])])

    def next_turn(name: str) -> dict[str, Any]:
        history = results[name]["messages"]
        [call] = history[-1]["toolCalls"]
        tool = {"id": "t1", "role": "tool", "toolCallId": call["id"], "content": '{"country":"FR"}'}
        return {**RUN_INPUT, "runId": "run-2", "messages": [*RUN_INPUT["messages"], *history, tool]}

    async def run() -> None:
        for name in ("resp", "gem"):
            result = await drive(make_app(), f"/v1/agui/{name}", next_turn(name))
            assert types(result.data())[-1] == "RUN_FINISHED"

    asyncio.run(run())
    _, responses = sent(routes["resp"])
    [reasoning] = [i for i in responses["input"] if i.get("type") == "reasoning"]
    encrypted = [m for m in results["resp"]["messages"] if m["role"] == "reasoning"]
    assert reasoning["encrypted_content"] == encrypted[0]["encryptedValue"]
    assert responses["include"] == ["reasoning.encrypted_content"]
    kinds = [i.get("type", i.get("role")) for i in responses["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]

    _, gemini = sent(routes["gem"])
    model_turn, response_turn = gemini["contents"][1], gemini["contents"][2]
    [part] = model_turn["parts"]
    original = results["gem"]["messages"][-1]["toolCalls"][0]
    assert part["thoughtSignature"] == original["encryptedValue"]
    assert part["functionCall"]["id"] == original["id"]
    [response] = response_turn["parts"]
    assert response["functionResponse"]["name"] == part["functionCall"]["name"] == "get_country"
    assert response["functionResponse"]["response"] == {"output": {"country": "FR"}}


# -- configuration ---------------------------------------------------------------------------


def _route_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "r.toml"
    path.write_text(f"[[routes]]\n{body}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            'name = "g"\nupstream_url = "https://h/v1beta"\nprotocol = "gemini"',
            "route 'g': field 'model': Field required",
        ),
        (
            'name = "s"\nupstream_url = "https://h/api/chat"\nprotocol = "ai-sdk"\n'
            "params = { temperature = 1 }",
            "route 's': field 'params': Value error, must be empty",
        ),
    ],
)
def test_protocol_specific_config_errors(tmp_path: Path, body: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_routes(_route_file(tmp_path, body))
    assert expected in info.value.message


def test_passthrough_route_needs_no_model(tmp_path: Path) -> None:
    path = _route_file(tmp_path, 'name = "s"\nupstream_url = "self:/agent"\nprotocol = "ai-sdk"')
    route = load_routes(path)["s"]
    assert route.model is None and route.protocol == "ai-sdk"


def test_corpus_files_used_here_exist() -> None:
    for name in (RESPONSES_REASONING_CALL, GEMINI_SIGNED_CALL, AISDK_TOOLS, AGUI_TOOL):
        require_corpus(name.split("/")[0])
        assert (CORPUS_DIR / name).is_file(), name
