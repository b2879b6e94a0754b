"""Network inputs of the kit: fetch a capture, or run a live AG-UI endpoint and check it live.

Uses httpx (the gateway's HTTP client). ``run`` POSTs a ``RunAgentInput`` (AG-UI 1.0
``RunAgentInputSchema``) with ``Accept: text/event-stream``, as ``@ag-ui/client`` ``HttpAgent``
does (``src/run/http-request.ts``), and feeds every received byte to the checker as it
arrives, so violations are reported while the run is still streaming.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from .inputs import Protocol, make_checker
from .report import Report, Violation

__all__ = ["NetError", "fetch", "run_endpoint"]

DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for a read (and for the connection) before giving up."""


class NetError(Exception):
    """The endpoint could not be reached or answered with an HTTP error status."""


def fetch(
    url: str, *, timeout: float = DEFAULT_TIMEOUT, client: httpx.Client | None = None
) -> bytes:
    """GET ``url`` and return the body.

    Raises:
        NetError: connection failure, timeout or a non-2xx status.
    """
    own = client is None
    http = client or httpx.Client(timeout=timeout, follow_redirects=True)
    try:
        response = http.get(url)
        if response.status_code >= 400:
            raise NetError(f"GET {url}: HTTP {response.status_code}")
        return response.content
    except httpx.HTTPError as exc:
        raise NetError(f"GET {url}: {exc}") from exc
    finally:
        if own:
            http.close()


def run_endpoint(
    url: str,
    run_input: dict[str, Any],
    *,
    protocol: Protocol = "agui",
    major: int = 7,
    timeout: float = DEFAULT_TIMEOUT,
    on_violation: Callable[[Violation], None] | None = None,
    on_bytes: Callable[[bytes], None] | None = None,
    client: httpx.Client | None = None,
) -> Report:
    """POST ``run_input`` to ``url`` and check the streamed response as it arrives.

    Args:
        on_violation: called with each violation as soon as it is found.
        on_bytes: called with each received piece of the body (to keep a capture).
        client: an httpx client to use (tests pass one with a mock transport).

    Raises:
        NetError: connection failure, timeout or a non-2xx status.
    """
    checker = make_checker(protocol, major=major, source=url)
    own = client is None
    http = client or httpx.Client(timeout=timeout, follow_redirects=True)
    headers = {"accept": "text/event-stream", "content-type": "application/json"}
    try:
        with http.stream("POST", url, json=run_input, headers=headers) as response:
            if response.status_code >= 400:
                raise NetError(f"POST {url}: HTTP {response.status_code}")
            for chunk in response.iter_bytes():
                if on_bytes is not None:
                    on_bytes(chunk)
                for violation in checker.feed(chunk):
                    if on_violation is not None:
                        on_violation(violation)
        for violation in checker.close():
            if on_violation is not None:
                on_violation(violation)
    except httpx.HTTPError as exc:
        raise NetError(f"POST {url}: {exc}") from exc
    finally:
        if own:
            http.close()
    return checker.report
