"""Migration 0007 (drop the ``events`` index ``(run_id, epoch, seq)``) on a database that already
holds runs: upgraded from 0006, downgraded back and upgraded again, the reads after a cursor
return the same rows at every step, on SQLite and PostgreSQL.

``docs/runs.md`` §1 orders cursors as ``(epoch, seq)``; §2: a run taken over continues its seq
from the last durable event in a new epoch, and a cursor of a dead epoch past its durable end
continues with the next epoch. The reads after a cursor became ranges of the primary key
``(run_id, seq)`` with 0007 (``gateway/store/wire_read.py``); before it they used the dropped
index. The runs here are written by a store on the 0006 schema (takeovers included) and every
cursor of them is read (each stored one, one past each epoch's end, epochs the run never had,
seqs before the first and beyond the last), page by page, against the definition: every stored
row, filtered by the tuple comparison.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from gateway import migrations
from gateway.store import NewEvent, RunStoreError, open_store
from gateway.store.engine import create_engine
from gateway.types import Cursor

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import PG_URL, STORES, ManualClock, drop_schema, unavailable

pytestmark = pytest.mark.timeout(300)

_INDEX = "ix_events_run_epoch_seq"

_SHAPES: list[list[int]] = [[3], [2, 0, 4], [0, 3], [1, 1, 1, 1], [5, 0, 0, 2], []]
"""Each run's events per epoch (0: an epoch that stored nothing before it died)."""


def _to(revision: str, upgrade: bool) -> Any:
    def run(connection: sa.Connection) -> None:
        config = migrations.alembic_config(connection)
        (command.upgrade if upgrade else command.downgrade)(config, revision)

    return run


async def _indexes(engine: Any) -> list[str]:
    async with engine.connect() as conn:
        return await conn.run_sync(
            lambda sync: sorted(str(i["name"]) for i in sa.inspect(sync).get_indexes("events"))
        )


async def _write_runs(url: str, schema: str | None) -> dict[str, list[tuple[int, int]]]:
    """The runs of :data:`_SHAPES`, written on the current (0006) schema by a store that does
    not migrate; returns each run's stored ``(epoch, seq)``s."""
    clock = ManualClock()
    store = await open_store(url, schema=schema, clock=clock, migrate=False)
    runs: dict[str, list[tuple[int, int]]] = {}
    try:
        for index, epochs in enumerate(_SHAPES):
            run = await store.create_run(run_id=f"m{index}", thread_id=f"t{index}", owner="a")
            stored: list[tuple[int, int]] = []
            for offset, size in enumerate(epochs):
                epoch = offset + 1
                if offset:
                    clock.advance(60)
                    taken = await store.take_over(
                        run.id, owner=f"o{epoch}", expected_epoch=offset, stale_before=clock()
                    )
                    assert taken is not None and taken.epoch == epoch
                first = len(stored) + 1
                events = [NewEvent(first + k, {"type": "E", "n": first + k}) for k in range(size)]
                if events:
                    await store.append_events(run.id, epoch, events)
                stored += [(epoch, e.seq) for e in events]
            runs[run.id] = stored
    finally:
        await store.close()
    return runs


def _cursors(stored: list[tuple[int, int]]) -> list[Cursor | None]:
    last = stored[-1][1] if stored else 0
    epochs = {epoch for epoch, _ in stored} | {1}
    out: list[Cursor | None] = [None]
    out += [Cursor(epoch, seq) for epoch, seq in stored]
    for epoch in range(1, max(epochs) + 2):
        out += [Cursor(epoch, 0), Cursor(epoch, last + 1), Cursor(epoch, last + 7)]
        ends = [seq for e, seq in stored if e == epoch]
        if ends:
            out.append(Cursor(epoch, ends[-1] + 2))  # past that epoch's durable end
    return out


async def _check_reads(url: str, schema: str | None, runs: dict[str, Any], stage: str) -> None:
    store = await open_store(url, schema=schema, clock=ManualClock(), migrate=False)
    try:
        for run_id, stored in runs.items():
            for cursor in _cursors(stored):
                expected = (
                    stored
                    if cursor is None
                    else [c for c in stored if c > (cursor.epoch, cursor.seq)]
                )
                for limit in (1, 2, 500):
                    wire: list[Any] = []
                    after = cursor
                    while True:
                        page = await store.read_wire(run_id, after=after, limit=limit)
                        wire += page
                        if len(page) < limit:
                            break
                        after = page[-1].cursor
                    got = [(w.cursor.epoch, w.cursor.seq) for w in wire]
                    assert got == expected, (stage, run_id, cursor, limit)
                events = await store.read_events(run_id, after=cursor, limit=500)
                assert [(s.cursor.epoch, s.cursor.seq) for s in events] == expected, (
                    stage,
                    run_id,
                    cursor,
                )
                assert [s.event["n"] for s in events] == [seq for _, seq in expected]
    finally:
        await store.close()


@pytest.mark.parametrize("kind", STORES)
async def test_0007_up_down_and_up_again_on_stored_runs(kind: str, tmp_path: Path) -> None:
    if kind == "sqlite":
        url, schema = f"sqlite+aiosqlite:///{tmp_path}/runs.db", None
    else:
        url, schema = PG_URL, f"test_{uuid.uuid4().hex[:16]}"
    engine = create_engine(url, schema=schema)
    try:
        if schema is not None:
            try:
                async with engine.begin() as conn:
                    await conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
            except (sa.exc.DBAPIError, OSError) as exc:
                unavailable("PostgreSQL", exc)
        async with engine.begin() as conn:
            await conn.run_sync(_to("0006", upgrade=True))
        assert await _indexes(engine) == [_INDEX]
        runs = await _write_runs(url, schema)
        await _check_reads(url, schema, runs, "0006")

        await migrations.upgrade(engine)
        assert await _indexes(engine) == []
        await _check_reads(url, schema, runs, "0007")

        async with engine.begin() as conn:
            await conn.run_sync(_to("0006", upgrade=False))
        assert await _indexes(engine) == [_INDEX]
        await _check_reads(url, schema, runs, "0007 -> 0006")

        await migrations.upgrade(engine)
        await migrations.upgrade(engine)  # idempotent
        assert await _indexes(engine) == []
        await _check_reads(url, schema, runs, "0006 -> 0007 again")
    except RunStoreError as exc:  # pragma: no cover - only without a database
        unavailable(kind, exc)
    finally:
        if schema is not None:
            await drop_schema(engine, schema)
        await engine.dispose()
