"""The batched statements of a group commit come in a few sizes (issue 13): ``update_runs``
and the thread locks of ``add_own_items`` are built per number of value rows, and each new
statement costs a SQLAlchemy compile (1-9 ms of Python on the database thread, holding the
GIL). The rows are padded to the next power of two (``padded_count``) with NULL keys, which
match no row: whatever the group's size, at most ``log2(64) + 1`` statements per kind exist,
and a padded statement updates exactly the runs it was given (the others are left as they
were), on SQLite and PostgreSQL. ``tests/contracts/test_store_final_batch.py`` and
``test_history_own_items.py`` prove the batched results equal to the one-by-one statements."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from gateway.store import history_sql, sql_writes
from gateway.store.history_sql import add_own_items
from gateway.store.models import NewEvent
from gateway.store.schema import runs, threads
from gateway.store.sql_statements import padded_count
from gateway.store.sql_writes import BATCH_UPDATE_MAX, prepare_append, update_runs

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends
from run_backends import STORES, looped_store

pytestmark = pytest.mark.timeout(300)

POWERS = {1 << k for k in range(7)}  # 1 .. 64


@given(count=st.integers(1, 300), most=st.sampled_from([1, 7, 64, 100]))
def test_padded_count_is_the_next_power_of_two_within_the_bound(count: int, most: int) -> None:
    if count > most:
        return  # callers chunk by ``most`` first
    size = padded_count(count, most)
    assert count <= size <= most
    assert size == most or (size & (size - 1) == 0 and size // 2 < count)


@pytest.fixture(params=STORES, scope="module")
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    yield from looped_store(request.param, tmp_path_factory.mktemp("sizes"))


def test_every_group_size_takes_a_padded_statement_that_updates_only_its_runs(
    backend: tuple[asyncio.AbstractEventLoop, Any],
) -> None:
    loop, store = backend

    async def main() -> None:
        thread_id = f"s{uuid.uuid4().hex}"
        now = store.now()
        async with store.engine.connect() as conn:
            tx = await conn.begin()
            try:
                await conn.execute(
                    sa.insert(threads),
                    {"id": thread_id, "next_position": 0, "created_at": now, "updated_at": now},
                )
                ids = [f"r{uuid.uuid4().hex}" for _ in range(BATCH_UPDATE_MAX + 3)]
                for run_id in ids:
                    await conn.execute(
                        sa.insert(runs),
                        {
                            "id": run_id,
                            "thread_id": thread_id,
                            "status": "running",
                            "epoch": 1,
                            "last_seq": 0,
                            "last_epoch": 1,
                            "lease_owner": "o",
                            "heartbeat_at": now,
                            "cancel_requested": False,
                            "created_at": now,
                            "updated_at": now,
                            "stored_bytes": 0,
                        },
                    )
                seqs = dict.fromkeys(ids, 0)
                for count in [*range(1, 18), 31, 33, 63, BATCH_UPDATE_MAX, BATCH_UPDATE_MAX + 3]:
                    chosen = ids[:count]
                    batch = [
                        prepare_append(r, 1, [NewEvent(seq=seqs[r] + 1, event={"type": "X"})], None)
                        for r in chosen
                    ]
                    out = await update_runs(conn, batch, now)
                    assert [o.id for o in out] == chosen  # each run's record, in order
                    for run_id in chosen:
                        seqs[run_id] += 1
                    rows = (await conn.execute(sa.select(runs.c.id, runs.c.last_seq))).all()
                    stored = {row.id: row.last_seq for row in rows if row.id in seqs}
                    assert stored == seqs  # the padding rows updated nothing
            finally:
                await tx.rollback()
        sizes = {count for count, _final in sql_writes._BATCH_UPDATES}
        assert sizes <= POWERS  # whatever the group sizes: 7 statements at most per kind

    loop.run_until_complete(main())


def test_thread_locks_of_any_count_take_a_padded_statement(
    backend: tuple[asyncio.AbstractEventLoop, Any],
) -> None:
    loop, store = backend

    async def main() -> None:
        now = store.now()
        async with store.engine.connect() as conn:
            tx = await conn.begin()
            try:
                for count in (1, 3, 5, 6, 9, 17, 40):
                    owned = []
                    for _ in range(count):
                        thread_id = f"s{uuid.uuid4().hex}"
                        await conn.execute(
                            sa.insert(threads),
                            {
                                "id": thread_id,
                                "next_position": 0,
                                "created_at": now,
                                "updated_at": now,
                            },
                        )
                        item = {"id": f"m{uuid.uuid4().hex}", "role": "assistant", "content": "x"}
                        owned.append((thread_id, item, None))
                    await add_own_items(conn, owned, now)
                    ids = [thread_id for thread_id, _, _ in owned]
                    rows = (
                        await conn.execute(
                            sa.select(threads.c.id, threads.c.next_position).where(
                                threads.c.id.in_(ids)
                            )
                        )
                    ).all()
                    assert {row.id: row.next_position for row in rows} == dict.fromkeys(ids, 1)
            finally:
                await tx.rollback()
        assert set(history_sql._LOCK_THREADS) <= POWERS

    loop.run_until_complete(main())
