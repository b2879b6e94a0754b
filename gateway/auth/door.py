"""The :class:`Authenticator`: from a request's credential to its :class:`~.caller.Caller`.

Credentials (``Authorization: Bearer <credential>``; RFC 6750 §2.1)::

    agk_<id>_<secret>    an API key (:mod:`.api_keys`), checked against the store
    ags_<payload>.<mac>  a scoped token (:mod:`.tokens`), only where an endpoint accepts one;
                         there also as ``?access_token=`` (RFC 6750 §2.3: a browser
                         EventSource cannot set headers)
    <header>.<claims>.<signature>   a JWT, when GATEWAY_JWT_JWKS_URL is set (:mod:`.jwt`)

With ``GATEWAY_AUTH=off`` every request is :data:`~.caller.ANONYMOUS`. Refusals: 401
``UNAUTHENTICATED`` (missing, wrong, revoked, expired, malformed), 403 ``FORBIDDEN`` (a token
where the endpoint takes none), 503 ``AUTH_UNAVAILABLE`` (an API key with no run store open).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from starlette.requests import Request

from ..errors import RequestError
from ..security_settings import SecuritySettings
from ..store.protocol import RunStore
from .api_keys import KEY_PREFIX, matches, parse_key
from .caller import ANONYMOUS, Caller
from .errors import ForbiddenError, UnauthenticatedError
from .jwt import JwtVerifier
from .tokens import TOKEN_PREFIX, ScopedToken, TokenError, mint_token, verify_token

__all__ = ["Authenticator"]


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, credential = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        raise UnauthenticatedError(
            "send the credential as 'Authorization: Bearer <key>'", error="invalid_request"
        )
    return credential.strip()


class Authenticator:
    """Resolve callers (see the module docstring).

    Args:
        settings: ``auth``, ``secret``, ``token_ttl_seconds``.
        store: returns the open run store (None while the app lifespan is not running).
        jwt: the JWT verifier when JWT bearer tokens are accepted.
        clock: wall-clock seconds (token expiry; tests).
    """

    def __init__(
        self,
        settings: SecuritySettings,
        *,
        store: Callable[[], RunStore | None],
        jwt: JwtVerifier | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.required = settings.auth_required
        secret = settings.secret
        self.secret = (
            secret.get_secret_value().encode() if secret is not None else secrets.token_bytes(32)
        )
        self.token_ttl = settings.token_ttl_seconds
        self.jwt = jwt
        self._store = store
        self._clock = clock

    async def caller(self, request: Request, *, tokens: bool = False) -> Caller:
        """The caller of ``request``.

        Args:
            request: the request.
            tokens: the endpoint accepts a scoped token (header or ``?access_token=``).

        Raises:
            UnauthenticatedError, ForbiddenError, RequestError: see the module docstring.
        """
        if not self.required:
            return ANONYMOUS
        credential = _bearer(request)
        if credential is None and tokens:
            credential = request.query_params.get("access_token") or None
        if credential is None:
            raise UnauthenticatedError("authentication required", error="invalid_request")
        if credential.startswith(KEY_PREFIX):
            return await self._api_key(credential)
        if credential.startswith(TOKEN_PREFIX):
            if not tokens:
                raise ForbiddenError("a scoped token only reads the run events it was made for")
            return self._token(credential)
        if self.jwt is not None and credential.count(".") == 2:
            return await self.jwt.caller(credential)
        raise UnauthenticatedError("credentials are not valid")

    async def _api_key(self, credential: str) -> Caller:
        parsed = parse_key(credential)
        if parsed is None:
            raise UnauthenticatedError("credentials are not valid")
        store = self._store()
        if store is None:
            raise RequestError(
                "API keys are checked against the run store, which is not open",
                code="AUTH_UNAVAILABLE",
                status=503,
            )
        key_id, secret = parsed
        key = await store.get_api_key(key_id)
        if key is None or not matches(key, secret) or not key.usable(store.now()):
            # wrong, revoked and expired keys look the same from outside
            raise UnauthenticatedError("credentials are not valid")
        routes = frozenset(key.routes) if key.routes is not None else None
        return Caller(tenant=key.tenant, subject=key.id, routes=routes, method="api_key")

    def _token(self, credential: str) -> Caller:
        try:
            grant = verify_token(self.secret, credential, now=self._clock())
        except TokenError as exc:
            raise UnauthenticatedError(
                "token expired" if exc.expired else "credentials are not valid"
            ) from exc
        return Caller(
            tenant=grant.tenant,
            subject=grant.subject,
            method="token",
            scope=(grant.thread_id, grant.run_id),
        )

    def mint(self, caller: Caller, thread_id: str, run_id: str) -> tuple[str, int]:
        """A scoped token for ``caller`` to read run ``run_id`` of thread ``thread_id``, and
        its expiry (unix seconds)."""
        expires = int(self._clock() + self.token_ttl)
        grant = ScopedToken(caller.tenant, thread_id, run_id, caller.subject, expires)
        return mint_token(self.secret, grant), expires
