"""The shape every upstream decoder shares: bytes in, AG-UI 1.0 events out, no I/O.

A decoder is ``feed(bytes) -> list[Event]`` plus ``close() -> list[Event]`` (EOF), like h11.
Subclasses implement :meth:`StreamDecoder.handle` (one upstream payload) and
:meth:`StreamDecoder.finalize` (what EOF means for their protocol); the base class owns input
framing (:mod:`agui_codecs.framing`), the :class:`~agui_codecs.builder.RunBuilder` and the
error policy. Nothing but caller misuse ever raises out of ``feed``/``close``:

* a malformed upstream (bad JSON, wrong shape, an oversized event): the run ends with RUN_ERROR
  carrying the error's ``code`` after everything open is closed, and
  :attr:`StreamDecoder.error` keeps the typed :class:`~agui_codecs.errors.RemoteProtocolError`.
  Subclasses flag bad upstream shapes by raising
  :class:`~agui_codecs.errors.MalformedUpstreamError` themselves (:meth:`StreamDecoder.obj`,
  :meth:`StreamDecoder.arr`);
* any other exception out of a subclass (``handle``, ``finalize``, ``begins_next_run``) or the
  framing is *our* bug, not the upstream's: the run ends the same way with RUN_ERROR
  ``INTERNAL_DECODER_ERROR`` and the fixed message ``"internal decoder error"``;
  :attr:`StreamDecoder.error` is an :class:`~agui_codecs.errors.InternalDecoderError` whose
  ``__cause__`` is the exception, which is logged with its traceback (logger ``agui_codecs``,
  level ERROR) and counted in :data:`INTERNAL_ERRORS` (per decoder name);
* an empty body (no payload at all) ends with RUN_ERROR ``UPSTREAM_EMPTY``; EOF before the
  protocol's final event with RUN_ERROR ``UPSTREAM_TRUNCATED`` (the subclass's
  :meth:`~StreamDecoder.finalize`, or the base when it forgets); both are kept in ``error``;
* once the run has ended, further input is ignored: it is still framed, and ``trailing``
  counts its payloads (a malformed tail counts as one), except in a
  :attr:`~StreamDecoder.multi_run` decoder, where a payload that begins another response
  starts the next run of the same stream (AG-UI 1.0 allows runs in sequence);
* ``feed`` after ``close``, or ``feed`` of something that is not bytes, is a
  :class:`~agui_codecs.errors.LocalProtocolError` (the caller's bug, raised).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections import Counter
from typing import Any, ClassVar, Final, Protocol

from ag_ui.core import Event

from ..builder import RunBuilder
from ..errors import (
    InternalDecoderError,
    LocalProtocolError,
    MalformedUpstreamError,
    RemoteProtocolError,
)
from ..framing import Frame, FrameDecoder, Framing
from ..sse import DEFAULT_MAX_EVENT_SIZE
from ..surrogates import scrub

__all__ = ["INTERNAL_ERRORS", "Framer", "StreamDecoder", "upstream_error"]

_log = logging.getLogger("agui_codecs")

INTERNAL_ERRORS: Final[Counter[str]] = Counter()
"""Runs ended by an :class:`~agui_codecs.errors.InternalDecoderError` since the process
started, by decoder name (``{"openai-chat": 1}``). Read it for metrics; never reset by us."""


class Framer(Protocol):
    """What splits an upstream body into payloads: the shape of
    :class:`~agui_codecs.framing.FrameDecoder` (``feed(bytes) -> list[Frame]``,
    ``close() -> list[Frame]``; a malformed body is an error frame, never an exception)."""

    def feed(self, data: bytes) -> list[Frame]: ...

    def close(self) -> list[Frame]: ...


class StreamDecoder(ABC):
    """Base class of the upstream decoders.

    Args:
        thread_id: AG-UI threadId for the run (default derived from the upstream id).
        run_id: AG-UI runId for the run (default derived from the upstream id).
        framing: input framing, ``"auto"`` (default), ``"sse"``, ``"jsonl"`` or ``"json"``.
        max_event_size: cap in bytes on one upstream event (default 8 MiB).

    Attributes:
        error: what ended the run as a fault of the input or of the decoder: the
            :class:`RemoteProtocolError` of a malformed, empty or truncated upstream, or the
            :class:`InternalDecoderError` of a bug in the decoder (``None`` for a run that
            finished, or ended with an error the upstream reported itself, or by :meth:`fail`).
        trailing: number of payloads ignored because they came after the run's end.
    """

    name: ClassVar[str]
    """Registry name (``--from`` value), e.g. ``"openai-chat"``."""
    provider: ClassVar[str]
    """Provider label used in TokenUsage and metadata."""
    multi_run: ClassVar[bool] = False
    """True when one upstream body may hold several responses back to back (an OpenAI
    Responses agent loop): payloads after a run's end go to :meth:`begins_next_run`."""
    joins_split_surrogates: ClassVar[bool] = True
    """How a payload that escaped a lone surrogate (``Frame.surrogates``) is taken. True: the
    decoder's deltas pass the RunBuilder's :class:`~agui_codecs.surrogates.SurrogateJoiner`
    (a pair split across two deltas is one character) and every emitted event is scrubbed of
    what stayed unpaired (:func:`~agui_codecs.surrogates.scrub_event`). False (a decoder that
    validates the payload itself, e.g. ``agui``): the payload is scrubbed before
    :meth:`handle` (pairs within it joined, lone halves U+FFFD)."""

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        framing: Framing = "auto",
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        self.run = RunBuilder(thread_id=thread_id, run_id=run_id, provider=self.provider)
        self._frames = self.frame_decoder(framing, max_event_size=max_event_size)
        self.error: RemoteProtocolError | InternalDecoderError | None = None
        self.trailing = 0
        self._closed = False
        self._frames_broken = False  # the framing raised (our bug): feed it nothing more
        self._stopped = False  # no further run may begin (EOF, malformed input, fail())

    @property
    def ended(self) -> bool:
        """True once RUN_FINISHED or RUN_ERROR was emitted and no further run can follow.

        For a :attr:`multi_run` decoder a run's end is not the stream's end: this turns true
        only after :meth:`close`, :meth:`fail` or malformed input.
        """
        return self.run.ended and (self._stopped or not self.multi_run)

    def feed(self, data: bytes) -> list[Event]:
        """Consume upstream bytes; return the AG-UI events they complete.

        Raises:
            LocalProtocolError: after :meth:`close`, or ``data`` is not bytes.
        """
        if self._closed:
            raise LocalProtocolError(f"{type(self).__name__}.feed() called after close()")
        if not isinstance(data, bytes | bytearray | memoryview):
            raise LocalProtocolError(f"feed() takes bytes, not {type(data).__name__}")
        if self._frames_broken:
            return []
        try:
            frames = self._frames.feed(bytes(data))
        except Exception as exc:
            self._frames_broken = True
            self._internal(exc, "framing")
            return self.run.drain()
        self._handle_all(frames)  # after the end: only counted in ``trailing``
        return self.run.drain()

    def close(self) -> list[Event]:
        """Signal EOF; return the remaining events, always ending with a terminal event."""
        if self._closed:
            return []
        self._closed = True
        frames: list[Frame] = []
        if not self._frames_broken:
            try:
                frames = self._frames.close()
            except Exception as exc:
                self._internal(exc, "framing")
        self._handle_all(frames)
        self._stopped = True
        if not self.run.ended:
            if not self.run.started:
                self.error = MalformedUpstreamError(
                    f"upstream body held no {self.name} events", code="UPSTREAM_EMPTY"
                )
                self.run.fail(self.error.code, self.error.message)
            else:
                try:
                    self.finalize()
                except RemoteProtocolError as exc:
                    self._malformed(exc)
                except Exception as exc:
                    self._internal(exc, "finalize")
            if not self.run.ended:  # a subclass that forgot: never leave a run open
                self.run.fail("UPSTREAM_TRUNCATED", "upstream stream ended without a final event")
        if self.error is None and self.run.error_code == "UPSTREAM_TRUNCATED":
            # Cut short is a fault of the input too (the CLI exits 1), not only a run outcome.
            self.error = RemoteProtocolError(
                f"{self.name} stream ended before its final event", code="UPSTREAM_TRUNCATED"
            )
        return self.run.drain()

    def fail(self, code: str, message: str) -> None:
        """End the run with RUN_ERROR (for callers: timeouts, cancellation, HTTP errors)."""
        self._stopped = True
        self.run.fail(code, message)

    def _handle_all(self, frames: list[Frame]) -> None:
        for frame in frames:
            if self.run.ended and (self.ended or frame.error is not None or not self._next(frame)):
                self.trailing += 1
                continue
            if frame.error is not None:
                self._malformed(frame.error)
                continue
            if frame.surrogates:  # a lone escaped surrogate: see joins_split_surrogates
                self.run.lone_surrogates = True
                if not self.joins_split_surrogates:
                    frame = Frame(scrub(frame.data), frame.event)
            try:
                self.handle(frame)
            except RemoteProtocolError as exc:
                self._malformed(exc)
            except Exception as exc:  # anything else out of handle() is a bug of ours
                self._internal(exc, "handle")

    def _next(self, frame: Frame) -> bool:
        """:meth:`begins_next_run`, with a bug in it ending the stream as internal."""
        try:
            return self.begins_next_run(frame)
        except RemoteProtocolError:
            self._stopped = True  # a malformed tail after the run's end: trailing, as any
            return False
        except Exception as exc:
            self._stopped = True
            self._internal(exc, "begins_next_run")
            return False

    def _malformed(self, exc: RemoteProtocolError) -> None:
        self.error = exc
        self._stopped = True
        self.run.fail(exc.code, exc.message)

    def _internal(self, exc: Exception, where: str) -> None:
        """End the run as our own fault: log the traceback, count it, fixed message."""
        _log.error(
            "%s decoder: internal error in %s() (%s); the run ends with %s",
            self.name,
            where,
            type(exc).__name__,
            InternalDecoderError.code,
            exc_info=exc,
        )
        INTERNAL_ERRORS[self.name] += 1
        error = InternalDecoderError(self.name)
        error.__cause__ = exc
        self.error = error
        self._stopped = True
        try:
            self.run.fail(error.code, error.message)
        except Exception as again:  # closing what is open failed too: end it bare
            _log.error("%s decoder: closing the run failed too", self.name, exc_info=again)
            self.run.abort(error.code, error.message)

    def frame_decoder(self, framing: Framing, *, max_event_size: int) -> Framer:
        """The :class:`Framer` this decoder reads its body with (called once, by ``__init__``).

        The default is :class:`~agui_codecs.framing.FrameDecoder` of ``framing`` (SSE, JSON
        lines, a JSON array). A protocol whose body is not JSON text overrides it with its own
        splitter of the same shape (``bedrock_converse``: AWS event-stream binary messages),
        which honours ``max_event_size`` and reports a malformed body as an error frame.
        """
        return FrameDecoder(framing, max_event_size=max_event_size)

    def begins_next_run(self, frame: Frame) -> bool:
        """Offered each payload that arrives after a run ended, in a :attr:`multi_run` decoder.

        Return True when ``frame`` begins a further response, after calling
        ``self.run.next_run()`` and resetting per-run state; the frame is then handled as the
        first of the new run. The default (single-run protocols) returns False: the payload is
        counted in :attr:`trailing`.
        """
        return False

    @abstractmethod
    def handle(self, frame: Frame) -> None:
        """Translate one upstream payload by calling :attr:`run` methods."""

    @abstractmethod
    def finalize(self) -> None:
        """Called at EOF while the run is open: finish it, or fail it as truncated."""

    @staticmethod
    def obj(value: Any, what: str) -> dict[str, Any]:
        """Return ``value`` if it is a JSON object, else raise MalformedUpstreamError."""
        if not isinstance(value, dict):
            raise MalformedUpstreamError(f"{what} is not a JSON object")
        return value

    @staticmethod
    def arr(value: Any, what: str) -> list[Any]:
        """Return ``value`` if it is a JSON array (``[]`` for null or absent), else raise
        MalformedUpstreamError."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise MalformedUpstreamError(f"{what} is not a JSON array")
        return value


def upstream_error(error: Any, default_code: str = "UPSTREAM_ERROR") -> tuple[str, str]:
    """Return ``(code, message)`` for an upstream error object of OpenAI/Anthropic shape.

    The code is the upstream's ``code`` (or ``type``) when it is a non-empty string; a numeric
    code becomes ``HTTP_<n>``; else ``default_code``. Never an empty code.
    """
    if not isinstance(error, dict):
        return default_code, str(error) if error else "upstream reported an error"
    code = error.get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        code = f"HTTP_{code}"
    if not isinstance(code, str) or not code:
        kind = error.get("type")
        code = kind if isinstance(kind, str) and kind else default_code
    message = error.get("message")
    return str(code), str(message) if message else f"upstream reported {code}"
