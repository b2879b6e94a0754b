"""The scenario runner on real adapters (issue 17): scripted models on loopback, the adapter
pointed at them, each scenario judged by the kit, the real client and the data checks.

Headline (runs under .ci/run): the runner finds pydantic-ai's interleaving fault. When two
parallel calls' argument deltas interleave (as OpenAI streams them), pydantic-ai's AG-UI
adapter ends call A when call B starts and then sends A's remaining argument deltas after
A's TOOL_CALL_END: ``@ag-ui/client`` rejects the run, and the arguments the client keeps are
cut. Everything else pydantic-ai streams is clean. What the runner finds per adapter is in
docs/conformance.md.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from agui_runtimes import serve
from corpus import require_modules, require_service
from real_clients import HARNESS_DIR, require_harness

from conformance.scenarios import SCENARIOS, ModelServer, ScenarioResult, run_scenarios


def pydantic_ai_app(base_url: str) -> Any:
    """pydantic-ai's AG-UI adapter over an OpenAI Chat model served by ``base_url``; the tools
    are the run input's (frontend tools)."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    provider = OpenAIProvider(base_url=f"{base_url}/v1", api_key="scripted")
    agent = Agent(OpenAIChatModel("scripted", provider=provider))

    async def endpoint(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])])


def langgraph_app(base_url: str) -> Any:
    """ag-ui-langgraph's endpoint over a one-node graph whose model is langchain-openai's
    ``ChatOpenAI`` pointed at ``base_url``, bound to the run input's tools (ag-ui-langgraph puts
    them in the graph state's ``tools``): each tool call ends the run, as frontend tools do."""
    from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
    from fastapi import FastAPI
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    class State(MessagesState):
        tools: list[Any]

    model = ChatOpenAI(
        model="scripted", base_url=f"{base_url}/v1", api_key="scripted", streaming=True
    )

    async def agent_node(state: State) -> dict[str, Any]:
        tools = [
            {"type": "function", "function": {
                "name": t["name"], "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object"}}}
            for t in state.get("tools") or []
        ]  # fmt: skip
        bound = model.bind_tools(tools) if tools else model
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("agent", agent_node)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    agent = LangGraphAgent(name="scripted", graph=graph.compile(checkpointer=MemorySaver()))
    app = FastAPI()
    add_langgraph_fastapi_endpoint(app, agent, "/")
    return app


def llama_index_app(base_url: str) -> Any:
    """llama-index-protocols-ag-ui's workflow router (POST ``/run``) over llama-index's
    ``OpenAI`` LLM pointed at ``base_url``; the run input's tools are its frontend tools."""
    from fastapi import FastAPI
    from llama_index.llms.openai import OpenAI
    from llama_index.protocols.ag_ui.router import get_ag_ui_workflow_router

    # a model name llama-index knows (it looks up the context window); the server ignores it
    llm = OpenAI(model="gpt-4o-mini", api_base=f"{base_url}/v1", api_key="scripted")
    app = FastAPI()
    app.include_router(get_ag_ui_workflow_router(llm=llm))
    return app


def failing(results: dict[str, ScenarioResult]) -> dict[str, list[str]]:
    """Scenario -> its data findings, for the scenarios whose data checks failed."""
    return {name: r.data for name, r in results.items() if r.data}


def by_name(results: list[ScenarioResult]) -> dict[str, ScenarioResult]:
    return {r.scenario: r for r in results}


