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

from dataclasses import dataclass, field
from typing import Any, Final

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


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One event of a run with its cursor, as readers deliver it.

    Attributes:
        cursor: the event's position (its SSE ``id:``).
        event: the AG-UI 1.0 wire dict (camelCase, optional fields omitted); shared, do not
            mutate.
        json: ``orjson.dumps(event)`` when whoever made this event already has it (the writer
            serializes each event once; the store and the Redis broker hand back the text
            they hold), else None. The store, the broker and the encoder reuse it
            (``Encoder.encode_wire(event, json=...)``) instead of serializing again (issue 13
            item 3); not part of equality.
    """

    cursor: Cursor
    event: JsonObject
    json: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def type(self) -> str:
        """The AG-UI event ``type`` (e.g. ``"TEXT_MESSAGE_CONTENT"``)."""
        return str(self.event.get("type", ""))

    @property
    def terminal(self) -> bool:
        """True for RUN_FINISHED and RUN_ERROR."""
        return self.event.get("type") in TERMINAL_EVENT_TYPES
