"""Who sends a request: :class:`Caller`, resolved once per request by the door of
:mod:`gateway.routes._endpoint` and handed to every handler.

A caller has a tenant (None only when client auth is off: then there is no tenancy and every
thread is shared), an optional route allowlist, and, for a scoped token, the one run it may
read. The store keys it may name are those of its tenant (:mod:`gateway.tenancy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..tenancy import run_key, thread_key

__all__ = ["ANONYMOUS", "AuthMethod", "Caller"]

AuthMethod = Literal["anonymous", "api_key", "jwt", "token"]
"""How a caller was authenticated (``anonymous``: client auth is off)."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sends a request.

    Attributes:
        tenant: the tenant the caller acts for (None: no tenancy, every thread is shared).
        subject: the credential's subject: an API key id, a JWT ``sub``, a token's key id
            (None: anonymous).
        routes: the routes the caller may call (None: every route).
        method: how the caller was authenticated.
        scope: for a scoped token (``method == "token"``), the ``(thread id, run id)`` it may
            read; None otherwise.
    """

    tenant: str | None = None
    subject: str | None = None
    routes: frozenset[str] | None = None
    method: AuthMethod = "anonymous"
    scope: tuple[str, str] | None = None

    def may_call(self, route: str) -> bool:
        """True when ``route`` is in the caller's allowlist (or it has none)."""
        return self.routes is None or route in self.routes

    def thread_key(self, thread_id: str) -> str:
        """The store key of the caller's thread ``thread_id``."""
        return thread_key(self.tenant, thread_id)

    def run_key(self, thread_id: str, run_id: str) -> str:
        """The store key of run ``run_id`` of the caller's thread ``thread_id``."""
        return run_key(self.tenant, thread_id, run_id)


ANONYMOUS = Caller()
"""The caller of every request while client auth is off (``GATEWAY_AUTH=off``)."""