def test_scenario_runner_finds_the_pydantic_ai_interleaving_fault() -> None:
    require_modules("pydantic_ai.ui.ag_ui", "openai")
    require_harness()
    with ModelServer() as server, serve(pydantic_ai_app(server.url)) as url:
        results = by_name(run_scenarios(url, server, clients=HARNESS_DIR))
    parallel = results["parallel-tools"]
    fatal = parallel.reports[0].fatal
    assert fatal is not None and fatal.rule_id == "agui/verify/tool-args-without-start"
    assert fatal.ids == ("call_weather",)  # A's arguments after A's END
    assert parallel.client is not None and not parallel.client[0]["accepted"]
    assert "call_weather" in str(parallel.client[0]["error"])
    assert any("get_weather" in d for d in parallel.data)
    assert parallel.requests == [("openai-chat", 0)]
    clean = {name: r for name, r in results.items() if name != "parallel-tools"}
    assert {n: (r.data, [v.rule_id for rep in r.reports for v in rep.errors], r.client)
            for n, r in clean.items() if not r.ok} == {}  # fmt: skip
    # the frontend round trips reached the model with the results
    assert results["frontend-tool"].requests[:2] == [("openai-chat", 0), ("openai-chat", 1)]


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic"])
def test_the_model_server_speaks_each_api_to_a_real_sdk(api: str) -> None:
    """The official SDKs read the scripted streams: text, interleaved calls and thinking."""
    require_modules("openai")
    with ModelServer() as server:
        if api == "anthropic":
            require_modules("anthropic")
            import anthropic

            client = anthropic.Anthropic(base_url=server.url, api_key="x")
            with client.messages.stream(
                model="m",
                max_tokens=10,
                messages=[{"role": "user", "content": "scenario: parallel-tools"}],
            ) as stream:
                message = stream.get_final_message()
            calls = {b.name: b.input for b in message.content if b.type == "tool_use"}
        elif api == "openai-chat":
            import openai

            chat = openai.OpenAI(base_url=f"{server.url}/v1", api_key="x").chat.completions
            parts: dict[int, list[str]] = {}
            names: dict[int, str] = {}
            for chunk in chat.create(
                model="m",
                stream=True,
                messages=[{"role": "user", "content": "scenario: parallel-tools"}],
            ):
                for choice in chunk.choices:
                    for tc in choice.delta.tool_calls or []:
                        parts.setdefault(tc.index, []).append(tc.function.arguments or "")
                        if tc.function.name:
                            names[tc.index] = tc.function.name
            import json

            calls = {names[i]: json.loads("".join(p)) for i, p in parts.items()}
        else:
            import openai

            responses = openai.OpenAI(base_url=f"{server.url}/v1", api_key="x").responses
            with responses.stream(model="m", input="scenario: parallel-tools") as stream:
                final = stream.get_final_response()
            import json

            calls = {
                o.name: json.loads(o.arguments) for o in final.output if o.type == "function_call"
            }
    expected = {c.name: c.arguments for c in SCENARIOS["parallel-tools"].calls()}
    assert calls == expected
    assert server.requests == [(api, "parallel-tools", 0)]


def test_scenario_runner_finds_ag_ui_langgraph_cutting_tool_arguments() -> None:
    """ag-ui-langgraph 0.0.47 over ChatOpenAI: every stream is legal (kit and client accept
    every run), but the arguments that arrive in the chunk naming the call are dropped, parallel
    calls' deltas are written into one call, and the model request goes on after the client
    went away. Text, reasoning and errors arrive whole."""
    require_modules("ag_ui_langgraph", "langchain_openai", "fastapi")
    require_harness()
    with ModelServer() as server, serve(langgraph_app(server.url)) as url:
        results = by_name(run_scenarios(url, server, clients=HARNESS_DIR))
    assert {n: [v.rule_id for rep in r.reports for v in rep.errors]
            for n, r in results.items() if r.rejected} == {}  # fmt: skip
    assert {n: r.client for n, r in results.items()
            if r.client is None or not all(c["accepted"] for c in r.client)} == {}  # fmt: skip
    found = failing(results)
    assert set(found) == {
        "one-tool", "parallel-tools", "frontend-tool", "tool-error", "large-argument", "cancel",
    }  # fmt: skip
    # the first argument piece ('{"ci' of '{"city": "Paris"}') is what goes missing
    assert found["one-tool"] == [
        "tool call 'get_weather': arguments 'ty\": \"Paris\"}' are not the scripted "
        '\'{"city": "Paris"}\''
    ]
    assert any("get_weather" in d for d in found["parallel-tools"])
    assert any("get_time" in d for d in found["parallel-tools"])
    assert found["cancel"] == ["the model request went on after the client went away"]


