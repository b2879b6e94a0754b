"""Alembic migrations of the run store, applied programmatically at start (no alembic.ini).

:func:`upgrade` runs ``alembic upgrade head`` on an open async engine. On PostgreSQL it holds
a transaction-scoped advisory lock, so replicas starting together migrate one at a time; the
whole upgrade runs in one transaction (PostgreSQL DDL is transactional).

To write a new revision, add a file to ``versions/`` (``down_revision`` = the previous one)
that creates exactly what :mod:`gateway.store.schema` declares; ``tests/contracts`` checks
that the migrated database matches the metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["HEAD", "SCRIPT_LOCATION", "alembic_config", "upgrade"]

SCRIPT_LOCATION: Final[Path] = Path(__file__).resolve().parent
"""Folder holding ``env.py`` and ``versions/``."""

HEAD: Final[str] = "0007"
"""Revision id of the newest migration (the chain: 0001, 0003, 0002, 0004, 0005, 0006, 0007; 0002's
number was reserved for it before 0003 landed)."""

_LOCK_KEY: Final[int] = 0x4147_5549  # "AGUI": advisory lock id for migrations


def alembic_config(connection: sa.Connection | None = None) -> Config:
    """An alembic :class:`Config` pointing at this package (optionally bound to a connection)."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def _upgrade(connection: sa.Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    command.upgrade(alembic_config(connection), "head")


async def upgrade(engine: AsyncEngine) -> None:
    """Apply every pending migration (idempotent; safe with several replicas on PostgreSQL)."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
