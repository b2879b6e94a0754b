"""An interrupt answered through the gateway is claimed once (issue 11 kind 7, docs/runs.md §7).

N simultaneous ``POST /v1/agui/{route}`` answering one interrupt (each a new ``runId``) give
exactly one continuation (one run recorded, one upstream request, carrying the answer) and
N-1 ``409 INTERRUPT_ANSWERED``, on SQLite and on PostgreSQL; the same POST again (its
``runId``) re-joins the run that holds the claim instead of calling the upstream again; the
AI SDK endpoint claims the approval of an ``approval-responded`` tool part the same way.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from approval_turns import store_interrupt_run
from gwtest import FAST, OPENAI_URL

from gateway.app import create_app
from gateway.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))  # run_backends

from corpus import CORPUS_DIR, require_corpus
from durable_support import call, chat_events, events_of, running
from openai_responses_fixtures import completed, created
from openai_responses_fixtures import sse as responses_sse
from real_clients import replay, require_harness
from run_backends import STORES, ManualClock, make_store

pytestmark = pytest.mark.timeout(120)


def answer(run_id: str, *, interrupt_id: str = "int-1") -> dict[str, Any]:
    """A RunAgentInput answering the approval of call ``c1`` with its result."""
    return {
        "threadId": "t1",
        "runId": run_id,
        "messages": [
            {"id": "u1", "role": "user", "content": "Delete the draft."},
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "delete", "arguments": "{}"},
                    }
                ],
            },
        ],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
        "resume": [
            {
                "interruptId": interrupt_id,
                "status": "resolved",
                "payload": {"toolCallId": "c1", "result": {"deleted": True}},
            }
        ],
    }


def upstream(router: respx.MockRouter) -> respx.Route:
    def reply(request: httpx.Request) -> httpx.Response:
        body = b"".join(chat_events(text=["Deleted."]))
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    return router.post(OPENAI_URL).mock(side_effect=reply)


@pytest.fixture(params=STORES)
async def app(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    routes_file: Path,
    router: respx.MockRouter,
    keys: None,
) -> Any:
    clock = ManualClock()
    async with make_store(request.param, tmp_path, clock) as store:
        client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
        application = create_app(
            Settings(config=routes_file, **FAST), store=store, http_client=client
        )
        application.state.clock = clock  # runs created later are newer (ask)
        async with running(application):
            yield application
        await client.aclose()


async def ask(app: Any, run_id: str, *interrupt_ids: str, thread_id: str = "t1") -> None:
    """The thread's run ``run_id`` ending with the interrupts ``interrupt_ids`` (approvals of
    call ``c1``): what an answer answers (one to an interrupt never raised is 422)."""
    store = app.state.services.manager.store
    raised = [(i, "c1") for i in interrupt_ids]
    app.state.clock.advance(1)
    await store_interrupt_run(store, thread_id=thread_id, run_id=run_id, interrupts=raised)
    app.state.clock.advance(1)


@pytest.mark.parametrize("n", [2, 6])
async def test_simultaneous_answers_give_one_continuation(
    app: Any, router: respx.MockRouter, n: int
) -> None:
    route = upstream(router)
    await ask(app, "r-ask", "int-1")
    replies = await asyncio.gather(
        *(call(app, "POST", "/v1/agui/gpt", answer(f"r{k}")) for k in range(n))
    )
    statuses = sorted(reply.status for reply in replies)
    assert statuses == [200] + [409] * (n - 1)
    for reply in replies:
        if reply.status == 409:
            assert orjson.loads(reply.body)["error"]["code"] == "INTERRUPT_ANSWERED"
        else:
            assert [e["type"] for e in events_of(reply.body)][-1] == "RUN_FINISHED"
    assert route.call_count == 1
    sent = orjson.loads(route.calls[0].request.content)
    assert {"role": "tool", "tool_call_id": "c1", "content": '{"deleted":true}'} in sent["messages"]
    runs = await app.state.services.manager.store.list_runs("t1")
    assert len(runs) == 2  # the run that asked and the one continuation


async def test_a_retried_answer_rejoins_and_a_new_one_is_409(
    app: Any, router: respx.MockRouter
) -> None:
    route = upstream(router)
    await ask(app, "r-ask", "int-1")
    first = await call(app, "POST", "/v1/agui/gpt", answer("r1"))
    again = await call(app, "POST", "/v1/agui/gpt", answer("r1"))
    other = await call(app, "POST", "/v1/agui/gpt", answer("r2"))
    assert (first.status, again.status, other.status) == (200, 200, 409)
    assert events_of(again.body)[0]["runId"] == "r1"
    assert orjson.loads(other.body)["error"]["code"] == "INTERRUPT_ANSWERED"
    assert route.call_count == 1
    await ask(app, "r-ask-2", "int-2")  # the thread asks again
    fresh = await call(app, "POST", "/v1/agui/gpt", answer("r3", interrupt_id="int-2"))
    assert fresh.status == 200 and route.call_count == 2  # another interrupt: answered


async def test_ai_sdk_approval_is_claimed_once(app: Any, router: respx.MockRouter) -> None:
    route = upstream(router)
    chat = {
        "id": "chat-1",
        "trigger": "submit-message",
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Delete it."}]},
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {"type": "step-start"},
                    {
                        "type": "tool-delete",
                        "toolCallId": "c1",
                        "state": "approval-responded",
                        "input": {},
                        "approval": {"id": "ap-1", "approved": False, "reason": "keep it"},
                    },
                ],
            },
        ],
    }
    await ask(app, "r-ask", "ap-1", thread_id="chat-1")
    first = await call(app, "POST", "/v1/ai-sdk/gpt", chat)
    second = await call(app, "POST", "/v1/ai-sdk/gpt", chat)
    assert (first.status, second.status) == (200, 409)
    assert orjson.loads(second.body)["error"]["code"] == "INTERRUPT_ANSWERED"
    assert route.call_count == 1
    sent = orjson.loads(route.calls[0].request.content)
    assert {"role": "tool", "tool_call_id": "c1", "content": "keep it"} in sent["messages"]


# -- the tool call an answer is about, read from the run that raised the interrupt ----------

SDK_BACKEND = "https://agent.test/api/chat"
SDK_ROUTES = f"""
[[routes]]
name = "sdk"
upstream_url = "{SDK_BACKEND}"
protocol = "ai-sdk"
"""
APPROVAL_TURN = [
    {"type": "start", "messageId": "m1"},
    {"type": "start-step"},
    {"type": "tool-input-start", "toolCallId": "c1", "toolName": "delete_file"},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "delete_file", "input": {}},
    {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]


async def test_an_ai_sdk_approval_answer_finds_its_tool_call_in_the_stored_interrupt(
    tmp_path: Path, router: respx.MockRouter
) -> None:
    """The answer names only the interrupt (``approvalId``); the gateway finds the call (``c1``)
    on the stored RUN_FINISHED outcome and sends the AI SDK backend the tool part
    ``approval-responded`` with ``approval: {id, approved, reason}`` (ai 7.0.173
    ``ui-messages.ts``)."""
    frames = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in APPROVAL_TURN)
    route = router.post(SDK_BACKEND).mock(
        side_effect=lambda request: httpx.Response(
            200, content=frames + b"data: [DONE]\n\n", headers={"content-type": "text/event-stream"}
        )
    )
    path = tmp_path / "routes.toml"
    path.write_text(SDK_ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=path, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    first_input = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "Delete it."}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }
    async with running(app):
        first = await call(app, "POST", "/v1/agui/sdk", first_input)
        finished = events_of(first.body)[-1]
        assert finished["type"] == "RUN_FINISHED"
        assert finished["outcome"]["type"] == "interrupt"
        assert [(i["id"], i["toolCallId"]) for i in finished["outcome"]["interrupts"]] == [
            ("ap1", "c1")
        ]
        answer_input = {
            **first_input,
            "runId": "r2",
            "messages": [
                *first_input["messages"],
                {
                    "id": "m1",
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "delete_file", "arguments": "{}"},
                        }
                    ],
                },
            ],
            "resume": [
                {"interruptId": "ap1", "status": "resolved", "payload": {"reason": "go ahead"}}
            ],
        }
        second = await call(app, "POST", "/v1/agui/sdk", answer_input)
        third = await call(app, "POST", "/v1/agui/sdk", {**answer_input, "runId": "r3"})
    await client.aclose()
    assert (second.status, third.status) == (200, 409)
    assert route.call_count == 2
    sent = orjson.loads(route.calls[1].request.content)
    assert sent["messages"][1]["parts"] == [
        {"type": "step-start"},
        {
            "type": "tool-delete_file",
            "toolCallId": "c1",
            "state": "approval-responded",
            "input": {},
            "approval": {"id": "ap1", "approved": True, "reason": "go ahead"},
        },
    ]


async def test_an_interrupt_id_the_store_cannot_key_is_invalid_id(
    app: Any, router: respx.MockRouter
) -> None:
    route = upstream(router)
    reply = await call(app, "POST", "/v1/agui/gpt", answer("r1", interrupt_id="x" * 101))
    assert reply.status == 422
    assert orjson.loads(reply.body)["error"]["code"] == "INVALID_ID"
    assert route.call_count == 0


# -- a Responses MCP approval answered statelessly carries its request item -----------------

RESPONSES_BASE = "https://openai.test/v1"
RESPONSES_ROUTES = f"""
[[routes]]
name = "resp"
upstream_url = "{RESPONSES_BASE}"
protocol = "openai-responses"
model = "gpt-5-mini"
"""
MCP_APPROVAL = "openai-responses/mcp-approval-request.jsonl"


async def test_a_responses_mcp_approval_answer_sends_the_request_item_before_its_response(
    tmp_path: Path, router: respx.MockRouter
) -> None:
    """Run 1 replays the recorded MCP approval stream (vercel/ai fixture, corpus) and ends on
    its interrupt; run 2 answers it by ``resume[]`` with the history the real AG-UI client
    (``@ag-ui/client`` 1.0.0) built from run 1. The Responses request is stateless (``store:
    false``, no ``previous_response_id``), so its ``input`` must hold the upstream's
    ``mcp_approval_request`` item, every field as the upstream sent it (API reference, "Create
    a model response", ``input`` -> "MCP approval request"), then the ``mcp_approval_response``
    answering it ("MCP approval response")."""
    require_harness()
    require_corpus("openai-responses")
    payloads = [
        orjson.loads(line)
        for line in (CORPUS_DIR / MCP_APPROVAL).read_bytes().splitlines()
        if line.strip()
    ]
    [upstream_item] = [
        p["item"]
        for p in payloads
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "mcp_approval_request"
    ]
    replies = [responses_sse(*payloads), responses_sse(created(), completed())]  # run 2: done
    served: list[bytes] = []

    def reply(request: httpx.Request) -> httpx.Response:
        served.append(replies[min(len(served), 1)])
        return httpx.Response(
            200, content=served[-1], headers={"content-type": "text/event-stream"}
        )

    route = router.post(f"{RESPONSES_BASE}/responses").mock(side_effect=reply)
    path = tmp_path / "routes.toml"
    path.write_text(RESPONSES_ROUTES, encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=path, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    user = {"id": "u1", "role": "user", "content": "Shorten https://ai-sdk.dev/."}
    first_input = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [user],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }
    async with running(app):
        first = await call(app, "POST", "/v1/agui/resp", first_input)
        finished = events_of(first.body)[-1]
        assert finished["type"] == "RUN_FINISHED"
        [interrupt] = finished["outcome"]["interrupts"]
        assert interrupt["id"] == upstream_item["id"]
        [held] = replay([("r1", "agui", first.body)]).values()
        assert held["accepted"], held["error"]
        answer_input = {
            **first_input,
            "runId": "r2",
            "messages": [user, *held["messages"]],
            "resume": [{"interruptId": interrupt["id"], "status": "resolved", "payload": True}],
        }
        second = await call(app, "POST", "/v1/agui/resp", answer_input)
    await client.aclose()
    assert second.status == 200 and route.call_count == 2
    sent = orjson.loads(route.calls[1].request.content)
    assert sent["store"] is False and "previous_response_id" not in sent
    assert sent["input"][-2:] == [
        {
            "type": "mcp_approval_request",
            "id": upstream_item["id"],
            "server_label": upstream_item["server_label"],
            "name": upstream_item["name"],
            "arguments": upstream_item["arguments"],
        },
        {
            "type": "mcp_approval_response",
            "approval_request_id": upstream_item["id"],
            "approve": True,
        },
    ]
    names = [i.get("name") for i in sent["input"] if i.get("type") == "function_call"]
    assert f"mcp.{upstream_item['name']}" not in names  # the approval's call is no function_call


@pytest.mark.parametrize("approved", [True, False])
async def test_an_ai_sdk_mcp_approval_answer_sends_the_request_item_before_its_response(
    tmp_path: Path, router: respx.MockRouter, approved: bool
) -> None:
    """The same recorded MCP approval through ``/v1/ai-sdk``: the real ``ai`` 7 client keeps
    the approval as a provider-executed tool part in state ``approval-requested``; answered as
    ``addToolApprovalResponse`` leaves it (``approval-responded``, ``approval: {id, approved,
    reason?}``, ``ai`` 7.0.173 ``src/ui/chat.ts``), the next request's ``input`` ends with the
    rebuilt ``mcp_approval_request`` item and its ``mcp_approval_response``, as for the AG-UI
    client, the provider's call never a ``function_call`` nor a ``function_call_output``."""
    require_harness()
    require_corpus("openai-responses")
    payloads = [
        orjson.loads(line)
        for line in (CORPUS_DIR / MCP_APPROVAL).read_bytes().splitlines()
        if line.strip()
    ]
    [upstream_item] = [
        p["item"]
        for p in payloads
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "mcp_approval_request"
    ]
    replies = [responses_sse(*payloads), responses_sse(created(), completed())]
    served: list[bytes] = []

    def reply(request: httpx.Request) -> httpx.Response:
        served.append(replies[min(len(served), 1)])
        return httpx.Response(
            200, content=served[-1], headers={"content-type": "text/event-stream"}
        )

    route = router.post(f"{RESPONSES_BASE}/responses").mock(side_effect=reply)
    path = tmp_path / "routes.toml"
    # ``ai_sdk_major = 7``: the approval as ``tool-approval-request`` (portable output has none)
    path.write_text(RESPONSES_ROUTES + "ai_sdk_major = 7\n", encoding="utf-8")
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    settings = Settings(config=path, database_url=f"sqlite:///{tmp_path}/runs.db", **FAST)
    app = create_app(settings, http_client=client)
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Shorten it."}]}
    chat = {"id": "t1", "trigger": "submit-message", "messages": [user]}
    async with running(app):
        first = await call(app, "POST", "/v1/ai-sdk/resp", chat)
        [held] = replay([("r1", "ai-v7", first.body)]).values()
        assert held["accepted"], held["error"]
        [assistant] = held["messages"]
        [asked] = [p for p in assistant["parts"] if p.get("state") == "approval-requested"]
        assert asked["providerExecuted"] is True and asked["approval"]["id"] == upstream_item["id"]
        answer = {"id": asked["approval"]["id"], "approved": approved}
        if not approved:
            answer["reason"] = "not this one"
        asked.update(state="approval-responded", approval=answer)
        second = await call(app, "POST", "/v1/ai-sdk/resp", {**chat, "messages": [user, assistant]})
    await client.aclose()
    assert second.status == 200 and route.call_count == 2, second.body
    sent = orjson.loads(route.calls[1].request.content)
    response = {
        "type": "mcp_approval_response",
        "approval_request_id": upstream_item["id"],
        "approve": approved,
        **({} if approved else {"reason": "not this one"}),
    }
    assert sent["input"][-2:] == [
        {
            "type": "mcp_approval_request",
            "id": upstream_item["id"],
            "server_label": upstream_item["server_label"],
            "name": upstream_item["name"],
            "arguments": upstream_item["arguments"],
        },
        response,
    ]
    kinds = {i.get("type") for i in sent["input"]}
    assert not kinds & {"function_call", "function_call_output"}
