"""SQL of the upstream id mapping (used by :class:`~gateway.store.sql.SqlRunStore`): the
``upstream_ids`` table (migration 0006, issue 11 kind 1).

An id an upstream chose that the store refuses (:func:`gateway.ids.id_problem`: over 100
characters, NUL, a lone surrogate, ...) reaches the client as ``up-<32 hex>``
(:mod:`gateway.upstream_ids`). One row per such id of a thread keeps the provider's original,
primary key ``(thread_id, gateway_id)``, so the next request of the thread can send each
provider its own id back (:func:`agui_codecs.identity.provider_body`).

``original`` is stored as the ASCII JSON string literal of the id (``json.dumps`` with
``ensure_ascii``: NUL is ``\\u0000``, a lone surrogate ``\\ud800``, every non-ASCII character
escaped), the same bytes on SQLite and PostgreSQL, whose text columns cannot hold a NUL.
The gateway id is the SHA-256 of the original, so a row is never rewritten: a repeat insert is
ignored.

Every function takes an open connection; the caller owns the transaction and the translation of
driver errors.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .history_sql import ensure_thread, insert_ignore
from .schema import upstream_ids

__all__ = ["keep_originals", "originals_of"]

_INSERT: dict[str, Any] = {}
"""``insert_ignore`` of mapping rows per dialect, built once."""


def _literal(original: str) -> str:
    return json.dumps(original, ensure_ascii=True)


async def keep_originals(
    conn: AsyncConnection, thread_id: str, mapping: Mapping[str, str], now: datetime
) -> None:
    """Insert ``mapping`` (gateway id -> provider id) for ``thread_id`` (the thread row is
    created when missing); rows already there are kept as they are."""
    if not mapping:
        return
    await ensure_thread(conn, thread_id, now)
    dialect = conn.dialect.name
    statement = _INSERT.get(dialect)
    if statement is None:
        statement = _INSERT[dialect] = insert_ignore(
            dialect, upstream_ids, ["thread_id", "gateway_id"]
        )
    await conn.execute(
        statement,
        [
            {
                "thread_id": thread_id,
                "gateway_id": gateway_id,
                "original": _literal(original),
                "created_at": now,
            }
            for gateway_id, original in sorted(mapping.items())
        ],
    )


async def originals_of(
    conn: AsyncConnection, thread_id: str, gateway_ids: Collection[str]
) -> dict[str, str]:
    """``{gateway id: provider id}`` for those of ``gateway_ids`` the thread holds."""
    if not gateway_ids:
        return {}
    rows = (
        await conn.execute(
            sa.select(upstream_ids.c.gateway_id, upstream_ids.c.original).where(
                upstream_ids.c.thread_id == thread_id,
                upstream_ids.c.gateway_id.in_(sorted(set(gateway_ids))),
            )
        )
    ).all()
    return {str(gateway_id): str(json.loads(original)) for gateway_id, original in rows}
