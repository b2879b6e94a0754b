"""The shape every upstream decoder shares: bytes in, AG-UI 1.0 events out, no I/O.

A decoder is ``feed(bytes) -> list[Event]`` plus ``close() -> list[Event]`` (EOF), like h11.
Subclasses implement :meth:`StreamDecoder.handle` (one upstream payload) and
:meth:`StreamDecoder.finalize` (what EOF means for their protocol); the base class owns input
framing (:mod:`agui_codecs.framing`), the :class:`~agui_codecs.builder.RunBuilder` and the
error policy:

* a malformed upstream (bad JSON, wrong shape, an oversized event) never raises out of
  ``feed``: the run ends with RUN_ERROR carrying the error's ``code`` after everything open is
  closed, and :attr:`StreamDecoder.error` keeps the typed error for the caller;
* once the run has ended, further input is ignored (``trailing`` counts the payloads), except
  in a :attr:`~StreamDecoder.multi_run` decoder, where a payload that begins another response
  starts the next run of the same stream (AG-UI 1.0 allows runs in sequence);
* ``feed`` after ``close`` is a :class:`~agui_codecs.errors.LocalProtocolError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from ag_ui.core import Event

from ..builder import RunBuilder
from ..errors import CodecError, LocalProtocolError, MalformedUpstreamError, RemoteProtocolError
from ..framing import Frame, FrameDecoder, Framing
from ..sse import DEFAULT_MAX_EVENT_SIZE

__all__ = ["StreamDecoder", "upstream_error"]


class StreamDecoder(ABC):
    """Base class of the upstream decoders.

    Args:
        thread_id: AG-UI threadId for the run (default derived from the upstream id).
        run_id: AG-UI runId for the run (default derived from the upstream id).
        framing: input framing, ``"auto"`` (default), ``"sse"``, ``"jsonl"`` or ``"json"``.
        max_event_size: cap in bytes on one upstream event (default 8 MiB).

    Attributes:
        error: the :class:`RemoteProtocolError` that ended the run, if the upstream was
            malformed (``None`` for upstream-reported errors, which are not our failure).
        trailing: number of payloads ignored because they came after the run's end.
    """

    name: ClassVar[str]
    """Registry name (``--from`` value), e.g. ``"openai-chat"``."""
    provider: ClassVar[str]
    """Provider label used in TokenUsage and metadata."""
    multi_run: ClassVar[bool] = False
    """True when one upstream body may hold several responses back to back (an OpenAI
    Responses agent loop): payloads after a run's end go to :meth:`begins_next_run`."""

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        run_id: str | None = None,
        framing: Framing = "auto",
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        self.run = RunBuilder(thread_id=thread_id, run_id=run_id, provider=self.provider)
        self._frames = FrameDecoder(framing, max_event_size=max_event_size)
        self.error: RemoteProtocolError | None = None
        self.trailing = 0
        self._closed = False
        self._stopped = False  # no further run may begin (EOF, malformed input, fail())

    @property
    def ended(self) -> bool:
        """True once RUN_FINISHED or RUN_ERROR was emitted and no further run can follow.

        For a :attr:`multi_run` decoder a run's end is not the stream's end: this turns true
        only after :meth:`close`, :meth:`fail` or malformed input.
        """
        return self.run.ended and (self._stopped or not self.multi_run)

    def feed(self, data: bytes) -> list[Event]:
        """Consume upstream bytes; return the AG-UI events they complete."""
        if self._closed:
            raise LocalProtocolError(f"{type(self).__name__}.feed() called after close()")
        if self.ended:
            return []
        self._handle_all(self._frames.feed(data))
        return self.run.drain()

    def close(self) -> list[Event]:
        """Signal EOF; return the remaining events, always ending with a terminal event."""
        if self._closed:
            return []
        self._closed = True
        if not self.ended:
            self._handle_all(self._frames.close())
        self._stopped = True
        if not self.run.ended:
            if not self.run.started:
                self.error = MalformedUpstreamError(
                    f"upstream body held no {self.name} events", code="UPSTREAM_EMPTY"
                )
                self.run.fail(self.error.code, self.error.message)
            else:
                self.finalize()
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
            if self.run.ended and (
                self.ended or frame.error is not None or not self.begins_next_run(frame)
            ):
                self.trailing += 1
                continue
            if frame.error is not None:
                self._malformed(frame.error)
                continue
            try:
                self.handle(frame)
            except CodecError as exc:
                if isinstance(exc, RemoteProtocolError):
                    self._malformed(exc)
                else:
                    raise
            except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
                self._malformed(
                    MalformedUpstreamError(
                        f"unexpected {self.name} payload shape ({type(exc).__name__}: {exc})"
                    )
                )

    def _malformed(self, exc: RemoteProtocolError) -> None:
        self.error = exc
        self._stopped = True
        self.run.fail(exc.code, exc.message)

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


def upstream_error(error: Any, default_code: str = "UPSTREAM_ERROR") -> tuple[str, str]:
    """Return ``(code, message)`` for an upstream error object of OpenAI/Anthropic shape.

    The code is the upstream's ``code`` (or ``type``) when it is a string; a numeric code
    becomes ``HTTP_<n>``.
    """
    if not isinstance(error, dict):
        return default_code, str(error) if error else "upstream reported an error"
    code = error.get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        code = f"HTTP_{code}"
    if not isinstance(code, str) or not code:
        code = error.get("type") if isinstance(error.get("type"), str) else default_code
    message = error.get("message")
    return str(code), str(message) if message else f"upstream reported {code}"
