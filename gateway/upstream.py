"""The upstream side: build the provider request, stream it with httpx, decode it into events.

Data flow of one request::

    ClientRequest --spec.build_request()--> provider JSON (or the client's bytes, for
        passthrough upstreams) --POST (httpx, streamed)--> bytes --decoder.feed()--> AG-UI
        events (batches, one per received chunk)

Everything protocol-specific comes from the route's
:class:`~agui_codecs.protocols.ProtocolSpec` in the codec registry
(:func:`agui_codecs.get_protocol`): the request builder, the path appended to the route's
``upstream_url`` (:func:`endpoint_path`), default headers and the optional signing hook. The
built-in protocols (one folder each under ``codecs/agui_codecs/protocols/``):

====================  ==============================================  ===========================
protocol              POST to                                         body (``protocols/...``)
====================  ==============================================  ===========================
``openai-chat``       ``{upstream_url}/chat/completions``             ``openai_chat/request.py``
``anthropic``         ``{upstream_url}/messages``                     ``anthropic/request.py``
``openai-responses``  ``{upstream_url}/responses``                    ``openai_responses/...``
``gemini``            ``{upstream_url}/models/{model}:``              ``gemini/request.py``
                      ``streamGenerateContent?alt=sse``
``ai-sdk``            ``{upstream_url}``                              ``ai_sdk/request.py``
``agui``              ``{upstream_url}``                              ``agui/request.py``
``bedrock-converse``  ``{upstream_url}/model/{model}/``               ``bedrock_converse/...``
                      ``converse-stream``
``a2a``               ``{upstream_url}``                              ``a2a/request.py``
``langgraph``         ``{upstream_url}/threads/{thread_id}/``          ``langgraph/request.py``
                      ``runs/stream``
====================  ==============================================  ===========================

Every request says ``accept: text/event-stream``; the spec's default headers
(``anthropic-version``), then the route's ``headers`` and ``auth`` are added (Gemini's key goes
in ``x-goog-api-key``: ``auth = {type = "header", header = "x-goog-api-key", env =
"GEMINI_API_KEY"}``). When the spec has a ``sign`` hook (schemes whose auth covers the body,
such as AWS SigV4), the body is serialised first and the headers the hook returns are sent; a
hook that raises a :class:`~agui_codecs.CodecError` ends the run with that error's code.

The ``httpx.AsyncClient`` is injected (tests pass a respx router or ``httpx.MockTransport``).
Every failure is turned into a terminal RUN_ERROR through the decoder's
:meth:`~agui_codecs.protocols.StreamDecoder.fail`, so whatever was open (text, reasoning,
tool calls) is closed first and the client always sees a legal end of run:

=================================================  ==========================================
failure                                            RUN_ERROR ``code``
=================================================  ==========================================
key variable of the route unset or empty, or the   ``UPSTREAM_AUTH_MISSING``
``sign`` hook found no credentials
HTTP status outside 2xx, JSON error body           the body's ``error.code``, else
                                                   ``error.type``, else ``error.status``
                                                   (e.g. ``invalid_api_key``,
                                                   ``authentication_error``,
                                                   ``INVALID_ARGUMENT``)
HTTP status outside 2xx, other body                ``UPSTREAM_HTTP_<status>``
connect error, DNS failure, refused connection     ``UPSTREAM_UNAVAILABLE``
connection lost after the response started         ``UPSTREAM_DISCONNECTED``
any timeout (connect, read, write, pool, and the   ``UPSTREAM_TIMEOUT``, message ``upstream
route's first_byte, idle, total)                   timed out (<which>)``
malformed bytes                                    the decoder's own (``UPSTREAM_MALFORMED``...)
a bug in the decoder (not the upstream's fault)    ``INTERNAL_DECODER_ERROR`` (logged as an error,
                                                   message ``internal gateway error``)
a bug in the gateway                               ``INTERNAL_ERROR`` (logged, details masked)
=================================================  ==========================================

Messages reach end users, so internals stay in the log (``docs/protocols.md`` §3.3 rule 5,
"mask internal error text"): a missing key names the route, not its variable; a 4xx keeps the
provider's message (it tells the developer what to fix), a 5xx is ``upstream server error (HTTP
<status>)`` with the body logged (truncated); a decoder fault that quotes upstream bytes
(``UPSTREAM_MALFORMED``, ``UPSTREAM_EVENT_TOO_LARGE``) gets a fixed sentence
(:data:`MASKED_DECODER_ERRORS`), its detail logged; a decoder's own bug
(``agui_codecs.InternalDecoderError``: its traceback is logged by the ``agui_codecs`` logger and
counted in ``/metrics``) is reported like a gateway bug. A ``?query`` on ``upstream_url`` (Azure
``api-version``) is kept after the appended path (:func:`endpoint_url`).

Error bodies are read up to :data:`MAX_ERROR_BODY` bytes; reading them, the masking and the
redaction are in :mod:`gateway.upstream_errors`. Closing the event iterator (the
client went away) closes the upstream response and so cancels the upstream request.

One call is one attempt: retries, deployments and fallbacks are :mod:`gateway.attempts`'s,
which reads the :class:`AttemptReport` each call fills (HTTP status, ``Retry-After``, which
timeout fired).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx
import orjson
from ag_ui.core import Event, RunAgentInput

from agui_codecs import CodecError, get_protocol
from agui_codecs.identity import provider_body
from agui_codecs.protocols import ClientRequest, ProtocolSpec, RequestBody, StreamDecoder

from . import metrics, tracing
from .config import SELF_SCHEME, RouteConfig
from .retry import retry_after
from .upstream_errors import (
    MASKED_DECODER_ERRORS,
    MAX_ERROR_BODY,
    REDACTED,
    UpstreamFailure,
    http_failure,
    masked,
    redact,
)

__all__ = [
    "MASKED_DECODER_ERRORS",
    "MAX_ERROR_BODY",
    "REDACTED",
    "SELF_BASE_URL",
    "AttemptReport",
    "Upstream",
    "UpstreamBody",
    "build_body",
    "endpoint_path",
    "endpoint_url",
    "redact",
]

log = logging.getLogger("gateway.upstream")

SELF_BASE_URL = "http://gateway.internal"
"""Base URL the in-process client uses for ``self:`` upstreams (the host is never resolved)."""

UpstreamBody = RequestBody
"""A request body: JSON to encode, or bytes sent exactly as given (passthrough upstreams)."""


def build_body(route: RouteConfig, request: ClientRequest | RunAgentInput) -> UpstreamBody:
    """The upstream request body for ``request`` on ``route``: its protocol spec's
    ``build_request`` with the route's model and params (see the module docstring).

    Args:
        route: the route (its protocol, model and params).
        request: what the client posted; a bare ``RunAgentInput`` counts as an AG-UI request
            with no raw bytes.

    Raises:
        RequestTranslationError: the input cannot be expressed in the route's protocol
            (status hint 422; :class:`~agui_codecs.errors.InvalidInputError` when a provider
            route got no conversation, a tool result without its call is
            ``INVALID_TOOL_RESULT``). Passthrough routes forward the request as it is: their
            backend decides.
    """
    if isinstance(request, RunAgentInput):
        request = ClientRequest(request)
    spec = get_protocol(route.protocol)
    # each provider gets its own ids back (derived AG-UI ids, agui_codecs.identity; ids the
    # store refused, remapped and kept per thread: request.upstream_ids)
    built = spec.build_request(request, model=route.model or "", params=route.params)
    body = provider_body(built, request.upstream_ids)
    if request.upstream_ids and body is not built and not isinstance(body, bytes | bytearray):
        try:
            orjson.dumps(body)
        except TypeError:  # an original id holds a lone surrogate: sent as its \uXXXX escape
            return json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode()
    return body


def endpoint_path(route: RouteConfig, thread_id: str = "") -> str:
    """The path ``route``'s protocol appends to its ``upstream_url`` (the model and the
    request's thread id filled in, :meth:`~agui_codecs.protocols.ProtocolSpec.path_for`)."""
    return get_protocol(route.protocol).path_for(route.model or "", thread_id=thread_id)


