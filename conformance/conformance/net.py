"""Network inputs of the kit: fetch a capture, or run a live AG-UI endpoint and check it live.

Standard library only (``urllib`` / ``http.client``): the kit installs without an HTTP
library. :func:`fetch` GETs a capture; :func:`run_endpoint` is the one-call form of
:func:`conformance.live.run_live` (POST a ``RunAgentInput``, AG-UI 1.0
``RunAgentInputSchema``, with ``Accept: text/event-stream`` as ``@ag-ui/client`` ``HttpAgent``
does, ``src/run/http-request.ts``) that raises on an HTTP error status.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from .inputs import Protocol
from .report import Report, Violation

__all__ = ["NetError", "fetch", "run_endpoint"]

DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for a read (and for the connection) before giving up."""


class NetError(Exception):
    """The endpoint could not be reached or answered with an HTTP error status."""


def fetch(
    url: str, *, timeout: float = DEFAULT_TIMEOUT, headers: Mapping[str, str] | None = None
) -> bytes:
    """GET ``url`` and return the body.

    Raises:
        NetError: connection failure, timeout or a non-2xx status.
    """
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body: bytes = response.read()
            return body
    except urllib.error.HTTPError as exc:
        raise NetError(f"GET {url}: HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise NetError(f"GET {url}: {exc}") from exc


def run_endpoint(
    url: str,
    run_input: dict[str, Any],
    *,
    protocol: Protocol = "agui",
    major: int = 7,
    timeout: float = DEFAULT_TIMEOUT,
    on_violation: Callable[[Violation], None] | None = None,
    on_bytes: Callable[[bytes], None] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Report:
    """POST ``run_input`` to ``url`` and check the streamed response as it arrives.

    Args:
        on_violation: called with each violation as soon as it is found.
        on_bytes: called with the captured body once the response has ended.

    Raises:
        NetError: connection failure or a non-2xx status.
    """
    from .live import run_live

    live = run_live(
        url, run_input, protocol=protocol, major=major, timeout=timeout,
        on_violation=on_violation, headers=headers,
    )  # fmt: skip
    if live.status >= 400:
        raise NetError(f"POST {url}: HTTP {live.status}")
    if on_bytes is not None:
        on_bytes(live.capture)
    return live.report
