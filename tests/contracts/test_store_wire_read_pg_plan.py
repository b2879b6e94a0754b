"""On PostgreSQL, each page of the replay read after a cursor reads about a page of ``events``
rows: the range of the primary key ``(run_id, seq)`` after a probe of the same key (migration
0007 dropped the ``(run_id, epoch, seq)`` index, ``gateway/store/wire_read.py``), never the
run's rows before the cursor nor all the rows after it: with the generic plan on a run of three
long epochs, and with the plans made for the cursor's values on a long run among many short
ones (a later epoch holds only the closing events its reaper wrote, §2; on a later epoch of
thousands of rows, rare in the table, such a plan may sort that epoch's tail, a shape the
gateway does not write).

asyncpg prepares its statements and keeps them per connection; PostgreSQL plans the first five
executions of a prepared statement with the parameters' values (custom plans) and then usually
switches to the generic plan (``plan_cache_mode = auto``), the one a replay runs on a connection
in steady state; ``force_generic_plan`` and ``force_custom_plan`` take each at once.
PostgreSQL's own ``EXPLAIN (ANALYZE, FORMAT JSON)`` says so: every scan of ``events`` returns
its rows and removes none beyond the probe's walk back to the cursor (``Rows Removed by
Filter``), so a replay of n events in pages costs O(n), not O(n²). (A first version filtered on
the cursor's ``seq`` past the probe; with the values in the plan, PostgreSQL took a bitmap scan
of every row after the cursor and sorted them for each page: found by a review, 2026-12-07.)

The run has three epochs (``docs/runs.md`` §2: a taken-over run continues its seq in a new
epoch); the cursors are each epoch's first, middle and last stored event and one a few seqs past
a dead epoch's durable end (what a client may have seen live before the takeover, §2). The
SQLite side of this is ``tests/gateway/test_store_wire_read.py``.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from gateway.store import RunStoreError, open_store
from gateway.store.wire_read import _PG_AFTER
from gateway.types import Cursor

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run_backends

from run_backends import PG_URL, ManualClock, drop_schema, unavailable

pytestmark = pytest.mark.timeout(300)

_EPOCH_ROWS = 1500
"""Stored events of each of the big run's three epochs."""

_PAGE = 100

_GAP = 5
"""How far past a dead epoch's durable end its producer published (a cursor a client saw)."""


@pytest.fixture
async def pg() -> AsyncIterator[Any]:
    schema = f"test_{uuid.uuid4().hex[:16]}"
    try:
        store = await open_store(PG_URL, schema=schema, clock=ManualClock())
    except (RunStoreError, OSError) as exc:
        unavailable("PostgreSQL", exc)
    try:
        async with store.engine.begin() as conn:
            await conn.execute(
                sa.text(
                    "INSERT INTO threads (id, created_at, updated_at)"
                    " SELECT 't' || g, now(), now() FROM generate_series(0, 10) g"
                )
            )
            await conn.execute(
                sa.text(
                    "INSERT INTO runs (id, thread_id, status, epoch, created_at, updated_at)"
                    " SELECT 'r' || g, 't' || g, 'running', 3, now(), now()"
                    " FROM generate_series(0, 10) g"
                )
            )
            # r0: three epochs; r1..r10: other runs' rows around it in the key
            await conn.execute(
                sa.text(
                    "INSERT INTO events (run_id, seq, epoch, type, payload, durable, created_at)"
                    " SELECT 'r0', g, 1 + (g - 1) / :n, 'E', '{\"type\":\"E\"}'::json, true,"
                    " now() FROM generate_series(1, 3 * :n) g"
                ),
                {"n": _EPOCH_ROWS},
            )
            await conn.execute(
                sa.text(
                    "INSERT INTO events (run_id, seq, epoch, type, payload, durable, created_at)"
                    " SELECT 'r' || r, g, 1, 'E', '{\"type\":\"E\"}'::json, true, now()"
                    " FROM generate_series(1, 10) r, generate_series(1, :n) g"
                ),
                {"n": _EPOCH_ROWS},
            )
            await conn.execute(sa.text("ANALYZE events"))
        yield store
    finally:
        await drop_schema(store.engine, schema)
        await store.close()


