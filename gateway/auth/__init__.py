"""Client authentication: who may call, as which tenant, on which routes (issue 15).

* :class:`Caller` / :data:`ANONYMOUS` (:mod:`.caller`): what every handler is given;
* :class:`Authenticator` (:mod:`.door`): ``Authorization: Bearer`` API keys, scoped tokens,
  JWTs -> caller, or 401 / 403;
* :mod:`.api_keys`: ``agk_<id>_<secret>`` keys, stored as the SHA-256 of the secret;
* :mod:`.tokens`: short-lived HMAC tokens bound to one run, for a browser ``EventSource``;
* :class:`JwtVerifier` (:mod:`.jwt`): JWKS, issuer, audience, tenant claim (PyJWT).
"""

from __future__ import annotations

from .api_keys import KEY_PREFIX, new_api_key, parse_key
from .caller import ANONYMOUS, AuthMethod, Caller
from .door import Authenticator
from .errors import ForbiddenError, RouteForbiddenError, UnauthenticatedError
from .jwt import JwtVerifier
from .tokens import TOKEN_PREFIX, ScopedToken, TokenError, mint_token, verify_token

__all__ = [
    "ANONYMOUS",
    "KEY_PREFIX",
    "TOKEN_PREFIX",
    "AuthMethod",
    "Authenticator",
    "Caller",
    "ForbiddenError",
    "JwtVerifier",
    "RouteForbiddenError",
    "ScopedToken",
    "TokenError",
    "UnauthenticatedError",
    "mint_token",
    "new_api_key",
    "parse_key",
    "verify_token",
]
