"""Engines for the run store: URL normalisation, SQLite pragmas, PostgreSQL schemas.

SQLite (``sqlite+aiosqlite``) is the embedded default: one file, WAL journal, a 30 s busy
timeout so concurrent writers wait instead of failing, foreign keys on. PostgreSQL uses
``postgresql+asyncpg``; an optional schema (``search_path``) lets tests and tenants share a
database. JSON columns are (de)serialised with orjson.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

__all__ = ["DEFAULT_DATABASE_URL", "create_engine", "normalize_url"]

DEFAULT_DATABASE_URL: Final[str] = "sqlite+aiosqlite:///./agui-gateway.db"
"""Embedded default: a SQLite file in the working directory."""

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
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def create_engine(
    url: str, *, schema: str | None = None, echo: bool = False, pre_ping: bool = True
) -> AsyncEngine:
    """Create the async engine for ``url`` (see :func:`normalize_url`).

    Args:
        url: database URL.
        schema: PostgreSQL only: the schema (``search_path``) holding the tables; created by
            :func:`open_store` when missing. Lets tests and tenants share one database.
        echo: log SQL statements.
        pre_ping: PostgreSQL only: test each pooled connection when it is checked out, so one
            that died while idle (server restart, idle timeout of a proxy) is replaced instead
            of failing the operation. Costs one round trip per store call (about 0.35 ms on a
            local server, a third of a small query); without it, the first operation on a dead
            connection fails (the pump retries its writes; a reader's request fails) and the
            pool is then refreshed.

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
        elif not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(parsed, **kwargs)
        sa.event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    if schema is not None:
        if not _SCHEMA_RE.fullmatch(schema):
            raise ValueError(f"invalid schema name {schema!r}")
        kwargs["connect_args"] = {"server_settings": {"search_path": schema}}
    kwargs["pool_pre_ping"] = pre_ping
    return create_async_engine(parsed, **kwargs)
