"""A scripted LangGraph graph for recording LangGraph Platform run streams (``tests/corpus/langgraph``).

No model is called: :class:`ScriptedModel` (a langchain-core ``BaseChatModel``) streams
scripted AI messages token by token, tool calls as ``tool_call_chunks``, through LangChain's
callbacks, which is what the ``messages`` stream mode carries. The graph, by the first word of the last human message:

``weather``  ``model`` streams text and a ``get_weather`` tool call, ``tools`` answers it, a
             ``research`` subgraph (its own ``summarize`` model node: subgraph namespace
             events) writes a custom progress event, then ``approve`` interrupts with a question;
             resumed with a ``Command(resume=...)``, ``model`` streams the final answer
``fail``     ``model`` raises (the run's ``error`` event)
otherwise    ``model`` streams one answer

``tests/support/langgraph_recorder.py`` serves it with the LangGraph API server and records
the ``POST /threads/{thread_id}/runs/stream`` bodies.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any, TypedDict

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    report: str


class ScriptedModel(BaseChatModel):
    """Streams :attr:`reply`: its text word by word, then each tool call's arguments in two
    ``tool_call_chunks``."""

    reply: AIMessage

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        return ChatResult(generations=[ChatGeneration(message=self.reply)])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        chunks = [
            AIMessageChunk(content=t) for t in re.split(r"(\s+)", str(self.reply.content)) if t
        ]
        for index, call in enumerate(self.reply.tool_calls):
            args = json.dumps(call["args"])
            half = len(args) // 2
            chunks.append(
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": call["name"],
                            "args": args[:half],
                            "id": call["id"],
                            "index": index,
                        }
                    ],
                )
            )
            chunks.append(AIMessageChunk(content="", tool_call_chunks=[
                {"name": None, "args": args[half:], "id": None, "index": index}]))  # fmt: skip
        for message in chunks:
            chunk = ChatGenerationChunk(message=message)
            if run_manager:
                await run_manager.on_llm_new_token(str(message.content), chunk=chunk)
            yield chunk


def _model(reply: AIMessage) -> ScriptedModel:
    return ScriptedModel(reply=reply)


def _last_human(state: State) -> str:
    for message in reversed(state["messages"]):
        if isinstance(message, HumanMessage):
            return str(message.content)
    return ""


async def model(state: State) -> dict[str, Any]:
    text = _last_human(state)
    word = text.split(" ", 1)[0].lower()
    if word == "fail":
        raise ValueError("the weather service is unreachable")
    done = any(isinstance(m, ToolMessage) for m in state["messages"])
    if word == "weather" and not done:
        reply = AIMessage(
            content="Let me check the weather.",
            tool_calls=[{"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}],
        )
    elif word == "weather":
        reply = AIMessage(content=f"It is sunny in Paris. Report: {state.get('report', '')}")
    else:
        reply = AIMessage(content=f"You said: {text}")
    return {"messages": [await _model(reply).ainvoke(state["messages"])]}


async def tools(state: State) -> dict[str, Any]:
    call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
    return {"messages": [ToolMessage(content='{"temperature": 21}', tool_call_id=call["id"])]}


async def summarize(state: State) -> dict[str, Any]:
    get_stream_writer()({"progress": 0.5, "step": "summarizing"})
    summary = await _model(AIMessage(content="Sunny, 21 degrees.")).ainvoke(state["messages"])
    return {"report": str(summary.content)}


def approve(state: State) -> dict[str, Any]:
    answer = interrupt({"question": "Send the report?", "report": state.get("report", "")})
    return {"report": f"{state.get('report', '')} (approved: {answer})"}


def _route(state: State) -> str:
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and last.tool_calls:
        return "tools"
    return END


_research = StateGraph(State)
_research.add_node("summarize", summarize)
_research.add_edge(START, "summarize")
_research.add_edge("summarize", END)

_builder = StateGraph(State)
_builder.add_node("model", model)
_builder.add_node("tools", tools)
_builder.add_node("research", _research.compile())
_builder.add_node("approve", approve)
_builder.add_edge(START, "model")
_builder.add_conditional_edges("model", _route, ["tools", END])
_builder.add_edge("tools", "research")
_builder.add_edge("research", "approve")
_builder.add_edge("approve", "model")

graph = _builder.compile()