def test_scenario_runner_finds_llama_index_dropping_parallel_arguments_and_aborting() -> None:
    """llama-index-protocols-ag-ui 0.6.0 over llama-index's OpenAI LLM: parallel calls arrive
    with empty arguments ('{}'), an upstream error ends with RUN_ERROR and then an aborted HTTP
    response (a live client fails with `terminated`; the saved body looks clean, so the client
    replay accepts it), and the model request goes on after the client went away."""
    require_modules("llama_index.protocols.ag_ui", "llama_index.llms.openai", "fastapi")
    require_harness()
    with ModelServer() as server, serve(llama_index_app(server.url)) as url:
        results = by_name(run_scenarios(f"{url}/run", server, clients=HARNESS_DIR))
    rejected = {n: [v.rule_id for rep in r.reports for v in rep.errors]
                for n, r in results.items() if r.rejected}  # fmt: skip
    assert rejected == {"upstream-error": ["agui/transport/aborted"]}
    assert results["upstream-error"].client == [{"accepted": True, "error": None}]
    found = failing(results)
    assert set(found) == {"parallel-tools", "cancel"}
    assert sorted(found["parallel-tools"]) == [
        "tool call 'get_time': arguments '{}' are not the scripted '{\"zone\": \"Europe/Paris\"}'",
        "tool call 'get_weather': arguments '{}' are not the scripted '{\"city\": \"Paris\"}'",
    ]
    clean = set(results) - set(rejected) - set(found)
    assert clean == {"plain-text", "one-tool", "frontend-tool", "tool-error", "long-reasoning",
                     "large-argument"}  # fmt: skip


ROOT = Path(__file__).resolve().parents[2]
AGENT_FRAMEWORK_PYTHON = ROOT / ".venv-agent-framework" / "bin" / "python"
AGENT_FRAMEWORK_SERVER = ROOT / "tests" / "adapters" / "agent_framework" / "server.py"


@contextmanager
def agent_framework_server(model_url: str) -> Iterator[str]:
    """agent-framework-ag-ui in its own venv (it cannot share ours), as a child process."""
    require_service(
        AGENT_FRAMEWORK_PYTHON.is_file(),
        "agent-framework-ag-ui's venv is missing: `make adapter-venvs` (make test does)",
    )
    proc = subprocess.Popen(
        [str(AGENT_FRAMEWORK_PYTHON), str(AGENT_FRAMEWORK_SERVER), model_url],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"the adapter did not start ({url!r})"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_scenario_runner_finds_agent_framework_reopening_a_parallel_call() -> None:
    """agent-framework-ag-ui 1.7.0 (OpenAIChatCompletionClient): with two parallel calls whose
    argument deltas interleave, it sends TOOL_CALL_START twice for the first call; the kit and
    ``@ag-ui/client`` both reject the run. Everything else arrives whole, and it stops its model
    request when the client goes away."""
    require_harness()
    with ModelServer() as server, agent_framework_server(server.url) as url:
        results = by_name(run_scenarios(url, server, clients=HARNESS_DIR))
    parallel = results["parallel-tools"]
    fatal = parallel.reports[0].fatal
    assert fatal is not None and fatal.rule_id == "agui/verify/tool-start-already-open"
    assert fatal.ids == ("call_weather",)
    assert parallel.client is not None and not parallel.client[0]["accepted"]
    assert "call_weather" in str(parallel.client[0]["error"])
    clean = {name: r for name, r in results.items() if name != "parallel-tools"}
    assert {n: (r.data, [v.rule_id for rep in r.reports for v in rep.errors], r.client)
            for n, r in clean.items() if not r.ok} == {}  # fmt: skip
