"""Real AG-UI adapters on loopback, checked with the kit and fronted by the ``agui`` codec.

* pydantic-ai's AG-UI adapter (``pydantic_ai.ui.ag_ui.AGUIAdapter``) with a ``FunctionModel``
  (reasoning, then a tool call, then text) and a ``TestModel``;
* ag-ui-langgraph (``add_langgraph_fastapi_endpoint``) over a LangGraph ReAct graph whose chat
  model is a scripted fake (text streamed word by word; tool arguments streamed in pieces after
  an empty first fragment, as OpenAI and Anthropic stream them, or whole in the first chunk, as
  Groq does).

Each adapter is served by uvicorn on 127.0.0.1:0; ``conformance.run_endpoint`` POSTs the
RunAgentInput and checks the stream as it arrives. The captured bytes then go through the path
a gateway route with ``protocol = "agui"`` takes (``AguiDecoder`` -> AG-UI and AI SDK encoders);
that output must pass every error-level rule and be accepted by the real clients.

What the kit found (asserted below, so a changed adapter shows up here):

* pydantic-ai 2.68: nothing; its stream is clean (it opens an empty text message so that a
  tool-only response has a parent message).
* ag-ui-langgraph 0.0.47: RUN_STARTED without ``protocolVersion``; a tool-only response's
  TOOL_CALL_START names a ``parentMessageId`` never announced; TOOL_CALL_RESULT reuses the tool
  call id as its ``messageId``; and the argument text carried by the chunk that opens a tool call
  is dropped: arguments that arrive whole give TOOL_CALL_START then TOOL_CALL_END with no ARGS
  (the decoder recovers them from the raw event: ``tool-args-synthesized``).

Needs ``pydantic-ai-slim[ag-ui]``, ``ag-ui-langgraph`` and ``fastapi`` (dev extras); skipped
locally without them, failed under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from agui_codecs.decoders.agui import AguiDecoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from loopback import serve
from real_clients import replay, require_harness

from conformance import Report, check_bytes, run_endpoint

RUN_INPUT = {
    "threadId": "thread-1",
    "runId": "run-1",
    "state": {},
    "messages": [{"id": "u1", "role": "user", "content": "What is the weather in Paris?"}],
    "tools": [],
    "context": [],
    "forwardedProps": {},
}


def require_modules(*names: str) -> None:
    """Skip when an adapter package is missing; fail instead under ``CI=true``."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            reason = f"{name} is not installed ({exc}); pip install -e '.[dev]'"
            if os.environ.get("CI") == "true":
                pytest.fail(reason, pytrace=False)
            pytest.skip(reason)


def capture(url: str) -> tuple[Report, bytes]:
    """Run the endpoint once: the kit checks the stream live, and the bytes are kept."""
    body = bytearray()
    report = run_endpoint(url, RUN_INPUT, on_bytes=body.extend)
    return report, bytes(body)


def front(body: bytes) -> tuple[bytes, bytes, dict[str, int]]:
    """What a gateway route with ``protocol = "agui"`` sends: AG-UI and AI SDK bytes."""
    decoder = AguiDecoder(thread_id="thread-1", run_id="run-1")
    events = decoder.feed(body) + decoder.close()
    agui, ai = AguiEncoder(), AiSdkEncoder()
    return (
        b"".join(map(agui.encode, events)),
        b"".join(map(ai.encode, events)) + ai.close(),
        decoder.repairs,
    )


def rule_ids(report: Report) -> set[str]:
    return {v.rule_id for v in report.violations}


def assert_fronted_stream_is_clean(body: bytes) -> dict[str, int]:
    agui, ai, repairs = front(body)
    assert check_bytes(agui, protocol="agui").errors == []
    for major in (5, 6, 7):
        assert check_bytes(ai, protocol="ai-sdk", major=major).errors == []
    require_harness()
    jobs = [("agui", "agui", agui)] + [(c, c, ai) for c in ("ai-v7", "ai-v6", "ai-v5")]
    results = replay(jobs)
    assert {k: r["error"] for k, r in results.items() if not r["accepted"]} == {}
    return repairs


