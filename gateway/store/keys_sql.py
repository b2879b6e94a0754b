"""SQL of the client API keys and of the per-tenant usage (used by
:class:`~gateway.store.sql.SqlRunStore`): the ``api_keys`` table and aggregates of ``runs``.

Every function takes an open connection; the caller owns the transaction and the translation of
driver errors (:meth:`SqlRunStore._tx`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .models import ACTIVE_STATUSES, ApiKey, TenantUsage
from .schema import api_keys, runs

__all__ = ["get_key", "insert_key", "list_keys", "revoke_key", "tenant_usage"]


def _key(row: Any) -> ApiKey:
    m = row._mapping
    routes = m["routes"]
    return ApiKey(
        id=m["id"],
        tenant=m["tenant"],
        secret_sha256=m["secret_sha256"],
        routes=tuple(routes) if routes is not None else None,
        name=m["name"],
        created_at=m["created_at"],
        expires_at=m["expires_at"],
        revoked_at=m["revoked_at"],
    )


async def insert_key(conn: AsyncConnection, key: ApiKey) -> None:
    """Insert ``key`` (IntegrityError when its id is taken)."""
    await conn.execute(
        sa.insert(api_keys).values(
            id=key.id,
            tenant=key.tenant,
            secret_sha256=key.secret_sha256,
            routes=list(key.routes) if key.routes is not None else None,
            name=key.name,
            created_at=key.created_at,
            expires_at=key.expires_at,
            revoked_at=key.revoked_at,
        )
    )


async def get_key(conn: AsyncConnection, key_id: str) -> ApiKey | None:
    """The key ``key_id`` (revoked and expired ones too), or None."""
    row = (await conn.execute(sa.select(api_keys).where(api_keys.c.id == key_id))).first()
    return _key(row) if row is not None else None


async def list_keys(conn: AsyncConnection, tenant: str | None) -> list[ApiKey]:
    """Every key (of ``tenant`` when given), oldest first."""
    query = sa.select(api_keys).order_by(api_keys.c.created_at, api_keys.c.id)
    if tenant is not None:
        query = query.where(api_keys.c.tenant == tenant)
    return [_key(row) for row in (await conn.execute(query)).all()]


async def revoke_key(conn: AsyncConnection, key_id: str, now: datetime) -> ApiKey | None:
    """Set ``revoked_at`` (kept when already revoked); the key as it is now, or None."""
    await conn.execute(
        sa.update(api_keys)
        .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return await get_key(conn, key_id)


async def tenant_usage(conn: AsyncConnection, tenant: str | None) -> TenantUsage:
    """Active runs and stored bytes of ``tenant``'s runs (None: the runs without tenant)."""
    match = runs.c.tenant.is_(None) if tenant is None else runs.c.tenant == tenant
    active = sa.func.sum(sa.case((runs.c.status.in_(sorted(ACTIVE_STATUSES)), 1), else_=0))
    row = (
        await conn.execute(
            sa.select(active, sa.func.coalesce(sa.func.sum(runs.c.stored_bytes), 0)).where(match)
        )
    ).one()
    return TenantUsage(active_runs=int(row[0] or 0), stored_bytes=int(row[1] or 0))
