"""The upstream side: build the provider request, stream it with httpx, decode it into events.

Data flow of one request::

    ClientRequest --build_body()--> provider JSON (or the client's bytes, for passthrough
        upstreams) --POST (httpx, streamed)--> bytes --decoder.feed()--> AG-UI events (batches,
        one per received chunk)

Per protocol (:data:`PROTOCOL_PATHS`, :data:`PROTOCOL_HEADERS`, :func:`build_body`):

====================  ==============================================  ===========================
protocol              POST to                                         body
====================  ==============================================  ===========================
``openai-chat``       ``{upstream_url}/chat/completions``             :mod:`.request_openai`
``anthropic``         ``{upstream_url}/messages``                     :mod:`.request_anthropic`
``openai-responses``  ``{upstream_url}/responses``                    :mod:`.request_responses`
``gemini``            ``{upstream_url}/models/{model}:``              :mod:`.request_gemini`
                      ``streamGenerateContent?alt=sse``
``ai-sdk``            ``{upstream_url}``                              :mod:`.request_passthrough`
``agui``              ``{upstream_url}``                              :mod:`.request_passthrough`
====================  ==============================================  ===========================

Every request says ``accept: text/event-stream``; the route's ``auth`` and ``headers`` are
added (Gemini's key goes in ``x-goog-api-key``: ``auth = {type = "header", header =
"x-goog-api-key", env = "GEMINI_API_KEY"}``).

The ``httpx.AsyncClient`` is injected (tests pass a respx router or ``httpx.MockTransport``).
Every failure is turned into a terminal RUN_ERROR through the decoder's
:meth:`~agui_codecs.decoders.base.StreamDecoder.fail`, so whatever was open (text, reasoning,
tool calls) is closed first and the client always sees a legal end of run:

=================================================  ==========================================
failure                                            RUN_ERROR ``code``
=================================================  ==========================================
key variable of the route unset or empty           ``UPSTREAM_AUTH_MISSING``
HTTP status outside 2xx, JSON error body           the body's ``error.code``, else
                                                   ``error.type`` (e.g. ``invalid_api_key``,
                                                   ``authentication_error``)
HTTP status outside 2xx, other body                ``UPSTREAM_HTTP_<status>``
connect error, DNS failure, refused connection     ``UPSTREAM_UNAVAILABLE``
connection lost after the response started         ``UPSTREAM_DISCONNECTED``
any httpx timeout (connect, read, write, pool)     ``UPSTREAM_TIMEOUT``
malformed bytes                                    the decoder's own (``UPSTREAM_MALFORMED``...)
a bug in the gateway                               ``INTERNAL_ERROR`` (logged, details masked)
=================================================  ==========================================

Error bodies are read up to :data:`MAX_ERROR_BODY` bytes. Closing the event iterator (the
client went away) leaves the ``async with client.stream(...)`` block, which closes the upstream
response and so cancels the upstream request.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import orjson
from ag_ui.core import Event, RunAgentInput
from agui_codecs.decoders.base import StreamDecoder, upstream_error

from .config import SELF_SCHEME, RouteConfig
from .request_anthropic import to_anthropic
from .request_common import ClientRequest
from .request_gemini import gemini_model_path, to_gemini
from .request_openai import to_openai_chat
from .request_passthrough import agui_body, ai_sdk_body
from .request_responses import to_openai_responses

__all__ = [
    "MAX_ERROR_BODY",
    "PROTOCOL_HEADERS",
    "PROTOCOL_PATHS",
    "SELF_BASE_URL",
    "Upstream",
    "UpstreamBody",
    "build_body",
    "endpoint_path",
]

log = logging.getLogger("gateway.upstream")

MAX_ERROR_BODY = 64 * 1024
"""Bytes of an upstream error body read to find its code and message."""

SELF_BASE_URL = "http://gateway.internal"
"""Base URL the in-process client uses for ``self:`` upstreams (the host is never resolved)."""

PROTOCOL_PATHS: dict[str, str] = {
    "openai-chat": "/chat/completions",
    "anthropic": "/messages",
    "openai-responses": "/responses",
    "gemini": "/models/{model}:streamGenerateContent?alt=sse",
    "ai-sdk": "",
    "agui": "",
}
"""Path each protocol appends to the route's ``upstream_url`` (``{model}``: the route's model,
see :func:`endpoint_path`)."""

PROTOCOL_HEADERS: dict[str, dict[str, str]] = {
    "openai-chat": {},
    "anthropic": {"anthropic-version": "2023-06-01"},
    "openai-responses": {},
    "gemini": {},
    "ai-sdk": {},
    "agui": {},
}
"""Default headers per protocol; the route's ``headers`` override them."""

UpstreamBody = dict[str, Any] | bytes
"""A request body: JSON to encode, or bytes sent exactly as given (passthrough upstreams)."""

_Translator = Callable[..., dict[str, Any]]
_TRANSLATORS: dict[str, _Translator] = {
    "openai-chat": to_openai_chat,
    "anthropic": to_anthropic,
    "openai-responses": to_openai_responses,
    "gemini": to_gemini,
}
_PASSTHROUGH: dict[str, Callable[[ClientRequest], UpstreamBody]] = {
    "ai-sdk": ai_sdk_body,
    "agui": agui_body,
}


