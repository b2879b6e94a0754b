"""Settings of client auth and per-tenant quotas (issue 15), read from ``GATEWAY_*``;
:class:`gateway.config.Settings` inherits them.

Client auth::

    GATEWAY_AUTH                 auto (default) | required | off. ``auto`` is ``required``,
                                 except for ``agui-gateway serve`` on a loopback host with the
                                 embedded demo routes (no GATEWAY_CONFIG): ``make run`` stays
                                 open on 127.0.0.1
    GATEWAY_SECRET               signs scoped tokens; the same on every replica (unset: a
                                 random secret per process)
    GATEWAY_TOKEN_TTL_SECONDS    lifetime of a scoped token (default 300)
    GATEWAY_JWT_JWKS_URL         accept JWT bearer tokens signed by these keys (unset: no JWT)
    GATEWAY_JWT_ISSUER           required ``iss``; GATEWAY_JWT_AUDIENCE required ``aud``
    GATEWAY_JWT_TENANT_CLAIM     the claim naming the tenant (default ``tenant``)
    GATEWAY_JWT_ROUTES_CLAIM     a claim listing the routes allowed (unset: every route)
    GATEWAY_JWT_ALGORITHMS       accepted algorithms (default RS256,ES256,EdDSA; never none/HS*)
    GATEWAY_JWKS_CACHE_SECONDS   how long fetched keys are used (default 300)

Quotas (per tenant; 0 or empty turns one off)::

    GATEWAY_QUOTA_CONCURRENT_RUNS  queued/running runs at once (default 32)
    GATEWAY_QUOTA_RATE             requests per window, ``limits`` notation (default
                                   ``600/minute``), per replica
    GATEWAY_QUOTA_STORED_BYTES     bytes of stored runs (default 1 GiB)
"""

from __future__ import annotations

from typing import Literal

from limits import parse_many
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings

__all__ = ["JWT_ALGORITHMS", "AuthMode", "SecuritySettings"]

AuthMode = Literal["auto", "required", "off"]

JWT_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""Asymmetric JWS algorithms a JWKS can verify (``none`` and the HMAC ones never)."""


class SecuritySettings(BaseSettings):
    """The ``GATEWAY_*`` settings of client auth and quotas (module docstring).

    Attributes:
        auth: ``auto``, ``required`` or ``off`` (see :attr:`auth_required`).
        secret: server secret of scoped tokens (None: random per process).
        token_ttl_seconds: scoped token lifetime.
        jwt_jwks_url, jwt_issuer, jwt_audience: JWT bearer verification (all three, or
            none).
        jwt_tenant_claim: the claim holding the tenant; jwt_routes_claim: an optional claim
            listing allowed routes; jwt_algorithms: comma-separated accepted algorithms.
        jwks_cache_seconds: how long fetched JWKS keys are reused.
        quota_concurrent_runs, quota_rate, quota_stored_bytes: per-tenant quotas.
    """

    auth: AuthMode = "auto"
    secret: SecretStr | None = None
    token_ttl_seconds: float = Field(default=300.0, gt=0, le=86_400)
    jwt_jwks_url: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_tenant_claim: str = Field(default="tenant", min_length=1)
    jwt_routes_claim: str | None = None
    jwt_algorithms: str = "RS256,ES256,EdDSA"
    jwks_cache_seconds: float = Field(default=300.0, gt=0)
    quota_concurrent_runs: int = Field(default=32, ge=0)
    quota_rate: str = "600/minute"
    quota_stored_bytes: int = Field(default=1024**3, ge=0)

    @property
    def auth_required(self) -> bool:
        """Whether clients must authenticate (``auto`` counts as required here: only
        ``serve`` knows the host it binds, and resolves ``auto`` first)."""
        return self.auth != "off"

    @property
    def jwt_enabled(self) -> bool:
        """Whether JWT bearer tokens are accepted (a JWKS URL is set)."""
        return self.jwt_jwks_url is not None

    @property
    def jwt_algorithm_list(self) -> list[str]:
        """:attr:`jwt_algorithms` as a list."""
        return [a.strip() for a in self.jwt_algorithms.split(",") if a.strip()]

    @field_validator("jwt_jwks_url", "jwt_issuer", "jwt_audience", "jwt_routes_claim", "secret")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        if isinstance(value, SecretStr) and not value.get_secret_value():
            return None
        return value or None

    @field_validator("jwt_jwks_url")
    @classmethod
    def _jwks_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL")
        return value

    @field_validator("jwt_algorithms")
    @classmethod
    def _algorithms(cls, value: str) -> str:
        names = [a.strip() for a in value.split(",") if a.strip()]
        bad = sorted(set(names) - JWT_ALGORITHMS)
        if not names or bad:
            raise ValueError(
                f"accepted: {', '.join(sorted(JWT_ALGORITHMS))} (got {bad or value!r})"
            )
        return value

    @field_validator("quota_rate")
    @classmethod
    def _rate(cls, value: str) -> str:
        if value.strip():
            try:
                parse_many(value)
            except ValueError as exc:
                raise ValueError(f"not a rate like '600/minute' ({exc})") from None
        return value.strip()

    @model_validator(mode="after")
    def _jwt_complete(self) -> SecuritySettings:
        if self.jwt_jwks_url is not None and not (self.jwt_issuer and self.jwt_audience):
            raise ValueError(
                "GATEWAY_JWT_JWKS_URL needs GATEWAY_JWT_ISSUER and GATEWAY_JWT_AUDIENCE"
            )
        return self
