"""Errors raised by the gateway (the I/O side; codec errors live in :mod:`agui_codecs.errors`).

::

    GatewayError
    ├── ConfigError            the routes file or a setting is invalid (raised at startup)
    └── RequestError           a request cannot be served; answered with a JSON error, no stream
        ├── RouteNotFoundError     404, ``ROUTE_NOT_FOUND``
        ├── RunIdTakenError        409, ``RUN_ID_TAKEN`` (a taken runId with new input)
        ├── InterruptSupersededError  409, ``INTERRUPT_SUPERSEDED`` (a resume[] entry answers an
        │                              interrupt of a run the thread has since gone past)
        ├── UnknownInterruptError  422, ``UNKNOWN_INTERRUPT`` (a resume[] entry answers an
        │                          interrupt the thread never raised)
        └── InvalidRequestError    422, ``INVALID_REQUEST`` (pydantic's error list in ``detail``)

The interrupt refusals (``docs/runs.md`` §7) carry ``detail: {"interruptIds": [...]}``, the ids
refused in the order the ``resume[]`` gave them; the store's own refusal of a second answer is
:class:`gateway.store.InterruptAnsweredError` (409 ``INTERRUPT_ANSWERED``).

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
    "InterruptSupersededError",
    "InvalidRequestError",
    "RequestError",
    "RouteNotFoundError",
    "RunIdTakenError",
    "UnknownInterruptError",
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


class _InterruptRefusal(RequestError):
    """A refusal naming ``resume[]`` interrupt ids (``detail: {"interruptIds": [...]}``).

    Attributes:
        interrupt_ids: the refused ``interruptId`` values, in the order the ``resume[]`` gave.
    """

    def __init__(self, message: str, *, interrupt_ids: tuple[str, ...]) -> None:
        super().__init__(message, detail={"interruptIds": list(interrupt_ids)})
        self.interrupt_ids = interrupt_ids


class UnknownInterruptError(_InterruptRefusal):
    """A ``RunAgentInput.resume[]`` entry names an interrupt no run of the thread raised (no
    RUN_FINISHED ``outcome: {type: "interrupt", interrupts}`` of the thread has that ``id``):
    AG-UI 1.0 "Resume linkage", ``resume[].interruptId`` must reference an ``id`` of the
    interrupted run's ``interrupts[]`` (``docs/concepts/interrupts.mdx``, contract rule 2).
    Nothing is recorded or claimed and the upstream is not called (``docs/runs.md`` §7)."""

    status = 422
    code = "UNKNOWN_INTERRUPT"


class InterruptSupersededError(_InterruptRefusal):
    """A ``RunAgentInput.resume[]`` entry answers an interrupt an earlier run of the thread
    raised, but a later run of the thread has started since without answering it: the
    interrupt is no longer open (``@ag-ui/client`` 1.0.0 clears ``pendingInterrupts`` at the
    next RUN_FINISHED; AG-UI 1.0 answers the interrupts of *the* interrupted run, the thread's
    last). Nothing is recorded or claimed and the upstream is not called (``docs/runs.md``
    §7)."""

    status = 409
    code = "INTERRUPT_SUPERSEDED"
