"""Driver errors of the SQL run store, told apart and translated (issue 12).

Used by :mod:`gateway.store.sql` and :mod:`gateway.store.group_commit`: a lost or unreachable
database becomes :class:`~gateway.store.errors.StoreUnavailableError` (``STORE_UNAVAILABLE``,
503, transient), any other database failure ``STORE_ERROR``; what is not a database error (a
bug of ours) is left alone so it keeps its traceback.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .errors import RunStoreError, StoreUnavailableError

__all__ = [
    "connection",
    "is_database_error",
    "is_disconnect",
    "transaction",
    "translate_error",
]


def _disconnect(exc: BaseException) -> bool:
    """True for the errors that mean "the database cannot be reached", wherever they come from:
    the driver's socket errors (asyncpg raises ``OSError`` / ``ConnectionRefusedError`` /
    ``TimeoutError`` untranslated while connecting), asyncpg's connection errors, and
    SQLAlchemy's disconnect flag or pool timeout."""
    if isinstance(exc, OSError | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, sa.exc.DisconnectionError | sa.exc.TimeoutError):
        return True
    if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None:
        return _disconnect(exc.orig) or _disconnect_name(exc.orig)
    return _disconnect_name(exc)


def is_disconnect(exc: BaseException) -> bool:
    """True when ``exc`` means the database cannot be reached (the connection is lost or was
    never made): :class:`~gateway.store.errors.StoreUnavailableError` material."""
    return _disconnect(exc)


def _disconnect_name(exc: BaseException) -> bool:
    # asyncpg's ConnectionDoesNotExistError, ConnectionFailureError, ... (no import: the
    # driver is optional) and the interface errors SQLAlchemy's adapter wraps them in.
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names
        & {
            "PostgresConnectionError",
            "ConnectionDoesNotExistError",
            "ConnectionFailureError",
            "InterfaceError",
            "InternalClientError",
        }
    ) or (exc.__cause__ is not None and exc.__cause__ is not exc and _disconnect(exc.__cause__))


def is_database_error(exc: BaseException) -> bool:
    """True for what the database or its driver raises (SQLAlchemy, asyncpg, aiosqlite,
    sockets), False for anything else (a bug of ours, which must not pass for a store fault)."""
    if isinstance(exc, sa.exc.SQLAlchemyError) or _disconnect(exc):
        return True
    module = type(exc).__module__.split(".")[0]
    return module in {"asyncpg", "aiosqlite", "sqlite3"}


def translate_error(exc: BaseException) -> RunStoreError:
    """The :class:`RunStoreError` for a database or driver exception (issue 12: the store let
    the driver's ``OSError`` through, which reached HTTP clients as a plain-text 500).

    A lost or unreachable database is :class:`StoreUnavailableError` (503, transient);
    another one ``STORE_ERROR`` "database error" (the cause is chained for the log; a client
    never sees the SQL, its values or an exception's class).
    """
    if _disconnect(exc):
        return StoreUnavailableError("the run store is unavailable")
    return RunStoreError("database error")


@asynccontextmanager
async def transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """``engine.begin()`` with driver errors translated (:func:`translate_error`)."""
    try:
        async with engine.begin() as conn:
            yield conn
    except RunStoreError:
        raise
    except Exception as exc:
        if not is_database_error(exc):
            raise  # a bug of ours, not the database: keep its traceback
        raise translate_error(exc) from exc


@asynccontextmanager
async def connection(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """``engine.connect()`` (reads) with driver errors translated (:func:`translate_error`)."""
    try:
        async with engine.connect() as conn:
            yield conn
    except RunStoreError:
        raise
    except Exception as exc:
        if not is_database_error(exc):
            raise
        raise translate_error(exc) from exc
