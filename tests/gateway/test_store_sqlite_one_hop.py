"""Each SQLite statement of the store is one call on aiosqlite's worker thread
(``gateway/store/sqlite_one_hop.py``), and answers what ``sqlite3`` itself answers.

SQLAlchemy's aiosqlite cursor makes three or four worker calls per statement (cursor, execute,
fetchall, close: ``sqlalchemy/connectors/asyncio.py``, 2.1); issue 13 item 1 counted ~60 per
durable run. The reference for the answers is the standard library's ``sqlite3`` module on
the same kind of file, never the store's own output: rows of ``RETURNING`` and ``SELECT``,
``rowcount`` of ``UPDATE``/``DELETE``/``executemany``, and an ``IntegrityError`` (a key
already stored) that leaves nothing written.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import aiosqlite
import anyio
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.store.engine import create_engine

_CREATE = "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"
_INSERT_RETURNING = "INSERT INTO t (k, v) VALUES (:k, :v) RETURNING k, v"
_INSERT = "INSERT INTO t (k, v) VALUES (:k, :v)"
_UPDATE = "UPDATE t SET v = :v WHERE k BETWEEN :lo AND :hi"
_UPDATE_RETURNING = "UPDATE t SET v = :v WHERE k BETWEEN :lo AND :hi RETURNING k, v"
_DELETE = "DELETE FROM t WHERE k BETWEEN :lo AND :hi"
_SELECT = "SELECT k, v FROM t ORDER BY k"

_keys = st.integers(0, 12)
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_row = st.fixed_dictionaries({"k": _keys, "v": _text})
_range = st.fixed_dictionaries({"lo": _keys, "hi": _keys, "v": _text})
_operation = st.one_of(
    st.tuples(st.just(_INSERT_RETURNING), _row),
    st.tuples(st.just(_INSERT), st.lists(_row, min_size=1, max_size=5)),
    st.tuples(st.just(_UPDATE), _range),
    st.tuples(st.just(_UPDATE_RETURNING), _range),
    st.tuples(st.just(_DELETE), _range.map(lambda r: {"lo": r["lo"], "hi": r["hi"]})),
    st.tuples(st.just(_SELECT), st.just({})),
)

Outcome = tuple[str, Any]


def _reference(path: Path, operations: list[tuple[str, Any]]) -> list[Outcome]:
    """What ``sqlite3`` answers, one transaction per operation."""
    db = sqlite3.connect(path)
    try:
        db.execute(_CREATE)
        answers: list[Outcome] = []
        for sql, params in operations:
            try:
                with db:  # commit, or roll back on error
                    if isinstance(params, list):
                        cursor = db.executemany(sql, params)
                    else:
                        cursor = db.execute(sql, params)
                    rows = [tuple(r) for r in cursor.fetchall()]
                    answers.append(("ok", (rows, cursor.rowcount if not rows else None)))
            except sqlite3.IntegrityError:
                answers.append(("integrity", None))
        answers.append(("final", [tuple(r) for r in db.execute(_SELECT)]))
        return answers
    finally:
        db.close()


async def _through_store_engine(
    path: Path, operations: list[tuple[str, Any]]
) -> tuple[list[Outcome], list[int]]:
    """The same operations through the store's engine; also the worker calls of each."""
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    calls = [0]
    execute = aiosqlite.Connection._execute

    async def counted(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return await execute(self, fn, *args, **kwargs)

    hops: list[int] = []
    answers: list[Outcome] = []
    try:
        async with engine.begin() as conn:
            await conn.execute(sa.text(_CREATE))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(aiosqlite.Connection, "_execute", counted)
            for sql, params in operations:
                try:
                    async with engine.begin() as conn:
                        before = calls[0]
                        try:
                            result = await conn.execute(sa.text(sql), params)
                            rows = [tuple(r) for r in result.all()] if result.returns_rows else []
                        finally:
                            hops.append(calls[0] - before)
                        answers.append(("ok", (rows, result.rowcount if not rows else None)))
                except sa.exc.IntegrityError:
                    answers.append(("integrity", None))
        async with engine.connect() as conn:
            final = [tuple(r) for r in (await conn.execute(sa.text(_SELECT))).all()]
        answers.append(("final", final))
        return answers, hops
    finally:
        await engine.dispose()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_operation, min_size=1, max_size=12))
def test_each_statement_is_one_worker_call_and_answers_as_sqlite3(
    operations: list[tuple[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        expected = _reference(Path(tmp) / "reference.db", operations)
        answers, hops = anyio.run(_through_store_engine, Path(tmp) / "store.db", operations)
    assert answers == expected
    assert len(hops) == len(operations)
    assert all(n == 1 for n in hops), hops


async def _store_run_calls(path: Path) -> tuple[int, int]:
    from gateway.store import NewEvent, open_store

    store = await open_store(f"sqlite+aiosqlite:///{path}")
    calls = [0]
    statements = [0]
    execute = aiosqlite.Connection._execute

    async def counted(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return await execute(self, fn, *args, **kwargs)

    def statement(*_args: Any) -> None:
        statements[0] += 1

    sa.event.listen(store.engine.sync_engine, "before_cursor_execute", statement)
    try:
        # the pool as it stays: the group writer holds its connection from its first group
        # on (gateway/store/sqlite_held.py), so a read then opens one of its own, once
        await store.create_run(run_id="r0", thread_id="t0", owner="a")
        await store.read_wire("r0")
        statements[0] = 0
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(aiosqlite.Connection, "_execute", counted)
            run = await store.create_run(run_id="r1", thread_id="t1", owner="a")
            events = [{"type": "CUSTOM", "name": "n", "value": i} for i in range(3)]
            await store.append_events(
                run.id, run.epoch, [NewEvent(seq=i + 1, event=e) for i, e in enumerate(events)]
            )
            await store.heartbeat(run.id, run.epoch)
            await store.read_wire(run.id)
        return calls[0], statements[0]
    finally:
        await store.close()


def test_a_store_write_costs_one_worker_call_per_group(tmp_path: Path) -> None:
    calls, statements = anyio.run(_store_run_calls, tmp_path / "runs.db")
    # create_run, append_events and heartbeat are one group commit each, and a group's whole
    # transaction is one worker call (gateway/store/sqlite_raw.py), whatever its statements;
    # read_wire is one driver call (gateway/store/wire_read.py) and no SQLAlchemy statement
    # 2 + 3 + 1: the raw ones still fire the engine events; the append's 3 rows are two
    # multi-row INSERTs (2 + 1 rows: power-of-two chunks, sqlite_raw._at_once), not one
    # executemany handing the GIL over per row
    assert statements == 6, statements
    assert calls == 3 + 1, (calls, statements)
