"""What the gateway needs to know about one upstream protocol, as data: :class:`ProtocolSpec`.

A protocol folder (``agui_codecs/protocols/<name>/``) holds its stream decoder, its request
builder and, in its ``__init__.py``, a ``SPEC`` that ties them together with the HTTP facts of
the protocol: the path its endpoint adds to a route's base URL, default headers, the path
endings that show a URL is already an endpoint, the body framing, whether the client's request
is forwarded as it is, and an optional signing hook for schemes whose auth covers the body.
The registry (:mod:`agui_codecs.registry`) lists the built-in specs and those other
distributions register; every caller (CLI, route validation, the upstream client) reads it.

Sans-I/O: a spec describes requests; the gateway sends them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol
from urllib.parse import quote

from ..framing import Framing
from ._request import ClientRequest
from .base import StreamDecoder

__all__ = ["ProtocolSpec", "RequestBody", "RequestBuilder", "Signer"]

RequestBody = dict[str, Any] | bytes
"""An upstream request body: JSON to encode, or bytes sent exactly as given (passthrough)."""


class RequestBuilder(Protocol):
    """``build_request(request, *, model, params) -> body``: the upstream request for what a
    client posted.

    Args:
        request: what the client posted (:class:`~agui_codecs.protocols.ClientRequest`).
        model: the route's model (``""`` when the route has none: passthrough protocols).
        params: the route's ``params`` table (model parameters; client ``forwardedProps`` are
            read from ``request.run_input`` by the builder).

    Raises:
        RequestTranslationError: the request has no equivalent in the protocol (422).
    """

    def __call__(
        self, request: ClientRequest, /, *, model: str, params: Mapping[str, Any]
    ) -> RequestBody: ...


class Signer(Protocol):
    """``sign(method, url, headers, body) -> headers``: sign one request whose auth covers the
    body (AWS SigV4 and the like).

    Args:
        method: ``"POST"``.
        url: the full URL the request goes to (path and query included).
        headers: the headers about to be sent (defaults, route headers, route auth,
            ``content-type``), lower-case names.
        body: the exact body bytes.

    Returns:
        The complete set of headers to send (typically ``headers`` plus the signature's).

    Raises:
        CodecError: the request cannot be signed (credentials or a region missing: code
            ``UPSTREAM_AUTH_MISSING``); the gateway ends the run with RUN_ERROR of that code
            and logs the message.
    """

    def __call__(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes, /
    ) -> Mapping[str, str]: ...


def _same(model: str) -> str:
    return model


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class ProtocolSpec:
    """One upstream protocol: its decoder, its request builder and its HTTP facts.

    Attributes:
        name: the registry name (``--from`` value, route ``protocol``), e.g.
            ``"openai-chat"``; equal to ``decoder.name``.
        decoder: the :class:`~agui_codecs.protocols.StreamDecoder` subclass of its stream.
        build_request: the :class:`RequestBuilder` of its request body.
        path: appended to a route's base URL (the OpenAI SDK's base-URL convention), possibly
            with a ``?query``; ``{model}`` stands for the route's model and ``{thread_id}``
            for the thread of the client's request (see :meth:`path_for`). ``""``: the
            route's URL is the endpoint itself.
        model_segment: the text ``{model}`` becomes, from the route's model, before URL
            quoting (Gemini: the model without its ``models/`` prefix).
        thread_segment: the text ``{thread_id}`` becomes, from the request's AG-UI
            ``threadId`` (the AI SDK chat ``id``), before URL quoting (LangGraph: a UUID).
        headers: default request headers; a route's ``headers`` override them.
        endpoint_suffixes: path endings that show a route URL already is an endpoint (the
            gateway refuses it and suggests the base URL).
        framing: input framing the decoder is built with (``"auto"`` detects SSE, JSON
            lines or a JSON array by the first byte).
        passthrough: the upstream speaks a client protocol and gets the client's request as
            it is: a route has no ``params`` (nothing to translate them into).
        requires_model: a route must name its ``model``.
        sign: an optional :class:`Signer`; when set, the gateway serialises the body first and
            sends the headers it returns.
        description: one line for ``--help`` and error messages.
    """

    name: str
    decoder: type[StreamDecoder]
    build_request: RequestBuilder
    path: str = ""
    model_segment: Callable[[str], str] = _same
    thread_segment: Callable[[str], str] = _same
    headers: Mapping[str, str] = field(default_factory=dict)
    endpoint_suffixes: tuple[str, ...] = ()
    framing: Framing = "auto"
    passthrough: bool = False
    requires_model: bool = True
    sign: Signer | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if getattr(self.decoder, "name", None) != self.name:
            raise ValueError(
                f"protocol {self.name!r}: its decoder {self.decoder.__name__} is named "
                f"{getattr(self.decoder, 'name', None)!r}"
            )
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))
        object.__setattr__(self, "endpoint_suffixes", tuple(self.endpoint_suffixes))

    def path_for(self, model: str, *, thread_id: str = "") -> str:
        """:attr:`path` with ``{model}`` replaced by the quoted :attr:`model_segment` of
        ``model`` (``/models/gemini-2.5-flash:streamGenerateContent?alt=sse``) and
        ``{thread_id}`` by the quoted :attr:`thread_segment` of ``thread_id``."""
        path = self.path
        if "{model}" in path:
            path = path.replace("{model}", quote(self.model_segment(model), safe=""))
        if "{thread_id}" in path:
            path = path.replace("{thread_id}", quote(self.thread_segment(thread_id), safe=""))
        return path

    def new_decoder(self, **options: Any) -> StreamDecoder:
        """A decoder for one stream: ``decoder(framing=framing, **options)`` (the options of
        :class:`~agui_codecs.protocols.StreamDecoder`; a ``framing`` option wins)."""
        return self.decoder(**{"framing": self.framing, **options})
