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

from typing import Any

import pytest
from agui_runtimes import serve
from corpus import require_modules
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
            with client.messages.stream(model="m", max_tokens=10, messages=[
                    {"role": "user", "content": "scenario: parallel-tools"}]) as stream:
                message = stream.get_final_message()
            calls = {b.name: b.input for b in message.content if b.type == "tool_use"}
        elif api == "openai-chat":
            import openai

            chat = openai.OpenAI(base_url=f"{server.url}/v1", api_key="x").chat.completions
            parts: dict[int, list[str]] = {}
            names: dict[int, str] = {}
            for chunk in chat.create(model="m", stream=True, messages=[
                    {"role": "user", "content": "scenario: parallel-tools"}]):
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

            calls = {o.name: json.loads(o.arguments) for o in final.output if o.type == "function_call"}
    expected = {c.name: c.arguments for c in SCENARIOS["parallel-tools"].calls()}
    assert calls == expected
    assert server.requests == [(api, "parallel-tools", 0)]
