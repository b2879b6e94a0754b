"""Where a route sends its requests: ``upstream_url`` checks, credentials, deployments.

:class:`AuthConfig` (a route's or a deployment's key), :class:`DeploymentConfig` (one
``[[routes.deployments]]`` table, issue 19 item 3) and the ``upstream_url`` check both share;
:mod:`gateway.config` re-exports them.
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agui_codecs import get_protocol

from .route_checks import (
    check_endpoint_suffix,
    check_env_name,
    check_header_name,
    check_http_url,
    check_url_credentials,
)

__all__ = ["SELF_SCHEME", "AuthConfig", "DeploymentConfig"]

SELF_SCHEME = "self"
"""``upstream_url`` scheme meaning "this gateway's own ASGI app, in process"."""

_HEADER = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 token


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AuthConfig(_Strict):
    """How the gateway authenticates to the upstream.

    Attributes:
        type: ``"bearer"`` (``Authorization: Bearer <key>``), ``"header"`` (``<header>: <key>``)
            or ``"none"``.
        env: name of the environment variable holding the key (read at request time).
        header: header name for ``type = "header"`` (e.g. ``x-api-key``).
    """

    type: Literal["bearer", "header", "none"] = "none"
    env: str | None = None
    header: str | None = None

    @field_validator("env")
    @classmethod
    def _env(cls, value: str | None) -> str | None:
        if value:
            check_env_name(value)  # never echoes the value: it may be a pasted key
        return value

    @field_validator("header")
    @classmethod
    def _header(cls, value: str | None) -> str | None:
        if value is not None:
            check_header_name(value)
        return value

    @model_validator(mode="after")
    def _check(self) -> AuthConfig:
        if self.type != "none" and not self.env:
            raise ValueError(f"auth type {self.type!r} needs 'env' (the key's variable)")
        if self.type == "header" and not (self.header and _HEADER.match(self.header)):
            raise ValueError("auth type 'header' needs 'header', a valid header name")
        return self


def _upstream_url(value: str, protocol: Any) -> str:
    """``value`` checked as a route's ``upstream_url`` for ``protocol`` (a name, or None when
    that field failed), normalised (no trailing ``/``)."""
    parts = urlsplit(value)
    if parts.fragment:
        raise ValueError("must not carry a #fragment")
    if parts.scheme in ("http", "https"):
        check_url_credentials(value)
        check_http_url(value)
        if isinstance(protocol, str):
            check_endpoint_suffix(value, get_protocol(protocol))
    elif parts.scheme == SELF_SCHEME:
        if not parts.path.startswith("/") or parts.netloc:
            raise ValueError("a self URL is 'self:/path'")
        if parts.query:
            raise ValueError("a self URL must not carry a ?query")
    else:
        raise ValueError(f"scheme must be http, https or self, got {parts.scheme!r}")
    # the query (e.g. Azure's ?api-version=) is kept: the endpoint path goes before it
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))


class DeploymentConfig(_Strict):
    """One more deployment of a route (``[[routes.deployments]]``): another endpoint or key.

    Attributes:
        upstream_url: its base URL (default: the route's), checked as the route's.
        auth: its credentials (default: the route's).
        weight: its share of the requests (> 0; round-robin takes it ``weight`` times per
            cycle, least-busy prefers the heavier on a tie).
    """

    upstream_url: str | None = None
    auth: AuthConfig | None = None
    weight: int = Field(default=1, ge=1, le=1000)
