"""Upstream failures (:mod:`gateway.upstream`): the RUN_ERROR code and message of a non-2xx
upstream answer (its JSON error body read up to :data:`MAX_ERROR_BODY` bytes), the masking of
decoder faults that quote upstream bytes (:data:`MASKED_DECODER_ERRORS`), and the redaction of
the route's own key (:func:`redact`).

The mapping (failure -> RUN_ERROR ``code``) and its reasons (``docs/protocols.md`` §3.3 rule 5,
"mask internal error text") are in the :mod:`gateway.upstream` module docstring. Log lines go
to the ``gateway.upstream`` logger, as they did when this was part of that module.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx
import orjson
from ag_ui.core import Event, RunErrorEvent

from agui_codecs import InternalDecoderError
from agui_codecs.protocols import StreamDecoder

from .config import RouteConfig

__all__ = [
    "MASKED_DECODER_ERRORS",
    "MAX_ERROR_BODY",
    "REDACTED",
    "UpstreamFailure",
    "http_failure",
    "masked",
    "redact",
]

log = logging.getLogger("gateway.upstream")

MAX_ERROR_BODY = 64 * 1024
"""Bytes of an upstream error body read to find its code and message."""

_MAX_DETAIL = 1000  # characters of a 4xx provider message sent to the client


class UpstreamFailure(Exception):
    """An upstream failure that ends the run with RUN_ERROR ``code``.

    Attributes:
        code: the RUN_ERROR ``code`` (``UPSTREAM_HTTP_<status>``, the provider's own...).
        message: the RUN_ERROR ``message``, fit for the client (masked, key redacted).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


REDACTED = "[redacted]"
"""What replaces the route's own key in an upstream's error text (some providers quote it)."""


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by :data:`REDACTED`."""
    return text.replace(secret, REDACTED) if secret else text


MASKED_DECODER_ERRORS: dict[str, str] = {
    "UPSTREAM_MALFORMED": "the upstream sent a malformed stream",
    "UPSTREAM_EVENT_TOO_LARGE": "the upstream sent an event larger than the gateway accepts",
    "UPSTREAM_PROTOCOL_ERROR": "the upstream broke its streaming protocol",
    InternalDecoderError.code: "internal gateway error",
}
"""Client-facing RUN_ERROR message per decoder fault code. The decoder's own message quotes
upstream bytes (a JSON snippet, a path, a size): it goes to the log only."""

_LOGGED_BODY = 2000


def masked(route: RouteConfig, decoder: StreamDecoder, events: list[Event]) -> list[Event]:
    """``events`` with the message of a RUN_ERROR caused by malformed upstream bytes replaced
    by a fixed sentence (:data:`MASKED_DECODER_ERRORS`); the detail is logged."""
    error = decoder.error
    if error is None or error.code not in MASKED_DECODER_ERRORS:
        return events
    out: list[Event] = []
    for event in events:
        if isinstance(event, RunErrorEvent) and event.code == error.code:
            if isinstance(error, InternalDecoderError):
                log.error(
                    "route %s: %s: the %s decoder failed on the upstream's input (%r)",
                    route.name,
                    error.code,
                    error.decoder,
                    error.__cause__,
                )
            else:
                log.warning("route %s: %s: %s", route.name, error.code, error.message)
            event = event.model_copy(update={"message": MASKED_DECODER_ERRORS[error.code]})
        out.append(event)
    return out


def _text_field(error: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = error.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _error_object(raw: bytes) -> Mapping[str, Any] | str | None:
    """The error object of an upstream error body: ``error`` of ``{"error": {...}}`` (OpenAI,
    Anthropic, Gemini, whose body may be wrapped in an array), a string ``error``, or the top
    object itself (``{"message": ...}``, ``{"detail": ...}``); None when not JSON."""
    try:
        doc: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if isinstance(doc, list) and doc:
        doc = doc[0]  # Gemini wraps its error object in an array
    if not isinstance(doc, dict):
        return None
    error = doc.get("error", doc)
    if isinstance(error, str):
        return error.strip() or None
    return error if isinstance(error, dict) else doc


async def http_failure(
    route: RouteConfig, response: httpx.Response, secret: str | None = None
) -> UpstreamFailure:
    """The RUN_ERROR of a non-2xx upstream answer.

    Code: the upstream's own ``code``, else ``type``, else ``status`` (Gemini's
    ``INVALID_ARGUMENT``...) when the body is JSON and holds a string one; else
    ``UPSTREAM_HTTP_<status>``. Message: for 4xx the provider's message (it tells the developer
    what to fix: an invalid key, an unknown model); for 5xx a fixed ``upstream server error
    (HTTP <status>)``: a server's error text may hold internals (stack traces, hosts), so it is
    logged, truncated, and not sent. The route's key (``secret``) is redacted from both: an
    upstream may quote the key it refused.
    """
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= MAX_ERROR_BODY:
            break
    body = bytes(raw[:MAX_ERROR_BODY])
    status = response.status_code
    error = _error_object(body)
    code = f"UPSTREAM_HTTP_{status}"
    detail: str | None = None
    if isinstance(error, str):
        detail = error
    elif error is not None:
        code = _text_field(error, "code", "type", "status") or code
        detail = _text_field(error, "message", "detail")
    if status >= 500:
        log.warning(
            "route %s: upstream HTTP %d (%s): %s",
            route.name,
            status,
            code,
            redact(body[:_LOGGED_BODY].decode("utf-8", "replace"), secret),
        )
        return UpstreamFailure(code, f"upstream server error (HTTP {status})")
    message = f"upstream returned HTTP {status}"
    if detail:
        message += f": {redact(detail, secret)[:_MAX_DETAIL]}"
    return UpstreamFailure(redact(code, secret), message)
