"""A run looked up by id on the event loop's own thread, on SQLite (issue 13 item 2).

Every ``POST /v1/agui/{route}`` asks whether its run exists before its upstream request goes
out (a retry re-joins its run). Through aiosqlite that point read is a hop to a driver thread
and back, and each hop hands the GIL over several times (the worker's queue, ``sqlite3``'s
step, the answer scheduled on the loop); while the loop's thread runs Python each hand-over
waits for its switch interval (5 ms), so under a burst of new runs the read took 10-30 ms
(``bench/added_latency.py`` C=64), every event of the run late by that much. The read itself
is a primary-key lookup of a few microseconds: :class:`LoopReads` makes it on the loop's
thread, on a query-only connection of its own (WAL: readers never wait for the writer), with
no busy wait (``busy_timeout`` 0): a database that cannot answer at once (a checkpoint that
must reset the WAL, a lock held by another process) raises, and the caller reads it the usual
way. The row goes through the same compiled statement and result processing as the store's
other reads (:class:`~gateway.store.sqlite_raw.RawConnection`), and the statement is timed as
theirs are (``agui_gateway_store_operation_seconds{operation="SELECT"}``).

Only for a file database (an in-memory one is private to its connection).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Final

import sqlalchemy as sa

from .. import metrics
from .models import RunRecord
from .sql_statements import GET_RUN, run_from_row
from .sqlite_raw import RawConnection, drive

__all__ = ["LoopReads", "loop_reads_for"]

_SELECT_SECONDS: Final = metrics.STORE_SECONDS.labels("SELECT")


class LoopReads:
    """Point reads of runs on the calling thread (see the module docstring).

    Args:
        path: the database file.
        dialect: the store engine's dialect (bind and result processors).
    """

    def __init__(self, path: str, dialect: sa.Dialect) -> None:
        self.path = path
        self.dialect = dialect
        self._conn: sqlite3.Connection | None = None
        self._owner: int | None = None

    def _connection(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None or self._owner != threading.get_ident():
            if conn is not None:  # another loop's thread (a store outliving a test's loop)
                conn.close()
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=0")
            conn.execute("PRAGMA query_only=ON")
            self._conn, self._owner = conn, threading.get_ident()
        return conn

    def get_run(self, run_id: str) -> RunRecord | None:
        """The run's record, or None when there is none.

        Raises:
            sqlite3.Error: the database could not answer at once (busy, locked, unreadable):
                read it the usual way.
        """
        started = time.perf_counter()
        raw = RawConnection(self._connection(), self.dialect)
        try:
            result = drive(raw.execute(GET_RUN, {"p_run_id": run_id}))
        except sa.exc.DBAPIError as exc:
            raise sqlite3.OperationalError(str(exc.orig)) from exc
        finally:
            _SELECT_SECONDS.observe(time.perf_counter() - started)
        row = result.first()
        return None if row is None else run_from_row(row)

    def close(self) -> None:
        """Close the connection (opened again if used after)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = self._owner = None


def loop_reads_for(engine_url: sa.URL, dialect: sa.Dialect) -> LoopReads | None:
    """:class:`LoopReads` of a SQLite file database; None for any other."""
    if engine_url.get_backend_name() != "sqlite":
        return None
    database = engine_url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return LoopReads(database, dialect)
