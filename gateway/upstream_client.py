"""The upstream HTTP client: httpx's ``AsyncClient`` that keeps no cookies.

One client serves every tenant's runs (``gateway/app.py``). httpx's client keeps a cookie jar
of its own: every response's ``Set-Cookie`` is stored (``AsyncClient._send_single_request``
calls ``self.cookies.extract_cookies(response)``, httpx 0.28 to 0.29 ``_client.py``) and sent back
on the next request to the same domain (``BaseClient.build_request`` merges ``self.cookies``).
Behind a gateway that is one tenant's upstream state handed to another: a sticky load-balancer
cookie (``AWSALB``), a runtime's session cookie or a bot-management cookie (``__cf_bm``) set for
tenant A's run rides along with tenant B's. A gateway forwards requests; it is not a browser
session, so this client stores none and sends none (a route that needs a ``Cookie`` header sets
it in the route's headers, which go as given).

It also saves a little: ``extract_cookies`` wraps every response's request in a
``urllib.request.Request`` (a URL parse) even when no cookie is set, about 35 us per upstream
response on the 2 vCPU bench VM, 0.2 to 0.3 % of a durable stream's CPU; here it does nothing.
"""

from __future__ import annotations

from http.cookiejar import Cookie, CookieJar
from typing import Any

import httpx

__all__ = ["UpstreamClient"]


class _NoCookieJar(CookieJar):
    """A jar that stores nothing: ``set_cookie`` and ``extract_cookies`` drop what they get,
    ``add_cookie_header`` adds nothing."""

    def set_cookie(self, cookie: Cookie) -> None:
        return None

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None


class _NoCookies(httpx.Cookies):
    """httpx's ``Cookies`` over :class:`_NoCookieJar`, whose ``extract_cookies`` returns before
    building the urllib request and response wrappers."""

    def __init__(self) -> None:
        super().__init__(_NoCookieJar())

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class UpstreamClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` (same arguments) whose ``cookies`` is always empty: upstream
    ``Set-Cookie`` headers are ignored and no ``Cookie`` header is added (see the module
    docstring).

    Raises:
        TypeError: ``cookies=`` given, or ``client.cookies`` assigned: this client keeps none.
    """

    def __init__(self, **kwargs: Any) -> None:
        if kwargs.get("cookies") is not None:
            raise TypeError("the upstream client keeps no cookies; set a Cookie header instead")
        super().__init__(**kwargs)
        self._no_cookies = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        raise TypeError("the upstream client keeps no cookies; set a Cookie header instead")
