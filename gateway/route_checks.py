"""Checks of route-file values that a type alone cannot express (used by :mod:`gateway.config`).

Each check raises ``ValueError`` with a message meant for the operator; pydantic turns it into
a :class:`~gateway.errors.ConfigError` line naming the file, the route and the field. A value
that may be a secret (``auth.env``) is never echoed.

* :func:`check_http_url`: an ``http(s)`` ``upstream_url`` has no spaces or control
  characters, a host without stray characters and a port in 1-65535, and parses as an httpx
  URL.
* :func:`check_endpoint_suffix`: a provider route's ``upstream_url`` is the *base* URL; one that
  already ends with the path the protocol appends (its spec's ``endpoint_suffixes``:
  ``/chat/completions``, ``/messages``, ``/responses``, a Gemini ``/models/...`` path) would be
  posted to ``.../chat/completions/chat/completions``, so the error suggests the base URL.
* :func:`check_header_name`: route ``headers`` and ``auth.header`` may not set headers the HTTP
  client owns (:data:`RESERVED_HEADERS`: ``host``, ``content-length``, hop-by-hop headers).
* :func:`check_url_credentials`: an ``upstream_url`` carries no credential (``user:pass@``, a
  ``?key=`` / ``?token=`` / ``?sig=``... query parameter, see :data:`SECRET_QUERY_NAMES`): the URL
  is recorded with every run and logged, so a key must come from ``auth.env`` instead.
* :func:`check_env_name`: ``auth.env`` names a variable (``[A-Za-z_][A-Za-z0-9_]*``, at most 64
  characters) and does not look like a key pasted in its place (``sk-...``, ``AIza...``...).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit, urlunsplit

import httpx

from agui_codecs.protocols import ProtocolSpec

__all__ = [
    "MAX_ENV_NAME",
    "RESERVED_HEADERS",
    "SECRET_QUERY_NAMES",
    "check_endpoint_suffix",
    "check_env_name",
    "check_header_name",
    "check_http_url",
    "check_url_credentials",
]

RESERVED_HEADERS: Final = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
    }
)
"""Headers a route may not set: the HTTP client computes them (RFC 9110 §7.2, §8.6; RFC 9112
§6.1, §9.6 hop-by-hop fields); overriding them breaks or smuggles requests."""

MAX_ENV_NAME: Final = 64
"""Longest accepted ``auth.env``: longer names are almost always a pasted key."""

_ENV: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BAD_HOST: Final = re.compile(r"[\s<>\"{}|\\^`/?#@]")
SECRET_QUERY_NAMES: Final = re.compile(
    r"key|token|secret|passw|pwd|sig|auth|credential|session|code", re.IGNORECASE
)
"""A query parameter whose name contains one of these words holds a credential (``key``,
``api_key``, ``access_token``, ``client_secret``, ``password``, Azure SAS ``sig``, ...). Azure's
``api-version`` and other plain parameters pass."""

_KEY_PREFIXES: Final = ("sk-", "sk_", "AIza", "gsk_", "xai-", "ghp_", "github_pat_")


def check_http_url(value: str) -> None:
    """Check an ``http(s)`` URL's host and port.

    Raises:
        ValueError: spaces or control characters, no host, a host with characters a host
            cannot hold, a port that is not a number in 1-65535, or a URL httpx cannot send to.
    """
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ValueError("contains spaces or control characters (encode them, e.g. %20)")
    parts = urlsplit(value)  # (which would silently drop tabs and line breaks)
    host = parts.hostname
    if not host:
        raise ValueError("has no host (expected http(s)://host[:port][/path])")
    if _BAD_HOST.search(host):
        raise ValueError("host contains characters a host name cannot hold")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("port is not a number in 1-65535") from None
    if port is not None and not 1 <= port <= 65535:
        raise ValueError("port is not a number in 1-65535")
    try:
        httpx.URL(value)
    except httpx.InvalidURL as exc:
        raise ValueError(f"is not a valid URL ({exc})") from None


def check_url_credentials(value: str) -> None:
    """Refuse an ``upstream_url`` carrying a credential: user info (``user:pass@host``) or a
    query parameter named like one (:data:`SECRET_QUERY_NAMES`). The URL and the value are
    never put in the message.

    Raises:
        ValueError: says which part and where the credential goes instead (``auth.env``).
    """
    parts = urlsplit(value)
    hint = (
        "the URL is recorded with every run and logged: put the key in an environment "
        'variable and name it in auth, e.g. auth = { type = "header", header = "x-goog-api-key", '
        'env = "GEMINI_API_KEY" } (the value is not shown)'
    )
    if "@" in parts.netloc:
        raise ValueError(f"carries credentials in its user info (user:password@host): {hint}")
    for item in parts.query.split("&"):
        name = item.partition("=")[0]
        if name and SECRET_QUERY_NAMES.search(name):
            raise ValueError(f"carries a credential in its query parameter {name[:40]!r}: {hint}")


def check_endpoint_suffix(value: str, spec: ProtocolSpec) -> None:
    """Refuse a route's ``upstream_url`` that already ends with its protocol's endpoint path.

    The endings come from ``spec.endpoint_suffixes``. When ``spec.path`` puts the model in the
    path (``/models/{model}:streamGenerateContent``), the fixed part before ``{model}``
    (``/models/``) anywhere in the URL marks an endpoint too, and a suffix is attached to the
    model segment, so the base URL is what precedes that segment.

    Raises:
        ValueError: names the path the protocol appends and suggests the base URL.
    """
    suffixes = tuple(s.lower() for s in spec.endpoint_suffixes)
    if not suffixes:
        return
    parts = urlsplit(value)
    path = parts.path.rstrip("/")
    lowered = path.lower()
    template = spec.path.partition("?")[0]
    marker, has_model, _ = template.partition("{model}")
    base_path: str | None = None
    if has_model:
        at = lowered.find(marker.lower()) if marker else -1
        if at >= 0 or lowered.endswith(suffixes):
            base_path = path[:at] if at >= 0 else path.rsplit("/", 1)[0]
    else:
        for suffix in suffixes:
            if lowered.endswith(suffix):
                base_path = path[: -len(suffix)]
                break
    if base_path is None:
        return
    base = urlunsplit((parts.scheme, parts.netloc, base_path, parts.query, ""))
    appended = template or spec.endpoint_suffixes[0]
    raise ValueError(
        f"is an endpoint URL, but protocol {spec.name!r} appends {appended!r} itself: "
        f"use the base URL {base!r}"
    )


def check_header_name(name: str) -> None:
    """Refuse a header the HTTP client owns (:data:`RESERVED_HEADERS`).

    Raises:
        ValueError: the header is reserved.
    """
    if name.lower() in RESERVED_HEADERS:
        raise ValueError(f"header {name!r} is set by the HTTP client and cannot be overridden")


def _looks_like_key(value: str) -> bool:
    if value.startswith(_KEY_PREFIXES):
        return True
    # A long mixed-case alphanumeric run without separators reads as a random token, not a
    # variable name (those are UPPER_SNAKE_CASE by convention).
    return (
        len(value) >= 24
        and "_" not in value
        and any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


def check_env_name(value: str) -> None:
    """Check ``auth.env`` names an environment variable and is not the key itself.

    The value is never put in the message: when this fails it may well be a secret.

    Raises:
        ValueError: not ``[A-Za-z_][A-Za-z0-9_]*``, longer than :data:`MAX_ENV_NAME`, or shaped
            like an API key.
    """
    hint = (
        "'env' must be the NAME of the environment variable holding the key "
        f"([A-Za-z_][A-Za-z0-9_]*, at most {MAX_ENV_NAME} characters), e.g. "
        'env = "OPENAI_API_KEY"; export the key in that variable (the value is not shown)'
    )
    if len(value) > MAX_ENV_NAME or _looks_like_key(value):
        raise ValueError(f"looks like an API key, not a variable name: {hint}")
    if not _ENV.match(value):
        raise ValueError(hint)
