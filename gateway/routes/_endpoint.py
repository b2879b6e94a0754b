"""The one door every endpoint goes through: who is calling, and may they.

Every handler of :mod:`gateway.routes` is registered through :func:`endpoint`, which, before
the handler runs, resolves and checks the request's caller with :func:`admit` and hands the
handler a :class:`Call` (the request, the app's :class:`~gateway.services.Services`, the
:class:`~gateway.auth.Caller`). Client authentication happens here (the app's
:class:`~gateway.auth.Authenticator`: API keys, scoped tokens where the endpoint takes them,
JWTs; 401 / 403), then the per-tenant request rate (429 ``RATE_LIMITED`` with
``Retry-After``); route allowlists and tenant checks are in the services the handlers call with
``call.caller``. Nothing else in the HTTP side decides who may call.

Not behind this door: ``/demo/openai`` (the scripted demo upstream, mounted only when it
serves) and starlette's own 404 / 405 answers; ``/healthz``, ``/metrics`` and the inspector page's
own files (``/inspect``, ``/inspect/static/{name}``: no data in them) pass it unauthenticated
(:data:`PUBLIC`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..auth import ANONYMOUS, Caller
from ..services import Services
from ._access import annotate

__all__ = ["ANONYMOUS", "PUBLIC", "Call", "Caller", "Endpoint", "Handler", "admit", "endpoint"]

PUBLIC = ANONYMOUS
"""The caller of the public endpoints (health, metrics, the inspector page's files): no
credential is asked for."""


@dataclass(frozen=True, slots=True)
class Call:
    """One admitted request, as a handler receives it.

    Attributes:
        request: the starlette request.
        services: the app's services (what the handler calls).
        caller: who sends it (:func:`admit`).
    """

    request: Request
    services: Services
    caller: Caller


Handler = Callable[[Call], Awaitable[Response]]
"""An endpoint handler: parse ``call.request``, call ``call.services``, answer."""


async def admit(
    request: Request, services: Services, *, public: bool = False, tokens: bool = False
) -> Caller:
    """Resolve and check the caller of ``request``: the one place every endpoint asks.

    Args:
        request: the request.
        services: the app's services (its authenticator and rate limiter).
        public: the endpoint asks for no credential (:data:`PUBLIC`).
        tokens: the endpoint accepts a scoped token (``?access_token=``).

    Returns:
        The caller.

    Raises:
        UnauthenticatedError: 401 ``UNAUTHENTICATED`` (``WWW-Authenticate: Bearer``).
        ForbiddenError: 403.
        RequestError: 429 ``RATE_LIMITED`` (``Retry-After``), 503 ``AUTH_UNAVAILABLE``.
    """
    if public:
        return PUBLIC
    caller = await services.auth.caller(request, tokens=tokens)
    await services.check_rate(caller)
    return caller


class Endpoint:
    """The ASGI app of one endpoint: admits the request (:func:`admit`), runs the handler with
    a :class:`Call`, sends its response. The caller's tenant and subject go on the request's
    access record.

    An ASGI app rather than a ``func(request) -> response`` starlette wraps with
    ``request_response`` (starlette 1.10 ``starlette/routing.py``): that wrapper catches the
    handler's exceptions for the app's exception handlers once more, which the app's
    ``ExceptionMiddleware`` already does with the same handlers over the same scope
    (``starlette/_exception_handler.py``), and its frames and closures stayed alive for an
    open stream's whole life (issue 13: about 1.7 KiB a stream). Typed errors raised by
    ``admit`` or the handler reach that middleware, and become the same JSON refusals.
    """

    __slots__ = ("__name__", "handler", "public", "services", "tokens")

    def __init__(
        self, handler: Handler, services: Services, *, public: bool = False, tokens: bool = False
    ) -> None:
        self.handler = handler
        self.services = services
        self.public = public
        self.tokens = tokens
        self.__name__ = handler.__name__  # starlette names the route after it

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive, send)
        services = self.services
        caller = await admit(request, services, public=self.public, tokens=self.tokens)
        annotate(request, tenant=caller.tenant, subject=caller.subject)
        response = await self.handler(Call(request, services, caller))
        del request, caller  # not kept for a stream's life (its caches: headers, url, ...)
        await response(scope, receive, send)


def endpoint(
    handler: Handler, services: Services, *, public: bool = False, tokens: bool = False
) -> Endpoint:
    """The ASGI app running ``handler`` for admitted requests (see :func:`admit` and
    :class:`Endpoint`), for a starlette ``Route``."""
    return Endpoint(handler, services, public=public, tokens=tokens)
