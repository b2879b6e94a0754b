"""RunStore contract, run over SQLite and PostgreSQL (issue 3 §4; docs/runs.md §1-§2)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from run_backends import ManualClock

from gateway import migrations
from gateway.store import (
    Cursor,
    InterruptAnsweredError,
    NewEvent,
    RunClosedError,
    RunEvent,
    RunExistsError,
    RunFinal,
    RunMark,
    RunNotFoundError,
    SequenceError,
    SqlRunStore,
    StaleEpochError,
)
from gateway.store.schema import metadata

pytestmark = pytest.mark.timeout(60)


def ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def batch(first: int, *events: dict[str, Any], durable: bool = True) -> list[NewEvent]:
    return [NewEvent(first + i, e, durable) for i, e in enumerate(events)]


async def new_run(store: SqlRunStore, run_id: str = "run-1", thread_id: str = "thread-1") -> Any:
    return await store.create_run(run_id=run_id, thread_id=thread_id, owner="replica-a")


async def test_migrated_database_matches_schema_metadata(store: SqlRunStore) -> None:
    def diff(conn: sa.Connection) -> list[Any]:
        return list(compare_metadata(MigrationContext.configure(conn), metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


async def test_migrations_run_twice_without_change(store: SqlRunStore) -> None:
    await migrations.upgrade(store.engine)
    async with store.engine.connect() as conn:
        version = (await conn.execute(sa.text("SELECT version_num FROM alembic_version"))).scalar()
    assert version == migrations.HEAD


async def test_create_and_get_run(store: SqlRunStore, clock: ManualClock) -> None:
    run = await store.create_run(
        run_id="r", thread_id="t", owner="a", route="chat", upstream="openai", model="gpt"
    )
    assert (run.status, run.epoch, run.last_seq, run.last_cursor) == ("queued", 1, 0, None)
    assert (run.route, run.upstream, run.model, run.lease_owner) == ("chat", "openai", "gpt", "a")
    assert run.heartbeat_at == clock.now
    assert await store.get_run("r") == run


async def test_create_run_twice_is_run_exists_error(store: SqlRunStore) -> None:
    await new_run(store)
    with pytest.raises(RunExistsError):
        await new_run(store)


async def test_unknown_run_is_not_found(store: SqlRunStore) -> None:
    with pytest.raises(RunNotFoundError):
        await store.get_run("nope")
    with pytest.raises(RunNotFoundError):
        await store.append_events("nope", 1, batch(1, ev("RUN_STARTED")))
    with pytest.raises(RunNotFoundError):
        await store.request_cancel("nope")


async def test_append_then_read_after_each_cursor(store: SqlRunStore) -> None:
    run = await new_run(store)
    events = [ev("RUN_STARTED", threadId="thread-1", runId="run-1")] + [
        ev("TEXT_MESSAGE_CONTENT", messageId="m", delta=str(i)) for i in range(9)
    ]
    await store.append_events(run.id, 1, batch(1, *events[:4]))
    updated = await store.append_events(run.id, 1, batch(5, *events[4:], durable=False))
    assert (updated.status, updated.last_cursor) == ("running", Cursor(1, 10))
    stored = await store.read_events(run.id)
    assert [s.event for s in stored] == events
    assert [s.cursor for s in stored] == [Cursor(1, i) for i in range(1, 11)]
    assert [s.durable for s in stored] == [True] * 4 + [False] * 6
    for i in range(11):
        after = await store.read_events(run.id, after=Cursor(1, i) if i else None)
        assert [s.cursor.seq for s in after] == list(range(i + 1, 11))
    page = await store.read_events(run.id, after=Cursor(1, 2), limit=3)
    assert [s.cursor.seq for s in page] == [3, 4, 5]


async def test_payload_round_trips_exactly(store: SqlRunStore) -> None:
    run = await new_run(store)
    payload = {"type": "CUSTOM", "z": 1, "a": {"y": [1, 2.5, None, True]}, "name": 'ünï😀\n"q"'}
    await store.append_events(run.id, 1, batch(1, payload))
    (stored,) = await store.read_events(run.id)
    assert stored.event == payload
    assert list(stored.event) == list(payload)  # key order kept (json, not jsonb)


async def test_append_must_continue_the_durable_end(store: SqlRunStore) -> None:
    run = await new_run(store)
    await store.append_events(run.id, 1, batch(1, ev("RUN_STARTED")))
    with pytest.raises(SequenceError):
        await store.append_events(run.id, 1, batch(3, ev("STEP_STARTED")))  # gap
    with pytest.raises(SequenceError):
        await store.append_events(run.id, 1, batch(1, ev("STEP_STARTED")))  # reuse
    with pytest.raises(SequenceError):
        await store.append_events(run.id, 1, [NewEvent(2, ev("A")), NewEvent(4, ev("B"))])
    assert [s.cursor.seq for s in await store.read_events(run.id)] == [1]


async def test_concurrent_appends_of_one_seq_store_exactly_one(store: SqlRunStore) -> None:
    run = await new_run(store)
    results = await asyncio.gather(
        *(store.append_events(run.id, 1, batch(1, ev("RUN_STARTED", n=i))) for i in range(4)),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(isinstance(r, SequenceError) for r in results if isinstance(r, BaseException))
    assert len(await store.read_events(run.id)) == 1


async def test_stale_epoch_is_fenced_after_takeover(store: SqlRunStore, clock: ManualClock) -> None:
    run = await new_run(store)
    await store.append_events(run.id, 1, batch(1, ev("RUN_STARTED"), ev("TEXT_MESSAGE_START")))
    clock.advance(60)
    taken = await store.take_over(run.id, owner="b", expected_epoch=1, stale_before=clock.now)
    assert taken is not None and (taken.epoch, taken.lease_owner, taken.last_seq) == (2, "b", 2)
    with pytest.raises(StaleEpochError):
        await store.append_events(run.id, 1, batch(3, ev("TEXT_MESSAGE_CONTENT")))
    await store.append_events(run.id, 2, batch(3, ev("RUN_ERROR", code="RUN_INTERRUPTED")))
    assert [s.cursor for s in await store.read_events(run.id)] == [
        Cursor(1, 1),
        Cursor(1, 2),
        Cursor(2, 3),
    ]


async def test_read_after_dead_epoch_cursor_continues_with_next_epoch(
    store: SqlRunStore, clock: ManualClock
) -> None:
    run = await new_run(store)
    await store.append_events(run.id, 1, batch(1, *(ev("E", n=i) for i in range(5))))
    clock.advance(60)
    await store.take_over(run.id, owner="b", expected_epoch=1, stale_before=clock.now)
    await store.append_events(run.id, 2, batch(6, ev("X"), ev("RUN_ERROR")))
    # 1.9 was published by the dead producer but never written: the next event is 2.6
    after_dead = await store.read_events(run.id, after=Cursor(1, 9))
    assert [s.cursor for s in after_dead] == [Cursor(2, 6), Cursor(2, 7)]
    after_durable = await store.read_events(run.id, after=Cursor(1, 4))
    assert [s.cursor for s in after_durable] == [Cursor(1, 5), Cursor(2, 6), Cursor(2, 7)]
    assert await store.read_events(run.id, after=Cursor(2, 7)) == []


async def test_read_wire_is_read_events_without_the_row_metadata(
    store: SqlRunStore, clock: ManualClock
) -> None:
    """``read_wire`` (what readers replay) returns the same cursors and wire dicts as
    ``read_events`` for every ``after``/``limit``, across a dead epoch."""
    run = await new_run(store)
    await store.append_events(run.id, 1, batch(1, *(ev("E", n=i, ü=[i, None]) for i in range(5))))
    clock.advance(60)
    await store.take_over(run.id, owner="b", expected_epoch=1, stale_before=clock.now)
    await store.append_events(run.id, 2, batch(6, ev("X"), ev("RUN_ERROR")))
    for after in (None, Cursor(1, 2), Cursor(1, 9), Cursor(2, 6), Cursor(2, 7)):
        for limit in (1, 3, 500):
            full = await store.read_events(run.id, after=after, limit=limit)
            wire = await store.read_wire(run.id, after=after, limit=limit)
            assert [(w.cursor, w.event) for w in wire] == [(s.cursor, s.event) for s in full]
            assert all(type(w) is RunEvent for w in wire)
    assert await store.read_wire("unknown-run") == []


async def test_take_over_is_conditional(store: SqlRunStore, clock: ManualClock) -> None:
    run = await new_run(store)
    fresh = await store.take_over(run.id, owner="b", expected_epoch=1, stale_before=clock.now)
    assert fresh is None  # heartbeat is not older than the cutoff
    clock.advance(30)
    assert (
        await store.take_over(run.id, owner="b", expected_epoch=2, stale_before=clock.now) is None
    )
    winners = await asyncio.gather(
        *(
            store.take_over(run.id, owner=f"r{i}", expected_epoch=1, stale_before=clock.now)
            for i in range(4)
        )
    )
    assert sum(w is not None for w in winners) == 1
    assert (await store.get_run(run.id)).epoch == 2


async def test_stale_runs_are_listed_by_heartbeat(store: SqlRunStore, clock: ManualClock) -> None:
    a = await new_run(store, "a")
    clock.advance(5)
    b = await new_run(store, "b")
    done = await new_run(store, "done")
    await store.append_events(done.id, 1, batch(1, ev("RUN_ERROR")), final=RunFinal("failed"))
    clock.advance(5)
    assert [r.id for r in await store.list_stale_runs(clock.now)] == ["a", "b"]
    assert (await store.heartbeat(a.id, 1)).alive
    assert [r.id for r in await store.list_stale_runs(clock.now)] == [b.id]


async def test_heartbeat_reports_fencing_and_cancel(store: SqlRunStore, clock: ManualClock) -> None:
    run = await new_run(store)
    state = await store.heartbeat(run.id, 1)
    assert (state.alive, state.cancel_requested) == (True, False)
    flagged = await store.request_cancel(run.id)
    assert flagged.cancel_requested
    assert (await store.heartbeat(run.id, 1)).cancel_requested
    clock.advance(30)
    await store.take_over(run.id, owner="b", expected_epoch=1, stale_before=clock.now)
    assert not (await store.heartbeat(run.id, 1)).alive
    assert (await store.heartbeat(run.id, 2)).alive
    assert not (await store.heartbeat("unknown", 1)).alive


async def test_final_append_ends_the_run(store: SqlRunStore, clock: ManualClock) -> None:
    run = await new_run(store)
    await store.request_cancel(run.id)
    item = {
        "id": "msg-1",
        "role": "assistant",
        "runId": run.id,
        "parts": [],
        "aliases": ["m1"],
        "visibility": {"history": True, "context": False},
    }
    usage = [{"inputTokens": 3, "outputTokens": 4}]
    ended = await store.append_events(
        run.id,
        1,
        batch(1, ev("RUN_STARTED"), ev("RUN_ERROR", code="X", message="m")),
        final=RunFinal(
            "failed", usage=usage, error={"code": "X", "message": "m"}, model="m-1", messages=[item]
        ),
    )
    assert (ended.status, ended.usage, ended.error, ended.model) == (
        "failed",
        usage,
        {"code": "X", "message": "m"},
        "m-1",
    )
    assert ended.finished_at == clock.now and ended.is_terminal and not ended.cancel_requested
    with pytest.raises(RunClosedError):
        await store.append_events(run.id, 1, batch(3, ev("X")))
    assert not (await store.heartbeat(run.id, 1)).alive
    flagged = await store.request_cancel(run.id)  # idempotent no-op once ended
    assert flagged.status == "failed" and not flagged.cancel_requested
    page = await store.history("thread-1")
    assert [i["id"] for i in page.items] == ["msg-1"] and "aliases" not in page.items[0]


def item(mid: str, role: str = "user", **extra: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "role": role,
        "parts": [{"type": "text", "text": mid}],
        "visibility": {"history": True, "context": True},
        **extra,
    }


async def test_add_messages_skips_known_ids_and_aliases(store: SqlRunStore) -> None:
    assert (
        await store.add_messages("t", [item("u1"), item("a1", "assistant", aliases=["m-a", "m-b"])])
        == 2
    )
    assert await store.add_messages("t", [item("u1"), item("m-b", "assistant"), item("u2")]) == 1
    page = await store.history("t")
    assert [(i["id"], i["sequence"]) for i in page.items] == [("u1", 1), ("a1", 2), ("u2", 3)]


async def test_history_pages_backwards(store: SqlRunStore) -> None:
    await store.add_messages("t", [item(f"m{i}") for i in range(1, 8)])
    await store.add_messages("other", [item("x")])
    last = await store.history("t", limit=3)
    assert last.to_json() | {"items": None} == {
        "items": None,
        "total": 7,
        "start_sequence": 5,
        "end_sequence": 7,
        "next_before_sequence": 5,
        "has_more": True,
    }
    assert [i["id"] for i in last.items] == ["m5", "m6", "m7"]
    middle = await store.history("t", limit=3, before_sequence=5)
    assert [i["sequence"] for i in middle.items] == [2, 3, 4] and middle.next_before_sequence == 2
    first = await store.history("t", limit=3, before_sequence=2)
    assert [i["id"] for i in first.items] == ["m1"]
    assert (first.has_more, first.next_before_sequence, first.total) == (False, None, 7)
    assert (await store.history("t", limit=10_000)).items[0]["id"] == "m1"  # clamped to 200
    assert len((await store.history("t", limit=0)).items) == 1
    empty = await store.history("unknown")
    assert empty.to_json() == {
        "items": [],
        "total": 0,
        "start_sequence": None,
        "end_sequence": None,
        "next_before_sequence": None,
        "has_more": False,
    }


async def test_a_run_keeps_the_tool_calls_it_continues(store: SqlRunStore) -> None:
    """``continues`` (issue 11 kind 4: the calls an AI SDK continuation continues, what its
    resumes build the encoder with) is stored as given, in order; a run without it has ``()``."""
    created = await store.create_run(
        run_id="r1", thread_id="t", owner="a", message_id="msg", continues=["c2", "c0", "c1"]
    )
    plain = await store.create_run(run_id="r2", thread_id="t", owner="a")
    assert created.continues == ("c2", "c0", "c1") and plain.continues == ()
    assert (await store.get_run("r1")).continues == ("c2", "c0", "c1")
    assert (await store.get_run("r2")).continues == ()
    listed = {r.id: r.continues for r in await store.list_runs("t")}
    assert listed == {"r1": ("c2", "c0", "c1"), "r2": ()}


async def test_continuation_of_an_assistant_message_keeps_earlier_parts(store: SqlRunStore) -> None:
    for n, run_id in enumerate(("r1", "r2"), start=1):
        await store.create_run(run_id=run_id, thread_id="t", owner="a", message_id="msg")
        part = {"type": "text", "text": f"part {n}"}
        await store.append_events(
            run_id,
            1,
            batch(1, ev("RUN_FINISHED")),
            final=RunFinal(
                "completed",
                messages=[{"id": "msg", "role": "assistant", "runId": run_id, "parts": [part]}],
            ),
        )
    (only,) = (await store.history("t")).items
    assert [p["text"] for p in only["parts"]] == ["part 1", "part 2"] and only["runId"] == "r2"


async def test_list_runs_of_a_thread(store: SqlRunStore, clock: ManualClock) -> None:
    for run_id in ("r1", "r2", "r3"):
        await new_run(store, run_id)
        clock.advance(1)
    await new_run(store, "elsewhere", thread_id="other")
    await store.append_events("r3", 1, batch(1, ev("RUN_FINISHED")), final=RunFinal("completed"))
    assert [r.id for r in await store.list_runs("thread-1")] == ["r3", "r2", "r1"]
    assert [r.id for r in await store.list_runs("thread-1", active_only=True)] == ["r2", "r1"]


async def test_list_threads_of_a_tenant_newest_run_first(
    store: SqlRunStore, clock: ManualClock
) -> None:
    async def run(run_id: str, thread_id: str, tenant: str | None, route: str = "chat") -> None:
        await store.create_run(
            run_id=run_id, thread_id=thread_id, owner="a", tenant=tenant, route=route
        )
        clock.advance(1)

    await run("acme\x1ft1\x1fr1", "acme\x1ft1", "acme")
    await run("acme\x1ft2\x1fr1", "acme\x1ft2", "acme", route="other")
    await run("acme\x1ft1\x1fr2", "acme\x1ft1", "acme")
    await run("beta\x1ft1\x1fr1", "beta\x1ft1", "beta")
    await run("t9\x1fr1", "t9", None)
    listed = await store.list_threads(tenant="acme")
    assert [(t.thread_id, t.runs) for t in listed] == [("acme\x1ft1", 2), ("acme\x1ft2", 1)]
    assert listed[0].public_thread_id == "t1"
    assert listed[0].last_run_at > listed[1].last_run_at
    only_chat = await store.list_threads(tenant="acme", routes=["chat"])
    assert [t.thread_id for t in only_chat] == ["acme\x1ft1"]
    assert [t.thread_id for t in await store.list_threads(tenant=None)] == ["t9"]
    assert [t.thread_id for t in await store.list_threads(tenant="acme", limit=1)] == ["acme\x1ft1"]
    assert await store.list_threads(tenant="nobody") == []


async def test_purge_removes_old_ended_runs_and_idle_threads(
    store: SqlRunStore, clock: ManualClock
) -> None:
    old = await new_run(store, "old", thread_id="t-old")
    await store.add_messages("t-old", [item("u")])
    await store.append_events(
        old.id, 1, batch(1, ev("RUN_STARTED"), ev("RUN_FINISHED")), final=RunFinal("completed")
    )
    live = await new_run(store, "live", thread_id="t-live")
    clock.advance(3600)
    recent = await new_run(store, "recent", thread_id="t-recent")
    await store.append_events(
        recent.id, 1, batch(1, ev("RUN_FINISHED")), final=RunFinal("completed")
    )
    result = await store.purge(clock.now - timedelta(seconds=60))
    assert (result.runs, result.events, result.threads, result.messages) == (1, 2, 1, 1)
    with pytest.raises(RunNotFoundError):
        await store.get_run("old")
    assert (await store.history("t-old")).total == 0
    assert (await store.get_run(live.id)).status == "queued"
    assert len(await store.read_events(recent.id)) == 1


# -- interrupt answers: claimed once (issue 11 kind 7, docs/runs.md §7) -------------------------


async def test_an_interrupt_is_answered_once(store: SqlRunStore) -> None:
    first = await store.create_run(
        run_id="r1", thread_id="t", owner="a", answers=[("int-1", "resolved")]
    )
    with pytest.raises(InterruptAnsweredError) as refused:
        await store.create_run(
            run_id="r2", thread_id="t", owner="a", answers=[("int-1", "cancelled")]
        )
    assert refused.value.code == "INTERRUPT_ANSWERED" and refused.value.status == 409
    assert refused.value.interrupt_ids == ("int-1",)
    with pytest.raises(RunNotFoundError):  # nothing recorded for the refused answer
        await store.get_run("r2")
    assert await store.answered_interrupts("t", ["int-1", "int-2"]) == {"int-1": first.id}
    # the same interrupt id on another thread is another interrupt
    await store.create_run(run_id="r3", thread_id="t2", owner="a", answers=[("int-1", "resolved")])


async def test_a_refused_answer_claims_none_of_its_interrupts(store: SqlRunStore) -> None:
    await store.create_run(run_id="r1", thread_id="t", owner="a", answers=[("b", "resolved")])
    with pytest.raises(InterruptAnsweredError) as refused:
        await store.create_run(
            run_id="r2", thread_id="t", owner="a", answers=[("a", "resolved"), ("b", "resolved")]
        )
    assert refused.value.interrupt_ids == ("b",)
    assert await store.answered_interrupts("t", ["a", "b"]) == {"b": "r1"}
    with pytest.raises(InterruptAnsweredError):  # one request naming an interrupt twice
        await store.create_run(
            run_id="r3", thread_id="t", owner="a", answers=[("c", "resolved"), ("c", "resolved")]
        )
    assert await store.answered_interrupts("t", ["c"]) == {}


async def test_a_retry_of_the_answering_run_is_run_exists(store: SqlRunStore) -> None:
    await store.create_run(run_id="r1", thread_id="t", owner="a", answers=[("i", "resolved")])
    with pytest.raises(RunExistsError):  # the same runId: a retry, which the endpoint re-joins
        await store.create_run(run_id="r1", thread_id="t", owner="a", answers=[("i", "resolved")])


@pytest.mark.parametrize("n", [2, 8])
async def test_simultaneous_answers_give_one_run(store: SqlRunStore, n: int) -> None:
    async def answer(k: int) -> Any:
        return await store.create_run(
            run_id=f"r{k}", thread_id="t", owner="a", answers=[("int-1", "resolved")]
        )

    results = await asyncio.gather(*(answer(k) for k in range(n)), return_exceptions=True)
    created = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, InterruptAnsweredError)]
    assert len(created) == 1 and len(refused) == n - 1, results
    assert await store.answered_interrupts("t", ["int-1"]) == {"int-1": created[0].id}
    assert [run.id for run in await store.list_runs("t")] == [created[0].id]


@pytest.mark.parametrize("n", [2, 6])
async def test_simultaneous_answers_in_separate_transactions_give_one_run(
    store: SqlRunStore, clock: ManualClock, n: int
) -> None:
    """Without the group writer (as from several replicas) each answer is its own transaction:
    the database's key is the compare-and-set (PostgreSQL: the later inserts wait, then
    fail)."""
    single = SqlRunStore(store.engine, clock=clock, group_commit=False)  # shares the engine

    async def answer(k: int) -> Any:
        return await single.create_run(
            run_id=f"r{k}", thread_id="t", owner=f"replica-{k}", answers=[("int-1", "resolved")]
        )

    results = await asyncio.gather(*(answer(k) for k in range(n)), return_exceptions=True)
    created = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, InterruptAnsweredError)]
    assert len(created) == 1 and len(refused) == n - 1, results
    assert [run.id for run in await store.list_runs("t")] == [created[0].id]


async def test_purge_drops_the_answers_of_purged_threads(
    store: SqlRunStore, clock: ManualClock
) -> None:
    await store.create_run(run_id="r1", thread_id="t", owner="a", answers=[("i", "resolved")])
    await store.append_events(
        "r1",
        1,
        batch(1, ev("RUN_STARTED"), ev("RUN_FINISHED")),
        final=RunFinal(status="completed"),
    )
    clock.advance(3600)
    await store.purge(clock.now)
    assert await store.answered_interrupts("t", ["i"]) == {}


async def test_get_runs_answers_the_known_ids_in_one_call(store: SqlRunStore) -> None:
    """``RunStore.get_runs`` (the batched idle re-check, issue 13 item 5): every known id's
    record as ``get_run`` gives it, unknown ids left out, repeats once, over more ids than one
    ``IN`` list holds; ``get_run_marks`` the same runs' status and durable end."""
    from gateway.store.sql import GET_RUNS_CHUNK

    await new_run(store, "run-a")
    await new_run(store, "run-b")
    await new_run(store, "run-c")
    await store.append_events("run-b", 1, batch(1, ev("RUN_STARTED")))
    await store.append_events(
        "run-c",
        1,
        batch(1, ev("RUN_STARTED"), ev("RUN_FINISHED")),
        final=RunFinal(status="completed"),
    )
    assert await store.get_runs([]) == {}
    filler = [f"nope-{i}" for i in range(2 * GET_RUNS_CHUNK)]
    ids = ["run-a", *filler[:GET_RUNS_CHUNK], "run-b", *filler[GET_RUNS_CHUNK:], "run-c", "run-a"]
    got = await store.get_runs(ids)
    assert set(got) == {"run-a", "run-b", "run-c"}
    for run_id in got:
        assert got[run_id] == await store.get_run(run_id)
    assert (got["run-b"].last_cursor, got["run-b"].is_terminal) == (Cursor(1, 1), False)
    assert (got["run-c"].last_cursor, got["run-c"].is_terminal) == (Cursor(1, 2), True)
    assert got["run-a"].last_cursor is None
    assert await store.get_runs({"nope"}) == {}
    marks = await store.get_run_marks(ids)  # the light read: status and durable end only
    assert marks == {
        run_id: RunMark(run_id, run.status, run.last_epoch, run.last_seq)
        for run_id, run in got.items()
    }
    assert await store.get_run_marks([]) == {} == await store.get_run_marks({"nope"})
