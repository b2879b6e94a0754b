"""Request and response helpers every room of :mod:`gateway.routes` shares.

* :func:`read_json`: the JSON body, refused before it is parsed when it is not declared JSON
  (415 ``UNSUPPORTED_MEDIA_TYPE``) or exceeds the size cap (413 ``REQUEST_TOO_LARGE``), then
  validated against a pydantic model (422 ``INVALID_REQUEST``, ``detail`` = pydantic's error
  list without input echoes);
* :func:`json_response`: compact JSON (orjson); :func:`sse_response`: an encoder's SSE stream
  with the settings' keep-alive;
* query and id parsing: :func:`query_param`, :func:`positive_int_param` (400
  ``INVALID_PARAMETER``), :func:`id_param` / :func:`path_id` (ids checked at the edge, 422
  ``INVALID_ID``, :mod:`gateway.ids`), :func:`run_ref` (``{thread_id}`` + ``?runId=``),
  :func:`last_event_id`
  (``Last-Event-ID`` header, else ``?lastEventId=``);
* :data:`EXCEPTION_HANDLERS`: the one place typed errors become JSON refusals
  ``{"error": {"code", "message"}, "detail"?}`` (before any stream started).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar
from urllib.parse import quote

import orjson
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agui_codecs import Encoder
from agui_codecs.errors import CodecError

from ..body_parse import validate_body
from ..config import Settings
from ..errors import InvalidRequestError, RequestError
from ..ids import check_id
from ..sse_response import SSEResponse
from ..store import MAX_CURSOR_PART, InterruptAnsweredError, RunStoreError

__all__ = [
    "EXCEPTION_HANDLERS",
    "RUN_HEADERS",
    "flag_param",
    "id_param",
    "json_response",
    "last_event_id",
    "parse_json_body",
    "path_id",
    "positive_int_param",
    "query_param",
    "read_json",
    "run_headers",
    "run_ref",
    "sse_response",
]

_M = TypeVar("_M", bound=BaseModel)


def json_response(
    body: object, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A compact JSON response (orjson; values it cannot encode become strings)."""
    return Response(
        orjson.dumps(body, default=str),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


RUN_HEADERS: Final[tuple[str, str]] = ("x-agui-run-id", "x-agui-thread-id")
"""Response headers naming the run a streaming response serves (the AG-UI runId and threadId,
percent-encoded; CORS exposes them to pages, :func:`gateway.app.create_app`)."""


def run_headers(thread_id: str, run_id: str) -> dict[str, str]:
    """:data:`RUN_HEADERS` for one run (ids percent-encoded: a header holds latin-1 only)."""
    return {RUN_HEADERS[0]: quote(run_id, safe=""), RUN_HEADERS[1]: quote(thread_id, safe="")}


def sse_response(
    body: AsyncGenerator[bytes, None],
    encoder: Encoder,
    settings: Settings,
    *,
    headers: Mapping[str, str] | None = None,
) -> SSEResponse:
    """``body`` as an SSE response with ``encoder``'s headers (and ``headers``) and the
    keep-alive interval of ``settings`` (``GATEWAY_KEEPALIVE_SECONDS``)."""
    return SSEResponse(
        body,
        keepalive_seconds=settings.keepalive_seconds,
        headers={**encoder.headers, **(headers or {})},
    )


# -- the request body -------------------------------------------------------------------------


def _is_json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _require_json(request: Request) -> None:
    """Refuse a body that is not declared JSON (415).

    A cross-site page may POST ``text/plain``, form or multipart bodies without a CORS
    preflight ("simple requests"); JSON is only sent after the preflight, which the gateway
    answers only for ``GATEWAY_CORS_ORIGINS``. So a ``text/plain`` body holding JSON must not
    start a (paid) run.

    Raises:
        RequestError: 415 ``UNSUPPORTED_MEDIA_TYPE``.
    """
    content_type = request.headers.get("content-type", "")
    if not _is_json_media_type(content_type):
        got = content_type.split(";", 1)[0].strip()[:100] or "none"
        raise RequestError(
            f"request body must be JSON: send content-type: application/json (got {got})",
            code="UNSUPPORTED_MEDIA_TYPE",
            status=415,
        )


def _too_large(limit: int) -> RequestError:
    return RequestError(f"request body exceeds {limit} bytes", code="REQUEST_TOO_LARGE", status=413)


async def _read_body(request: Request, limit: int) -> bytes:
    raw = bytearray()
    try:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > limit:
                raise _too_large(limit)
    except ClientDisconnect:
        # The client went away before its body arrived whole: nothing wrong with the gateway
        # and nobody to read an answer, so one info line and no traceback. Handled here, not
        # as an app-wide exception handler: a disconnect while a stream is being *sent* must
        # end that response as starlette does, not look for an error response to send.
        _log.info("client disconnected before its request body was read (%s)", request.url.path)
        raise RequestError("the client went away", code="CLIENT_DISCONNECTED", status=400) from None
    return bytes(raw)


async def read_json(
    request: Request, model: type[_M], *, limit: int, timeout: float | None = None
) -> tuple[_M, bytes]:
    """The request body validated as ``model``, with its raw bytes (passthrough routes
    forward them as received).

    Args:
        request: the request; its body is read incrementally.
        model: the pydantic model of the endpoint's body.
        limit: the size cap in bytes (``GATEWAY_MAX_REQUEST_BYTES``); a declared
            ``content-length`` above it is refused before reading.
        timeout: seconds the whole body may take to arrive (``GATEWAY_BODY_TIMEOUT_SECONDS``;
            None: no limit), so a client trickling its body (slowloris) holds no request.

    Raises:
        RequestError: 415 ``UNSUPPORTED_MEDIA_TYPE`` (a cross-site "simple" POST
            cannot start a run), 413 ``REQUEST_TOO_LARGE``, 408 ``REQUEST_TIMEOUT`` (the
            body did not arrive within ``timeout``; the connection is closed after the
            answer, RFC 9110 §15.5.9).
        InvalidRequestError: 422 ``INVALID_REQUEST``, the body is not a valid ``model``.
    """
    _require_json(request)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    try:
        async with asyncio.timeout(timeout):
            body = await _read_body(request, limit)
    except TimeoutError:
        raise RequestError(
            f"request body not received within {timeout:g} s",
            code="REQUEST_TIMEOUT",
            status=408,
            headers={"connection": "close"},
        ) from None
    return await parse_json_body(body, model), body


async def parse_json_body(body: bytes, model: type[_M]) -> _M:
    """``body`` (JSON bytes) validated as ``model``; a large body is validated in slices that
    leave the event loop free in between (:func:`gateway.body_parse.validate_body`).

    Raises:
        InvalidRequestError: 422 ``INVALID_REQUEST``, the body is not a valid ``model``.
    """
    try:
        return await validate_body(body, model)
    except ValidationError as exc:
        raise InvalidRequestError(
            f"request body is not a valid {model.__name__}",
            detail=exc.errors(include_url=False, include_input=False),
        ) from exc


# -- query parameters and ids -----------------------------------------------------------------


def query_param(request: Request, name: str, *, required: bool = False) -> str | None:
    """The query parameter ``name`` (None when absent or empty).

    Raises:
        RequestError: 400 ``INVALID_PARAMETER`` when ``required`` and it is missing.
    """
    value = request.query_params.get(name) or None
    if value is None and required:
        raise RequestError(f"query parameter {name!r} is required", code="INVALID_PARAMETER")
    return value


_FLAGS = {"1": True, "true": True, "0": False, "false": False}


def flag_param(request: Request, name: str) -> bool:
    """The query parameter ``name`` as a flag: ``1`` / ``true`` or ``0`` / ``false`` (False
    when absent).

    Raises:
        RequestError: 400 ``INVALID_PARAMETER`` for any other value.
    """
    text = query_param(request, name)
    if text is None:
        return False
    if text.lower() not in _FLAGS:
        raise RequestError(
            f"query parameter {name!r} must be 1, true, 0 or false, got {text[:40]!r}",
            code="INVALID_PARAMETER",
        )
    return _FLAGS[text.lower()]


def positive_int_param(request: Request, name: str) -> int | None:
    """The query parameter ``name`` as an integer in ``1 .. 2**53-1`` (None when absent).

    Raises:
        RequestError: 400 ``INVALID_PARAMETER`` for anything but ASCII digits of a positive
            integer (at most 16 digits) in range.
    """
    text = query_param(request, name)
    if text is None:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 16 or int(text) < 1:
        raise RequestError(
            f"query parameter {name!r} must be a positive integer, got {text[:40]!r}",
            code="INVALID_PARAMETER",
        )
    value = int(text)
    if value > MAX_CURSOR_PART:
        raise RequestError(f"query parameter {name!r} is out of range", code="INVALID_PARAMETER")
    return value


def id_param(request: Request, name: str) -> str:
    """The required query parameter ``name``, checked as an id (:mod:`gateway.ids`).

    Raises:
        RequestError: 400 ``INVALID_PARAMETER``, it is missing.
        InvalidIdError: 422 ``INVALID_ID``.
    """
    value = query_param(request, name, required=True)
    assert value is not None
    return check_id(value, loc=("query", name))


def path_id(request: Request, name: str) -> str:
    """The path segment ``{name}`` (percent-decoded), checked as an id.

    Raises:
        InvalidIdError: 422 ``INVALID_ID``.
    """
    return check_id(request.path_params[name], loc=("path", name))


def run_ref(request: Request) -> tuple[str, str]:
    """``(thread_id, run_id)`` of a run URL: the ``{thread_id}`` path segment and ``?runId=``,
    both checked as ids.

    Raises:
        RequestError: 400 ``INVALID_PARAMETER``, ``runId`` is missing.
        InvalidIdError: 422 ``INVALID_ID``.
    """
    thread_id = path_id(request, "thread_id")
    return thread_id, id_param(request, "runId")


def last_event_id(request: Request) -> str | None:
    """The resume cursor as the client sent it: the ``Last-Event-ID`` header, else
    ``?lastEventId=`` (the header wins: a browser ``EventSource`` reconnects to the same URL
    with a newer header); None when neither is given. Parsed by the run core
    (400 ``INVALID_CURSOR``)."""
    return request.headers.get("last-event-id", "").strip() or query_param(request, "lastEventId")


# -- typed errors -> JSON refusals ------------------------------------------------------------


async def _request_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestError)
    return json_response(exc.to_json(), exc.status, headers=exc.headers or None)


