"""The SQLite group writer's connection: checked out of the pool once, held for the writer's life.

Issue 13 ("durability must be nearly free"): :mod:`gateway.store.group_commit` runs each
group's transaction in one call on aiosqlite's worker thread (:mod:`gateway.store.sqlite_raw`).
Checking a pooled connection out for each group and back cost about 76 µs of the event loop's
thread per group besides that call (``AsyncEngine.connect()``: SQLAlchemy's ``Connection`` and
its greenlet, the pool's checkout and checkin events and reset; the ``async with``'s close as a
task of its own, shielded: four loop callbacks), about 1.5 groups per durable run. Here the
writer checks one connection out at its first group and keeps it until it stops
(:meth:`HeldConnection.release`, from the writer's ``aclose``), so a group costs its worker
call alone. Every other caller (reads, the rare single writes, a group that falls back to
SQLAlchemy) checks connections out and back as before, with the pool's reset on return; the
held one is reset by the pool when it goes back.

Why holding it is safe on SQLite: a group's transaction begins and ends inside its one
worker call (``BEGIN IMMEDIATE`` .. ``COMMIT`` / ``ROLLBACK``, ``run_transaction``), so between
groups the held connection is in no transaction and holds no lock: WAL checkpoints, readers on
other connections and other writers (another process, the fallback path) are not held up by
it. aiosqlite's connection is a thread of its own whose calls resolve a future on whichever
loop awaits them (aiosqlite 0.20-0.22 ``Connection._execute``), so the writer of a later event
loop may return a connection the writer of a closed one held.

Errors: a database error of the checkout, of a group's transaction or of its ``BEGIN`` /
``COMMIT`` is raised translated (:func:`gateway.store.sql_errors.translate_error`:
:class:`~gateway.store.errors.StoreUnavailableError` for a lost database, else
:class:`~gateway.store.errors.RunStoreError`, the driver's error as ``__cause__``), as through
``sql_errors.connection``; the held connection is then invalidated (closed, not returned:
whatever broke it stays out of the pool; such errors are rare, a seq conflict is not one of
them) and the next group checks out a fresh one. What is not a database error (a conflict
the group committer turned into its own exception,
:class:`~gateway.store.sqlite_raw.RawUnsupported`, a bug) leaves the connection held:
``run_transaction`` rolled its transaction back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .sql_errors import is_database_error, translate_error
from .sqlite_one_hop import aiosqlite_driver
from .sqlite_raw import RawConnection, run_transaction

__all__ = ["CommittedCancel", "HeldConnection"]

_log = logging.getLogger(__name__)


class CommittedCancel(asyncio.CancelledError):
    """The writer was cancelled while its group's transaction was in the worker call, and the
    transaction then committed: its writes are durable, so they are answered as done (a caller
    told "failed" would retry a batch the store already holds). Raised in place of the
    ``CancelledError``, which it is."""


Body = Callable[[RawConnection], Coroutine[Any, Any, Any]]
"""A group's writes on the raw connection (``run_transaction``'s ``body``)."""


class HeldConnection:
    """One pooled aiosqlite connection of ``engine``, checked out at the first
    :meth:`run_transaction` and held until :meth:`release` (see the module docstring).

    Args:
        engine: the store's engine (SQLite through aiosqlite; another driver is reported by
            :meth:`run_transaction` returning False).
    """

    __slots__ = ("_conn", "_driver", "_mutex", "checkouts", "engine")

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._conn: AsyncConnection | None = None
        self._driver: Any = None
        self._mutex: asyncio.Lock | None = None
        self.checkouts = 0
        """Connections checked out so far (a figure for tests)."""

    @property
    def held(self) -> bool:
        """Whether a connection is checked out now."""
        return self._conn is not None

    async def run_transaction(self, body: Body) -> bool:
        """``body`` in one transaction, in one call on the held connection's worker thread
        (:func:`gateway.store.sqlite_raw.run_transaction`: ``BEGIN IMMEDIATE``, ``body``,
        ``COMMIT``; ``ROLLBACK`` when anything raised). Checks a connection out first when none
        is held. False (nothing sent, nothing held) when the pool's connections are not
        aiosqlite's, or lack the private pieces the raw path uses.

        Raises:
            RunStoreError: the checkout or the transaction failed in the database
                (StoreUnavailableError: it is lost); the connection was given back.
            RawUnsupported: a statement needs SQLAlchemy's execution (rolled back).
            Whatever else ``body`` raised (rolled back).
        """
        conn = self._conn
        if conn is None:
            conn = await self._check_out()
            if conn is None:
                return False
        mutex = self._mutex
        driver = self._driver
        assert mutex is not None
        try:
            async with mutex:
                call = asyncio.ensure_future(
                    driver._execute(
                        run_transaction, driver._conn, conn.dialect, conn.sync_connection, body
                    )
                )
                try:
                    await asyncio.shield(call)
                except asyncio.CancelledError as cancel:
                    # a cancel cannot stop the worker thread: the transaction commits or rolls
                    # back there; wait for which, so the group is answered by what is stored
                    await _settled(call)
                    if not call.cancelled() and call.exception() is None:
                        raise CommittedCancel(*cancel.args) from cancel
                    raise
        except asyncio.CancelledError:
            await self.release()
            raise
        except Exception as exc:
            if not is_database_error(exc):
                raise
            await self.release(invalidate=exc)
            raise translate_error(exc) from exc
        return True

    async def _check_out(self) -> AsyncConnection | None:
        try:
            conn = await self.engine.connect()
        except Exception as exc:
            if not is_database_error(exc):
                raise
            raise translate_error(exc) from exc
        try:
            pooled = await conn.get_raw_connection()
            adapted: Any = pooled.dbapi_connection
            driver = aiosqlite_driver(adapted)
        except BaseException:
            await conn.close()
            raise
        if driver is None:
            await conn.close()
            return None
        self._conn, self._driver, self._mutex = conn, driver, adapted._execute_mutex
        self.checkouts += 1
        return conn

    async def release(self, *, invalidate: Exception | None = None) -> None:
        """Give the held connection back to the pool (its reset on return runs), or, with
        ``invalidate`` (the error that broke it), close it instead. Nothing held: nothing
        happens. Never raises a database error (logged)."""
        conn, self._conn, self._driver, self._mutex = self._conn, None, None, None
        if conn is None:
            return
        try:
            if invalidate is not None:
                await conn.invalidate(invalidate)
            await conn.close()
        except Exception:
            _log.warning("the group writer's connection could not be returned", exc_info=True)
            with contextlib.suppress(Exception):
                await conn.invalidate()


async def _settled(call: asyncio.Future[Any]) -> None:
    """Wait until ``call`` is done, whatever cancels the waiting task meanwhile (the worker
    thread finishes the call regardless)."""
    while not call.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({call})
