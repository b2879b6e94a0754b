"""Group commit (issue 13 item 1): the writes of many runs share one transaction, and each
run's outcome is the one it would have alone (``docs/runs.md`` §1 seqs continue the durable
end, §4 writes are fenced by the epoch). Over both stores (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.store import (
    NewEvent,
    RunExistsError,
    RunFinal,
    SequenceError,
    SqlRunStore,
    StaleEpochError,
)
from gateway.store.schema import events as events_t

# One op per step of a run's writer: a good append of n events, an append that skips a seq
# (refused: SequenceError), an append from an older epoch (refused: StaleEpochError), or a
# heartbeat.
ops = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 5)),
    st.tuples(st.just("gap"), st.integers(1, 3)),
    st.just(("stale", 1)),
    st.just(("heartbeat", 0)),
)
plans = st.lists(st.lists(ops, min_size=1, max_size=6), min_size=1, max_size=6)


def delta(seq: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{seq}"}


async def new_run(store: SqlRunStore, *, epoch: int = 1) -> str:
    run_id = f"r_{uuid.uuid4().hex[:12]}"
    await store.create_run(run_id=run_id, thread_id=f"t_{run_id}", owner="a")
    if epoch > 1:  # an older epoch exists: writes of epoch 1 are fenced
        record = await store.get_run(run_id)
        stale_before = store.now()
        async with store.engine.begin() as conn:
            await conn.execute(
                sa.text("UPDATE runs SET heartbeat_at = :t WHERE id = :id"),
                {"t": stale_before.replace(year=2000), "id": run_id},
            )
        taken = await store.take_over(
            run_id, owner="b", expected_epoch=record.epoch, stale_before=stale_before
        )
        assert taken is not None
    return run_id


async def play(store: SqlRunStore, run_id: str, epoch: int, plan: list[tuple[str, int]]) -> Any:
    """Run ``plan`` as one run's writer would (each write awaited before the next); return
    (outcomes, the events that must be stored)."""
    seq = 0
    outcomes: list[str] = []
    stored: list[int] = []
    for kind, n in plan:
        if kind == "heartbeat":
            state = await store.heartbeat(run_id, epoch)
            outcomes.append(f"alive={state.alive}")
            continue
        start = seq + 1 + (n if kind == "gap" else 0)
        count = n if kind == "append" else 1
        batch = [NewEvent(s, delta(s)) for s in range(start, start + count)]
        try:
            await store.append_events(run_id, epoch - 1 if kind == "stale" else epoch, batch)
        except SequenceError:
            outcomes.append("sequence")
        except StaleEpochError:
            outcomes.append("stale")
        else:
            outcomes.append("ok")
            seq = batch[-1].seq
            stored += [new.seq for new in batch]
    return outcomes, stored


def expected(plan: list[tuple[str, int]], epoch: int) -> list[str]:
    """What each op of ``plan`` gets with a store of its own (the model: no group)."""
    out = []
    for kind, _n in plan:
        if kind == "heartbeat":
            out.append("alive=True")
        elif kind == "append":
            out.append("ok")
        elif kind == "gap":
            out.append("sequence")
        else:  # an epoch older than the run's is fenced; epoch 0 does not exist either
            out.append("stale")
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans, epochs=st.lists(st.integers(1, 2), min_size=6, max_size=6))
async def test_each_run_gets_the_outcome_it_would_get_alone(
    store: SqlRunStore, plan: list[list[tuple[str, int]]], epochs: list[int]
) -> None:
    runs = [await new_run(store, epoch=epochs[i]) for i in range(len(plan))]
    results = await asyncio.gather(
        *(play(store, run_id, epochs[i], plan[i]) for i, run_id in enumerate(runs))
    )
    for i, run_id in enumerate(runs):
        outcomes, seqs = results[i]
        assert outcomes == expected(plan[i], epochs[i])
        stored = await store.read_events(run_id)
        assert [e.cursor.seq for e in stored] == seqs
        assert all(e.cursor.epoch == epochs[i] for e in stored)
        assert [e.event for e in stored] == [delta(s) for s in seqs]
        assert (await store.get_run(run_id)).last_seq == (seqs[-1] if seqs else 0)


async def test_concurrent_appends_of_many_runs_share_one_transaction(store: SqlRunStore) -> None:
    assert store.group is not None
    runs = [await new_run(store) for _ in range(8)]
    before = store.group.groups
    await asyncio.gather(
        *(store.append_events(r, 1, [NewEvent(1, delta(1)), NewEvent(2, delta(2))]) for r in runs)
    )
    assert store.group.groups == before + 1
    for run_id in runs:
        assert [e.cursor.seq for e in await store.read_events(run_id)] == [1, 2]


async def test_a_groups_flushes_update_their_runs_in_one_statement(store: SqlRunStore) -> None:
    """The non-terminal appends of a group's runs are one conditional UPDATE (issue 13: a
    statement per run per flush was most of a flush's cost); a fenced run among them, and a
    terminal append beside them, still get their own outcome."""
    assert store.group is not None
    runs = [await new_run(store) for _ in range(5)]
    stale = await new_run(store, epoch=2)
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(" ".join(statement.split()[:2]))

    sa.event.listen(store.engine.sync_engine, "before_cursor_execute", count)
    try:
        results = await asyncio.gather(
            *(
                store.append_events(r, 1, [NewEvent(1, delta(1)), NewEvent(2, delta(2))])
                for r in runs
            ),
            store.append_events(stale, 1, [NewEvent(1, delta(1))]),
            return_exceptions=True,
        )
    finally:
        sa.event.remove(store.engine.sync_engine, "before_cursor_execute", count)
    assert [r.last_seq for r in results[:5]] == [2] * 5  # type: ignore[union-attr]
    assert isinstance(results[5], StaleEpochError)
    assert statements.count("UPDATE runs") == 1
    for run_id in runs:
        assert [e.cursor.seq for e in await store.read_events(run_id)] == [1, 2]
        assert (await store.get_run(run_id)).status == "running"
    assert await store.read_events(stale) == []


async def test_a_creations_first_event_joins_the_groups_insert(store: SqlRunStore) -> None:
    """A run created with its RUN_STARTED in a group with other runs' appends: its event row is
    in the group's one multi-row INSERT, and it is stored as if created alone."""
    assert store.group is not None
    runs = [await new_run(store) for _ in range(3)]
    started = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(" ".join(statement.split()[:3]))

    created_id = f"r_{uuid.uuid4().hex[:12]}"
    sa.event.listen(store.engine.sync_engine, "before_cursor_execute", count)
    try:
        *_, created = await asyncio.gather(
            *(store.append_events(r, 1, [NewEvent(1, delta(1))]) for r in runs),
            store.create_run(
                run_id=created_id,
                thread_id=f"t_{created_id}",
                owner="a",
                events=[NewEvent(1, started, durable=True)],
            ),
        )
    finally:
        sa.event.remove(store.engine.sync_engine, "before_cursor_execute", count)
    assert statements.count("INSERT INTO events") == 1
    assert created.last_seq == 1 and created.status == "running"
    stored = await store.read_events(created_id)
    assert [(e.cursor.seq, e.event, e.durable) for e in stored] == [(1, started, True)]
    for run_id in runs:
        assert [e.cursor.seq for e in await store.read_events(run_id)] == [1]


