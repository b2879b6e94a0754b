"""The replay read (``gateway/store/wire_read.py``): each page after a cursor is a range of the
primary key ``(run_id, seq)``, not a walk of the run from its first row.

SQLite's own planner says so (``EXPLAIN QUERY PLAN``, https://sqlite.org/eqp.html: ``SEARCH
... USING INDEX sqlite_autoindex_events_1 (run_id=? AND seq>?)`` is a range; ``SEARCH ...
(run_id=?)`` alone visits every row of the run before the cursor on every page, so a replay of
n events in pages costs O(n²)); the subquery finding where the range starts is a descending
probe of the same key (``seq<?``), and nothing is sorted. The rows are the events strictly
after the cursor, in order, across epochs (``docs/runs.md`` §2: a cursor past a dead epoch's
durable end continues with the next epoch; every shape of runs and cursors:
``tests/contracts/test_store_reads_after_cursor.py``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio

from gateway.store import NewEvent, open_store
from gateway.store.wire_read import _SQLITE_AFTER
from gateway.types import Cursor


async def _fill(path: Path) -> list[tuple[int, int]]:
    store = await open_store(f"sqlite+aiosqlite:///{path}")
    try:
        run = await store.create_run(run_id="run-1", thread_id="t1", owner="a")
        events = [
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i}"} for i in range(6)
        ]
        await store.append_events(
            run.id, run.epoch, [NewEvent(seq=i + 1, event=e) for i, e in enumerate(events)]
        )
        after = await store.read_wire(run.id, after=Cursor(1, 4), limit=10)
        return [(e.cursor.epoch, e.cursor.seq) for e in after]
    finally:
        await store.close()


def test_a_page_after_a_cursor_is_an_index_range(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    assert anyio.run(_fill, path) == [(1, 5), (1, 6)]
    with sqlite3.connect(path) as db:
        plan = db.execute("EXPLAIN QUERY PLAN " + _SQLITE_AFTER, ("run-1", 1, 4, 500)).fetchall()
    details = [str(row[-1]).replace(" ", "") for row in plan]
    assert details[0] == "SEARCHeventsUSINGINDEXsqlite_autoindex_events_1(run_id=?ANDseq>?)"
    assert "SEARCHpriorUSINGINDEXsqlite_autoindex_events_1(run_id=?ANDseq<?)" in details
    assert not any("TEMPB-TREE" in d or d.startswith("SCAN") for d in details), details
    assert len(db.execute("PRAGMA index_list(events)").fetchall()) == 1  # the key's own