def build_body(route: RouteConfig, request: ClientRequest | RunAgentInput) -> UpstreamBody:
    """The upstream request body for ``request`` on ``route`` (see the module docstring).

    Args:
        route: the route (its protocol, model and params).
        request: what the client posted; a bare ``RunAgentInput`` counts as an AG-UI request
            with no raw bytes.

    Raises:
        TranslationError: the input cannot be expressed in the route's protocol.
    """
    if isinstance(request, RunAgentInput):
        request = ClientRequest(request)
    passthrough = _PASSTHROUGH.get(route.protocol)
    if passthrough is not None:
        return passthrough(request)
    translate = _TRANSLATORS[route.protocol]
    return translate(request.run_input, model=route.model or "", params=route.params)


def endpoint_path(route: RouteConfig) -> str:
    """The path ``route``'s protocol appends to its ``upstream_url`` (model filled in)."""
    path = PROTOCOL_PATHS[route.protocol]
    if "{model}" in path:
        path = path.replace("{model}", quote(gemini_model_path(route.model or ""), safe=""))
    return path


class _Failure(Exception):
    """An upstream failure that ends the run with RUN_ERROR ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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

    def _target(self, route: RouteConfig) -> _Target:
        path = endpoint_path(route)
        if urlsplit(route.upstream_url).scheme == SELF_SCHEME:
            if self.self_client is None:
                raise _Failure("UPSTREAM_UNAVAILABLE", "in-process upstream is not available")
            return _Target(
                self.self_client, SELF_BASE_URL + urlsplit(route.upstream_url).path + path
            )
        return _Target(self.client, route.upstream_url + path)

    def _headers(self, route: RouteConfig) -> dict[str, str]:
        headers = {"accept": "text/event-stream", **PROTOCOL_HEADERS[route.protocol]}
        headers.update(route.headers)
        auth = route.auth
        if auth.type == "none" or auth.env is None:
            return headers
        key = self.environ.get(auth.env, "").strip()
        if not key:
            raise _Failure(
                "UPSTREAM_AUTH_MISSING",
                f"route {route.name!r}: environment variable {auth.env} is not set",
            )
        if auth.type == "bearer":
            headers["authorization"] = f"Bearer {key}"
        elif auth.header is not None:
            headers[auth.header] = key
        return headers

    async def events(
        self, route: RouteConfig, body: UpstreamBody, decoder: StreamDecoder
    ) -> AsyncGenerator[list[Event], None]:
        """POST ``body`` to the route's upstream; yield event batches until the run ends.

        ``body`` is sent as JSON, or exactly as given when it is bytes (``content-type:
        application/json`` either way).

        The last batch always ends with RUN_FINISHED or RUN_ERROR. Never raises for upstream
        failures (see the module docstring); closing the iterator closes the upstream response.
        """
        started = False
        try:
            headers = self._headers(route)
            target = self._target(route)
            timeout = httpx.Timeout(**route.timeouts.model_dump())
            if isinstance(body, bytes):
                headers["content-type"] = "application/json"
                payload: dict[str, Any] = {"content": body}
            else:
                payload = {"json": body}
            async with target.client.stream(
                "POST", target.url, headers=headers, timeout=timeout, **payload
            ) as response:
                started = True
                if not response.is_success:
                    raise await _http_failure(response)
                async for chunk in response.aiter_bytes():
                    events = decoder.feed(chunk)
                    if events:
                        yield events
                    if decoder.ended:
                        break
        except _Failure as exc:
            self._fail(route, decoder, exc.code, exc.message)
        except httpx.TimeoutException as exc:
            self._fail(route, decoder, "UPSTREAM_TIMEOUT", f"upstream timed out ({_kind(exc)})")
        except httpx.TransportError as exc:
            if started:
                code, message = "UPSTREAM_DISCONNECTED", "upstream connection lost mid-stream"
            else:
                code, message = "UPSTREAM_UNAVAILABLE", "upstream is unreachable"
            self._fail(route, decoder, code, f"{message} ({_kind(exc)})")
        except Exception:
            log.exception("route %s: internal error while streaming", route.name)
            self._fail(route, decoder, "INTERNAL_ERROR", "internal gateway error")
        events = decoder.close()
        if events:
            yield events

    @staticmethod
    def _fail(route: RouteConfig, decoder: StreamDecoder, code: str, message: str) -> None:
        log.warning("route %s: %s: %s", route.name, code, message)
        decoder.fail(code, message)


def _kind(exc: Exception) -> str:
    return type(exc).__name__


async def _http_failure(response: httpx.Response) -> _Failure:
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= MAX_ERROR_BODY:
            break
    status = response.status_code
    code = f"UPSTREAM_HTTP_{status}"
    message = f"upstream returned HTTP {status}"
    try:
        doc: Any = orjson.loads(bytes(raw[:MAX_ERROR_BODY]))
    except orjson.JSONDecodeError:
        return _Failure(code, message)
    if isinstance(doc, list) and doc:
        doc = doc[0]  # Gemini wraps its error object in an array
    if isinstance(doc, dict):
        error = doc.get("error", doc)
        if isinstance(error, str) and error:
            return _Failure(code, f"{message}: {error}")
        if isinstance(error, dict):
            found_code, found_message = upstream_error(error, default_code=code)
            return _Failure(found_code, f"{message}: {found_message}")
    return _Failure(code, message)
