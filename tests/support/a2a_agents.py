"""A scripted A2A agent served by the official ``a2a-sdk`` server, for tests and recordings.

The SDK (``a2a-sdk``, the A2A project's Python reference: its JSON-RPC dispatcher with the v0.3
compatibility adapter, ``DefaultRequestHandlerV2``, ``InMemoryTaskStore``, ``TaskUpdater``)
writes every byte of the wire: this module only decides *what* the agent says, by the first
word of the user's text:

``hello``     working (an agent status message), a text artifact streamed in two chunks
              (``append`` / ``lastChunk``), completed
``weather``   input-required ("Which city?"); answered on the same task (the continuation),
              a data artifact and completed
``fail``      working, then failed with a message
``cancel``    working, then canceled
``quick``     a direct agent Message, no task
``auth``      auth-required

:func:`a2a_app` is the Starlette app (JSON-RPC at ``/``); ids come from counters, so a
recording differs between runs only in timestamps. ``tests/corpus/a2a`` holds streams of this
agent captured with :func:`record` (MANIFEST.md).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import httpx
from a2a.helpers.proto_helpers import (
    new_data_part,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2
from starlette.applications import Starlette

__all__ = ["a2a_app", "message_stream_request", "record", "stream_request_v1", "write_corpus"]


class _Counter(IDGenerator):
    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._n = itertools.count(1)

    def generate(self, context: IDGeneratorContext) -> str:
        return f"{self._prefix}-{next(self._n)}"


class ScriptedAgent(AgentExecutor):
    """The scenarios of the module docstring."""

    def __init__(self) -> None:
        self._artifacts = _Counter("artifact")
        self._messages = _Counter("agent-msg")

    def _agent(self, text: str, context: RequestContext) -> a2a_pb2.Message:
        message = new_text_message(text, context_id=context.context_id, task_id=context.task_id)
        message.message_id = self._messages.generate(IDGeneratorContext())
        message.role = a2a_pb2.Role.ROLE_AGENT
        return message

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        word = text.split(" ", 1)[0].lower() if text else ""
        if word == "quick":
            message = self._agent("Quick answer.", context)
            message.ClearField("task_id")
            await event_queue.enqueue_event(message)
            return
        assert context.task_id and context.context_id
        updater = TaskUpdater(
            event_queue,
            context.task_id,
            context.context_id,
            artifact_id_generator=self._artifacts,
            message_id_generator=self._messages,
        )
        if context.current_task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            task.id, task.context_id = context.task_id, context.context_id
            await event_queue.enqueue_event(task)
        if context.current_task is not None and word != "weather":  # the user answered
            await updater.start_work()
            data = {"city": text, "forecast": "sunny", "temperatureC": 21}
            await updater.add_artifact([new_data_part(data)], name="forecast")
            await updater.complete(self._agent(f"Forecast for {text} is ready.", context))
            return
        if word == "hello":
            await updater.start_work(self._agent("Looking that up...", context))
            artifact = self._artifacts.generate(IDGeneratorContext())
            await updater.add_artifact(
                [new_text_part("Hello! ")], artifact_id=artifact, name="answer", last_chunk=False
            )
            await updater.add_artifact(
                [new_text_part("How can I help?")],
                artifact_id=artifact,
                name="answer",
                append=True,
                last_chunk=True,
            )
            await updater.complete()
        elif word == "weather":
            await updater.requires_input(self._agent("Which city?", context))
        elif word == "fail":
            await updater.start_work()
            await updater.failed(self._agent("The weather service is down.", context))
        elif word == "cancel":
            await updater.start_work()
            await updater.cancel(self._agent("Stopped on request.", context))
        elif word == "auth":
            await updater.requires_auth(self._agent("Sign in to your calendar first.", context))
        else:
            await updater.complete(self._agent(f"You said: {text}", context))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _card() -> a2a_pb2.AgentCard:
    card = a2a_pb2.AgentCard(name="scripted", description="a scripted test agent", version="1.0.0")
    card.capabilities.streaming = True
    card.default_input_modes.append("text/plain")
    card.default_output_modes.append("text/plain")
    interface = card.supported_interfaces.add()
    interface.url = "http://a2a.test/"
    interface.protocol_binding = "JSONRPC"
    interface.protocol_version = "0.3"
    return card


def a2a_app(rpc_url: str = "/") -> Starlette:
    """The scripted agent behind the SDK's JSON-RPC endpoint (``POST rpc_url``, v0.3 and
    v1.0)."""
    handler = DefaultRequestHandlerV2(
        agent_executor=ScriptedAgent(), task_store=InMemoryTaskStore(), agent_card=_card()
    )
    return Starlette(routes=create_jsonrpc_routes(handler, rpc_url, enable_v0_3_compat=True))


def message_stream_request(
    text: str, *, message_id: str, context_id: str | None = None, task_id: str | None = None
) -> dict[str, Any]:
    """A v0.3 ``message/stream`` request as the A2A specification (section 7.2) shows it."""
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": message_id,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    return {"jsonrpc": "2.0", "id": message_id, "method": "message/stream",
            "params": {"message": message}}  # fmt: skip


async def record(app: Starlette, body: dict[str, Any] | bytes) -> httpx.Response:
    """POST ``body`` to ``app`` in process; the whole SSE response (the streams end)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://a2a.test") as client:
        content = body if isinstance(body, bytes) else httpx.Request("POST", "/", json=body).content
        return await client.post(
            "/",
            content=content,
            headers={"content-type": "application/json", "accept": "text/event-stream"},
        )


