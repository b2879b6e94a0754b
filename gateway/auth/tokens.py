"""Scoped tokens: what a browser ``EventSource`` sends as ``?access_token=`` (it cannot set an
``Authorization`` header), instead of the key itself.

``POST /api/v1/agent/runs/{thread_id}/token?runId=`` mints one for an authenticated caller:
``ags_<payload>.<mac>``, the payload base64url JSON ``{"v": 1, "tn": tenant, "th": thread id,
"r": run id, "sub": subject, "exp": unix seconds}`` and the MAC the first 16 bytes of
HMAC-SHA256 over ``ags_<payload>`` with the server secret (``GATEWAY_SECRET``, the same on
every replica; when unset a random secret of this process, so tokens do not survive a restart
nor reach another replica). It reads that one run's events and nothing else, until ``exp``
(``GATEWAY_TOKEN_TTL_SECONDS``, default 300).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any, Final

import orjson

__all__ = ["TOKEN_PREFIX", "ScopedToken", "TokenError", "mint_token", "verify_token"]

TOKEN_PREFIX: Final[str] = "ags_"
_MAC_BYTES: Final[int] = 16


class TokenError(Exception):
    """The token is malformed, forged or expired (``expired`` tells the last)."""

    def __init__(self, message: str, *, expired: bool = False) -> None:
        super().__init__(message)
        self.expired = expired


@dataclass(frozen=True, slots=True)
class ScopedToken:
    """What a token grants: read ``run_id`` of ``thread_id`` for ``tenant`` until ``expires``
    (unix seconds); ``subject`` is the credential that minted it."""

    tenant: str | None
    thread_id: str
    run_id: str
    subject: str | None
    expires: int


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, signed: str) -> str:
    return _b64(hmac.new(secret, signed.encode(), hashlib.sha256).digest()[:_MAC_BYTES])


def mint_token(secret: bytes, grant: ScopedToken) -> str:
    """The token of ``grant``, signed with ``secret``."""
    payload: dict[str, Any] = {
        "v": 1,
        "tn": grant.tenant,
        "th": grant.thread_id,
        "r": grant.run_id,
        "sub": grant.subject,
        "exp": grant.expires,
    }
    signed = TOKEN_PREFIX + _b64(orjson.dumps(payload))
    return f"{signed}.{_mac(secret, signed)}"


def verify_token(secret: bytes, token: str, *, now: float) -> ScopedToken:
    """The grant of a token signed with ``secret`` that has not expired at ``now``.

    Raises:
        TokenError: malformed, wrong MAC, or expired.
    """
    signed, dot, mac = token.rpartition(".")
    if not dot or not signed.startswith(TOKEN_PREFIX):
        raise TokenError("not a scoped token")
    if not hmac.compare_digest(mac, _mac(secret, signed)):
        raise TokenError("token signature does not verify")
    try:
        payload = orjson.loads(_unb64(signed.removeprefix(TOKEN_PREFIX)))
        grant = ScopedToken(
            tenant=payload["tn"],
            thread_id=str(payload["th"]),
            run_id=str(payload["r"]),
            subject=payload.get("sub"),
            expires=int(payload["exp"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise TokenError("token payload is malformed") from exc
    if now >= grant.expires:
        raise TokenError("token expired", expired=True)
    return grant
