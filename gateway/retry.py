"""When an upstream failure is retried, and after how long (issue 19 item 1).

Pure decisions, no I/O: :func:`retryable` says whether a failed attempt may be tried again,
:func:`retry_after` reads the upstream's ``Retry-After`` (RFC 9110 §10.2.3: delay-seconds or an
HTTP-date; also ``retry-after-ms``, which OpenAI and Azure OpenAI send), :func:`backoff` is the
bounded exponential backoff with jitter, :func:`failure_kind` names the error kinds a route's
``fallback_on`` table may map to routes.

Retryable (transient) failures:

==========================================  ==============================================
failure                                     RUN_ERROR ``code`` of the attempt
==========================================  ==========================================
connect error, DNS failure, reset           ``UPSTREAM_UNAVAILABLE``, ``UPSTREAM_DISCONNECTED``
any timeout (connect, first byte, idle...)  ``UPSTREAM_TIMEOUT``
HTTP 408, 409, 425, 429, 500-599            whatever code the body gave (``rate_limit_exceeded``,
                                            ``overloaded_error``...) or ``UPSTREAM_HTTP_<n>``
a provider error in the stream              ``overloaded_error``, ``api_error``,
                                            ``rate_limit_error`` (Anthropic "Errors"),
                                            ``server_error``, ``rate_limit_exceeded`` (OpenAI),
                                            ``UNAVAILABLE``, ``RESOURCE_EXHAUSTED``,
                                            ``INTERNAL`` (Gemini), ``ThrottlingException``,
                                            ``ServiceUnavailableException``,
                                            ``InternalServerException``,
                                            ``ModelStreamErrorException`` (Bedrock)
a body cut short                            ``UPSTREAM_TRUNCATED``
==========================================  ==============================================

Everything else (4xx such as ``invalid_api_key`` or ``context_length_exceeded``, malformed
bytes, an empty 2xx body (``UPSTREAM_EMPTY``: a wrong endpoint, more likely than a glitch),
``UPSTREAM_AUTH_MISSING``, internal errors) is not retried: the same request would fail
the same way. A route's fallbacks are still tried for it (:mod:`gateway.attempts`).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Final

__all__ = [
    "RETRYABLE_CODES",
    "RETRYABLE_STATUSES",
    "backoff",
    "failure_kind",
    "retry_after",
    "retryable",
]

RETRYABLE_STATUSES: Final[frozenset[int]] = frozenset({408, 409, 425, 429, *range(500, 600)})
"""HTTP statuses of a transient upstream failure (RFC 9110 §15: 408 Request Timeout, 409
Conflict as OpenAI uses it for a busy engine, 425 Too Early, 429 Too Many Requests, 5xx)."""

RETRYABLE_CODES: Final[frozenset[str]] = frozenset(
    {
        "UPSTREAM_UNAVAILABLE",
        "UPSTREAM_DISCONNECTED",
        "UPSTREAM_TIMEOUT",
        "UPSTREAM_TRUNCATED",
        # Anthropic Messages API "Errors" (also sent as a stream ``error`` event)
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        # OpenAI error codes / types
        "server_error",
        "rate_limit_exceeded",
        "insufficient_capacity",
        # Gemini (google.rpc.Code names)
        "UNAVAILABLE",
        "RESOURCE_EXHAUSTED",
        "INTERNAL",
        "DEADLINE_EXCEEDED",
        # Bedrock ConverseStream exception events
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelStreamErrorException",
    }
)
"""RUN_ERROR codes of a transient failure, whatever the HTTP status (a stream ``error`` event
has none)."""

_CONTEXT_CODES: Final[frozenset[str]] = frozenset(
    {"context_length_exceeded", "string_above_max_length", "request_too_large"}
)
_CONTEXT_TEXT = re.compile(
    r"context (length|window)|prompt is too long|too many (input )?tokens|maximum context",
    re.IGNORECASE,
)


def retryable(code: str, status: int | None) -> bool:
    """Whether a failed attempt (RUN_ERROR ``code``, HTTP ``status`` when the upstream answered
    non-2xx) is transient: see the module's table."""
    if status is not None and status in RETRYABLE_STATUSES:
        return True
    return code in RETRYABLE_CODES or code.startswith("UPSTREAM_HTTP_5")


def failure_kind(code: str, status: int | None, message: str = "") -> str:
    """The error kind ``fallback_on`` keys may name besides exact codes.

    ``context_length_exceeded`` (OpenAI's code, Anthropic's ``prompt is too long``, any
    message naming the context window), ``rate_limited`` (429), ``timeout``
    (``UPSTREAM_TIMEOUT``), ``unavailable`` (connect/disconnect/5xx/overload), else
    ``error``.
    """
    if code in _CONTEXT_CODES or _CONTEXT_TEXT.search(message):
        return "context_length_exceeded"
    if status == 429 or code in {"rate_limit_exceeded", "rate_limit_error", "RESOURCE_EXHAUSTED"}:
        return "rate_limited"
    if code == "UPSTREAM_TIMEOUT":
        return "timeout"
    if retryable(code, status):
        return "unavailable"
    return "error"


def retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the upstream asked to wait, or None.

    ``retry-after-ms`` (milliseconds, OpenAI / Azure) wins over ``retry-after``, which is
    delay-seconds (``"120"``) or an HTTP-date (``"Wed, 21 Oct 2015 07:28:00 GMT"``; RFC 9110
    §10.2.3); a date in the past is 0. Unparsable or negative values are ignored.

    Args:
        headers: the response headers (case-insensitive mapping, e.g. ``httpx.Headers``).
        now: the current POSIX time (default ``time.time()``), for HTTP-dates.
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms.strip())
        except ValueError:
            value = -1.0
        if value >= 0 and value == value and value != float("inf"):
            return value / 1000.0
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    if raw.isdigit():
        return float(raw)
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def backoff(failures: int, *, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Seconds to wait before the next attempt after ``failures`` failed ones (>= 1).

    Exponential with "equal jitter" (the AWS Architecture Blog, "Exponential Backoff And
    Jitter"): ``d = min(cap, base * 2 ** (failures - 1))``, then a uniform draw in
    ``[d / 2, d]``, so waits grow, never exceed ``cap`` and two clients do not retry in step.
    """
    ceiling = min(cap, base * 2.0 ** max(0, failures - 1))
    draw: float = (rng or random).random()
    return ceiling / 2 + draw * ceiling / 2
