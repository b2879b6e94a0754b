"""The SQLite group writer's held connection (``gateway/store/sqlite_held.py``, issue 13): one
pooled connection checked out for many groups and given back when the store closes; a lost
one fails only its own group and the next group gets a fresh one; a writer of a closed event
loop does not keep its connection out of the pool."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from gateway.store import NewEvent, RunStoreError, SqlRunStore, open_store


def _counting(store: SqlRunStore) -> dict[str, int]:
    """Checkouts and checkins of the store's pool (SQLAlchemy's pool events)."""
    seen = {"checkout": 0, "checkin": 0}

    def checkout(*_args: Any) -> None:
        seen["checkout"] += 1

    def checkin(*_args: Any) -> None:
        seen["checkin"] += 1

    pool = store.engine.sync_engine.pool
    sa.event.listen(pool, "checkout", checkout)
    sa.event.listen(pool, "checkin", checkin)
    return seen


async def _create(store: SqlRunStore, run_id: str) -> None:
    await store.create_run(
        run_id=run_id,
        thread_id=f"t-{run_id}",
        owner="me",
        events=[NewEvent(seq=1, event={"type": "RUN_STARTED", "runId": run_id})],
    )


def _delta(seq: int) -> list[NewEvent]:
    return [NewEvent(seq=seq, event={"type": "TEXT_MESSAGE_CONTENT", "delta": f"d{seq}"})]


async def test_the_writer_checks_one_connection_out_for_all_its_groups(tmp_path: Path) -> None:
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/runs.db")
    assert store.group is not None
    seen = _counting(store)
    await _create(store, "r")
    for seq in range(2, 12):  # one group each: each awaited alone
        await store.append_events("r", 1, _delta(seq))
    groups = store.group.groups
    assert groups >= 11
    assert seen == {"checkout": 1, "checkin": 0}  # held, not returned between groups
    assert store.engine.sync_engine.pool.checkedout() == 1  # type: ignore[attr-defined]
    await store.group.aclose()
    assert seen == {"checkout": 1, "checkin": 1}
    assert store.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert [e.cursor.seq for e in await store.read_events("r")] == list(range(1, 12))
    await store.close()


async def test_a_lost_connection_fails_its_group_and_the_next_group_gets_a_fresh_one(
    tmp_path: Path,
) -> None:
    store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/runs.db")
    assert store.group is not None
    try:
        await _create(store, "r")
        state: Any = store.group._state
        held = state.held
        assert held.held
        driver = held._driver
        await driver._execute(driver._conn.close)  # the sqlite3 connection under it breaks
        with pytest.raises(RunStoreError) as info:
            await store.append_events("r", 1, _delta(2))
        assert (info.value.code, info.value.status) == ("STORE_ERROR", 500)
        assert isinstance(info.value.__cause__, sqlite3.ProgrammingError)
        assert not held.held  # invalidated, not returned
        record = await store.append_events("r", 1, _delta(2))  # the retry: a fresh connection
        assert record.last_seq == 2
        assert held.checkouts == 2
        assert [e.cursor.seq for e in await store.read_events("r")] == [1, 2]
    finally:
        await store.close()


def test_a_writer_of_a_closed_loop_gives_its_connection_back(tmp_path: Path) -> None:
    """A store that outlives an event loop (a test's) without being closed on it: the writer
    of the next loop returns the connection the first loop's writer held."""

    async def first() -> SqlRunStore:
        store = await open_store(f"sqlite+aiosqlite:///{tmp_path}/runs.db")
        await _create(store, "r")
        return store

    loop = asyncio.new_event_loop()
    try:
        store = loop.run_until_complete(first())  # the writer task is left pending
    finally:
        loop.close()
    pool: Any = store.engine.sync_engine.pool
    assert pool.checkedout() == 1

    async def second() -> int:
        record = await store.append_events("r", 1, _delta(2))
        assert record.last_seq == 2
        out = pool.checkedout()
        await store.close()
        return int(out)

    assert asyncio.run(second()) == 1  # the old one returned, the new writer's held
    assert pool.checkedout() == 0