def endpoint_url(base: str, path: str) -> str:
    """``path`` (which may carry its own ``?query``) appended to ``base``'s path, the two
    queries joined: ``https://h/openai/deployments/d?api-version=1`` + ``/chat/completions`` is
    ``https://h/openai/deployments/d/chat/completions?api-version=1`` (Azure OpenAI)."""
    parts = urlsplit(base)
    if not parts.query:
        return base + path
    own_path, _, own_query = path.partition("?")
    query = "&".join(q for q in (own_query, parts.query) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path + own_path, query, ""))


@dataclass(frozen=True, slots=True)
class _Target:
    client: httpx.AsyncClient
    url: str


class Upstream:
    """Sends route requests upstream and yields the decoded AG-UI events.

    Args:
        client: the client for ``http(s)`` upstreams (owned by the caller).
        self_client: the client for ``self:`` upstreams (an in-process transport to the
            gateway's own app, base URL :data:`SELF_BASE_URL`); ``None`` makes such routes fail
            with ``UPSTREAM_UNAVAILABLE``.
        environ: where key variables are read, at request time (default ``os.environ``).
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        self_client: httpx.AsyncClient | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        self.self_client = self_client
        self.environ: Mapping[str, str] = os.environ if environ is None else environ

    def _target(self, route: RouteConfig, thread_id: str) -> _Target:
        path = endpoint_path(route, thread_id)
        if urlsplit(route.upstream_url).scheme == SELF_SCHEME:
            if self.self_client is None:
                raise UpstreamFailure(
                    "UPSTREAM_UNAVAILABLE", "in-process upstream is not available"
                )
            return _Target(
                self.self_client, SELF_BASE_URL + urlsplit(route.upstream_url).path + path
            )
        return _Target(self.client, endpoint_url(route.upstream_url, path))

    def _headers(self, route: RouteConfig, spec: ProtocolSpec) -> dict[str, str]:
        headers = {"accept": "text/event-stream", **spec.headers}
        headers.update(route.headers)
        auth = route.auth
        if auth.type == "none" or auth.env is None:
            return headers
        key = self.environ.get(auth.env, "").strip()
        if not key:
            # The variable's name is for the operator's log only, never for the client.
            log.warning(
                "route %s: environment variable %s is not set or empty", route.name, auth.env
            )
            raise UpstreamFailure(
                "UPSTREAM_AUTH_MISSING",
                f"upstream credentials for route {route.name!r} are not configured",
            )
        if not _HEADER_VALUE.fullmatch(key):
            # A CR, LF, NUL or other control character would break the request's header
            # block (RFC 9110 §5.5): the operator's variable is wrong, not the upstream.
            log.warning(
                "route %s: environment variable %s holds characters a header value cannot",
                route.name,
                auth.env,
            )
            raise UpstreamFailure(
                "UPSTREAM_AUTH_INVALID",
                f"upstream credentials for route {route.name!r} are not a valid header value",
            )
        if auth.type == "bearer":
            headers["authorization"] = f"Bearer {key}"
        elif auth.header is not None:
            headers[auth.header] = key
        return headers

    async def events(
        self,
        route: RouteConfig,
        body: UpstreamBody,
        decoder: StreamDecoder,
        *,
        thread_id: str = "",
        report: AttemptReport | None = None,
    ) -> AsyncGenerator[list[Event], None]:
        """POST ``body`` to the route's upstream; yield event batches until the run ends.

        ``body`` is sent as JSON, or exactly as given when it is bytes (``content-type:
        application/json`` either way). ``thread_id`` (the request's AG-UI ``threadId``)
        fills a ``{thread_id}`` in the protocol's path. ``report``, when given, is filled with
        what a retry decision needs (:class:`AttemptReport`: HTTP status, ``Retry-After``,
        which timeout fired).

        Timeouts (the route's :class:`~gateway.route_policy.TimeoutConfig`): httpx's connect /
        read / write / pool, and the gateway's ``first_byte`` (request to first decoded
        event), ``idle`` (between decoded events) and ``total`` (the whole attempt); each ends
        the run with ``UPSTREAM_TIMEOUT``, its name in the message and in the report.

        The last batch always ends with RUN_FINISHED or RUN_ERROR. Never raises for upstream
        failures (see the module docstring); closing the iterator closes the upstream response.
        """
        report = report if report is not None else AttemptReport()
        started = False
        sent_at: float | None = None
        span: Any = None
        timeouts = route.timeouts
        loop = asyncio.get_running_loop()
        begun = loop.time()
        deadline_total = begun + timeouts.total if timeouts.total else None
        try:
            spec = get_protocol(route.protocol)
            headers = self._headers(route, spec)
            target = self._target(route, thread_id)
            timeout = httpx.Timeout(**timeouts.httpx_timeouts())
            span = tracing.upstream_span(route.protocol, route.model, target.url)
            tracing.inject(headers, span)  # traceparent: the upstream joins the trace
            if spec.sign is not None:
                content = body if isinstance(body, bytes) else orjson.dumps(body)
                headers["content-type"] = "application/json"
                headers = _signed(route, spec, target.url, headers, content)
                payload: dict[str, Any] = {"content": content}
            elif isinstance(body, bytes):
                headers["content-type"] = "application/json"
                payload = {"content": body}
            else:
                payload = {"json": body}
            request = target.client.build_request(
                "POST", target.url, headers=headers, timeout=timeout, **payload
            )
            first = begun + timeouts.first_byte if timeouts.first_byte else None
            deadline, which = _earliest((first, "first_byte"), (deadline_total, "total"))
            sent_at = time.perf_counter()
            async with _deadline(deadline, which, report):
                response = await target.client.send(request, stream=True)
            # the response holds what it needs of the request: nothing more is kept per stream
            del headers, payload, request, timeout
            try:
                started = True
                report.status = response.status_code
                if span is not None:
                    span.set_attribute("http.response.status_code", response.status_code)
                if not response.is_success:
                    report.retry_after = retry_after(response.headers)
                    raise await http_failure(route, response, self._secret(route))
                chunks = _body_chunks(response)
                seen_event = False
                ttfb = metrics.UPSTREAM_TTFB.labels(route.name, route.protocol)
                awaiting_first_byte = True
                while True:
                    if deadline is None:  # no gateway timeout: no context manager per chunk
                        chunk = await anext(chunks, None)
                    else:
                        async with _deadline(deadline, which, report):
                            chunk = await anext(chunks, None)
                    if chunk is None:
                        break
                    if not chunk:  # the transport's stream may yield b"" (aiter_bytes did not)
                        continue
                    received = time.perf_counter()
                    if awaiting_first_byte:
                        ttfb.observe(received - sent_at)
                        awaiting_first_byte = False
                    events = decoder.feed(chunk)
                    if events:
                        if not seen_event or timeouts.idle:
                            seen_event = True
                            idle = loop.time() + timeouts.idle if timeouts.idle else None
                            deadline, which = _earliest((idle, "idle"), (deadline_total, "total"))
                        batch = masked(route, decoder, events)
                        elapsed = time.perf_counter() - received
                        for _ in batch:  # per event, as documented (one latency per event)
                            _DECODE_LATENCY.observe(elapsed)
                        if span is not None and decoder.ended:
                            tracing.record_terminal(span, batch[-1])
                        yield batch
                    if decoder.ended:
                        await _drain(chunks)
                        break
            finally:
                await response.aclose()
        except UpstreamFailure as exc:
            self._fail(route, decoder, exc.code, exc.message, report)
        except _AttemptTimeout as exc:
            self._fail(
                route, decoder, "UPSTREAM_TIMEOUT", f"upstream timed out ({exc.which})", report
            )
        except httpx.TimeoutException as exc:
            report.timeout = _HTTPX_TIMEOUTS.get(type(exc), "read")
            self._fail(
                route, decoder, "UPSTREAM_TIMEOUT", f"upstream timed out ({report.timeout})", report
            )
        except httpx.TransportError as exc:
            if started:
                code, message = "UPSTREAM_DISCONNECTED", "upstream connection lost mid-stream"
            else:
                code, message = "UPSTREAM_UNAVAILABLE", "upstream is unreachable"
            log.warning("route %s: %s (%s: %s)", route.name, message, _kind(exc), exc)
            self._fail(route, decoder, code, message, report)
        except Exception:
            log.exception("route %s: internal error while streaming", route.name)
            self._fail(route, decoder, "INTERNAL_ERROR", "internal gateway error", report)
        except BaseException:  # closed early (the client went away) or cancelled
            _end_upstream(route, sent_at, span)
            raise
        events = decoder.close()
        try:
            if events:
                batch = masked(route, decoder, events)
                tracing.record_terminal(span, batch[-1])
                yield batch
        finally:
            _end_upstream(route, sent_at, span)

    def _secret(self, route: RouteConfig) -> str | None:
        """The route's upstream key (None without one): redacted from what an upstream says."""
        if route.auth.type == "none" or route.auth.env is None:
            return None
        return self.environ.get(route.auth.env, "").strip() or None

    @staticmethod
    def _fail(
        route: RouteConfig, decoder: StreamDecoder, code: str, message: str, report: AttemptReport
    ) -> None:
        log.warning("route %s: %s: %s", route.name, code, message)
        report.transport = True
        decoder.fail(code, message)


@dataclass(slots=True)
class AttemptReport:
    """What one :meth:`Upstream.events` call learnt about its failure, for the retry decision
    (:mod:`gateway.attempts`).

    Attributes:
        status: the HTTP status of the upstream's answer (None: no answer).
        retry_after: seconds the upstream asked to wait (``Retry-After``, ``retry-after-ms``),
            when it answered non-2xx with one.
        timeout: which timeout ended the attempt (``connect``, ``first_byte``, ``idle``,
            ``total``, ``read``, ``write``, ``pool``), if one did.
        transport: the run was ended by the gateway (HTTP status, transport error, timeout,
            missing key), not by an event the upstream streamed.
    """

    status: int | None = None
    retry_after: float | None = None
    timeout: str | None = None
    transport: bool = False


class _AttemptTimeout(Exception):
    def __init__(self, which: str) -> None:
        super().__init__(which)
        self.which = which


_HTTPX_TIMEOUTS: dict[type[Exception], str] = {
    httpx.ConnectTimeout: "connect",
    httpx.ReadTimeout: "read",
    httpx.WriteTimeout: "write",
    httpx.PoolTimeout: "pool",
}


def _earliest(*deadlines: tuple[float | None, str]) -> tuple[float | None, str]:
    """The earliest set deadline (loop time) and its timeout's name."""
    best: tuple[float | None, str] = (None, "")
    for when, which in deadlines:
        if when is not None and (best[0] is None or when < best[0]):
            best = (when, which)
    return best


@contextlib.asynccontextmanager
async def _deadline(when: float | None, which: str, report: AttemptReport) -> AsyncIterator[None]:
    """Cancel the awaited step at loop time ``when`` (None: never), as :class:`_AttemptTimeout`.

    Held only around one await, never across a ``yield`` of the event generator: the timeout
    must cancel the upstream read, not whatever the consumer does meanwhile.
    """
    if when is None:
        yield
        return
    try:
        async with asyncio.timeout_at(when):
            yield
    except TimeoutError:
        report.timeout = which
        raise _AttemptTimeout(which) from None


_DECODE_LATENCY = metrics.EVENT_LATENCY.labels("decode")


def _end_upstream(route: RouteConfig, sent_at: float | None, span: Any) -> None:
    """Observe the upstream call's duration (when it was sent) and end its span."""
    if sent_at is not None:
        elapsed = time.perf_counter() - sent_at
        metrics.UPSTREAM_SECONDS.labels(route.name, route.protocol).observe(elapsed)
    if span is not None:
        span.end()


DRAIN_BYTES = 64 * 1024
DRAIN_SECONDS = 0.1


def _body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The streamed response's body, chunk by chunk as the connection gives it.

    A body without ``content-encoding`` (or ``identity``) is read from the transport's own
    stream, which maps the transport's errors to httpx's (httpx 0.29
    ``httpx/_transports/default.py``; the gateway's ``gateway.upstream_pool`` raises httpx's
    itself), not through ``Response.aiter_bytes`` over ``aiter_raw`` (``httpx/_models.py``):
    those add two async generators, a decoder, a chunker and a context manager that every open
    stream held for its whole life, to pass the same bytes on (issue 13: memory per open
    stream). Nor through ``response.stream``'s own ``BoundAsyncStream.__aiter__``
    (``httpx/_client.py``, 0.27 to 0.29), one more generator that passes each chunk on as it
    is (issue 13: a frame resumed twice per chunk); its ``aclose`` (the response's
    ``elapsed``, then the transport stream's) still runs, from ``response.aclose()``. An
    encoded body (``gzip``, ``deflate``, ...) is decoded by ``aiter_bytes`` as before. Either
    way ``response.aclose()`` ends the stream and returns the connection."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        return response.aiter_bytes()
    stream = response.stream
    if type(stream) is _BOUND_STREAM:
        inner = getattr(stream, "_stream", None)
        if isinstance(inner, httpx.AsyncByteStream):
            stream = inner
    return aiter(stream)  # type: ignore[arg-type]  # an AsyncByteStream here


_BOUND_STREAM: Any = getattr(httpx._client, "BoundAsyncStream", None)
"""httpx's wrapper of a streamed response's transport stream (``httpx/_client.py``); None when
an httpx release has none (then the response's stream is read as it is)."""


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what is left of a body after the run ended (the HTTP chunked terminator after
    OpenAI's ``[DONE]``, say), at most :data:`DRAIN_BYTES` within :data:`DRAIN_SECONDS`, so
    the connection goes back to httpx's pool for the next run instead of being closed (a TCP
    connect per run otherwise; bench/added_latency.py). Bytes there are ignored: the decoder
    already ended. Past either bound the connection is closed, as before."""
    read = 0
    with anyio.move_on_after(DRAIN_SECONDS):
        async for chunk in chunks:
            read += len(chunk)
            if read > DRAIN_BYTES:
                return


def _signed(
    route: RouteConfig, spec: ProtocolSpec, url: str, headers: dict[str, str], body: bytes
) -> dict[str, str]:
    """The headers ``spec.sign`` returns for one request.

    A :class:`~agui_codecs.CodecError` out of the hook (credentials or a region missing)
    ends the run with its code: ``UPSTREAM_AUTH_MISSING`` gets the same client message as a
    missing key variable (the hook's message, which names variables, goes to the log).
    """
    assert spec.sign is not None
    try:
        return dict(spec.sign("POST", url, headers, body))
    except CodecError as exc:
        log.warning("route %s: request not signed: %s: %s", route.name, exc.code, exc.message)
        if exc.code == "UPSTREAM_AUTH_MISSING":
            message = f"upstream credentials for route {route.name!r} are not configured"
        else:
            message = f"the request to the upstream could not be signed ({exc.code})"
        raise UpstreamFailure(exc.code, message) from exc


_HEADER_VALUE = re.compile(r"[\x21-\x7e\x80-\xff](?:[\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?")
"""An HTTP field value (RFC 9110 §5.5 ``field-value``, one line): visible bytes and inner
spaces or tabs never CR, LF, NUL or another control character."""


def _kind(exc: Exception) -> str:
    return type(exc).__name__
