"""``get_run`` under a burst (issue 13): every ``POST /v1/agui/{route}`` looks its run up
before its upstream request goes out, and a burst of new runs used to make one point read
each, eight at a time.

Concurrent calls share one read (``gateway/store/run_lookup.py``): a burst is one ``SELECT
... IN`` (counted at the engine, PostgreSQL; and SQLite when its loop-thread read cannot
answer), every caller gets its own run or ``RunNotFoundError``, a lookup asked while a read is
under way is answered by the next read (so a caller that wrote sees its write), and a read
that fails fails its own callers only, whether it failed before its statement (no connection:
the regression that looped forever) or in it. On a SQLite file the lookup is made on the
loop's thread (``gateway/store/sqlite_loop_read.py``): no statement through the engine, the
committed state even while the group writer holds its write transaction open, and the usual
read when it cannot answer at once.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from run_backends import STORES, ManualClock, make_store

from gateway.store import RunNotFoundError
from gateway.store.models import RunRecord
from gateway.store.run_lookup import RunLookups
from gateway.store.sqlite_loop_read import LoopReads

_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _record(run_id: str) -> RunRecord:
    return RunRecord(
        id=run_id,
        thread_id="t",
        status="running",
        route=None,
        upstream=None,
        model=None,
        message_id=None,
        usage=None,
        error=None,
        epoch=1,
        last_seq=0,
        last_epoch=0,
        lease_owner="o",
        heartbeat_at=None,
        cancel_requested=False,
        created_at=_T0,
        updated_at=_T0,
    )


class FakeReads:
    """A ``fetch`` whose reads the test releases one at a time; records each read's ids."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.reads: list[list[str]] = []
        self.gate = asyncio.Event()
        self.fail_before: Exception | None = None
        self.fail_after: Exception | None = None

    async def __call__(self, take: Callable[[], Collection[str]]) -> dict[str, RunRecord]:
        await self.gate.wait()
        self.gate.clear()
        if self.fail_before is not None:
            raise self.fail_before
        ids = list(take())
        self.reads.append(ids)
        if self.fail_after is not None:
            raise self.fail_after
        return {i: _record(i) for i in ids if i in self.known}


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_burst_is_one_read_and_each_caller_gets_its_own_answer() -> None:
    reads = FakeReads({"a", "c"})
    lookups = RunLookups(reads)
    calls = [asyncio.create_task(lookups.get(i)) for i in ("a", "b", "c", "a")]
    await _settle()
    reads.gate.set()
    got = await asyncio.gather(*calls)
    assert reads.reads == [["a", "b", "c"]]
    assert [r.id if r else None for r in got] == ["a", None, "c", "a"]


async def test_a_lookup_asked_during_a_read_waits_for_the_next_one() -> None:
    reads = FakeReads({"a", "b"})
    lookups = RunLookups(reads)
    first = asyncio.create_task(lookups.get("a"))
    await _settle()
    reads.gate.set()  # the first read takes "a" and returns
    await _settle()
    # the first read is done; now one more while nothing is in flight, then hold it
    second = asyncio.create_task(lookups.get("a"))
    third = asyncio.create_task(lookups.get("b"))
    await _settle()
    assert (await first) is not None
    assert not second.done() and not third.done()  # not answered by the finished read
    reads.gate.set()
    assert (await second) is not None and (await third) is not None
    assert reads.reads == [["a"], ["a", "b"]]


@given(
    st.lists(st.sampled_from("abcdef"), min_size=1, max_size=12), st.sets(st.sampled_from("abcdef"))
)
@settings(max_examples=40, deadline=None)
def test_any_burst_answers_as_one_read_per_id(ids: list[str], known: set[str]) -> None:
    async def main() -> None:
        reads = FakeReads(known)
        reads.gate.set()
        lookups = RunLookups(reads)
        got = await asyncio.gather(*(lookups.get(i) for i in ids))
        assert [r.id if r else None for r in got] == [i if i in known else None for i in ids]
        assert sorted(i for batch in reads.reads for i in batch) == sorted(set(ids))

    asyncio.run(main())


