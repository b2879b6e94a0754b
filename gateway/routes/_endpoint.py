"""The one door every endpoint goes through: who is calling, and may they.

Every handler of :mod:`gateway.routes` is registered through :func:`endpoint`, which, before
the handler runs, resolves and checks the request's caller with :func:`admit` and hands the
handler a :class:`Call` (the request, the app's :class:`~gateway.services.Services`, the
:class:`Caller`). Client authentication, route allowlists and tenant checks go there and in
the services the handlers call with ``call.caller``; nothing else in the HTTP side decides who
may call.

Today the gateway has no client authentication of its own (README "Browsers, CORS and auth":
put a reverse proxy in front): :func:`admit` admits every request as :data:`ANONYMOUS`. Not
behind this door: ``/demo/openai`` (the scripted demo upstream, mounted only when it serves)
and starlette's own 404 / 405 answers.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from ..services import Services
from ._access import annotate

__all__ = ["ANONYMOUS", "Call", "Caller", "Handler", "admit", "endpoint"]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sends a request.

    Attributes:
        tenant: the tenant the caller acts for (None: no tenancy, every thread is shared).
        subject: the credential's subject, e.g. an API key id (None: anonymous).
    """

    tenant: str | None = None
    subject: str | None = None


ANONYMOUS = Caller()
"""The caller of every request while the gateway has no client authentication."""


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


async def admit(request: Request) -> Caller:
    """Resolve and check the caller of ``request``: the one place every endpoint asks.

    Returns:
        The caller (today always :data:`ANONYMOUS`).

    Raises:
        RequestError: to refuse the request before its handler runs (the JSON error shape;
            401 / 403 once credentials are checked here).
    """
    return ANONYMOUS


def endpoint(handler: Handler, services: Services) -> Callable[[Request], Awaitable[Response]]:
    """A starlette endpoint running ``handler`` for admitted requests (see :func:`admit`); the
    caller's tenant goes on the request's access record."""

    @functools.wraps(handler)
    async def serve(request: Request) -> Response:
        caller = await admit(request)
        annotate(request, tenant=caller.tenant)
        return await handler(Call(request, services, caller))

    return serve
