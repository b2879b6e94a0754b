"""JWT bearer verification for teams with an identity provider (PyJWT).

A token is accepted when its signature verifies with a key of the JWKS at
``GATEWAY_JWT_JWKS_URL`` (picked by ``kid``; algorithms ``GATEWAY_JWT_ALGORITHMS``, never
``none`` nor HMAC), it has not expired (``exp`` required; 30 s leeway for clock skew), its
``iss`` is ``GATEWAY_JWT_ISSUER`` and its ``aud`` holds ``GATEWAY_JWT_AUDIENCE``
(``jwt.decode``, PyJWT 2.x). The tenant is the claim ``GATEWAY_JWT_TENANT_CLAIM`` (a tenant
name, :mod:`gateway.tenancy`); ``GATEWAY_JWT_ROUTES_CLAIM``, when set, names a claim listing
the routes allowed (a list, or a space-separated string as OAuth scopes are).

Keys are fetched with the gateway's own HTTP client (async: PyJWT's ``PyJWKClient`` blocks)
and reused for ``GATEWAY_JWKS_CACHE_SECONDS``; an unknown ``kid`` (the provider rotated its
keys) refetches at once, then at most once per :data:`REFETCH_INTERVAL` seconds, so a stream of
made-up ``kid`` values cannot make the gateway hammer the provider.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Final

import httpx
import jwt

from ..errors import RequestError
from ..security_settings import SecuritySettings
from ..tenancy import TENANT_PATTERN
from .caller import Caller
from .errors import ForbiddenError, UnauthenticatedError

__all__ = ["LEEWAY_SECONDS", "REFETCH_INTERVAL", "JwtVerifier"]

_log = logging.getLogger(__name__)

LEEWAY_SECONDS: Final[int] = 30
"""Clock skew tolerated on ``exp`` / ``nbf`` / ``iat``."""

REFETCH_INTERVAL: Final[float] = 10.0
"""Least seconds between two JWKS fetches caused by an unknown ``kid``."""


class JwtVerifier:
    """Verify JWT bearer tokens against a JWKS (see the module docstring).

    Args:
        settings: the JWT settings (``jwt_*``, ``jwks_cache_seconds``).
        client: the HTTP client the JWKS is fetched with.
        clock: monotonic seconds (tests).
    """

    def __init__(
        self,
        settings: SecuritySettings,
        client: httpx.AsyncClient,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        assert settings.jwt_jwks_url is not None
        self.url = settings.jwt_jwks_url
        self.issuer = settings.jwt_issuer
        self.audience = settings.jwt_audience
        self.tenant_claim = settings.jwt_tenant_claim
        self.routes_claim = settings.jwt_routes_claim
        self.algorithms = settings.jwt_algorithm_list
        self.ttl = settings.jwks_cache_seconds
        self.client = client
        self._clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._forced_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def _refresh(self, *, unknown_kid: bool) -> None:
        async with self._lock:
            now = self._clock()
            fetched = self._fetched_at
            if fetched is not None and now - fetched < self.ttl:
                forced = self._forced_at
                if not unknown_kid or (forced is not None and now - forced < REFETCH_INTERVAL):
                    return
            if unknown_kid:
                self._forced_at = now
            try:
                response = await self.client.get(self.url, timeout=10.0)
                response.raise_for_status()
                keyset = jwt.PyJWKSet.from_dict(response.json())
            except (httpx.HTTPError, ValueError, jwt.PyJWKSetError) as exc:
                _log.warning("JWKS %s could not be fetched: %s", self.url, type(exc).__name__)
                if self._keys:
                    return  # keep the keys we have
                raise RequestError(
                    "token keys are unavailable", code="AUTH_UNAVAILABLE", status=503
                ) from exc
            self.fetches += 1
            self._keys = {k.key_id: k for k in keyset.keys if k.key_id}
            self._fetched_at = now

    async def _key(self, kid: str) -> jwt.PyJWK:
        fetched = self._fetched_at
        if fetched is None or self._clock() - fetched >= self.ttl:
            await self._refresh(unknown_kid=False)
        if kid not in self._keys:
            await self._refresh(unknown_kid=True)
        key = self._keys.get(kid)
        if key is None:
            raise UnauthenticatedError("token is signed with an unknown key")
        return key

    async def caller(self, token: str) -> Caller:
        """The caller a valid token names.

        Raises:
            UnauthenticatedError: 401, malformed, badly signed, expired, wrong issuer or
                audience.
            ForbiddenError: 403, the token has no valid tenant claim.
            RequestError: 503 ``AUTH_UNAVAILABLE``, the JWKS cannot be fetched.
        """
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as exc:
            raise UnauthenticatedError("credentials are not valid") from exc
        kid = header.get("kid")
        if not isinstance(kid, str) or header.get("alg") not in self.algorithms:
            raise UnauthenticatedError("token has no key id or an algorithm not accepted")
        key = await self._key(kid)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise UnauthenticatedError("token expired", error="invalid_token") from exc
        except jwt.InvalidTokenError as exc:
            raise UnauthenticatedError("credentials are not valid") from exc
        tenant = claims.get(self.tenant_claim)
        if not isinstance(tenant, str) or not TENANT_PATTERN.fullmatch(tenant):
            raise ForbiddenError(f"token has no valid {self.tenant_claim!r} claim")
        routes: frozenset[str] | None = None
        if self.routes_claim is not None:
            value = claims.get(self.routes_claim)
            if isinstance(value, str):
                routes = frozenset(value.split())
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                routes = frozenset(value)
            else:
                routes = frozenset()  # the claim is required when configured: no route
        subject = claims.get("sub")
        return Caller(
            tenant=tenant,
            subject=subject if isinstance(subject, str) else None,
            routes=routes,
            method="jwt",
        )
