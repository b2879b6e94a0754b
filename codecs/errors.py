"""Errors raised by the codecs.

The hierarchy follows h11's split between "we misused the API" and "the peer broke the
protocol"::

    CodecError
    ├── LocalProtocolError      the caller misused a codec (feed after close, unknown codec name)
    ├── InternalDecoderError    a bug in a decoder's own code: not the upstream's fault
    └── RemoteProtocolError     the upstream bytes break their protocol
        ├── MalformedUpstreamError   a payload is not the JSON / shape the protocol promises
        └── EventTooLargeError       an SSE line or event is longer than the configured cap

Every error carries ``code``, a stable SCREAMING_CASE string that ends up as the ``code`` of
the RUN_ERROR event (AG-UI 1.0 ``RunErrorEvent.code``) when the error ends a run.

A decoder never raises the two run-ending kinds out of ``feed()`` / ``close()``: it ends the run
with RUN_ERROR and keeps the error in ``decoder.error`` (see
:mod:`agui_codecs.decoders.base`). :class:`RemoteProtocolError` blames the upstream;
:class:`InternalDecoderError` blames us (its message is fixed, the cause is logged).
"""

from __future__ import annotations

__all__ = [
    "CodecError",
    "EventTooLargeError",
    "InternalDecoderError",
    "LocalProtocolError",
    "MalformedUpstreamError",
    "RemoteProtocolError",
]


class CodecError(Exception):
    """Base class of every codec error.

    Attributes:
        code: stable machine-readable code (e.g. ``"UPSTREAM_MALFORMED"``).
        message: one-line human-readable description.
    """

    code: str = "CODEC_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class LocalProtocolError(CodecError):
    """The caller used a codec wrongly (for instance ``feed()`` after ``close()``)."""

    code = "LOCAL_PROTOCOL_ERROR"


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