def stream_request_v1(
    text: str, *, message_id: str, context_id: str, task_id: str | None = None
) -> dict[str, Any]:
    """A v1.0 ``SendStreamingMessage`` request (send it with ``A2A-Version: 1.0``)."""
    message: dict[str, Any] = {
        "messageId": message_id,
        "contextId": context_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    return {"jsonrpc": "2.0", "id": message_id, "method": "SendStreamingMessage",
            "params": {"message": message}}  # fmt: skip


async def _post(client: httpx.AsyncClient, body: dict[str, Any], v1: bool) -> bytes:
    headers = {"accept": "text/event-stream", **({"A2A-Version": "1.0"} if v1 else {})}
    response = await client.post("/", json=body, headers=headers)
    return response.content


def _task_id(body: bytes) -> str:
    first = json.loads(body.split(b"\n", 1)[0].removeprefix(b"data: "))
    result = first["result"]
    return str(result["task"]["id"] if "task" in result else result["id"])


async def write_corpus(folder: Path) -> None:
    """Record the scenarios into ``folder`` (the ``tests/corpus/a2a`` files), each the exact SSE
    body the SDK server wrote."""
    transport = httpx.ASGITransport(app=a2a_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://a2a.test") as client:

        async def v03(text: str, mid: str, task: str | None = None) -> bytes:
            body = message_stream_request(text, message_id=mid, context_id="ctx-1", task_id=task)
            return await _post(client, body, False)

        async def v10(text: str, mid: str, task: str | None = None) -> bytes:
            body = stream_request_v1(text, message_id=mid, context_id="ctx-2", task_id=task)
            return await _post(client, body, True)

        files = {
            "v03-hello-status-message-artifact-chunks.sse": await v03("hello there", "u-1"),
            "v03-fail-failed-with-message.sse": await v03("fail please", "u-3"),
            "v03-cancel-canceled.sse": await v03("cancel this", "u-4"),
            "v03-auth-required.sse": await v03("auth calendar", "u-5"),
            "v10-hello-status-message-artifact-chunks.sse": await v10("hello there", "v-1"),
        }
        asked = await v03("weather", "u-6")
        files["v03-weather-input-required.sse"] = asked
        files["v03-weather-continuation-data-artifact.sse"] = await v03(
            "Paris", "u-7", _task_id(asked)
        )
        asked = await v10("weather", "v-2")
        files["v10-weather-input-required.sse"] = asked
        files["v10-weather-continuation-data-artifact.sse"] = await v10(
            "Paris", "v-3", _task_id(asked)
        )
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (folder / name).write_bytes(body)


if __name__ == "__main__":  # python tests/support/a2a_agents.py tests/corpus/a2a
    import asyncio
    import sys

    asyncio.run(write_corpus(Path(sys.argv[1])))
