"""Live mode as a checker: POST a run to an endpoint, check the stream as it arrives, and
report transport faults as violations with the partial report.

:func:`run_live` sends the request with the headers the real clients send (AG-UI: ``HttpAgent``
``src/run/http-request.ts``, ``accept: text/event-stream``; AI SDK: ``DefaultChatTransport``,
``content-type: application/json``) plus the caller's, reads the body with the standard
library's ``http.client`` (the kit needs no HTTP library), feeds every read to the checker and
keeps the capture. Transport findings (``<protocol>/transport/<name>``, see
:data:`conformance.rules.TRANSPORT_RULES`):

* ``http-status``: a status >= 400 (the body is kept in the message, clipped);
* ``content-type``: not ``text/event-stream``;
* ``aborted``: the body ended abnormally (connection reset, a chunked body cut short): the
  live client fails with ``terminated`` even when the bytes so far replay fine;
* ``timeout``: no byte within ``timeout`` seconds;
* ``buffered``: at least ``3`` events, the first of them after ``buffer_after`` seconds, and
  all of them within ``burst`` seconds of each other: the response was collected, then sent;
* ``idle-gap``: two reads more than ``max_gap`` seconds apart.

Times come from an injectable ``clock`` (tests pass a fake one; no test asserts a duration).
An endpoint that cannot be reached at all raises :class:`~conformance.net.NetError`.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .inputs import Checker, Protocol, make_checker
from .net import NetError
from .report import Report, Violation

__all__ = ["LiveResult", "default_input", "run_live"]

_READ = 65536


@dataclass(slots=True)
class LiveResult:
    """One live run: the ``report`` (transport findings included), the ``capture`` (body
    bytes as received), the HTTP ``status`` and ``content_type``, and ``reads``: (time, size)
    of every read relative to the request."""

    report: Report
    capture: bytes
    status: int
    content_type: str
    reads: list[tuple[float, int]] = field(default_factory=list)
    stopped: bool = False


def default_input(protocol: Protocol, text: str = "Hello") -> dict[str, Any]:
    """A minimal request body: a ``RunAgentInput`` for AG-UI, an AI SDK chat request
    ``{id, messages: UIMessage[], trigger}`` for ``ai-sdk``."""
    if protocol == "ai-sdk":
        return {
            "id": "chat-conformance",
            "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}],
        }
    return {
        "threadId": "thread-conformance",
        "runId": "run-conformance",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def _violation(checker: Checker, name: str, message: str) -> Violation:
    proto = "ai-sdk" if checker.report.profile.startswith("ai-sdk") else "agui"
    violation = Violation(f"{proto}/transport/{name}", None, message)
    checker.report.violations.append(violation)
    return violation


def run_live(
    url: str,
    body: Mapping[str, Any] | bytes,
    *,
    protocol: Protocol = "agui",
    major: int = 7,
    profile: str = "1.0",
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    max_gap: float = 30.0,
    buffer_after: float = 2.0,
    burst: float = 0.05,
    on_violation: Callable[[Violation], None] | None = None,
    stop: Callable[[Checker], bool] | None = None,
    clock: Callable[[], float] = time.monotonic,
    checker: Checker | None = None,
) -> LiveResult:
    """POST ``body`` (JSON, or raw bytes) to ``url`` and check the response as it streams.

    Args:
        stop: called after every read; ``True`` closes the connection there (a client that
            goes away: the report is what arrived, without the end-of-stream checks).
        on_violation: called with each violation as soon as it is found.
        checker: a checker to feed instead of a fresh one for ``protocol``.

    Raises:
        NetError: the endpoint could not be reached (no response at all).
    """
    if checker is None:
        checker = make_checker(protocol, major=major, source=url, profile=profile)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NetError(f"not an http(s) URL: {url}")
    conn_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    conn = conn_type(parts.hostname, parts.port, timeout=timeout)
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"content-type": "application/json", "accept": "text/event-stream", **(headers or {})}
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def report(found: list[Violation]) -> None:
        if on_violation is not None:
            for v in found:
                on_violation(v)

    start = clock()
    try:
        conn.request("POST", path, body=payload, headers=sent)
        response = conn.getresponse()
    except (OSError, http.client.HTTPException) as exc:
        conn.close()
        raise NetError(f"POST {url}: {exc}") from exc
    content_type = response.getheader("content-type") or ""
    result = LiveResult(checker.report, b"", response.status, content_type)
    capture = bytearray()
    if response.status >= 400:
        text = response.read(2048).decode("utf-8", "replace")
        report([_violation(checker, "http-status", f"HTTP {response.status}: {text[:200]}")])
        conn.close()
        result.capture = bytes(capture)
        return result
    if not content_type.split(";")[0].strip().lower() == "text/event-stream":
        report([_violation(checker, "content-type", f"content-type {content_type!r}")])
    last = start
    try:
        while True:
            data = response.read1(_READ)
            now = clock()
            if not data:
                break
            if now - last > max_gap:
                report([_violation(checker, "idle-gap", f"{now - last:.1f} s without a byte")])
            last = now
            result.reads.append((now - start, len(data)))
            capture += data
            report(checker.feed(data))
            if stop is not None and stop(checker):
                result.stopped = True
                break
    except TimeoutError:
        report([_violation(checker, "timeout", f"no byte within {timeout:.0f} s")])
    except (OSError, http.client.HTTPException) as exc:
        report([_violation(checker, "aborted", f"the response ended abnormally: {exc!r}")])
    finally:
        conn.close()
    result.capture = bytes(capture)
    if not result.stopped:
        report(checker.close())
        report(_buffering(checker, result, buffer_after, burst))
    return result


def _buffering(checker: Checker, result: LiveResult, after: float, burst: float) -> list[Violation]:
    reads = result.reads
    if checker.report.events < 3 or not reads:
        return []
    first, final = reads[0][0], reads[-1][0]
    if first >= after and final - first <= burst:
        return [
            _violation(
                checker,
                "buffered",
                f"all {checker.report.events} events arrived within {final - first:.3f} s, "
                f"after {first:.1f} s of silence",
            )
        ]
    return []
