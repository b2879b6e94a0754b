"""Real AG-UI runtimes and the gateway, each served on 127.0.0.1 (port 0) by uvicorn in a thread.

Used by ``tests/conformance/test_adapters_through_gateway.py`` and
``tests/conformance/test_real_adapters.py`` (``tests/support`` is on the pytest pythonpath, so
``import agui_runtimes``):

* :func:`pydantic_ai_app`: pydantic-ai's AG-UI adapter (``AGUIAdapter.dispatch_request``) over
  an agent with one tool, ``get_weather``; the model is a ``FunctionModel`` (text, or with
  ``reasoning=True`` a thinking part instead, then a tool call with streamed arguments in the
  same response; after the tool result, the answer text) or a ``TestModel`` (calls the tool
  with arguments it generates, then answers);
* :func:`langgraph_app`: ag-ui-langgraph (``add_langgraph_fastapi_endpoint``) over a LangGraph
  ReAct graph whose chat model is a scripted fake: a tool-only turn (arguments streamed in
  pieces after an empty first fragment, as OpenAI and Anthropic stream them, or whole in the
  opening chunk, as Groq does), then the answer streamed word by word (with ``spaced=False``
  the words carry no separating spaces);
* :func:`serve` (any ASGI app, lifespan off) and :func:`serve_gateway` (``gateway.app``
  with its lifespan on, so streaming requests record durable runs).

No network: the models are scripted and every socket is on the loopback interface.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "ANSWER",
    "PREAMBLE",
    "TOOL_RESULT",
    "langgraph_app",
    "pydantic_ai_app",
    "serve",
    "serve_gateway",
]

PREAMBLE = "Let me check the weather."
"""Text the pydantic-ai ``FunctionModel`` streams before its tool call."""

ANSWER = "It is sunny in Paris."
"""The answer every scripted model gives after the tool result."""

TOOL_RESULT = "sunny in Paris"
"""What ``get_weather(city="Paris")`` returns (``TestModel`` passes another city)."""

_STARTUP_DEADLINE_S = 30.0


def _weather(city: str) -> str:
    return f"sunny in {city}"


# -- servers ---------------------------------------------------------------------------------
@contextmanager
def _uvicorn(server: Any, sock: socket.socket | None = None) -> Iterator[None]:
    kwargs = {"sockets": [sock]} if sock is not None else {}
    thread = threading.Thread(target=server.run, kwargs=kwargs, daemon=True)
    thread.start()
    deadline = time.monotonic() + _STARTUP_DEADLINE_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)  # readiness poll, not a timing assertion
    try:
        assert server.started, "uvicorn did not start"
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=_STARTUP_DEADLINE_S)


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve ``app`` (lifespan off) at 127.0.0.1 on a free port; yield its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        with _uvicorn(server, sock):
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@contextmanager
def serve_gateway(routes_toml: str, workdir: Path) -> Iterator[str]:
    """Serve the gateway over ``routes_toml`` with its lifespan (run store: SQLite in
    ``workdir``) at 127.0.0.1 on a free port, as ``agui-gateway serve`` does; yield its URL."""
    from gateway.app import create_app
    from gateway.config import Settings
    from gateway.server import build_server

    routes = workdir / "routes.toml"
    routes.write_text(routes_toml, encoding="utf-8")
    settings = Settings(config=routes, database_url=f"sqlite:///{workdir}/runs.db")
    server = build_server(create_app(settings), "127.0.0.1", 0, log_level="warning")
    with _uvicorn(server):
        deadline = time.monotonic() + _STARTUP_DEADLINE_S
        while server.bound_port is None and time.monotonic() < deadline:
            time.sleep(0.01)  # set once serve's startup is done, after uvicorn's ``started``
        assert server.bound_port is not None
        yield f"http://127.0.0.1:{server.bound_port}"


# -- pydantic-ai -----------------------------------------------------------------------------
def pydantic_ai_app(model_kind: str, *, reasoning: bool = False) -> Any:
    """pydantic-ai's AG-UI endpoint (POST ``/``); ``model_kind`` is ``function`` or ``test``.

    ``reasoning``: the ``FunctionModel`` opens its tool turn with a thinking part instead of
    the :data:`PREAMBLE` text (so that turn has no text of its own).
    """
    from pydantic_ai import Agent
    from pydantic_ai.models.function import (
        AgentInfo,
        DeltaThinkingPart,
        DeltaToolCall,
        FunctionModel,
    )
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def script(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
        if len(messages) == 1:  # the user's turn: text (or thinking), then the tool call
            if reasoning:
                yield {0: DeltaThinkingPart(content="The weather tool knows.")}
            else:
                yield "Let me check "
                yield "the weather."
            yield {
                1: DeltaToolCall(name="get_weather", json_args='{"city": ', tool_call_id="call_1")
            }
            yield {1: DeltaToolCall(json_args='"Paris"}')}
        else:  # after the tool result
            yield "It is sunny "
            yield "in Paris."

    if model_kind == "function":
        model: Any = FunctionModel(stream_function=script)
    else:
        model = TestModel(call_tools=["get_weather"], custom_output_text=ANSWER)
    agent = Agent(model)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return _weather(city)

    async def endpoint(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])])


# -- ag-ui-langgraph -------------------------------------------------------------------------
def langgraph_app(args_mode: str, *, spaced: bool = True) -> Any:
    """ag-ui-langgraph's endpoint (POST ``/``) over a ReAct graph with a scripted chat model.

    ``args_mode``: ``streamed`` (``""``, then the arguments in two pieces) or ``whole`` (all
    of them in the chunk that names the call). ``spaced=False``: the answer's words are
    streamed without the spaces between them.
    """
    from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
    from fastapi import FastAPI
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return _weather(city)

    class ScriptedChatModel(BaseChatModel):
        """Plays scripted turns: a tool call, then the answer (streamed like a provider)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
            return self

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _turn(self, messages: list[BaseMessage]) -> AIMessage:
            if any(m.type == "tool" for m in messages):
                return AIMessage(content=ANSWER, id="ai-answer")
            call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}
            return AIMessage(content="", tool_calls=[call], id="ai-call")

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:  # fmt: skip
            return ChatResult(generations=[ChatGeneration(message=self._turn(messages))])

        def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                    **kwargs: Any) -> Iterator[ChatGenerationChunk]:  # fmt: skip
            turn = self._turn(messages)
            words = turn.text.split(" ")
            pieces = [
                AIMessageChunk(content=word if n == 0 or not spaced else " " + word, id=turn.id)
                for n, word in enumerate(words)
                if word
            ]
            for call in turn.tool_calls:
                text = json.dumps(call["args"])
                parts = [text] if args_mode == "whole" else ["", text[:6], text[6:]]
                for n, part in enumerate(parts):
                    first = n == 0
                    chunk = {"name": call["name"] if first else None, "args": part,
                             "id": call["id"] if first else None, "index": 0}  # fmt: skip
                    pieces.append(AIMessageChunk(content="", tool_call_chunks=[chunk], id=turn.id))
            for piece in pieces:
                chunk = ChatGenerationChunk(message=piece)
                if run_manager is not None:
                    run_manager.on_llm_new_token(str(piece.content), chunk=chunk)
                yield chunk

    model = ScriptedChatModel()

    def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.bind_tools([get_weather]).invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent_node)
    graph.add_node("tools", ToolNode([get_weather]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    agent = LangGraphAgent(name="weather", graph=graph.compile(checkpointer=MemorySaver()))
    app = FastAPI()
    add_langgraph_fastapi_endpoint(app, agent, "/")
    return app
