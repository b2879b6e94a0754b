"""Engines for the run store: URL normalisation, SQLite pragmas, PostgreSQL schemas.

SQLite (``sqlite+aiosqlite``) is the embedded default (``<data dir>/agui-gateway.db``, see
:func:`data_dir`): one file, WAL journal, a 30 s busy
timeout so concurrent writers wait instead of failing, foreign keys on, each statement one
call on aiosqlite's worker thread (:mod:`gateway.store.sqlite_one_hop`), and a group commit's
whole transaction one call (:mod:`gateway.store.sqlite_raw`). PostgreSQL uses
``postgresql+asyncpg``; an optional schema (``search_path``) lets tests and tenants share a
database, and a pooled connection is pinged at checkout only after it sat idle
(:data:`PING_AFTER_IDLE`, :func:`ping_when_idle`). JSON columns are (de)serialised with orjson.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import orjson
import platformdirs
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from .. import metrics
from .sqlite_one_hop import use_one_hop_cursors

__all__ = [
    "DEFAULT_DATABASE_URL",
    "PING_AFTER_IDLE",
    "SQLITE_FILE",
    "create_engine",
    "data_dir",
    "default_database_url",
    "instrument",
    "normalize_url",
    "ping_when_idle",
    "reads_engine",
    "sqlite_path",
]

SQLITE_FILE: Final[str] = "agui-gateway.db"
"""File name of the embedded SQLite store in the data directory."""


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The gateway's data directory: ``GATEWAY_DATA_DIR`` when set, else the platform's user
    data directory for ``agui-gateway`` (``platformdirs``: ``$XDG_DATA_HOME/agui-gateway`` or
    ``~/.local/share/agui-gateway`` on Linux, ``~/Library/Application Support/agui-gateway``
    on macOS, ``%LOCALAPPDATA%\\agui-gateway`` on Windows). Never the working directory, so
    the same process finds the same runs wherever it is started from."""
    env = os.environ if environ is None else environ
    explicit = env.get("GATEWAY_DATA_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser().resolve()
    return platformdirs.user_data_path("agui-gateway", appauthor=False)


def default_database_url(environ: Mapping[str, str] | None = None) -> str:
    """``sqlite+aiosqlite:///<data_dir>/agui-gateway.db`` (see :func:`data_dir`)."""
    return f"sqlite+aiosqlite:///{data_dir(environ) / SQLITE_FILE}"


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite ``url`` (None: not SQLite, or in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).expanduser().resolve()


DEFAULT_DATABASE_URL: Final[str] = default_database_url()
"""Embedded default, as the environment said at import: a SQLite file in :func:`data_dir`
(``Settings`` reads it again when it is built: :func:`default_database_url`)."""

_SCHEMA_RE: Final[re.Pattern[str]] = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def normalize_url(url: str) -> sa.URL:
    """Return the async-driver URL for ``url``.

    ``sqlite://`` becomes ``sqlite+aiosqlite://``; ``postgres://``, ``postgresql://`` and
    ``postgresql+psycopg://`` become ``postgresql+asyncpg://``.

    Raises:
        ValueError: a database other than SQLite or PostgreSQL.
    """
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg")
    raise ValueError(f"unsupported database URL scheme {parsed.drivername!r} (sqlite, postgresql)")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    use_one_hop_cursors(dbapi_connection)  # one worker-thread hop per statement
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


_STARTED: Final = "agui_gateway_started"


def _operation(statement: str) -> str:
    head = statement.lstrip()[:16].split(None, 1)
    return head[0].upper() if head else "OTHER"


_SECONDS_BY_STATEMENT: dict[str, Any] = {}
"""``STORE_SECONDS`` children by statement text: ``labels()`` takes a lock and builds a tuple,
and the verb a string split, on every statement (about 4 % of the group writer's samples,
issue 13). The store's statements are compiled once and their text is the same string each
time (its hash kept), so the lookup is one dict probe; at most :data:`_STATEMENTS` are kept,
others (texts built per call) are looked up each time."""

_STATEMENTS: Final = 512


def _seconds(statement: str) -> Any:
    child = _SECONDS_BY_STATEMENT.get(statement)
    if child is None:
        child = metrics.STORE_SECONDS.labels(_operation(statement))
        if len(_SECONDS_BY_STATEMENT) < _STATEMENTS:
            _SECONDS_BY_STATEMENT[statement] = child
    return child


def _before(conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
    conn.info.setdefault(_STARTED, []).append(time.perf_counter())


def _after(conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
    stack = conn.info.get(_STARTED)
    if stack:
        elapsed = time.perf_counter() - stack.pop()
        _seconds(statement).observe(elapsed)


def _error(context: Any) -> None:
    stack = context.connection.info.get(_STARTED) if context.connection is not None else None
    if stack:
        stack.pop()
    metrics.STORE_ERRORS.labels(_operation(context.statement or "")).inc()


def instrument(engine: AsyncEngine) -> None:
    """Time every SQL statement of ``engine`` and count those that fail
    (``agui_gateway_store_operation_seconds`` / ``_errors_total`` by statement verb, through
    SQLAlchemy's ``before/after_cursor_execute`` and ``handle_error`` events)."""
    sync = engine.sync_engine
    sa.event.listen(sync, "before_cursor_execute", _before)
    sa.event.listen(sync, "after_cursor_execute", _after)
    sa.event.listen(sync, "handle_error", _error)


PING_AFTER_IDLE: Final[float] = 1.0
"""Seconds a pooled PostgreSQL connection sits checked in before its next checkout pings it
(:func:`ping_when_idle`)."""

_IDLE_SINCE: Final = "agui_gateway_idle_since"


def ping_when_idle(engine: AsyncEngine, idle: float = PING_AFTER_IDLE) -> None:
    """Ping a pooled connection of ``engine`` at checkout when it was checked in more than
    ``idle`` seconds ago, as SQLAlchemy's ``pool_pre_ping`` does at every checkout.

    A connection dies while it waits in the pool (a server restart, a proxy's idle timeout);
    one that was just used is alive, and a replay reads its pages back to back (with the pool
    last-in first-out, each page gets the connection the previous one returned). asyncpg's
    ping is three round trips (``BEGIN``, ``;``, ``ROLLBACK``), so at every checkout it cost a
    replay of 10,000 events in 5 pages 15 round trips besides its 5 reads (issue 13). A ping
    that finds the connection gone raises ``InvalidatePoolError`` from the pool's ``checkout``
    event, so the pool replaces it (and every connection checked in before) and the operation
    runs on a fresh one, as after a failed pre-ping; a fresh connection is not pinged. What
    dies within ``idle`` of its last use fails its next operation, which invalidates the pool
    (the pump retries its writes; a reader's request fails), as without a ping.
    """
    sync = engine.sync_engine
    dialect = sync.dialect

    def checkin(_dbapi: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    def checkout(dbapi: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get(_IDLE_SINCE)  # None: fresh (``info`` goes with the connection)
        if since is None or time.monotonic() - since <= idle:
            return
        try:
            dialect.do_ping(dbapi)
        except dialect.loaded_dbapi.Error as exc:  # the driver's errors, as the DB-API's
            if dialect.is_disconnect(exc, dbapi, None):
                raise sa.exc.InvalidatePoolError() from exc
            raise

    sa.event.listen(sync.pool, "checkin", checkin)
    sa.event.listen(sync.pool, "checkout", checkout)


def create_engine(
    url: str,
    *,
    schema: str | None = None,
    echo: bool = False,
    pre_ping: bool = True,
    pool_size: int = 12,
) -> AsyncEngine:
    """Create the async engine for ``url`` (see :func:`normalize_url`).

    Args:
        url: database URL.
        schema: PostgreSQL only: the schema (``search_path``) holding the tables; created by
            :func:`open_store` when missing. Lets tests and tenants share one database.
        echo: log SQL statements.
        pre_ping: PostgreSQL only: test a pooled connection that sat idle for more than
            :data:`PING_AFTER_IDLE` when it is checked out (:func:`ping_when_idle`; the pool
            is last-in first-out, so busy callers keep using the connections just returned),
            so one that died while idle (server restart, idle timeout of a proxy) is replaced
            instead of failing the operation. The ping is one round trip (``;`` alone, not
            SQLAlchemy's three: :func:`_ping_in_one_round_trip`); without it, the first
            operation on a dead connection fails (the pump retries its writes; a reader's
            request fails) and the pool is then refreshed.
        pool_size: connections the pool keeps (``max_overflow`` 8 more; an in-memory SQLite
            database has one); the store's reads are bounded below it (``max_readers``), so no
            caller waits into the pool's checkout timeout (SQLAlchemy's default pool of 5 + 10
            refused a thousand opening streams, issue 13).

    Raises:
        ValueError: unsupported URL, or a schema name that is not a plain identifier.
    """
    parsed = normalize_url(url)
    kwargs: dict[str, Any] = {
        "echo": echo,
        "json_serializer": _dumps,
        "json_deserializer": orjson.loads,
    }
    if parsed.get_backend_name() == "sqlite":
        if schema is not None:
            raise ValueError("schema is a PostgreSQL option")
        database = parsed.database or ""
        if database in ("", ":memory:"):
            kwargs["poolclass"] = StaticPool
        else:
            if not database.startswith("file:"):
                Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            kwargs["pool_size"] = max(1, pool_size)
            kwargs["max_overflow"] = 8
        engine = create_async_engine(parsed, **kwargs)
        sa.event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        instrument(engine)
        return engine
    if schema is not None:
        if not _SCHEMA_RE.fullmatch(schema):
            raise ValueError(f"invalid schema name {schema!r}")
        kwargs["connect_args"] = {"server_settings": {"search_path": schema}}
    kwargs["pool_use_lifo"] = True
    kwargs["pool_size"] = max(1, pool_size)
    kwargs["max_overflow"] = 8
    engine = create_async_engine(parsed, **kwargs)
    if pre_ping:
        engine.dialect.do_ping = _ping_in_one_round_trip  # type: ignore[method-assign]
        ping_when_idle(engine)
    instrument(engine)
    return engine


def _ping_in_one_round_trip(dbapi_connection: Any) -> bool:
    """The pre-ping of a pooled asyncpg connection as one statement (``;``), one round trip.

    SQLAlchemy's asyncpg ping wraps it in ``BEGIN`` and ``ROLLBACK`` unless the connection is
    in autocommit (for PgBouncer's transaction mode, sqlalchemy issue 10226): three round trips
    on every checkout, about 1 ms of the gateway's CPU on a local server (issue 13). A pooled
    connection is never inside a transaction when it is checked out, so here the adapter's own
    autocommit ping runs (its errors translated as before: a dead connection is replaced)."""
    level = dbapi_connection.isolation_level
    dbapi_connection.isolation_level = "autocommit"
    try:
        dbapi_connection.ping()
    finally:
        dbapi_connection.isolation_level = level
    return True


def reads_engine(engine: AsyncEngine) -> AsyncEngine:
    """The engine the store reads with: on PostgreSQL ``engine`` in autocommit (the same pool),
    each read statement alone, without the ``BEGIN`` and ``ROLLBACK`` round trips around it.
    Under READ COMMITTED (PostgreSQL's default, the store's) every statement of a transaction
    takes its own snapshot anyway, so a read sees what it saw before (issue 13). SQLite:
    ``engine`` itself."""
    if engine.dialect.name != "postgresql":
        return engine
    return engine.execution_options(isolation_level="AUTOCOMMIT")
