"""PostgreSQL's batched ``UPDATE runs`` of a group (:mod:`gateway.store.pg_batch`) equals the
one-by-one path: for any runs (active or ended, at any epoch and last seq, or unknown) and any
appends to them (good, out of sequence, fenced, repeated run ids), each append gets the same
outcome (the updated run, or the same refusal) and the ``runs`` table ends the same."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_backends import ManualClock, make_store
from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.store import NewEvent, SqlRunStore
from gateway.store.pg_batch import update_runs
from gateway.store.schema import runs as runs_t
from gateway.store.sql_writes import PreparedAppend, prepare_append, update_run


@pytest.fixture
async def pg_store(tmp_path: Path) -> AsyncIterator[SqlRunStore]:
    async with make_store("postgresql", tmp_path, ManualClock()) as store:
        yield store


# A run: (status, epoch, last_seq); an append: (run index, epoch shift, seq shift, events).
run_states = st.tuples(
    st.sampled_from(["running", "queued", "completed", "failed"]),
    st.integers(1, 3),
    st.integers(0, 4),
)
appends = st.tuples(st.integers(0, 4), st.integers(-1, 1), st.integers(-1, 2), st.integers(1, 3))


def delta(seq: int) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"d{seq}"}


async def seed(conn: AsyncConnection, states: list[tuple[str, int, int]]) -> list[str]:
    ids = [f"r_{uuid.uuid4().hex[:10]}" for _ in states]
    then = datetime(2026, 1, 1, tzinfo=UTC)
    for run_id, (status, epoch, last_seq) in zip(ids, states, strict=True):
        await conn.execute(
            sa.text("INSERT INTO threads (id, created_at, updated_at) VALUES (:id, :t, :t)"),
            {"id": f"t_{run_id}", "t": then},
        )
        await conn.execute(
            sa.insert(runs_t).values(
                id=run_id,
                thread_id=f"t_{run_id}",
                status=status,
                epoch=epoch,
                last_seq=last_seq,
                last_epoch=epoch,
                lease_owner="a",
                heartbeat_at=then,
                cancel_requested=False,
                created_at=then,
                updated_at=then,
                stored_bytes=7,
            )
        )
    return ids


def prepared(
    ids: list[str], states: list[tuple[str, int, int]], plan: list[tuple[int, int, int, int]]
) -> list[PreparedAppend]:
    out = []
    for index, epoch_shift, seq_shift, count in plan:
        run_id = ids[index] if index < len(ids) else "r_unknown"
        _status, epoch, last_seq = states[index] if index < len(ids) else ("running", 1, 0)
        start = max(1, last_seq + 1 + seq_shift)
        events = [NewEvent(s, delta(s)) for s in range(start, start + count)]
        out.append(prepare_append(run_id, epoch + epoch_shift, events, None))
    return out


def described(outcome: Any) -> Any:
    if isinstance(outcome, Exception):
        return (type(outcome).__name__, str(outcome))
    return outcome


async def one_by_one(conn: AsyncConnection, batch: list[PreparedAppend], now: datetime) -> Any:
    out = []
    for append in batch:
        try:
            out.append(await update_run(conn, append, now))
        except Exception as exc:
            out.append(exc)
    return out


async def play(store: SqlRunStore, states: Any, plan: Any, batched: bool) -> Any:
    now = datetime(2026, 1, 2, tzinfo=UTC)
    async with store.engine.connect() as conn:
        transaction = await conn.begin()
        try:
            ids = await seed(conn, states)
            batch = prepared(ids, states, plan)
            run = update_runs if batched else one_by_one
            outcomes = [described(o) for o in await run(conn, batch, now)]
            rows = [a.rows for a in batch]
            table = (await conn.execute(sa.select(runs_t).where(runs_t.c.id.in_(ids)))).mappings()
            by_id = {m["id"]: dict(m) for m in table}
            ordered = [by_id[i] for i in ids]
        finally:
            await transaction.rollback()
    names = {run_id: f"run{i}" for i, run_id in enumerate(ids)}

    def anonymous(value: Any) -> Any:  # run ids differ between the two plays
        text = repr(value)
        for run_id, name in names.items():
            text = text.replace(run_id, name)
        return text

    return anonymous(outcomes), anonymous(rows), anonymous(ordered)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    states=st.lists(run_states, min_size=1, max_size=4),
    plan=st.lists(appends, min_size=1, max_size=6),
)
async def test_batched_update_equals_one_update_per_append(
    pg_store: SqlRunStore, states: list[tuple[str, int, int]], plan: list[Any]
) -> None:
    slow = await play(pg_store, states, plan, batched=False)
    fast = await play(pg_store, states, plan, batched=True)
    assert fast == slow