async def test_a_stored_seq_fails_only_its_own_append(store: SqlRunStore) -> None:
    """An event row already at the batch's seq (the insert conflicts, which aborts the group's
    transaction): the group is rerun one by one and only that run's append fails."""
    good, bad = await new_run(store), await new_run(store)
    async with store.engine.begin() as conn:
        await conn.execute(
            sa.insert(events_t).values(
                run_id=bad,
                seq=1,
                epoch=1,
                type="TEXT_MESSAGE_CONTENT",
                payload=delta(1),
                durable=False,
                created_at=store.now(),
            )
        )
    results = await asyncio.gather(
        store.append_events(good, 1, [NewEvent(1, delta(1))]),
        store.append_events(bad, 1, [NewEvent(1, delta(1))]),
        return_exceptions=True,
    )
    assert not isinstance(results[0], BaseException)
    assert isinstance(results[1], SequenceError)
    assert [e.cursor.seq for e in await store.read_events(good)] == [1]
    assert (await store.get_run(bad)).last_seq == 0


async def test_close_commits_what_is_queued(store: SqlRunStore) -> None:
    run_id = await new_run(store)
    pending = asyncio.ensure_future(store.append_events(run_id, 1, [NewEvent(1, delta(1))]))
    await asyncio.sleep(0)
    if store.group is not None:
        await store.group.aclose()
    await pending
    assert [e.cursor.seq for e in await store.read_events(run_id)] == [1]


