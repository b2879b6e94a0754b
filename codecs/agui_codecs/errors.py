"""Errors raised by the codecs.

The hierarchy follows h11's split between "we misused the API" and "the peer broke the
protocol", plus the request side: a client's request that cannot become the upstream's::

    CodecError
    ├── LocalProtocolError      the caller misused a codec (feed after close, unknown codec name)
    │   └── IllegalEventError    a producer was asked for an event the AG-UI transition tables
    │                            forbid (strict mode, :mod:`agui_codecs.core.illegal`)
    ├── InternalDecoderError    a bug in a decoder's own code: not the upstream's fault
    ├── RemoteProtocolError     the upstream bytes break their protocol
    │   ├── MalformedUpstreamError   a payload is not the JSON / shape the protocol promises
    │   └── EventTooLargeError       an SSE line or event is longer than the configured cap
    └── RequestTranslationError  422: the client's request has no equivalent in the upstream's
        │                        request format (a video part sent to Chat Completions, tool
        │                        arguments that are not an object, a result without its call)
        └── InvalidInputError    422 ``INVALID_REQUEST``: the request holds nothing to send
                                 (no user, assistant or tool message)

Every error carries ``code``, a stable SCREAMING_CASE string: the ``code`` of the RUN_ERROR
event (AG-UI 1.0 ``RunErrorEvent.code``) when the error ends a run, or ``error.code`` of the
JSON refusal when it refuses a request. ``status_hint`` (after h11's ``error_status_hint``) is
the HTTP status a server should answer with when the error happens before any stream starts,
``None`` when the error is not the client's to fix (the gateway answers 500 then).

A decoder never raises the two run-ending kinds out of ``feed()`` / ``close()``: it ends the run
with RUN_ERROR and keeps the error in ``decoder.error`` (see
:mod:`agui_codecs.protocols.base`). :class:`RemoteProtocolError` blames the upstream;
:class:`InternalDecoderError` blames us (its message is fixed, the cause is logged).
"""

from __future__ import annotations

__all__ = [
    "CodecError",
    "EventTooLargeError",
    "IllegalEventError",
    "InternalDecoderError",
    "InvalidInputError",
    "LocalProtocolError",
    "MalformedUpstreamError",
    "RemoteProtocolError",
    "RequestTranslationError",
]


class CodecError(Exception):
    """Base class of every codec error.

    Attributes:
        code: stable machine-readable code (e.g. ``"UPSTREAM_MALFORMED"``).
        message: one-line human-readable description.
        status_hint: HTTP status for a refusal before any stream (``None``: not the
            client's fault).
    """

    code: str = "CODEC_ERROR"
    status_hint: int | None = None

    def __init__(
        self, message: str, *, code: str | None = None, status_hint: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status_hint is not None:
            self.status_hint = status_hint


class LocalProtocolError(CodecError):
    """The caller used a codec wrongly (for instance ``feed()`` after ``close()``)."""

    code = "LOCAL_PROTOCOL_ERROR"


class IllegalEventError(LocalProtocolError):
    """A producer (``RunBuilder``, an encoder) was asked for an event that breaks the AG-UI
    lifecycle (``@ag-ui/client`` 1.0.0 ``verifyEvents``, the tables of
    :mod:`agui_codecs.transitions.agui`), e.g. text after RUN_FINISHED or a second
    TOOL_CALL_START of an open call. Raised only in strict mode
    (:func:`agui_codecs.core.illegal.strict`), where it replaces a silent repair or drop.

    Attributes:
        fault: the :class:`~agui_codecs.transitions.Fault` value (``agui/verify/<fault>``).
        event_type: the AG-UI type of the refused event.
        ids: the ids involved.
    """

    code = "ILLEGAL_EVENT"

    def __init__(self, fault: str, event_type: str, message: str, ids: tuple[str, ...]) -> None:
        super().__init__(f"{fault}: {message}")
        self.fault, self.event_type, self.ids = fault, event_type, ids


class InternalDecoderError(CodecError):
    """A decoder's own code failed on an input (an exception in ``handle()``/``finalize()``).

    Not the upstream's fault, so not a :class:`RemoteProtocolError`: the bytes may be fine and
    the bug is ours. The run still ends with RUN_ERROR ``INTERNAL_DECODER_ERROR``, whose message
    is the fixed :data:`INTERNAL_MESSAGE` (end users never see the exception); the exception is
    chained as ``__cause__`` and logged with its traceback on the ``agui_codecs`` logger.

    Attributes:
        decoder: registry name of the decoder that failed (e.g. ``"openai-chat"``).
    """

    code = "INTERNAL_DECODER_ERROR"
    INTERNAL_MESSAGE = "internal decoder error"

    def __init__(self, decoder: str) -> None:
        super().__init__(self.INTERNAL_MESSAGE)
        self.decoder = decoder


class RemoteProtocolError(CodecError):
    """The upstream stream violates its own protocol."""

    code = "UPSTREAM_PROTOCOL_ERROR"


class MalformedUpstreamError(RemoteProtocolError):
    """A payload is not valid JSON, or lacks the shape its protocol requires."""

    code = "UPSTREAM_MALFORMED"


class EventTooLargeError(RemoteProtocolError):
    """An SSE line or event (or a JSON line) is larger than the decoder's ``max_event_size``.

    Attributes:
        limit: the cap in bytes that was exceeded.
    """

    code = "UPSTREAM_EVENT_TOO_LARGE"

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class RequestTranslationError(CodecError):
    """A valid client request that cannot be expressed in the upstream's request format.

    Raised by the request builders of :mod:`agui_codecs.protocols` before anything is sent.
    Codes: ``UNSUPPORTED_CONTENT`` (default: a part with no equivalent, e.g. a video part sent
    to OpenAI Chat Completions), ``INVALID_CONTENT`` (inline text that is not base64 UTF-8),
    ``INVALID_TOOL_ARGUMENTS`` (tool call arguments that are not a JSON object where the
    provider wants one), ``INVALID_TOOL_RESULT`` (a tool result without its call).
    """

    code = "UNSUPPORTED_CONTENT"
    status_hint = 422


class InvalidInputError(RequestTranslationError):
    """The request holds no conversation an upstream could answer (``messages`` empty, or only
    system / developer / activity messages)."""

    code = "INVALID_REQUEST"
