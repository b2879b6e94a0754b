"""Ids are checked at the edge (issue 15 §5): an id that is empty, longer than
``MAX_ID_LENGTH`` or holds a control character, a lone surrogate or a line separator is a 422
``INVALID_ID`` on every endpoint that takes one, before anything is stored, the same on
SQLite and PostgreSQL (a NUL used to be a 500 on PostgreSQL); every other id is kept exactly
as sent on both, and message content may hold any character (a NUL included)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import respx
from durable_support import call, events_of, running
from gwtest import FAST, OPENAI_URL, ROUTES_TOML, chunk, sse
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from run_backends import STORES, ManualClock, make_broker, make_store
from starlette.applications import Starlette

from gateway.app import create_app
from gateway.config import Settings
from gateway.ids import MAX_ID_LENGTH, REFUSED_CATEGORIES

pytestmark = pytest.mark.timeout(300)

REFUSED_SAMPLES = ["\x00", "\x01", "\x1f", "\x7f", "\x85", "\x9f", "\u2028", "\u2029", "\ud800"]
"""One character of each refused kind: NUL, C0, DEL, C1, line/paragraph separator, surrogate."""

UPSTREAM_BODY = sse(chunk({"role": "assistant", "content": "ok"}), chunk({}, "stop"), "[DONE]")


def test_the_samples_are_the_refused_categories() -> None:
    assert {unicodedata.category(c) for c in REFUSED_SAMPLES} == set(REFUSED_CATEGORIES)


@pytest.fixture(params=STORES)
async def app(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Starlette]:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test-openai")
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES_TOML, encoding="utf-8")
    router = respx.MockRouter(assert_all_called=False)
    router.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=UPSTREAM_BODY))
    client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
    async with (
        make_store(request.param, tmp_path, ManualClock()) as store,
        make_broker("memory") as broker,
    ):
        app = create_app(
            Settings(config=routes, **FAST), store=store, broker=broker, http_client=client
        )
        async with running(app):
            yield app
    await client.aclose()


def _input(thread: str, run: str, message: str = "m1", content: str = "hi") -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": message, "role": "user", "content": content}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }


def _raw(body: Any) -> bytes:
    return json.dumps(body).encode()  # ASCII escapes: a lone surrogate travels as \ud800


async def _post_raw(app: Starlette, path: str, body: Any) -> Any:
    """POST with a body that orjson could not write (lone surrogates)."""
    from gwtest import drive

    return await drive(app, path, raw=_raw(body))


bad_ids = st.one_of(
    st.just(""),
    st.integers(MAX_ID_LENGTH + 1, MAX_ID_LENGTH + 50).map(lambda n: "a" * n),
    st.tuples(
        st.text(st.characters(codec="utf-8", categories=["L", "N"]), max_size=10),
        st.sampled_from(REFUSED_SAMPLES),
        st.text(st.characters(codec="utf-8", categories=["L", "N"]), max_size=10),
    ).map("".join),
)


def _refused(reply: Any, bad: str = "") -> bool:
    """422 INVALID_ID; a lone surrogate in a JSON body is refused by the JSON parser itself
    (422 INVALID_REQUEST: pydantic reads no such string), which is as early."""
    codes = {"INVALID_ID", "INVALID_REQUEST"} if "\ud800" in bad else {"INVALID_ID"}
    return reply.status == 422 and reply.json()["error"]["code"] in codes


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bad=bad_ids, where=st.sampled_from(["threadId", "runId", "message", "tool"]))
async def test_a_bad_id_in_a_body_is_a_422_before_anything_is_stored(
    app: Starlette, bad: str, where: str
) -> None:
    body = _input("t-ok", "r-ok")
    if where in ("threadId", "runId"):
        body[where] = bad
    elif where == "message":
        body["messages"][0]["id"] = bad
    else:
        body["messages"] += [
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {"id": bad, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ]
    for path, payload in (
        ("/v1/agui/gpt", body),
        ("/api/v1/agent/runs", {"route": "gpt", "input": body}),
    ):
        reply = await _post_raw(app, path, payload)
        assert _refused(reply, bad), (path, reply.status, reply.body[:300])
        assert "\x00" not in reply.body.decode("utf-8", "replace")
    chat = {
        "id": "c-ok",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    if where == "threadId":
        chat["id"] = bad
    else:
        chat["messages"][0]["id"] = bad
    reply = await _post_raw(app, "/v1/ai-sdk/gpt", chat)
    assert _refused(reply, bad), (reply.status, reply.body[:300])
    store = app.state.services.manager.store
    assert await store.list_runs("t-ok") == []
    assert (await store.history("t-ok")).total == 0


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bad=bad_ids)
async def test_a_bad_id_in_a_url_is_a_422(app: Starlette, bad: str) -> None:
    # the ASGI path is already percent-decoded: the id is passed as the client's URL decodes
    for method, target in (
        ("GET", f"/api/v1/agent/runs/{bad}/events?runId=r1"),
        ("POST", f"/api/v1/agent/runs/{bad}/cancel?runId=r1"),
        ("GET", f"/v1/ai-sdk/gpt/{bad}/stream"),
    ):
        if not bad or "\ud800" in bad:
            continue  # an empty segment is another URL (404); a decoded URL holds no surrogate
        reply = await call(
            app, method, target.split("?")[0] + ("?runId=r1" if "?" in target else "")
        )
        assert _refused(reply), (target, reply.status, reply.body[:200])
    if bad and "\ud800" not in bad:
        for method, target in (
            ("GET", f"/api/v1/agent/runs/t1/events?runId={quote(bad)}"),
            ("POST", f"/api/v1/agent/runs/t1/cancel?runId={quote(bad)}"),
            ("GET", f"/api/v1/agent/history?threadId={quote(bad)}"),
        ):
            reply = await call(app, method, target)
            assert _refused(reply), (target, reply.status, reply.body[:200])


def _ids(*, exclude: str = "") -> st.SearchStrategy[str]:
    alphabet = st.characters(
        codec="utf-8", exclude_categories=sorted(REFUSED_CATEGORIES), exclude_characters=exclude
    )
    return st.text(alphabet, min_size=1, max_size=MAX_ID_LENGTH)


good_ids = _ids()
thread_ids = _ids(exclude="/?#")  # a path segment: '/' would be another URL (README)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(thread=thread_ids, run=good_ids, message=good_ids)
async def test_every_other_id_is_kept_exactly(
    app: Starlette, thread: str, run: str, message: str
) -> None:
    assume(message != run)  # the run's assistant item is recorded under the run id
    body = _input(thread, run, message, content="nul \x00 and \u2028 in content are fine")
    reply = await call(app, "POST", "/api/v1/agent/runs", {"route": "gpt", "input": body})
    if reply.status == 409:  # hypothesis drew this (thread, run) pair before
        return
    assert reply.status == 201, reply.body[:300]
    assert reply.json() == {"threadId": thread, "runId": run}
    # the ASGI path is percent-decoded by the server: the thread id goes in as it is
    target = f"/api/v1/agent/runs/{thread}/events?runId={quote(run, safe='')}"
    reply = await call(app, "GET", target)
    assert reply.status == 200, reply.body[:300]
    started = events_of(reply.body)[0]
    assert (started["type"], started["threadId"], started["runId"]) == ("RUN_STARTED", thread, run)
    history = await call(app, "GET", f"/api/v1/agent/history?threadId={quote(thread, safe='')}")
    items = history.json()["items"]
    user = next(i for i in items if i["id"] == message and i["role"] == "user")
    assert user["parts"][0]["text"] == "nul \x00 and \u2028 in content are fine"
