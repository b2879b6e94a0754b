"""Client API keys: ``agk_<id>_<secret>``, shown once, stored as the SHA-256 of the secret.

The secret is 32 random bytes (:func:`secrets.token_urlsafe`, 256 bits), so a fast hash is the
right one: a slow password hash (argon2, scrypt) protects low-entropy secrets against guessing,
and nothing can guess 256 random bits; SHA-256 keeps a key check at one primary-key read and
one hash. The id part is public (it names the key in ``keys list`` / ``keys revoke`` and in the
access log as the caller's subject) and is the store's primary key, so a check never scans.
The comparison is constant-time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from ..store.models import ApiKey
from ..tenancy import check_tenant

__all__ = ["KEY_PREFIX", "matches", "new_api_key", "parse_key", "secret_sha256"]

KEY_PREFIX: Final[str] = "agk_"
"""Every API key starts with it (so a leaked key is easy to find with a secret scanner)."""

_KEY: Final[re.Pattern[str]] = re.compile(r"agk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")


def secret_sha256(secret: str) -> str:
    """Hex SHA-256 of a key's secret part (what the store keeps)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_key(token: str) -> tuple[str, str] | None:
    """``(key id, secret)`` of an ``agk_`` key, or None when ``token`` is not one."""
    match = _KEY.fullmatch(token)
    return (match.group(1), match.group(2)) if match else None


def matches(key: ApiKey, secret: str) -> bool:
    """True when ``secret`` is the key's secret (constant-time)."""
    return hmac.compare_digest(key.secret_sha256, secret_sha256(secret))


def new_api_key(
    tenant: str,
    *,
    now: datetime,
    routes: Sequence[str] | None = None,
    name: str | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """A fresh key for ``tenant``: the record to store and the key to show once.

    Raises:
        ValueError: ``tenant`` is not a tenant name (:mod:`gateway.tenancy`).
    """
    check_tenant(tenant)
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    record = ApiKey(
        id=key_id,
        tenant=tenant,
        secret_sha256=secret_sha256(secret),
        routes=tuple(routes) if routes is not None else None,
        name=name,
        created_at=now,
        expires_at=expires_at,
    )
    return record, f"{KEY_PREFIX}{key_id}_{secret}"
