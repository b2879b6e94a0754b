"""Refusals of the client-auth door: 401 (who are you?) and 403 (not you, not this).

::

    RequestError
    ├── UnauthenticatedError   401 UNAUTHENTICATED   no credential, or one that is wrong,
    │                                                revoked, expired or malformed
    │                                                (``WWW-Authenticate: Bearer``)
    └── ForbiddenError         403 FORBIDDEN          a valid credential that may not do this
        └── RouteForbiddenError  403 ROUTE_FORBIDDEN  the route is not in its allowlist

A wrong and a revoked key get the same answer (a client learns nothing about which keys
exist); an expired token or JWT says so (the client should get a new one).
"""

from __future__ import annotations

from ..errors import RequestError

__all__ = ["ForbiddenError", "RouteForbiddenError", "UnauthenticatedError"]


class UnauthenticatedError(RequestError):
    """401 ``UNAUTHENTICATED``, with ``WWW-Authenticate: Bearer`` (RFC 6750 §3)."""

    status = 401
    code = "UNAUTHENTICATED"

    def __init__(self, message: str, *, error: str = "invalid_token") -> None:
        super().__init__(
            message,
            headers={"www-authenticate": f'Bearer realm="agui-gateway", error="{error}"'},
        )


class ForbiddenError(RequestError):
    """403 ``FORBIDDEN``: the caller is known and may not do this."""

    status = 403
    code = "FORBIDDEN"


class RouteForbiddenError(ForbiddenError):
    """403 ``ROUTE_FORBIDDEN``: the route is not in the caller's allowlist."""

    code = "ROUTE_FORBIDDEN"
