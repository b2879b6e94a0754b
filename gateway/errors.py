"""Errors raised by the gateway (the I/O side; codec errors live in :mod:`agui_codecs.errors`).

::

    GatewayError
    ├── ConfigError            the routes file or a setting is invalid (raised at startup)
    └── RequestError           a request cannot be served; answered with a JSON error, no stream
        ├── RouteNotFoundError     404, ``ROUTE_NOT_FOUND``
        ├── RunIdTakenError        409, ``RUN_ID_TAKEN`` (a taken runId with new input)
        └── InvalidRequestError    422, ``INVALID_REQUEST`` (pydantic's error list in ``detail``)

A codec error with a ``status_hint`` raised before the stream starts is answered the same way
(``{"error": {"code", "message"}}`` with that status, by :func:`gateway.app.create_app`): the
request builders' :class:`~agui_codecs.errors.RequestTranslationError` (422
``UNSUPPORTED_CONTENT``, ``INVALID_CONTENT``, ``INVALID_TOOL_ARGUMENTS``,
``INVALID_TOOL_RESULT``: the input has no equivalent in the route's upstream API) and
:class:`~agui_codecs.errors.InvalidInputError` (422 ``INVALID_REQUEST``: no conversation).

Failures of the upstream itself (HTTP status >= 400, connect errors, timeouts, malformed
bytes) are *not* raised: once the client asked for a stream they end the run with a terminal
RUN_ERROR event carrying a code (see :mod:`gateway.upstream`).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "GatewayError",
    "InvalidRequestError",
    "RequestError",
    "RouteNotFoundError",
    "RunIdTakenError",
]


class GatewayError(Exception):
    """Base class of the gateway's own errors.

    Attributes:
        message: one-line human-readable description.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(GatewayError):
    """The routes file or the settings are invalid; the message names the route and field."""


class RequestError(GatewayError):
    """A client request the gateway refuses before any stream starts.

    Attributes:
        status: HTTP status code of the JSON error response.
        code: stable SCREAMING_CASE code, sent as ``error.code``.
        detail: optional extra JSON (e.g. pydantic's error list), sent as ``detail``.
        headers: extra response headers (``WWW-Authenticate``, ``Retry-After``).
    """

    status: int = 400
    code: str = "BAD_REQUEST"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        detail: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.headers: dict[str, str] = dict(headers or {})
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.detail = detail

    def to_json(self) -> dict[str, Any]:
        """The response body: ``{"error": {"code", "message"}, "detail"?}``."""
        body: dict[str, Any] = {"error": {"code": self.code, "message": self.message}}
        if self.detail is not None:
            body["detail"] = self.detail
        return body


class RouteNotFoundError(RequestError):
    """No route has the requested name."""

    status = 404
    code = "ROUTE_NOT_FOUND"


class InvalidRequestError(RequestError):
    """The body is not JSON or does not match the endpoint's schema."""

    status = 422
    code = "INVALID_REQUEST"


class RunIdTakenError(RequestError):
    """``POST /v1/agui/{route}`` named a run that exists but posted new input: a message of
    the client's the run's conversation does not hold, or another route
    (:mod:`gateway.runs.rejoin`). The client must choose a fresh ``runId``."""

    status = 409
    code = "RUN_ID_TAKEN"
