"""A list of rows for a plain ``INSERT`` goes to SQLite as a few multi-row statements
(``gateway/store/sqlite_raw.py`` ``_at_once``, issue 13), not as ``executemany``.

``sqlite3``'s ``executemany`` releases the GIL around each row's step and has to win it back
each time, which waits for the event loop's thread to let go (its switch interval, 5 ms) while
that thread runs Python: a group's rows held its transaction, and every write queued behind
it, for tens of milliseconds under load. What the store relies on, checked here against
``executemany`` itself: the table ends up the same for any rows (values of every SQLite type,
any count), the rowcount is the number of rows, the statements are the popcount of the row
count (power-of-two chunks, so ``sqlite3``'s statement cache keeps a few texts), and a
conflicting row fails the call as ``executemany`` fails it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from gateway.store.sqlite_raw import _MULTI_VALUES_PARAMS, RawConnection, _chunk_sizes, drive

_TABLE = "CREATE TABLE t (k INTEGER PRIMARY KEY, a, b TEXT, c REAL, d BLOB)"
_INSERT = "INSERT INTO t (k, a, b, c, d) VALUES (?, ?, ?, ?, ?)"

_value = (
    st.none()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.binary(max_size=8)
)
_rows = st.lists(st.tuples(_value, st.text(max_size=5), _value, _value), max_size=70)


def _database() -> tuple[sqlite3.Connection, list[str]]:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute(_TABLE)
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    return db, seen


def _raw(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> int:
    async def insert() -> int:
        result = await RawConnection(db, sqlite.dialect()).exec_driver_sql(_INSERT, rows)
        return result.rowcount

    return int(drive(insert()))


@given(_rows)
@settings(max_examples=80, deadline=None)
def test_rows_at_once_store_what_executemany_stores(values: list[tuple[Any, ...]]) -> None:
    rows = [(k, *row) for k, row in enumerate(values)]
    expected, _ = _database()
    expected.executemany(_INSERT, rows)
    db, seen = _database()
    count = _raw(db, rows)
    table = "SELECT k, a, typeof(a), b, c, typeof(c), d, typeof(d) FROM t ORDER BY k"
    assert db.execute(table).fetchall() == expected.execute(table).fetchall()
    assert count == len(rows)
    inserts = [s for s in seen if s.startswith("INSERT")]
    assert len(inserts) == (bin(len(rows)).count("1") if len(rows) > 1 else len(rows))


def test_chunks_are_powers_of_two_within_the_parameter_limit() -> None:
    for rows in (0, 1, 2, 3, 37, 1000, 5000):
        for per_row in (1, 7, 40):
            sizes = _chunk_sizes(rows, per_row)
            assert sum(sizes) == rows
            assert all(size & (size - 1) == 0 for size in sizes)
            assert all(size * per_row <= _MULTI_VALUES_PARAMS for size in sizes)
            assert sizes == sorted(sizes, reverse=True)


def test_a_conflicting_row_fails_the_call_as_executemany_does() -> None:
    rows = [(1, "a", "b", 1.0, b""), (2, "a", "b", 1.0, b""), (1, "x", "y", 2.0, b"")]
    db, _ = _database()
    with pytest.raises(sa.exc.IntegrityError):
        _raw(db, rows)
    plain, _ = _database()
    with pytest.raises(sqlite3.IntegrityError):
        plain.executemany(_INSERT, rows)


def test_statements_that_are_not_plain_inserts_run_as_given() -> None:
    db, seen = _database()
    _raw(db, [(1, "a", "b", 1.0, b""), (2, "a", "b", 1.0, b"")])

    async def update() -> None:
        raw = RawConnection(db, sqlite.dialect())
        await raw.exec_driver_sql("UPDATE t SET b = ? WHERE k = ?", [("x", 1), ("y", 2)])

    seen.clear()
    drive(update())
    assert [s for s in seen if s.startswith("UPDATE")] == [
        "UPDATE t SET b = 'x' WHERE k = 1",
        "UPDATE t SET b = 'y' WHERE k = 2",
    ]
    assert db.execute("SELECT b FROM t ORDER BY k").fetchall() == [("x",), ("y",)]
