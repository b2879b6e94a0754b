"""A ``resume[]`` answers only the open interrupts of its thread (issue 11 kind 7, docs/runs.md §7).

AG-UI 1.0 (ag-ui-protocol/ag-ui ``docs/concepts/interrupts.mdx``, contract rules 2 and 5;
``@ag-ui/core`` 1.0 ``ResumeEntrySchema``; ``@ag-ui/client`` 1.0.0 keeps ``pendingInterrupts``
of the last RUN_FINISHED only): an entry's ``interruptId`` references an interrupt of the
interrupted run, the thread's last; each interrupt is answered once; ``status`` is ``resolved``
or ``cancelled``. Hypothesis draws a thread's history (runs that raise interrupts, answer some,
or just finish) and a ``resume[]`` mixing open, superseded, answered, never-raised and repeated
ids (sometimes a status the schema does not have), posts it to ``POST /v1/agui/{route}`` on
SQLite and on PostgreSQL, and checks exactly the outcome the spec and docs/runs.md §7 give: a
refusal (422 ``INVALID_REQUEST`` / 409 ``INTERRUPT_ANSWERED`` / 409 ``INTERRUPT_SUPERSEDED`` /
422 ``UNKNOWN_INTERRUPT``, naming the ids) leaves the store as it was and calls no upstream; an
answer to open interrupts only is one run, one upstream request carrying the answers, its
claims recorded.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from gwtest import FAST, OPENAI_URL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.app import create_app
from gateway.config import Settings
from gateway.store import NewEvent, RunFinal, SqlRunStore
from gateway.tenancy import run_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))  # run_backends

from durable_support import call, chat_events, events_of, running
from run_backends import STORES, ManualClock, make_store

pytestmark = pytest.mark.timeout(300)

POOL = [f"i{k}" for k in range(6)]
"""Interrupt ids the drawn runs raise (each at most once in a thread)."""


@dataclass(frozen=True)
class Seeded:
    """A stored run of the thread: the interrupts it answered (claimed) and raised."""

    answers: tuple[str, ...]
    raises: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    history: tuple[Seeded, ...]
    resume: tuple[tuple[str, str], ...]  # (interruptId, status)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    ids = iter(draw(st.permutations(POOL)))
    history: list[Seeded] = []
    open_ids: tuple[str, ...] = ()
    for _ in range(draw(st.integers(0, 3))):
        some = st.lists(st.sampled_from(open_ids), min_size=1, unique=True)
        answers = tuple(draw(some)) if open_ids and draw(st.booleans()) else ()
        raises = tuple(next(ids) for _ in range(draw(st.integers(0, 2))))
        history.append(Seeded(answers, raises))
        open_ids = raises
    raised = [i for run in history for i in run.raises]
    known = st.sampled_from(raised) if raised else st.nothing()
    entry_id = st.one_of(known, known, st.sampled_from(["never-1", "never-2"]))
    if open_ids and draw(st.booleans()):  # an answer to the open interrupts, often all
        chosen = draw(st.lists(st.sampled_from(open_ids), min_size=1, unique=True))
        if draw(st.sampled_from([False] * 3 + [True])):  # and one that is not open
            chosen.append(draw(entry_id.filter(lambda i: i not in chosen)))
    else:
        chosen = draw(st.lists(entry_id, min_size=1, max_size=4, unique=True))
    if draw(st.sampled_from([False] * 7 + [True])):  # one interrupt twice
        chosen.insert(draw(st.integers(0, len(chosen))), draw(st.sampled_from(chosen)))
    statuses = st.sampled_from(["resolved", "cancelled"])
    resume = [(i, draw(statuses)) for i in chosen]
    if draw(st.sampled_from([False] * 11 + [True])):  # a status the schema does not have
        at = draw(st.integers(0, len(resume) - 1))
        resume[at] = (resume[at][0], draw(st.sampled_from(["approved", "denied", "RESOLVED"])))
    return Case(tuple(history), tuple(resume))


def expected(case: Case) -> tuple[int, str | None, list[str]]:
    """(status, error code, ids named) as the spec and docs/runs.md §7 give them."""
    if any(status not in ("resolved", "cancelled") for _, status in case.resume):
        return 422, "INVALID_REQUEST", []  # @ag-ui/core ResumeEntrySchema: z.enum
    ids = [i for i, _ in case.resume]
    twice = list(dict.fromkeys(i for i in ids if ids.count(i) > 1))
    if twice:
        return 422, "INVALID_REQUEST", twice
    answered = {i for run in case.history for i in run.answers}
    open_ids = set(case.history[-1].raises) if case.history else set()
    raised = {i for run in case.history for i in run.raises}
    for code, refused in (
        ("INTERRUPT_ANSWERED", [i for i in ids if i in answered]),
        ("INTERRUPT_SUPERSEDED", [i for i in ids if i in raised - open_ids]),
        ("UNKNOWN_INTERRUPT", [i for i in ids if i not in raised]),
    ):
        if refused:
            return (422 if code == "UNKNOWN_INTERRUPT" else 409), code, refused
    return 200, None, []


def request_body(thread: str, run_id: str, resume: tuple[tuple[str, str], ...]) -> Any:
    calls = [
        {"id": f"c-{i}", "type": "function", "function": {"name": "act", "arguments": "{}"}}
        for i in dict.fromkeys(i for i, _ in resume)
    ]
    entries = [
        {"interruptId": i, "status": s}
        | ({"payload": {"toolCallId": f"c-{i}", "result": {"ok": i}}} if s == "resolved" else {})
        for i, s in resume
    ]
    return {
        "threadId": thread,
        "runId": run_id,
        "messages": [
            {"id": f"{thread}-u1", "role": "user", "content": "Go on."},
            {"id": f"{thread}-a1", "role": "assistant", "toolCalls": calls},
        ],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
        "resume": entries,
    }


@dataclass
class Gateway:
    portal: BlockingPortal
    app: Any
    store: SqlRunStore
    clock: ManualClock
    router: respx.MockRouter
    upstream: respx.Route


@asynccontextmanager
async def _serve(kind: str, folder: Path, routes_file: Path) -> AsyncIterator[Any]:
    clock = ManualClock()
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)

    def reply(request: httpx.Request) -> httpx.Response:
        body = b"".join(chat_events(text=["Done."]))
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    upstream = router.post(OPENAI_URL).mock(side_effect=reply)
    async with make_store(kind, folder, clock) as store:
        client = httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler))
        app = create_app(Settings(config=routes_file, **FAST), store=store, http_client=client)
        async with running(app):
            yield app, store, clock, router, upstream
        await client.aclose()


@pytest.fixture(params=STORES)
def gateway(request: pytest.FixtureRequest, routes_file: Path, keys: None) -> Iterator[Gateway]:
    with tempfile.TemporaryDirectory() as folder, start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(
            _serve(request.param, Path(folder), routes_file)
        ) as (app, store, clock, router, upstream):
            yield Gateway(portal, app, store, clock, router, upstream)


async def _seed(gw: Gateway, thread: str, history: tuple[Seeded, ...]) -> None:
    """The runs as the pump stores them: RUN_STARTED, RUN_FINISHED (its outcome)."""
    for k, seeded in enumerate(history):
        gw.clock.advance(1)
        key = run_key(None, thread, f"seed-{k}")
        started = {"type": "RUN_STARTED", "threadId": thread, "runId": f"seed-{k}"}
        outcome: dict[str, Any] = {"type": "success"}
        if seeded.raises:
            interrupts = [
                {"id": i, "reason": "tool_call", "toolCallId": f"c-{i}"} for i in seeded.raises
            ]
            outcome = {"type": "interrupt", "interrupts": interrupts}
        finished = {**started, "type": "RUN_FINISHED", "outcome": outcome}
        run = await gw.store.create_run(
            run_id=key,
            thread_id=thread,
            owner="seed",
            route="gpt",
            answers=[(i, "resolved") for i in seeded.answers],
            events=[NewEvent(1, started)],
        )
        await gw.store.append_events(
            key, run.epoch, [NewEvent(2, finished)], final=RunFinal("completed")
        )
    gw.clock.advance(1)


async def _snapshot(gw: Gateway, thread: str) -> Any:
    runs = await gw.store.list_runs(thread)
    claims = await gw.store.answered_interrupts(thread, [*POOL, "never-1", "never-2"])
    return sorted(r.id for r in runs), claims


_SERIAL = iter(range(10**9))


async def _check(gw: Gateway, case: Case) -> None:
    thread = f"t{next(_SERIAL)}"
    await _seed(gw, thread, case.history)
    before = await _snapshot(gw, thread)
    calls_before = gw.upstream.call_count
    reply = await call(gw.app, "POST", "/v1/agui/gpt", request_body(thread, "answer", case.resume))
    status, code, named = expected(case)
    assert reply.status == status, (reply.status, reply.body[:300])
    if status != 200:
        body = orjson.loads(reply.body)
        assert body["error"]["code"] == code
        if code != "INVALID_REQUEST" or named:
            assert body["detail"]["interruptIds"] == named
        assert await _snapshot(gw, thread) == before  # nothing recorded, nothing claimed
        assert gw.upstream.call_count == calls_before  # no upstream request
        return
    assert [e["type"] for e in events_of(reply.body)][-1] == "RUN_FINISHED"
    assert gw.upstream.call_count == calls_before + 1
    sent = orjson.loads(gw.upstream.calls[-1].request.content)
    tool_messages = {m["tool_call_id"]: m for m in sent["messages"] if m["role"] == "tool"}
    for interrupt_id, entry_status in case.resume:
        message = tool_messages[f"c-{interrupt_id}"]  # the answer reached the upstream
        if entry_status == "resolved":
            assert orjson.loads(message["content"]) == {"ok": interrupt_id}
    runs, claims = await _snapshot(gw, thread)
    mine = run_key(None, thread, "answer")
    assert runs == sorted([*before[0], mine])
    assert claims == {**before[1], **{i: mine for i, _ in case.resume}}


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases())
def test_a_resume_answers_exactly_the_open_interrupts(gateway: Gateway, case: Case) -> None:
    gateway.portal.call(_check, gateway, case)
