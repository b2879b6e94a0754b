"""A pydantic-ai agent served over AG-UI, offline, for the gateway to stand in front of.

The agent's model is a ``FunctionModel`` (pydantic-ai ``pydantic_ai.models.function``): a
scripted stream, no provider and no key. Its one tool, ``get_weather``, is called with streamed
arguments, then the answer is streamed. The AG-UI endpoint is pydantic-ai's own
(``AGUIAdapter.dispatch_request``, ``pydantic_ai.ui.ag_ui``; pydantic-ai 2.68 has no
``Agent.to_ag_ui()`` any more, that app was its 1.x shortcut for exactly this endpoint).

Run it and the gateway in front of it (``routes.toml`` next to this file)::

    .venv/bin/python examples/pydantic-ai/agent.py            # AG-UI on 127.0.0.1:8001
    .venv/bin/agui-gateway serve --config examples/pydantic-ai/routes.toml

then any client of the gateway reaches the agent: ``POST /v1/agui/pydantic`` (``HttpAgent``),
``POST /v1/ai-sdk/pydantic`` (``useChat``), each run recorded and resumable.
``tests/conformance/test_example_pydantic_ai.py`` runs exactly this through the gateway and the
real ``@ag-ui/client``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

ANSWER = "It is sunny in Paris."


async def scripted_model(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
    """The first turn: a sentence, then ``get_weather`` with its arguments in two pieces; after
    the tool result: :data:`ANSWER`, streamed."""
    if len(messages) == 1:
        yield "Let me check the weather."
        yield {0: DeltaToolCall(name="get_weather", json_args='{"city": ', tool_call_id="c1")}
        yield {0: DeltaToolCall(json_args='"Paris"}')}
    else:
        yield "It is sunny "
        yield "in Paris."


agent = Agent(FunctionModel(stream_function=scripted_model))


@agent.tool_plain
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def run_agent(request: Request) -> Response:
    """``POST /``: an AG-UI ``RunAgentInput`` in, the agent's AG-UI SSE out."""
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/", run_agent, methods=["POST"])])

if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8001")))