# -- pydantic-ai -----------------------------------------------------------------------------
def pydantic_ai_app(model_kind: str) -> Any:
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
        if len(messages) == 1:
            yield {0: DeltaThinkingPart(content="The weather tool knows.")}
            yield {
                1: DeltaToolCall(name="get_weather", json_args='{"city": ', tool_call_id="call_1")
            }
            yield {1: DeltaToolCall(json_args='"Paris"}')}
        else:
            yield "It is "
            yield "sunny."

    model = FunctionModel(stream_function=script) if model_kind == "function" else TestModel()
    agent = Agent(model)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    async def endpoint(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])])


@pytest.mark.parametrize("model_kind", ["function", "test"])
def test_pydantic_ai_adapter_stream_is_clean(model_kind: str) -> None:
    require_modules("pydantic_ai.ui.ag_ui")
    with serve(pydantic_ai_app(model_kind)) as url:
        report, body = capture(url)
    assert report.events > 5
    assert report.violations == [], [v.to_json() for v in report.violations]
    assert assert_fronted_stream_is_clean(body) == {}


# -- ag-ui-langgraph -------------------------------------------------------------------------
def langgraph_app(args_mode: str) -> Any:
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
        return f"sunny in {city}"

    class ScriptedChatModel(BaseChatModel):
        """Plays scripted turns: a tool call, then an answer (streamed like a provider)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
            return self

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _turn(self, messages: list[BaseMessage]) -> AIMessage:
            if any(m.type == "tool" for m in messages):
                return AIMessage(content="It is sunny in Paris.", id="ai-answer")
            call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}
            return AIMessage(content="", tool_calls=[call], id="ai-call")

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:  # fmt: skip
            return ChatResult(generations=[ChatGeneration(message=self._turn(messages))])

        def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                    **kwargs: Any) -> Iterator[ChatGenerationChunk]:  # fmt: skip
            turn = self._turn(messages)
            pieces: list[AIMessageChunk] = [
                AIMessageChunk(content=word, id=turn.id) for word in turn.text.split(" ") if word
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


LANGGRAPH_FINDINGS = {
    "agui/hygiene/missing-protocol-version",
    "agui/hygiene/parent-message-unknown",
    "agui/hygiene/id-shared-across-kinds",
}


def test_langgraph_adapter_stream_is_accepted_with_known_hygiene_findings() -> None:
    require_modules("ag_ui_langgraph", "fastapi", "langgraph")
    with serve(langgraph_app("streamed")) as url:
        report, body = capture(url)
    assert report.errors == [], [v.to_json() for v in report.errors]
    assert rule_ids(report) == LANGGRAPH_FINDINGS
    repairs = assert_fronted_stream_is_clean(body)
    assert "tool-args-synthesized" not in repairs


def test_langgraph_adapter_drops_whole_tool_arguments_and_the_codec_recovers_them() -> None:
    """The public fault: a runtime that gets the arguments whole sends START then END."""
    require_modules("ag_ui_langgraph", "fastapi", "langgraph")
    with serve(langgraph_app("whole")) as url:
        report, body = capture(url)
    assert report.errors == []
    assert rule_ids(report) == LANGGRAPH_FINDINGS | {"agui/hygiene/tool-call-without-args"}
    agui, _, repairs = front(body)
    assert repairs.get("tool-args-synthesized") == 1
    args = [e for e in _events(agui) if e["type"] == "TOOL_CALL_ARGS"]
    assert [json.loads(e["delta"]) for e in args] == [{"city": "Paris"}]
    assert_fronted_stream_is_clean(body)


def _events(body: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(block[6:]) for block in body.decode().split("\n\n") if block.startswith("data: ")
    ]


def test_run_endpoint_checks_a_live_loopback_stream() -> None:
    """The harness itself: a two-event SSE app is checked live through ``run_endpoint``."""
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def endpoint(_: Any) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            yield b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}\n\n'
            await asyncio.sleep(0)
            yield b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'

        return StreamingResponse(body(), media_type="text/event-stream")

    with serve(Starlette(routes=[Route("/", endpoint, methods=["POST"])])) as url:
        report, _ = capture(url)
    assert report.events == 2 and report.violations == []
