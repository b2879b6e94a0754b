"""Resume cursors: ``<epoch>.<seq>``, the ``id:`` of every durable event of a run.

Design (``docs/runs.md`` §1 cursors and §2 latency against durability):

* ``seq`` is assigned once, by the run's single producer: 1, 2, 3... per run. The store
  enforces that a batch continues the run's last durable seq by steps of one.
* ``epoch`` is the producer's lease epoch: 1 for the first producer, +1 at each takeover.
  A producer may publish deltas before they are durable; if it dies, the replica that closes
  the run starts a new epoch and continues from the last *durable* seq, so its cursors
  (``2.51``...) differ from anything the dead producer could have published (``1.51``...).
* Cursors order as ``(epoch, seq)`` tuples. A resume from a dead epoch's cursor that is past
  the durable end (``1.57`` when epoch 1 ended at 50) therefore continues at the first event of
  the next epoch. Within the store, seq alone orders events (epochs never decrease with seq).

Clients treat the cursor as opaque; only the gateway parses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from .errors import InvalidCursorError

__all__ = ["MAX_CURSOR_PART", "Cursor", "parse_cursor"]

MAX_CURSOR_PART: Final[int] = 2**53 - 1
"""Largest epoch or seq accepted (JSON-safe integer)."""

_CURSOR_RE: Final[re.Pattern[str]] = re.compile(r"([1-9][0-9]{0,15})\.([1-9][0-9]{0,15})")


@dataclass(frozen=True, order=True, slots=True)
class Cursor:
    """Position of one event in one run; ordered by ``(epoch, seq)``.

    Attributes:
        epoch: lease epoch of the producer that assigned the event (>= 1).
        seq: per-run sequence number (>= 1).
    """

    epoch: int
    seq: int

    def __str__(self) -> str:
        return f"{self.epoch}.{self.seq}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """Parse ``"<epoch>.<seq>"``; see :func:`parse_cursor`."""
        return parse_cursor(text)

    def follows(self, previous: Cursor | None) -> bool:
        """True when this cursor is the immediate successor of ``previous`` in one epoch.

        ``previous is None`` means "before the first event": seq 1 follows it.
        """
        if previous is None:
            return self.seq == 1
        return self.epoch == previous.epoch and self.seq == previous.seq + 1


def parse_cursor(text: str) -> Cursor:
    """Parse a cursor string as sent in ``Last-Event-ID`` or ``?lastEventId=``.

    Leading/trailing ASCII whitespace is ignored; anything else that is not two positive
    decimal integers (no sign, no leading zero, at most 16 digits, each <= 2**53-1) joined by
    one ``.`` is refused.

    Raises:
        InvalidCursorError: the text is not a cursor.
    """
    if not isinstance(text, str):
        raise InvalidCursorError("cursor must be a string")
    match = _CURSOR_RE.fullmatch(text.strip(" \t\r\n"))
    if match is None:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise InvalidCursorError(f"malformed event id {shown!r}: expected '<epoch>.<seq>'")
    epoch, seq = int(match.group(1)), int(match.group(2))
    if epoch > MAX_CURSOR_PART or seq > MAX_CURSOR_PART:
        raise InvalidCursorError(f"event id {text!r} is out of range")
    return Cursor(epoch, seq)