async def _codec_error(request: Request, exc: Exception) -> Response:
    """A codec error before any stream started: its ``status_hint`` (422 for a request that has
    no equivalent upstream) with its code and message; without a hint, a 500."""
    assert isinstance(exc, CodecError)
    if exc.status_hint is None:
        raise exc
    return json_response({"error": {"code": exc.code, "message": exc.message}}, exc.status_hint)


async def _store_error(request: Request, exc: Exception) -> Response:
    """A run-store error before any stream started (404 run, 400 cursor, 409 run id, 500);
    409 ``INTERRUPT_ANSWERED`` names its interrupts in ``detail.interruptIds``, as the other
    interrupt refusals (:mod:`gateway.errors`)."""
    assert isinstance(exc, RunStoreError)
    body: dict[str, Any] = {"error": {"code": exc.code, "message": exc.message}}
    if isinstance(exc, InterruptAnsweredError):
        body["detail"] = {"interruptIds": list(exc.interrupt_ids)}
    return json_response(body, exc.status)


_log = logging.getLogger(__name__)

_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
    response = json_response({"error": {"code": code, "message": exc.detail}}, exc.status_code)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Anything else (a bug of ours, a driver error nothing translated): the JSON error shape,
    500 ``INTERNAL_ERROR``, never a plain-text 500 or the exception's class (issue 12); the
    traceback goes to the log (starlette's ``ServerErrorMiddleware`` re-raises for the
    server)."""
    return json_response(
        {"error": {"code": "INTERNAL_ERROR", "message": "internal gateway error"}}, 500
    )


EXCEPTION_HANDLERS: Mapping[type[Exception], Callable[[Request, Exception], Awaitable[Response]]]
EXCEPTION_HANDLERS = {
    RequestError: _request_error,
    CodecError: _codec_error,
    RunStoreError: _store_error,
    HTTPException: _http_error,
    Exception: _internal_error,
}
"""Starlette exception handlers: :class:`~gateway.errors.RequestError` (its status and code),
codec errors with a ``status_hint``, run-store errors (their ``status``: 503
``STORE_UNAVAILABLE`` when the database is lost), starlette's own 404 ``NOT_FOUND`` / 405
``METHOD_NOT_ALLOWED`` for unknown paths and methods, and anything else as 500
``INTERNAL_ERROR`` in the same JSON shape."""
