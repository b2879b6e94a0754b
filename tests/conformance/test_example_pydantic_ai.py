"""``examples/pydantic-ai`` (issue 14 item 6): the example agent behind the gateway, as its
docstring says to run it, and the real clients on what the gateway sends.

The agent (``examples/pydantic-ai/agent.py``, pydantic-ai's ``AGUIAdapter`` over a scripted
``FunctionModel``) is served by uvicorn on 127.0.0.1:0; the gateway gets the example's
``routes.toml`` with its ``upstream_url`` pointed at that port, and one run goes through
``POST /v1/agui/pydantic`` and one through ``POST /v1/ai-sdk/pydantic``. The expected messages
are the example's script (its text, the ``get_weather`` call with ``{"city": "Paris"}``, the
tool's result, the answer): ``@ag-ui/client`` 1.0.0 and ``ai`` 7 (``tests/harness``) accept the
streams without an error or a warning and build exactly those.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from agui_runtimes import serve, serve_gateway
from corpus import require_modules
from real_clients import replay, require_harness

pytestmark = pytest.mark.timeout(180)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pydantic-ai"
PROMPT = "What is the weather in Paris?"
PREAMBLE = "Let me check the weather."
ANSWER = "It is sunny in Paris."


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("example_pydantic_ai_agent", EXAMPLE / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def routes_for(runtime: str) -> str:
    text = (EXAMPLE / "routes.toml").read_text(encoding="utf-8")
    assert 'upstream_url = "http://127.0.0.1:8001/"' in text
    return text.replace("http://127.0.0.1:8001/", f"{runtime}/")


def test_the_example_agent_through_the_gateway_is_accepted_by_the_real_clients(
    tmp_path: Path,
) -> None:
    require_modules("pydantic_ai.ui.ag_ui", "uvicorn")
    require_harness()
    example = load_example()
    assert example.ANSWER == ANSWER
    run_input = {
        "threadId": "t-example",
        "runId": "r-example",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": PROMPT}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    chat = {
        "id": "t-example-chat",
        "trigger": "submit-message",
        "messages": [{"id": "u2", "role": "user", "parts": [{"type": "text", "text": PROMPT}]}],
    }
    with serve(example.app) as runtime, serve_gateway(routes_for(runtime), tmp_path) as gateway:
        with httpx.Client(base_url=gateway, timeout=60) as http:
            agui = http.post("/v1/agui/pydantic", json=run_input)
            ai_sdk = http.post("/v1/ai-sdk/pydantic", json=chat)
    assert agui.status_code == 200 and ai_sdk.status_code == 200

    results = replay([("agui", "agui", agui.content), ("ai", "ai-v7", ai_sdk.content)])
    for name, result in results.items():
        assert result["accepted"] and result["streamError"] is None, (name, result["error"])
        assert result["warnings"] == [], name

    messages = results["agui"]["messages"]
    assistant = [m for m in messages if m["role"] == "assistant"]
    calls = [c for m in assistant for c in m.get("toolCalls", [])]
    assert [m["content"] for m in assistant if m.get("content")] == [PREAMBLE, ANSWER]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    tool = [m for m in messages if m["role"] == "tool"]
    assert [(m["toolCallId"], m["content"]) for m in tool] == [(calls[0]["id"], "sunny in Paris")]

    [message] = results["ai"]["messages"]
    parts = message["parts"]
    assert [p["text"] for p in parts if p["type"] == "text" and p["text"]] == [PREAMBLE, ANSWER]
    tools = [p for p in parts if p["type"].startswith("tool-")]
    assert [(p["type"], p["state"], p["input"], p["output"]) for p in tools] == [
        ("tool-get_weather", "output-available", {"city": "Paris"}, "sunny in Paris")
    ]
