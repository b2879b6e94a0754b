"""The AI SDK endpoint per route: ``ai_sdk_major`` (6 or 7: tool approvals as
``tool-approval-request``, on the POST and on the resume), and an AI SDK backend's own
``start.messageId`` kept when the client is not continuing a message (live and on the durable
resume: the same id, or ``useChat`` would duplicate the message)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from approval_turns import approval_turn
from gwtest import GatedStream, sse
from real_clients import replay, require_harness

from gateway.app import create_app
from gateway.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import call, events_of, running

pytestmark = pytest.mark.timeout(120)

BACKEND = "https://agent.test/api/chat"
ROUTES = f"""
[[routes]]
name = "sdk"
upstream_url = "{BACKEND}"
protocol = "ai-sdk"

[[routes]]
name = "sdk6"
upstream_url = "{BACKEND}"
protocol = "ai-sdk"
ai_sdk_major = 6

[[routes]]
name = "gpt"
upstream_url = "https://openai.test/v1"
protocol = "openai-chat"
model = "gpt-4o-mini"
"""
BACKEND_ID = "backend-msg-1"
START = [{"type": "start", "messageId": BACKEND_ID}, {"type": "start-step"}]
APPROVAL = [
    *START,
    {"type": "tool-input-start", "toolCallId": "c1", "toolName": "delete_file"},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "delete_file", "input": {}},
    {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]
TEXT = [
    *START,
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "Hel"},
    {"type": "text-delta", "id": "t1", "delta": "lo"},
    {"type": "text-end", "id": "t1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]
USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}


def chat(*messages: dict[str, Any], chat_id: str = "chat-1") -> dict[str, Any]:
    return {"id": chat_id, "trigger": "submit-message", "messages": list(messages or [USER])}


def chunk_types(chunks: list[dict[str, Any]]) -> list[str]:
    return [c["type"] for c in chunks]


@pytest.fixture
def app(tmp_path: Path, router: respx.MockRouter) -> Any:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(
        config=path,
        database_url=f"sqlite:///{tmp_path}/runs.db",
        batch_interval=0.01,
        reader_recheck=0.05,
    )
    return create_app(settings, http_client=client)


def backend(router: respx.MockRouter, chunks: list[dict[str, Any]], *gate: asyncio.Event) -> None:
    parts: list[bytes | asyncio.Event] = [sse(*chunks[:2]), *gate, sse(*chunks[2:], "[DONE]")]
    router.post(BACKEND).mock(
        side_effect=lambda request: httpx.Response(200, stream=GatedStream(parts))
    )


async def ask_approvals(app: Any, router: respx.MockRouter, message_id: str) -> None:
    """The turn of chat ``chat-1`` asking to approve ``c0`` and ``c1`` (``ap-c0``, ``ap-c1``):
    what the continuations below answer (an answer to an interrupt never raised is 422)."""
    calls = [(cid, "delete_file", {"path": f"/tmp/{cid}"}) for cid in ("c0", "c1")]
    backend(router, approval_turn(message_id, calls))
    asked = await call(app, "POST", "/v1/ai-sdk/sdk6", chat(USER))
    assert asked.status == 200
    assert [c["type"] for c in events_of(asked.body)].count("tool-approval-request") == 2


# -- ai_sdk_major ----------------------------------------------------------------------------


async def test_ai_sdk_major_6_route_sends_tool_approval_request(
    app: Any, router: respx.MockRouter
) -> None:
    backend(router, APPROVAL)
    async with running(app):
        v6 = await call(app, "POST", "/v1/ai-sdk/sdk6", chat())
        portable = await call(app, "POST", "/v1/ai-sdk/sdk", chat(chat_id="chat-2"))
    v6_chunks, portable_chunks = events_of(v6.body), events_of(portable.body)
    approval = next(c for c in v6_chunks if c["type"] == "tool-approval-request")
    assert approval == {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"}
    assert "tool-approval-request" not in chunk_types(portable_chunks)
    assert "data-tool-approval-request" in chunk_types(portable_chunks)

    require_harness()
    results = replay([("v6", "ai-v6", v6.body), ("v7", "ai-v7", v6.body)])
    for name, result in results.items():
        assert result["accepted"], (name, result["error"])
        parts = result["messages"][-1]["parts"]
        tool = next(p for p in parts if p.get("toolCallId") == "c1")
        assert tool["state"] == "approval-requested", (name, tool)


async def test_ai_sdk_major_applies_to_the_resume_too(app: Any, router: respx.MockRouter) -> None:
    gate = asyncio.Event()
    backend(router, APPROVAL, gate)
    async with running(app):
        first = await call(app, "POST", "/v1/ai-sdk/sdk6", chat(), stop=lambda r: True)
        assert first.status == 200
        resumed = await call(
            app, "GET", "/v1/ai-sdk/sdk6/chat-1/stream", on_chunk=lambda chunk: gate.set()
        )
    assert resumed.status == 200
    assert "tool-approval-request" in chunk_types(events_of(resumed.body))


# -- the backend's messageId -----------------------------------------------------------------


async def test_ai_sdk_backend_message_id_is_kept_live_and_on_resume(
    app: Any, router: respx.MockRouter
) -> None:
    gate = asyncio.Event()
    backend(router, TEXT, gate)
    async with running(app):
        first = await call(app, "POST", "/v1/ai-sdk/sdk", chat(), stop=lambda r: True)
        start = events_of(first.body)[0]
        # the run it is (issue 14: Stop in useChat) rides along as messageMetadata
        run_id = first.headers["x-agui-run-id"]
        assert start == {
            "type": "start",
            "messageId": BACKEND_ID,
            "messageMetadata": {"threadId": "chat-1", "runId": run_id},
        }
        resumed = await call(
            app, "GET", "/v1/ai-sdk/sdk/chat-1/stream", on_chunk=lambda chunk: gate.set()
        )
        assert resumed.status == 200
        chunks = events_of(resumed.body)
        assert chunks[0] == start  # the same id: useChat replaces the message, not duplicates
        assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == "Hello"
        assert (await call(app, "GET", "/v1/ai-sdk/sdk/chat-1/stream")).status == 204

    require_harness()
    result = replay([("resume", "ai-v7", resumed.body)])["resume"]
    assert result["accepted"], result["error"]
    assert result["messages"][-1]["id"] == BACKEND_ID


async def test_continuation_keeps_the_clients_message_id_over_the_backends(
    app: Any, router: respx.MockRouter
) -> None:
    backend(router, TEXT)
    previous = {
        "id": "assistant-7",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-get_time",
                "toolCallId": "c0",
                "state": "output-available",
                "input": {},
                "output": "12:00",
            },
        ],
    }
    async with running(app):
        reply = await call(app, "POST", "/v1/ai-sdk/sdk", chat(USER, previous))
    start = events_of(reply.body)[0]
    assert {k: start[k] for k in ("type", "messageId")} == {
        "type": "start",
        "messageId": "assistant-7",
    }
    assert start["messageMetadata"]["runId"] == reply.headers["x-agui-run-id"]


async def test_provider_route_still_gets_a_fresh_message_id(
    app: Any, router: respx.MockRouter
) -> None:
    router.post("https://openai.test/v1/chat/completions").mock(
        return_value=httpx.Response(200, content=b"")
    )
    async with running(app):
        reply = await call(app, "POST", "/v1/ai-sdk/gpt", chat())
    start = events_of(reply.body)[0]
    assert start["type"] == "start" and start["messageId"].startswith("msg_")


async def test_a_continuation_answering_earlier_calls_reaches_the_client(
    app: Any, router: respx.MockRouter
) -> None:
    """The ai v6 tool-approval flow through the gateway (issue 11, kind 4): the chat sends its
    assistant message with the answered approvals last, the backend's ``streamText`` answers
    the earlier calls after ``start`` (``tool-output-denied``, ``tool-output-available``), and
    those reach the client, which sets the parts of the message it continues."""
    previous = {
        "id": "assistant-7",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            *(
                {
                    "type": "tool-delete_file",
                    "toolCallId": cid,
                    "state": "approval-responded",
                    "input": {"path": f"/tmp/{cid}"},
                    "approval": {"id": f"ap-{cid}", "approved": approved},
                }
                for cid, approved in (("c0", False), ("c1", True))
            ),
        ],
    }
    async with running(app):
        await ask_approvals(app, router, "assistant-7")
        backend(
            router,
            [
                {"type": "start", "messageId": "assistant-7"},
                {"type": "tool-output-denied", "toolCallId": "c0"},
                {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}},
                *TEXT[1:],
            ],
        )
        reply = await call(app, "POST", "/v1/ai-sdk/sdk6", chat(USER, previous))
    chunks = events_of(reply.body)
    assert {"type": "tool-output-denied", "toolCallId": "c0"} in chunks
    assert {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}} in (
        chunks
    )
    require_harness()
    options = {"initial_messages": [USER, previous]}
    result = replay([("v6", "ai-v6", reply.body, options)])["v6"]
    assert result["accepted"], result["error"]
    (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
    states = {p["toolCallId"]: p["state"] for p in message["parts"] if "toolCallId" in p}
    assert states == {"c0": "output-denied", "c1": "output-available"}
    assert [p["text"] for p in message["parts"] if p["type"] == "text"] == ["Hello"]


async def test_a_resumed_continuation_answers_the_earlier_calls_once(
    app: Any, router: respx.MockRouter
) -> None:
    """The same continuation, the POST dropped at once and the chat resumed (``useChat``
    ``resume``: ``GET .../stream``, the run from its start): the resume is encoded with the
    calls the POST continued (recorded with the run), so the real ai v6 and v7 clients, resuming
    the chat whose last message is the continued one, end with both calls answered, once."""
    previous = {
        "id": "assistant-8",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            *(
                {
                    "type": "tool-delete_file",
                    "toolCallId": cid,
                    "state": "approval-responded",
                    "input": {"path": f"/tmp/{cid}"},
                    "approval": {"id": f"ap-{cid}", "approved": approved},
                }
                for cid, approved in (("c0", False), ("c1", True))
            ),
        ],
    }
    earlier = [
        {"type": "tool-output-denied", "toolCallId": "c0"},
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}},
    ]
    gate = asyncio.Event()
    async with running(app):
        await ask_approvals(app, router, "assistant-8")
        backend(router, [{"type": "start", "messageId": "assistant-8"}, *earlier, *TEXT[1:]], gate)
        first = await call(
            app, "POST", "/v1/ai-sdk/sdk6", chat(USER, previous), stop=lambda r: True
        )
        assert first.status == 200
        resumed = await call(
            app, "GET", "/v1/ai-sdk/sdk6/chat-1/stream", on_chunk=lambda chunk: gate.set()
        )
    assert resumed.status == 200
    chunks = events_of(resumed.body)
    assert [c for c in chunks if c["type"].startswith("tool-output-")] == earlier
    require_harness()
    options = {"initial_messages": [USER, previous]}
    results = replay(
        [("v6", "ai-v6", resumed.body, options), ("v7", "ai-v7", resumed.body, options)]
    )
    for name, result in results.items():
        assert result["accepted"], (name, result["error"])
        (message,) = [m for m in result["messages"] if m["role"] == "assistant"]
        states = {p["toolCallId"]: p["state"] for p in message["parts"] if "toolCallId" in p}
        assert states == {"c0": "output-denied", "c1": "output-available"}, name
        assert [p["text"] for p in message["parts"] if p["type"] == "text"] == ["Hello"], name
