"""One thread hop per SQLite statement: SQLAlchemy's aiosqlite cursor, executed in one call.

aiosqlite runs every ``sqlite3`` call on its connection's worker thread; each call is a round
trip (a queue put, the worker's step, a future resolved on the event loop). SQLAlchemy's
adapted cursor (``sqlalchemy/connectors/asyncio.py``, ``AsyncAdapt_dbapi_cursor``,
SQLAlchemy 2.1) makes three or four of them per statement: ``connection.cursor()``,
``cursor.execute()``, ``cursor.fetchall()`` when the statement returns rows, and
``cursor.close()``. Issue 13 item 1 measured about 3.7 hops per statement on the durable run
path (``bench/pump_path.py --counts``: 64.6 aiosqlite calls for 17.7 statements per run).

:class:`OneHopCursor` does the whole statement (cursor, execute or executemany, fetchall,
close) in **one** call on the worker thread (aiosqlite's ``Connection._execute``, the queue
its own methods use, aiosqlite 0.20-0.22) and hands SQLAlchemy the rows, ``description``,
``rowcount`` and ``lastrowid`` the ``sqlite3`` cursor had, so the result layer above it is
unchanged: the same SQL, parameters, type processing, errors (raised by ``sqlite3`` in the
worker and translated by the adapter's ``_handle_exception`` as before) and transactions
(``commit``/``rollback`` are the adapter's own, one hop each, skipped when ``sqlite3`` has no
transaction open, where it would do nothing either: the pool's rollback on every checkin, after
a commit or a read). Server-side cursors (``stream``) keep SQLAlchemy's.

:func:`use_one_hop_cursors` installs it on a connection of the pool (the engine's ``connect``
event, :func:`gateway.store.engine.create_engine`).
"""

from __future__ import annotations

import collections
import sqlite3
from typing import Any

from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
)

__all__ = ["OneHopConnection", "OneHopCursor", "aiosqlite_driver", "use_one_hop_cursors"]


class _Outcome:
    """What a ``sqlite3`` cursor reported after its statement (the adapter reads these)."""

    __slots__ = ("arraysize", "description", "lastrowid", "rowcount")

    def __init__(self) -> None:
        self.description: Any = None
        self.rowcount: int = -1
        self.lastrowid: int | None = None
        self.arraysize: int = 1


_Done = tuple[Any, int, int | None, list[Any]]


def _run(conn: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> _Done:
    """On aiosqlite's worker thread: the statement and all its rows, then the cursor closed."""
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        rows = cursor.fetchall() if cursor.description else []
        return cursor.description, cursor.rowcount, cursor.lastrowid, rows
    finally:
        cursor.close()


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """SQLAlchemy's aiosqlite cursor with each statement one worker call (module docstring).

    ``_cursor`` holds the :class:`_Outcome` of the last statement instead of an aiosqlite
    cursor (nothing to open or close on the worker thread)."""

    __slots__ = ()

    def _make_new_cursor(self, connection: Any) -> Any:
        return _Outcome()

    def _aenter_cursor(self, cursor: Any) -> Any:
        return cursor

    async def _hop(self, operation: Any, parameters: Any, many: bool) -> None:
        driver = self._connection
        async with self._adapt_connection._execute_mutex:
            done = await driver._execute(_run, driver._conn, operation, parameters, many)
        outcome: Any = self._cursor
        outcome.description, outcome.rowcount, outcome.lastrowid, rows = done
        self._rows = collections.deque(rows)

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        await self._hop(operation, parameters, False)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        await self._hop(operation, seq_of_parameters, True)

    async def _async_soft_close(self) -> None:
        return None  # the sqlite3 cursor is closed already; the rows stay

    def close(self) -> None:
        self._rows.clear()


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy's aiosqlite connection whose (client-side) cursors are :class:`OneHopCursor`."""

    __slots__ = ()

    _cursor_cls = OneHopCursor

    def _in_transaction(self) -> bool:
        raw: sqlite3.Connection | None = self._connection._connection
        return raw is not None and raw.in_transaction

    def commit(self) -> None:
        # sqlite3 commits only when a transaction is open (Modules/_sqlite/connection.c:
        # ``if (!sqlite3_get_autocommit(self->db))``): skip the worker call when none is
        if self._in_transaction():
            super().commit()

    def rollback(self) -> None:
        # the pool's reset on every checkin (``reset_on_return="rollback"``), after a commit
        # or a read, has nothing to roll back: a worker call saved per checkout
        if self._in_transaction():
            super().rollback()


def use_one_hop_cursors(dbapi_connection: Any) -> None:
    """Make a pooled aiosqlite connection (SQLAlchemy's ``AsyncAdapt_aiosqlite_connection``,
    as the ``connect`` event receives it) open :class:`OneHopCursor` cursors. Another class
    (not aiosqlite) is left as it is."""
    if type(dbapi_connection) is AsyncAdapt_aiosqlite_connection and _internals_present(
        dbapi_connection
    ):
        dbapi_connection.__class__ = OneHopConnection


def _internals_present(dbapi_connection: Any) -> bool:
    """Whether the private pieces :class:`OneHopCursor` uses are there (aiosqlite's
    ``Connection._execute`` and ``_conn``, SQLAlchemy's ``_execute_mutex``; checked on
    aiosqlite 0.22.1 and SQLAlchemy 2.0): a release without them keeps SQLAlchemy's own cursor
    (three or four worker calls per statement) instead of failing."""
    driver = getattr(dbapi_connection, "_connection", None)
    return (
        callable(getattr(driver, "_execute", None))
        and hasattr(driver, "_conn")
        and hasattr(dbapi_connection, "_execute_mutex")
    )


def aiosqlite_driver(dbapi_connection: Any) -> Any:
    """The ``aiosqlite.Connection`` under a pooled SQLAlchemy aiosqlite connection, when the
    private pieces :class:`OneHopCursor` uses are there (see :func:`_internals_present`;
    :mod:`gateway.store.sqlite_raw` runs a group's transaction through them); else None."""
    if isinstance(dbapi_connection, AsyncAdapt_aiosqlite_connection) and _internals_present(
        dbapi_connection
    ):
        return dbapi_connection._connection
    return None
