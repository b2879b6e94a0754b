"""Identity across turns for ids the store refuses (issue 11, kind 1): the provider gets them
back.

An upstream may choose ids the run store refuses (``gateway.ids.id_problem``: over 100
characters, NUL or another control character, a lone surrogate, U+2028); the gateway sends
them on as ``up-<32 hex>`` (``gateway/upstream_ids.py``). Hypothesis draws such ids (random
lengths up to 300 characters, random characters, NUL and other control characters, surrogate
pairs written as JSON ``\\uXXXX`` escapes, unicode, ``~``), mixed with acceptable ones, and
reused: by several calls of one turn (so the gateway derives ``<id>~<n>-<8 hex>``, which may
itself grow past the bound), by the assistant message, and again in the next turn's reply.

Turn 1 comes from an AI SDK backend (through the ``/v1/agui`` and ``/v1/ai-sdk`` endpoints) and
from an AG-UI runtime (forwarded), read by the real ``@ag-ui/client`` 1.0.0 and ``ai`` 7
clients (``tests/harness``). Turn 2 is what those clients hold, posted back; respx sees what
each provider gets: exactly its own ids, on every request path (the AG-UI and AI SDK requests
forwarded as bytes, the AG-UI request converted for the AI SDK backend, Chat Completions,
Responses, Anthropic and Gemini), on SQLite and on PostgreSQL, where the mapping is kept. The
turn-2 reply reusing the same ids gets AG-UI ids the thread does not hold yet.

Expected values come from the drawn ids (what the upstream sent) and the documented id rules
(``agui_codecs.identity.derived_id``, ``gateway.upstream_ids.safe_id``), never from our output.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from gwtest import FAST, drive
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs import jsontext
from agui_codecs.identity import derived_id
from gateway.app import create_app
from gateway.config import Settings
from gateway.ids import id_problem
from gateway.upstream_ids import safe_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))  # run_backends

from durable_support import running
from run_backends import STORES, ManualClock, make_store

pytestmark = pytest.mark.timeout(600)

SDK_URL = "https://agent.test/api/chat"
AGUI_URL = "https://runtime.test/agent"
CHAT = "https://openai.test/v1"
RESP = "https://responses.test/v1"
ANTH = "https://anthropic.test/v1"
GEM = "https://gemini.test/v1beta"

ROUTES = f"""
[[routes]]
name = "sdk"
upstream_url = "{SDK_URL}"
protocol = "ai-sdk"

[[routes]]
name = "rt"
upstream_url = "{AGUI_URL}"
protocol = "agui"

[[routes]]
name = "oc"
upstream_url = "{CHAT}"
protocol = "openai-chat"
model = "gpt-4o-mini"

[[routes]]
name = "resp"
upstream_url = "{RESP}"
protocol = "openai-responses"
model = "gpt-4o-mini"

[[routes]]
name = "an"
upstream_url = "{ANTH}"
protocol = "anthropic"
model = "claude-sonnet-4-5"

[[routes]]
name = "gem"
upstream_url = "{GEM}"
protocol = "gemini"
model = "gemini-2.0-flash"
"""

SETTINGS = settings(
    deadline=None,
    max_examples=6,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

_ODD = ["\x00", "\x1f", "\x7f", "\u2028", "~", "é", "\U0001f600", "-", "\ud83d\ude00"]
"""NUL and other refused characters, and a surrogate pair (written as two ``\\uXXXX`` escapes:
one character once read). A *lone* surrogate is not drawn: every decoder replaces it with
U+FFFD before the gateway sees the id (``agui_codecs.surrogates.scrub_event``)."""
_PIECES = st.one_of(st.characters(exclude_categories=["Cs"]), st.sampled_from(_ODD))


def _texts(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    pieces = st.lists(_PIECES, min_size=min_size, max_size=max_size)
    return pieces.map(lambda p: _as_sent("".join(p))).filter(bool)


def _as_sent(value: str) -> str:
    """The id the provider means once its JSON is read (``\\ud83d\\ude00`` is one character)."""
    return str(jsontext.loads(json.dumps(value)))


PROVIDER_IDS = st.one_of(
    _texts(1, 300),
    _texts(95, 120),  # around the 100 bound
    st.from_regex(r"call_[0-9]", fullmatch=True),  # acceptable: kept as it is
)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(the assistant's message id, the tool call ids of one turn): drawn from a small pool,
    so ids repeat within the turn and between kinds; every turn reuses them."""
    pool = draw(st.lists(PROVIDER_IDS, min_size=1, max_size=3, unique=True))
    calls = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
    message_id = draw(st.one_of(st.sampled_from(pool), PROVIDER_IDS))
    return message_id, calls