async def test_a_taken_run_id_fails_only_its_own_create(store: SqlRunStore) -> None:
    """Creates join the group too (one writer); a duplicate id (the insert conflicts) is
    RunExistsError for that create alone, the other writes of its group commit."""
    existing = await new_run(store)
    other = await new_run(store)
    fresh = f"r_{uuid.uuid4().hex[:12]}"
    results = await asyncio.gather(
        store.create_run(run_id=existing, thread_id="t_dup", owner="b"),
        store.create_run(run_id=fresh, thread_id="t_fresh", owner="b"),
        store.append_events(other, 1, [NewEvent(1, delta(1))]),
        return_exceptions=True,
    )
    assert isinstance(results[0], RunExistsError)
    assert not isinstance(results[1], BaseException)
    assert not isinstance(results[2], BaseException)
    assert (await store.get_run(existing)).lease_owner == "a"
    assert (await store.get_run(fresh)).lease_owner == "b"
    assert [e.cursor.seq for e in await store.read_events(other)] == [1]


async def test_a_groups_terminal_writes_share_their_statements(store: SqlRunStore) -> None:
    """The terminal appends of a group's runs are one conditional UPDATE, and their history
    items (runs of distinct threads) one lock of the threads, one insert of the messages and
    one of the aliases (issue 13); a fenced run among them still fails alone."""
    assert store.group is not None
    runs = [await new_run(store) for _ in range(4)]
    stale = await new_run(store, epoch=2)
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(" ".join(statement.split()[:3]))

    def final(run_id: str) -> RunFinal:
        item = {"id": f"m_{run_id}", "role": "assistant", "content": "done"}
        return RunFinal("completed", usage=[{"inputTokens": 1}], messages=[item])

    sa.event.listen(store.engine.sync_engine, "before_cursor_execute", count)
    try:
        results = await asyncio.gather(
            *(store.append_events(r, 1, [NewEvent(1, delta(1))], final=final(r)) for r in runs),
            store.append_events(stale, 1, [NewEvent(1, delta(1))], final=final(stale)),
            return_exceptions=True,
        )
    finally:
        sa.event.remove(store.engine.sync_engine, "before_cursor_execute", count)
    assert [r.status for r in results[:4]] == ["completed"] * 4  # type: ignore[union-attr]
    assert isinstance(results[4], StaleEpochError)
    assert statements.count("UPDATE runs SET") == 1
    assert statements.count("UPDATE threads SET") == 1
    assert statements.count("INSERT INTO messages") == 1
    assert statements.count("INSERT INTO message_aliases") == 1
    for run_id in runs:
        record = await store.get_run(run_id)
        assert (record.status, record.last_seq, record.usage) == (
            "completed",
            1,
            [{"inputTokens": 1}],
        )
        page = await store.history(record.thread_id)
        assert [(i["id"], i["sequence"]) for i in page.items] == [(f"m_{run_id}", 1)]
    assert (await store.get_run(stale)).status == "queued"  # untouched
