"""OpenItems: what a client reading a stored run holds open, at the cost of its control events.

A stream that must end early (the store lost mid-replay, :func:`gateway.encoding.encode_run_events`)
closes what the client has open, then sends RUN_ERROR; what is open is
:meth:`agui_codecs.core.RunFold.closing_events` of the events sent. The fold also accumulates
every delta's text (history parts), which a reader never needs: the content events
(:data:`CONTENT_TYPES`: TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT, TOOL_CALL_ARGS, most
of any run) only append to an item that is open and never open or close one
(``codecs/agui_codecs/core/fold.py`` handlers), so they are skipped, until a chunk event
(``*_CHUNK``, ``agui_codecs.core.CHUNK_TYPES``) shows up: chunk lanes may be closed by any
later event (``@ag-ui/client`` 1.0.0 ``src/chunks/transform.ts``), so from then on every event
is folded. ``tests/gateway/test_open_items.py`` checks ``closing_events`` and ``ended`` equal
the full fold's after every prefix of generated runs.
"""

from __future__ import annotations

from typing import Final

from agui_codecs.core import CHUNK_TYPES, RunFold

from .types import JsonObject, RunEvent

__all__ = ["CONTENT_TYPES", "OpenItems"]

CONTENT_TYPES: Final[frozenset[str]] = frozenset(
    {"TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS"}
)
"""Event types that change no item's open or closed state (outside chunk streams)."""


class OpenItems:
    """The open items of the events applied so far (a :class:`RunFold` without the deltas)."""

    __slots__ = ("_all", "_fold")

    def __init__(self) -> None:
        self._fold = RunFold()
        self._all = False

    @property
    def folds_content(self) -> bool:
        """True once every event is folded, content events too (a chunk event was seen)."""
        return self._all

    def apply(self, event: JsonObject) -> None:
        """Take one AG-UI wire event into account."""
        kind = event.get("type")
        if not self._all:
            if kind in CONTENT_TYPES:
                return
            if kind in CHUNK_TYPES:
                self._all = True
        self._fold.apply(event)

    def apply_stored(self, stored: RunEvent) -> None:
        """:meth:`apply` of ``stored.event``, read only when the fold needs it (a stored
        content event's JSON is never parsed for it: :attr:`RunEvent.type` is enough)."""
        kind = stored.type
        if not self._all:
            if kind in CONTENT_TYPES:
                return
            if kind in CHUNK_TYPES:
                self._all = True
        self._fold.apply(stored.event)

    @property
    def ended(self) -> bool:
        """True once a terminal event (RUN_FINISHED / RUN_ERROR) was applied."""
        return self._fold.ended

    def closing_events(self) -> list[JsonObject]:
        """The END events closing what is open (:meth:`RunFold.closing_events`)."""
        return self._fold.closing_events()