def sse(*items: Any) -> bytes:
    """SSE frames as an upstream writes them (``ensure_ascii``: lone surrogates escaped)."""
    out = b""
    for item in items:
        data = item if isinstance(item, str) else json.dumps(item, ensure_ascii=True)
        out += b"data: " + data.encode() + b"\n\n"
    return out


def ui_stream(message_id: str, calls: list[str]) -> bytes:
    """An AI SDK UI message stream: one step per call of ``lookup``, then text."""
    chunks: list[Any] = [{"type": "start", "messageId": message_id}]
    for n, call in enumerate(calls):
        chunks += [
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": call, "toolName": "lookup"},
            {
                "type": "tool-input-available",
                "toolCallId": call,
                "toolName": "lookup",
                "input": {"n": n},
            },
            {"type": "tool-output-available", "toolCallId": call, "output": {"r": n}},
            {"type": "finish-step"},
        ]
    chunks += [
        {"type": "start-step"},
        {"type": "text-start", "id": "0"},
        {"type": "text-delta", "id": "0", "delta": "done"},
        {"type": "text-end", "id": "0"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]
    return sse(*chunks, "[DONE]")


def agui_stream(message_id: str, calls: list[str]) -> bytes:
    """An AG-UI runtime's run: a text message, then each call with its result."""
    events: list[Any] = [
        {"type": "RUN_STARTED", "threadId": "x", "runId": "x"},
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": "looking"},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]
    for n, call in enumerate(calls):
        events += [
            {
                "type": "TOOL_CALL_START",
                "toolCallId": call,
                "toolCallName": "lookup",
                "parentMessageId": message_id,
            },
            {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps({"n": n})},
            {"type": "TOOL_CALL_END", "toolCallId": call},
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": f"res-{n}",
                "toolCallId": call,
                "content": json.dumps({"r": n}),
                "role": "tool",
            },
        ]
    events.append({"type": "RUN_FINISHED", "threadId": "x", "runId": "x"})
    return sse(*events)


CHAT_REPLY = sse(
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "ok"}}]},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    "[DONE]",
)


def gateway_ids(provider_ids: list[str]) -> dict[str, str]:
    """AG-UI id -> provider id, for every id the documented rules can give these provider
    ids: the id itself or ``derived_id(id, n)``, as ``safe_id`` of it when refused."""
    out: dict[str, str] = {}
    for provider in provider_ids:
        for candidate in [provider, *(derived_id(provider, n) for n in range(2, 12))]:
            agui = candidate if id_problem(candidate) is None else safe_id(candidate)
            out[agui] = provider
    return out


def restored(value: Any, mapping: dict[str, str], key: str | None = None) -> Any:
    """``value`` with every string under an id key (``…id`` / ``…Id``) mapped back."""
    if isinstance(value, str):
        named = key is not None and key.lower().endswith("id")
        return mapping.get(value, value) if named else value
    if isinstance(value, dict):
        return {k: restored(v, mapping, k) for k, v in value.items()}
    if isinstance(value, list):
        return [restored(v, mapping, key) for v in value]
    return value


def id_values(value: Any, key: str | None = None) -> list[str]:
    """Every string under an id key of a JSON value, in document order."""
    if isinstance(value, str):
        return [value] if key is not None and key.lower().endswith(("id", "ids")) else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in id_values(v, k)]
    if isinstance(value, list):
        return [s for v in value for s in id_values(v, key)]
    return []


def last_body(route: respx.Route) -> Any:
    return jsontext.loads(route.calls.last.request.content)


def run_input(thread: str, run: str, messages: list[Any]) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@given(scenario=scenarios())
@SETTINGS
def test_each_provider_gets_its_refused_ids_back(
    store_kind: str, tmp_path: Path, scenario: tuple[str, list[str]]
) -> None:
    require_harness()
    asyncio.run(_two_turns(store_kind, tmp_path / uuid.uuid4().hex, *scenario))


