"""The store's reads after a cursor return exactly the stored events whose ``(epoch, seq)`` is
greater than the cursor's, in that order, for every shape of run and every cursor, on SQLite
and PostgreSQL (``read_events`` and ``read_wire``, page by page).

``docs/runs.md`` §1 orders cursors as ``(epoch, seq)``; §2: a run taken over continues its seq
from the last durable event in a new epoch, so a cursor of a dead epoch past its durable end
(one a client saw live, never stored) continues with the next epoch. The reads are ranges of the
primary key ``(run_id, seq)`` (``gateway/store/wire_read.py``, migration 0007); the reference
here is the definition itself: every stored row, filtered by the tuple comparison in Python.

Hypothesis draws the run (one to four epochs, each with a few batches of events; a producer
that died may have "published" seqs past its durable end, which only shows in the cursors) and
the cursors: stored ones, ones past a dead epoch's end, ones of epochs the run never had
(0, beyond the last) and seqs before the first or after the last, with page sizes of 1 to 500.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.store import NewEvent
from gateway.types import Cursor

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import STORES, looped_store

pytestmark = pytest.mark.timeout(600)

_runs = itertools.count()


@pytest.fixture(scope="module", params=STORES)
def looped(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[asyncio.AbstractEventLoop, Any]]:
    gen = looped_store(request.param, tmp_path_factory.mktemp(request.param))
    try:
        yield next(gen)
    finally:
        next(gen, None)


_epoch = st.lists(st.integers(min_value=1, max_value=4), min_size=0, max_size=3)
"""One epoch's batches (their sizes); an epoch may store nothing before it dies."""

_cursor = st.tuples(st.integers(min_value=0, max_value=6), st.integers(min_value=-1, max_value=3))
"""A cursor as (epoch, offset): the seq is chosen relative to the run (below)."""


def _seq_of(offset: int, pick: int, stored: list[tuple[int, int]], last: int) -> int:
    """A seq for a drawn cursor: 0 (before everything), a stored one, or past the end."""
    if offset < 0:
        return 0
    if offset == 0 and stored:
        return stored[pick % len(stored)][1]
    return last + offset


async def _store_run(store: Any, epochs: list[list[int]]) -> tuple[str, list[tuple[int, int]]]:
    """A run written as ``epochs`` says; returns its id and the stored ``(epoch, seq)``s."""
    run_id = f"cursor-run-{next(_runs)}"
    run = await store.create_run(run_id=run_id, thread_id=f"t-{run_id}", owner="a")
    stored: list[tuple[int, int]] = []
    seq = 0
    for index, batches in enumerate(epochs):
        epoch = index + 1
        if index:
            store._clock.advance(60)
            taken = await store.take_over(
                run.id, owner=f"r{epoch}", expected_epoch=epoch - 1, stale_before=store.now()
            )
            assert taken is not None and taken.epoch == epoch
        for size in batches:
            events = [
                NewEvent(seq + k + 1, {"type": "E", "epoch": epoch, "n": seq + k + 1})
                for k in range(size)
            ]
            await store.append_events(run.id, epoch, events)
            stored += [(epoch, e.seq) for e in events]
            seq += size
    return run.id, stored


async def _pages(read: Any, run_id: str, after: Cursor | None, limit: int) -> list[Any]:
    """Every event after ``after``, read a page of ``limit`` at a time (as readers page)."""
    out: list[Any] = []
    while True:
        page = await read(run_id, after=after, limit=limit)
        out += page
        if len(page) < limit:
            return out
        after = page[-1].cursor


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    epochs=st.lists(_epoch, min_size=1, max_size=4),
    cursors=st.lists(
        st.tuples(_cursor, st.integers(min_value=0, max_value=50), st.sampled_from([1, 2, 3, 500])),
        min_size=1,
        max_size=6,
    ),
)
def test_reads_after_a_cursor_are_the_rows_after_it(
    looped: tuple[asyncio.AbstractEventLoop, Any],
    epochs: list[list[int]],
    cursors: list[tuple[tuple[int, int], int, int]],
) -> None:
    loop, store = looped

    async def check() -> None:
        run_id, stored = await _store_run(store, epochs)
        assert stored == sorted(stored, key=lambda c: c[1])  # seq order is (epoch, seq) order
        last = stored[-1][1] if stored else 0
        for (epoch, offset), pick, limit in cursors:
            cursor = Cursor(epoch, _seq_of(offset, pick, stored, last))
            expected = [c for c in stored if c > (cursor.epoch, cursor.seq)]
            full = await _pages(store.read_events, run_id, cursor, limit)
            assert [(s.cursor.epoch, s.cursor.seq) for s in full] == expected, cursor
            assert [s.event["n"] for s in full] == [seq for _, seq in expected]
            wire = await _pages(store.read_wire, run_id, cursor, limit)
            assert [(w.cursor.epoch, w.cursor.seq) for w in wire] == expected, cursor
        everything = await _pages(store.read_wire, run_id, None, 2)
        assert [(w.cursor.epoch, w.cursor.seq) for w in everything] == stored

    loop.run_until_complete(check())