def _scans(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if node.get("Relation Name") == "events":
        yield node
    for child in node.get("Plans", ()):
        yield from _scans(child)


def _cursors() -> list[Cursor]:
    n = _EPOCH_ROWS
    out: list[Cursor] = []
    for epoch in (1, 2, 3):
        first = (epoch - 1) * n + 1
        out += [Cursor(epoch, first), Cursor(epoch, first + n // 2), Cursor(epoch, epoch * n)]
    out += [Cursor(1, n + _GAP), Cursor(2, 2 * n + _GAP)]  # past a dead epoch's durable end
    return out


def _expected(cursor: Cursor) -> list[tuple[int, int]]:
    stored = [(1 + (seq - 1) // _EPOCH_ROWS, seq) for seq in range(1, 3 * _EPOCH_ROWS + 1)]
    return [c for c in stored if c > (cursor.epoch, cursor.seq)]


def _check_plan(plan: Any, cursor: Cursor, returned: int) -> None:
    root = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
    scans = list(_scans(root))
    assert scans, root
    for scan in scans:
        assert scan["Node Type"] != "Seq Scan", scan
        read = (
            scan["Actual Rows"]
            + scan.get("Rows Removed by Filter", 0)
            + scan.get("Rows Removed by Index Recheck", 0)
        )
        assert read <= max(returned, 1) + _GAP, (cursor, scan)


async def _replay(cursor: Cursor, explain: Any, fetch: Any) -> None:
    after, got = cursor, []
    while True:
        page = await fetch(after)
        _check_plan(await explain(after), after, len(page))
        got += [(r[0], r[1]) for r in page]
        if len(page) < _PAGE:
            break
        after = Cursor(page[-1][0], page[-1][1])
    assert got == _expected(cursor), cursor


async def test_each_page_of_the_generic_plan_reads_about_a_page_of_rows(pg: Any) -> None:
    async with pg.engine.connect() as conn:
        driver = (await conn.get_raw_connection()).driver_connection

        async def fetch(after: Cursor) -> Any:
            return await driver.fetch(_PG_AFTER, "r0", after.epoch, after.seq, _PAGE)

        await driver.execute("SET plan_cache_mode = force_generic_plan")
        await driver.execute(f"PREPARE after_page (text, integer, bigint, bigint) AS {_PG_AFTER}")
        try:

            async def plan(after: Cursor) -> Any:
                # (EXECUTE takes no bind parameters: the cursor's own integers, written out)
                query = "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE after_page ('r0', {}, {}, {})"
                return await driver.fetchval(query.format(int(after.epoch), int(after.seq), _PAGE))

            for cursor in _cursors():
                await _replay(cursor, plan, fetch)
        finally:
            await driver.execute("DEALLOCATE after_page")
            await driver.execute("RESET plan_cache_mode")


_LONG, _SHORT_RUNS, _SHORT, _LONG_PAGE = 20_000, 2_000, 100, 500


async def test_the_plans_for_the_cursors_values_read_a_long_run_about_once() -> None:
    """A replay of a 20,000-event run among 2,000 runs of 100 events, whose reaper closed it
    in epoch 2 (three events), in pages of 500, each with a plan made for its cursor's values
    (``force_custom_plan``): about 20,000 rows read in all. The first version of the read
    (``seq > s`` in the filter) read 390,540 here (a bitmap scan of the run's whole tail and a
    sort, for every page)."""
    schema = f"test_{uuid.uuid4().hex[:16]}"
    try:
        store = await open_store(PG_URL, schema=schema, clock=ManualClock())
    except (RunStoreError, OSError) as exc:
        unavailable("PostgreSQL", exc)
    try:
        rows = "INSERT INTO events (run_id, seq, epoch, type, payload, durable, created_at) "
        async with store.engine.begin() as conn:
            for sql in (
                "INSERT INTO threads (id, created_at, updated_at)"
                f" SELECT 't' || g, now(), now() FROM generate_series(0, {_SHORT_RUNS}) g",
                "INSERT INTO runs (id, thread_id, status, epoch, created_at, updated_at)"
                f" SELECT 'r' || g, 't' || g, 'running', 2, now(), now()"
                f" FROM generate_series(0, {_SHORT_RUNS}) g",
                rows + "SELECT 'r0', g, 1, 'E', '{\"type\":\"E\"}'::json, true, now()"
                f" FROM generate_series(1, {_LONG}) g",
                rows + "SELECT 'r0', g, 2, 'E', '{\"type\":\"E\"}'::json, true, now()"
                f" FROM generate_series({_LONG + 1}, {_LONG + 3}) g",
                rows + "SELECT 'r' || r, g, 1, 'E', '{\"type\":\"E\"}'::json, true, now()"
                f" FROM generate_series(1, {_SHORT_RUNS}) r, generate_series(1, {_SHORT}) g",
                "ANALYZE events",
            ):
                await conn.execute(sa.text(sql))
        async with store.engine.connect() as conn:
            driver = (await conn.get_raw_connection()).driver_connection
            await driver.execute("SET plan_cache_mode = force_custom_plan")
            for start, expected in ((Cursor(1, 0), _LONG + 3), (Cursor(1, _LONG + _GAP), 3)):
                after, read, got = start, 0, 0
                while True:
                    args = ("r0", after.epoch, after.seq, _LONG_PAGE)
                    plan = await driver.fetchval(
                        "EXPLAIN (ANALYZE, FORMAT JSON) " + _PG_AFTER, *args
                    )
                    root = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
                    for scan in _scans(root):
                        assert scan["Node Type"] != "Seq Scan", scan
                        read += scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0)
                    page = await driver.fetch(_PG_AFTER, *args)
                    got += len(page)
                    if len(page) < _LONG_PAGE:
                        break
                    after = Cursor(page[-1][0], page[-1][1])
                assert got == expected, start
                assert read <= expected + 2 * (expected // _LONG_PAGE + 1) + _GAP, (start, read)
            await driver.execute("RESET plan_cache_mode")
    finally:
        await drop_schema(store.engine, schema)
        await store.close()