async def _two_turns(kind: str, tmp: Path, message_id: str, calls: list[str]) -> None:
    tmp.mkdir(parents=True)
    routes = tmp / "routes.toml"
    routes.write_text(ROUTES, encoding="utf-8")
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
    sdk = router.post(SDK_URL).mock(
        side_effect=lambda r: httpx.Response(200, content=ui_stream(message_id, calls))
    )
    rt = router.post(AGUI_URL).mock(
        side_effect=lambda r: httpx.Response(200, content=agui_stream(message_id, calls))
    )
    oc = router.post(f"{CHAT}/chat/completions").mock(
        return_value=httpx.Response(200, content=CHAT_REPLY)
    )
    builders = {
        "resp": router.post(f"{RESP}/responses").mock(return_value=httpx.Response(400)),
        "an": router.post(f"{ANTH}/messages").mock(return_value=httpx.Response(400)),
        "gem": router.post(url__startswith=GEM).mock(return_value=httpx.Response(400)),
    }
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    thread, chat_id = f"t-{uuid.uuid4().hex}", f"c-{uuid.uuid4().hex}"
    thread_rt = f"t-{uuid.uuid4().hex}"
    user = {"id": "u1", "role": "user", "content": "look it up"}
    chat: dict[str, Any] = {
        "id": chat_id,
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}],
    }
    async with make_store(kind, tmp, ManualClock()) as store:
        app = create_app(Settings(config=routes, **FAST), store=store, http_client=client)
        async with running(app):
            first = [
                await drive(app, "/v1/agui/sdk", run_input(thread, "r1", [user])),
                await drive(app, "/v1/ai-sdk/sdk", chat),
                await drive(app, "/v1/agui/rt", run_input(thread_rt, "r1", [user])),
            ]
            jobs = [
                ("agui", "agui", first[0].body),
                ("ai", "ai-v7", first[1].body),
                ("rt", "agui", first[2].body),
            ]
            results = await asyncio.to_thread(replay, jobs)
            for job in results.values():
                assert job["accepted"], job["error"]
            history = results["agui"]["messages"]
            rt_history = results["rt"]["messages"]
            (assistant,) = [m for m in results["ai"]["messages"] if m["role"] == "assistant"]
            again = {"id": "u2", "role": "user", "content": "again"}
            turn2 = run_input(thread, "r2", [user, *history, again])
            chat2 = {
                **chat,
                "messages": [
                    *chat["messages"],
                    assistant,
                    {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]},
                ],
            }
            chat_raw = json.dumps(chat2, ensure_ascii=True).encode()
            rt_turn2 = run_input(thread_rt, "r2", [user, *rt_history, again])
            rt_raw = json.dumps(rt_turn2, ensure_ascii=True).encode()

            events = (await drive(app, "/v1/agui/sdk", turn2)).data()
            sdk_converted = last_body(sdk)
            for name in ("oc", *builders):
                await drive(app, f"/v1/agui/{name}", {**turn2, "runId": f"r2-{name}"})
            await drive(app, "/v1/ai-sdk/sdk", raw=chat_raw)
            sdk_forwarded = last_body(sdk)
            await drive(app, "/v1/agui/rt", raw=rt_raw)
            rt_forwarded = last_body(rt)
    await client.aclose()

    mapping = gateway_ids([message_id, *calls])
    held = {s for s in id_values(history) + id_values(assistant) + id_values(rt_history)}
    ours = {h for h in held if mapping.get(h, h) != h}  # AG-UI ids that are not the provider's
    # the bodies forwarded as bytes: the client's JSON with the provider's ids in place
    assert sdk_forwarded == restored(jsontext.loads(chat_raw), mapping)
    assert rt_forwarded == restored(jsontext.loads(rt_raw), mapping)
    # converted: each tool part / call / result names the provider's call id, in order
    sdk_calls = [
        p["toolCallId"] for m in sdk_converted["messages"] for p in m["parts"] if "toolCallId" in p
    ]
    assert sdk_calls == calls
    chat_body = last_body(oc)
    sent_calls = [c["id"] for m in chat_body["messages"] for c in m.get("tool_calls") or ()]
    assert sent_calls == calls
    assert [m["tool_call_id"] for m in chat_body["messages"] if m["role"] == "tool"] == calls
    anth = [
        b
        for m in last_body(builders["an"])["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
    ]
    assert [b["id"] for b in anth if b["type"] == "tool_use"] == calls
    assert [b["tool_use_id"] for b in anth if b["type"] == "tool_result"] == calls
    items = last_body(builders["resp"])["input"]
    assert [i["call_id"] for i in items if i.get("type") == "function_call"] == calls
    assert [i["call_id"] for i in items if i.get("type") == "function_call_output"] == calls
    for body in (sdk_converted, chat_body, *(last_body(r) for r in builders.values())):
        assert not set(id_values(body)) & ours, "a gateway id reached a provider"
    # turn 2's reply reuses the ids: its entities get ids the thread does not hold
    new_ids = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert len(new_ids) == len(calls) and not set(new_ids) & held, (new_ids, held)
