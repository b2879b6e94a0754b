"""SQLite event rows: the driver-tuple path of ``sql_writes.insert_events`` stores exactly what
the SQLAlchemy statement path (``conn.execute(INSERT_EVENTS, rows)``) stores (issue 13: the
per-event cost of a durable run). Stored values are compared raw, with their SQLite types."""

from __future__ import annotations

import tempfile
from datetime import UTC, timedelta, timezone
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.store import open_store
from gateway.store.sql_statements import INSERT_EVENTS
from gateway.store.sql_writes import insert_events

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_event = st.fixed_dictionaries({"type": st.text(max_size=20)}, optional={"delta": _json})
_zones = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=7))]
)
_stamps = st.lists(st.datetimes(timezones=_zones | st.none()), min_size=1, max_size=3)


@st.composite
def _rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    stamps = draw(_stamps)
    rows = []
    for seq, event in enumerate(draw(st.lists(_event, min_size=1, max_size=12)), start=1):
        payload: Any = event
        if draw(st.booleans()):  # the writer's one serialization, as event_rows passes it
            payload = orjson.Fragment(orjson.dumps(event))
        rows.append(
            {
                "run_id": "",
                "seq": seq,
                "epoch": draw(st.integers(1, 5)),
                "type": str(event["type"]),
                "payload": payload,
                "durable": draw(st.booleans()),
                "created_at": draw(st.sampled_from(stamps)),
            }
        )
    return rows


_READ = (
    "SELECT seq, epoch, type, payload, durable, created_at, typeof(payload), typeof(durable), "
    "typeof(created_at) FROM events WHERE run_id = ? ORDER BY seq"
)


@settings(max_examples=40, deadline=None)
@given(rows=_rows())
async def test_driver_tuples_store_what_the_statement_stores(rows: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory(prefix="agui-event-rows-") as tmp:
        store = await open_store(f"sqlite+aiosqlite:///{tmp}/runs.db")
        try:
            async with store.engine.connect() as conn:
                await conn.exec_driver_sql("PRAGMA foreign_keys=OFF")  # rows without run rows
                await conn.commit()
                async with conn.begin():
                    await conn.execute(INSERT_EVENTS, [{**r, "run_id": "slow"} for r in rows])
                    await insert_events(conn, [{**r, "run_id": "fast"} for r in rows])
                slow = (await conn.exec_driver_sql(_READ, ("slow",))).all()
                fast = (await conn.exec_driver_sql(_READ, ("fast",))).all()
        finally:
            await store.close()
    assert len(slow) == len(rows)
    assert [tuple(r) for r in fast] == [tuple(r) for r in slow]
