"""The unit of input framing: one upstream payload (:class:`Frame`), the ``[DONE]`` sentinel,
and the parse of one payload's bytes into its frame. Re-exported by
:mod:`agui_codecs.framing`, whose splitters (SSE, JSON lines, JSON arrays) produce them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from . import jsontext
from .errors import MalformedUpstreamError, RemoteProtocolError

__all__ = ["DONE", "Frame", "frame_of"]


class _Done:
    """Sentinel type of :data:`DONE`."""

    def __repr__(self) -> str:
        return "DONE"


DONE: Final = _Done()
"""Payload of the frame produced by an SSE ``data: [DONE]`` terminator."""


@dataclass(slots=True)
class Frame:
    """One upstream payload.

    Attributes:
        data: the decoded JSON value, or :data:`DONE` (``None`` for an error frame).
        event: the SSE event type (``"message"`` when none was given; ``None`` outside SSE).
        error: set on the last frame when the body turned out malformed at that point; the
            frames before it are good and must still be handled.
        surrogates: the payload escaped a lone surrogate (:func:`~agui_codecs.jsontext.parse`):
            ``data`` may hold strings that are not valid Unicode until joined or replaced.
    """

    data: Any
    event: str | None = None
    error: RemoteProtocolError | None = None
    surrogates: bool = False


def frame_of(raw: bytes | str, where: str | None, event: str | None = None) -> Frame:
    """The frame of one payload ``raw`` (``where`` names it in the error; ``None``: the data
    of an SSE event of type ``event``)."""
    try:
        value, surrogates = jsontext.parse(raw)  # orjson, keeping big integers and lone surrogates
    except jsontext.JSONDecodeError as exc:
        snippet = raw[:80] if isinstance(raw, str) else raw[:80].decode("utf-8", "replace")
        where = where or f"SSE {event!r} event data"
        raise MalformedUpstreamError(f"{where} is not valid JSON ({exc}): {snippet!r}") from exc
    if surrogates:
        return Frame(value, event, None, True)
    return Frame(value, event)  # positional, the common case: about half the cost of keywords