async def test_a_read_failing_before_its_statement_fails_its_callers_and_ends() -> None:
    reads = FakeReads({"a"})
    reads.fail_before = ConnectionError("no connection")
    lookups = RunLookups(reads)
    call = asyncio.create_task(lookups.get("a"))
    await _settle()
    reads.gate.set()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(call, 2)
    assert reads.reads == []  # it failed once; nothing was retried behind the caller's back
    reads.fail_before = None
    reads.gate.set()
    assert (await asyncio.wait_for(lookups.get("a"), 2)) is not None  # the next one reads


async def test_a_failed_read_fails_its_batch_only() -> None:
    reads = FakeReads({"a", "b"})
    reads.fail_after = RuntimeError("boom")
    lookups = RunLookups(reads)
    first = asyncio.create_task(lookups.get("a"))
    await _settle()
    reads.gate.set()
    with pytest.raises(RuntimeError):
        await first
    reads.fail_after = None
    second = asyncio.create_task(lookups.get("b"))
    await _settle()
    reads.gate.set()
    assert (await second) is not None


async def test_a_cancelled_caller_leaves_the_others_their_answer() -> None:
    reads = FakeReads({"a"})
    lookups = RunLookups(reads)
    gone = asyncio.create_task(lookups.get("a"))
    kept = asyncio.create_task(lookups.get("a"))
    await _settle()
    gone.cancel()
    reads.gate.set()
    assert (await kept) is not None
    assert gone.cancelled()


async def _burst(store: Any, ids: list[str]) -> tuple[list[str | None], list[str]]:
    """``get_run`` of every id at once: the ids found (None: not found) and the SELECT
    statements the engine ran."""
    statements: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    async def one(run_id: str) -> str | None:
        try:
            return (await store.get_run(run_id)).id
        except RunNotFoundError:
            return None

    sa.event.listen(store.engine.sync_engine, "before_cursor_execute", count)
    try:
        got = await asyncio.gather(*(one(i) for i in ids))
    finally:
        sa.event.remove(store.engine.sync_engine, "before_cursor_execute", count)
    return list(got), statements


_IDS = [f"r{i}" for i in range(48)]


async def _created(store: Any) -> None:
    for run_id in _IDS[::2]:
        await store.create_run(run_id=run_id, thread_id=f"t-{run_id}", owner="o")


_EXPECTED = [i if n % 2 == 0 else None for n, i in enumerate(_IDS)]


@pytest.mark.parametrize("kind", STORES)
async def test_a_burst_of_get_run_is_one_statement(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with make_store(kind, tmp_path, ManualClock()) as store:
        await _created(store)
        if kind == "sqlite":  # the loop-thread read busy: the usual way, coalesced

            def busy(_self: object, _run_id: str) -> None:
                raise sqlite3.OperationalError("database is locked")

            monkeypatch.setattr(LoopReads, "get_run", busy)
        got, statements = await _burst(store, _IDS)
    assert got == _EXPECTED
    assert len(statements) == 1, statements


async def test_on_a_sqlite_file_the_lookup_is_made_on_the_loops_thread(tmp_path: Path) -> None:
    async with make_store("sqlite", tmp_path, ManualClock()) as store:
        await _created(store)
        got, statements = await _burst(store, _IDS)
        assert got == _EXPECTED
        assert statements == []  # no hop to a driver thread
        # the group writer's transaction open and uncommitted: the committed state, at once
        writer = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")
            writer.execute("UPDATE runs SET status = 'failed' WHERE id = 'r0'")
            assert (await store.get_run("r0")).status == "queued"
            writer.execute("COMMIT")
        finally:
            writer.close()
        assert (await store.get_run("r0")).status == "failed"  # a write, then a read: seen
