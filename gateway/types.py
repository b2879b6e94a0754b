"""Value types shared by the run store, the broker, the run core and the HTTP side.

A neutral module (starlette's ``types.py`` pattern): it imports nothing of the gateway, so the
store (:mod:`gateway.store`) and the broker (:mod:`gateway.broker`) both build on it without
importing each other::

    JsonObject              a JSON object (AG-UI wire event, history item, usage...)
    Cursor                  <epoch>.<seq>: the position of one event in one run (its SSE id)
    RunEvent                (cursor, AG-UI wire dict): one event of a run, as readers deliver it
    TERMINAL_EVENT_TYPES    RUN_FINISHED, RUN_ERROR
    MAX_CURSOR_PART         the largest epoch or seq (a JSON-safe integer)

Parsing a client's cursor text (``Last-Event-ID``) is :func:`gateway.store.parse_cursor`: its
refusal is a store error (400 ``INVALID_CURSOR``). Cursor design: ``docs/runs.md`` §1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import orjson

__all__ = ["MAX_CURSOR_PART", "TERMINAL_EVENT_TYPES", "Cursor", "JsonObject", "RunEvent"]

JsonObject = dict[str, Any]
"""A JSON object (AG-UI wire event, history item, usage...)."""

MAX_CURSOR_PART: Final[int] = 2**53 - 1
"""Largest epoch or seq accepted (JSON-safe integer)."""

TERMINAL_EVENT_TYPES: Final[frozenset[str]] = frozenset({"RUN_FINISHED", "RUN_ERROR"})
"""AG-UI event types that end a run (a run of the gateway holds exactly one AG-UI run)."""


@dataclass(frozen=True, order=True, slots=True)
class Cursor:
    """Position of one event in one run; ordered by ``(epoch, seq)``, written ``<epoch>.<seq>``.

    ``seq`` is assigned once by the run's single producer (1, 2, 3... per run); ``epoch`` is
    that producer's lease epoch (1, then +1 at each takeover), so a new epoch's cursors differ
    from anything a dead producer could have published (``docs/runs.md`` §1). Clients treat
    the cursor as opaque; only the gateway parses it (:func:`gateway.store.parse_cursor`).

    Attributes:
        epoch: lease epoch of the producer that assigned the event (>= 1).
        seq: per-run sequence number (>= 1).
    """

    epoch: int
    seq: int

    def __str__(self) -> str:
        return f"{self.epoch}.{self.seq}"

    def follows(self, previous: Cursor | None) -> bool:
        """True when this cursor is the immediate successor of ``previous`` in one epoch.

        ``previous is None`` means "before the first event": seq 1 follows it.
        """
        if previous is None:
            return self.seq == 1
        return self.epoch == previous.epoch and self.seq == previous.seq + 1


class RunEvent:
    """One event of a run with its cursor, as readers deliver it.

    ``RunEvent(cursor, event, json=None)``; or ``RunEvent(cursor, None, json, type=...)`` for
    an event known by its serialized form only (a store row: the JSON text and the ``type``
    column), whose dict is parsed from ``json`` the first time :attr:`event` is read, so a
    replay that frames the stored JSON as it is (the AG-UI wire, ``gateway/encoding.py``)
    never parses it (issue 13).

    Attributes:
        cursor: the event's position (its SSE ``id:``).
        event: the AG-UI 1.0 wire dict (camelCase, optional fields omitted); shared, do not
            mutate. Parsed from ``json`` on first access when the event was made without it.
        json: ``orjson.dumps(event)`` when whoever made this event already has it (the writer
            serializes each event once; the store and the Redis broker hand back the text
            they hold), else None. The store, the broker and the encoder reuse it
            (``Encoder.encode_wire(event, json=...)``) instead of serializing again (issue 13
            item 3); not part of equality.
        type: the AG-UI event ``type`` (e.g. ``"TEXT_MESSAGE_CONTENT"``): the maker's
            ``type`` (a store row's column), else ``event["type"]``.

    Equality compares ``cursor`` and ``event`` of two instances of the same class. Not
    hashable (a dict is not).

    Raises:
        ValueError: from the constructor, when neither ``event`` nor ``json`` is given.
    """

    __slots__ = ("_event", "cursor", "json", "type")

    cursor: Cursor
    json: bytes | None
    type: str

    def __init__(
        self,
        cursor: Cursor,
        event: JsonObject | None,
        json: bytes | None = None,
        *,
        type: str | None = None,
    ) -> None:
        if event is None and json is None:
            raise ValueError("a RunEvent needs its event or its JSON")
        self.cursor = cursor
        self._event = event
        self.json = json
        if type is None:  # (parses json when no event was given)
            type = str(self.event.get("type", ""))
        self.type = type

    @property
    def event(self) -> JsonObject:
        """The AG-UI wire dict (parsed from :attr:`json` once, when the event was made from
        its JSON)."""
        event = self._event
        if event is None:
            event = self._event = orjson.loads(self.json)  # type: ignore[arg-type]
        return event

    def load(self) -> JsonObject:
        """:attr:`event`, as a call (what ``Encoder.encode_serialized`` takes)."""
        return self.event

    @property
    def terminal(self) -> bool:
        """True for RUN_FINISHED and RUN_ERROR."""
        return self.type in TERMINAL_EVENT_TYPES

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:  # as a dataclass: same class only
            return NotImplemented
        assert isinstance(other, RunEvent)
        return self.cursor == other.cursor and self.event == other.event

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RunEvent(cursor={self.cursor!r}, event={self.event!r})"
